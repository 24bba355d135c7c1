//! From a merged kubeconfig to a [`Config`]: context selection with
//! overrides, clusters and users looked up by name, `*-data` fields decoded,
//! and everything checked up front so a mistake names its field and file
//! (clientcmd's `DirectClientConfig`).

use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::config::credentials::Credentials;
use crate::config::error::ConfigError;
use crate::config::kubeconfig::{AuthInfo, Cluster, Kubeconfig};
use crate::config::loading_rules::LoadingRules;
use crate::config::oidc::OidcConfig;
use crate::config::pem::{PemSource, certified_key, parse_certificates, read_pem};
use crate::config::proxy::dial_url;
use crate::config::rest_config::{Config, Impersonation, Proxy};
use crate::config::secret::Secret;

/// What to use instead of the kubeconfig's own choices (kubectl's
/// `--context`, `--cluster`, `--user`, `--namespace`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigOverrides {
    /// The context to use instead of `current-context`.
    pub context: Option<String>,
    /// The cluster to use instead of the context's.
    pub cluster: Option<String>,
    /// The user to use instead of the context's.
    pub user: Option<String>,
    /// The namespace to use instead of the context's.
    pub namespace: Option<String>,
}

impl ConfigOverrides {
    /// Uses `context`.
    #[must_use]
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// Uses `namespace`.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }
}

impl Config {
    /// Loads the kubeconfig files `rules` select and builds the
    /// configuration of the chosen context.
    ///
    /// ```no_run
    /// use clientgo_rest::Config;
    /// use clientgo_rest::config::{ConfigOverrides, LoadingRules};
    ///
    /// let config = Config::from_kubeconfig(
    ///     &LoadingRules::from_env(),
    ///     &ConfigOverrides::default().context("staging"),
    /// )?;
    /// println!("{config}");
    /// # Ok::<(), clientgo_rest::Error>(())
    /// ```
    pub fn from_kubeconfig(
        rules: &LoadingRules,
        overrides: &ConfigOverrides,
    ) -> Result<Config, ConfigError> {
        let kubeconfig = rules.load()?.ok_or_else(|| ConfigError::NothingFound {
            tried: vec![format!("{}: no such file", rules.describe())],
        })?;
        Config::from_kubeconfig_document(&kubeconfig, overrides)
    }

    /// Reads exactly one kubeconfig file.
    pub fn from_kubeconfig_file(path: impl Into<PathBuf>) -> Result<Config, ConfigError> {
        Config::from_kubeconfig(
            &LoadingRules::default().explicit_path(path),
            &ConfigOverrides::default(),
        )
    }

    /// Builds the configuration of a context of an already loaded (and
    /// merged) kubeconfig.
    pub fn from_kubeconfig_document(
        kubeconfig: &Kubeconfig,
        overrides: &ConfigOverrides,
    ) -> Result<Config, ConfigError> {
        let files = kubeconfig.files_display();
        let (context_name, named_by) = match (&overrides.context, &kubeconfig.current_context) {
            (Some(context), _) if !context.is_empty() => (context.clone(), "the context override"),
            (_, Some(current)) if !current.is_empty() => (current.clone(), "current-context"),
            _ => {
                return Err(ConfigError::NoCurrentContext { files });
            }
        };
        let context_entry = kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .ok_or_else(|| ConfigError::NotFound {
                what: "context",
                name: context_name.clone(),
                named_by: named_by.to_string(),
                files: files.clone(),
            })?;
        let context = context_entry.context.clone().unwrap_or_default();
        let context_file = context_entry.file.display().to_string();

        let cluster_name = overrides.cluster.clone().unwrap_or(context.cluster.clone());
        let cluster_entry = kubeconfig
            .clusters
            .iter()
            .find(|c| c.name == cluster_name)
            .ok_or_else(|| ConfigError::NotFound {
                what: "cluster",
                name: cluster_name.clone(),
                named_by: format!("context {context_name:?} (in {context_file})"),
                files: files.clone(),
            })?;
        let cluster = cluster_entry.cluster.clone().unwrap_or_default();

        let user_name = overrides.user.clone().unwrap_or(context.user.clone());
        let (user, user_file) = if user_name.is_empty() {
            (AuthInfo::default(), PathBuf::new())
        } else {
            let user_entry = kubeconfig
                .users
                .iter()
                .find(|u| u.name == user_name)
                .ok_or_else(|| ConfigError::NotFound {
                    what: "user",
                    name: user_name.clone(),
                    named_by: format!("context {context_name:?} (in {context_file})"),
                    files: files.clone(),
                })?;
            (
                user_entry.user.clone().unwrap_or_default(),
                user_entry.file.clone(),
            )
        };

        let mut config = cluster_settings(&cluster_name, &cluster, &cluster_entry.file)?;
        apply_user(&mut config, &user_name, &user, &user_file)?;
        config.namespace = overrides
            .namespace
            .clone()
            .or(context.namespace)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string());
        config.origin = format!("kubeconfig {files} (context {context_name:?})");
        Ok(config)
    }
}

fn cluster_settings(name: &str, cluster: &Cluster, file: &Path) -> Result<Config, ConfigError> {
    let source_name = file.display().to_string();
    let field = |leaf: &str| format!("clusters[{name}].cluster.{leaf}");
    let server = cluster
        .server
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ConfigError::InvalidField {
            field: field("server"),
            source_name: source_name.clone(),
            message: "is missing".to_string(),
        })?;
    let mut config = Config::new(server);
    config.tls.insecure_skip_verify = cluster.insecure_skip_tls_verify.unwrap_or(false);
    config.tls.server_name = cluster.tls_server_name.clone().filter(|s| !s.is_empty());
    if let Some(ca) = load_pem(
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
        &field("certificate-authority"),
        &source_name,
    )? {
        parse_certificates(&ca.pem, &ca.field, &source_name)?;
        config.tls.certificate_authority = Some(ca.source);
    }
    if config.tls.insecure_skip_verify && config.tls.certificate_authority.is_some() {
        return Err(ConfigError::InvalidField {
            field: field("insecure-skip-tls-verify"),
            source_name,
            message: "cannot be combined with a certificate authority (clientcmd rejects it too)"
                .to_string(),
        });
    }
    if let Some(proxy) = cluster.proxy_url.clone().filter(|p| !p.is_empty()) {
        dial_url(&proxy).map_err(|message| ConfigError::InvalidField {
            field: field("proxy-url"),
            source_name: source_name.clone(),
            message,
        })?;
        config.proxy = Proxy::Url(proxy);
    }
    config.disable_compression = cluster.disable_compression.unwrap_or(false);
    Ok(config)
}

fn apply_user(
    config: &mut Config,
    name: &str,
    user: &AuthInfo,
    file: &Path,
) -> Result<(), ConfigError> {
    let source_name = file.display().to_string();
    let field = |leaf: &str| format!("users[{name}].user.{leaf}");
    let mut oidc = None;
    if let Some(provider) = &user.auth_provider {
        if provider.name != "oidc" {
            return Err(ConfigError::InvalidField {
                field: field("auth-provider"),
                source_name,
                message: format!(
                    "the {:?} auth provider is not supported (Kubernetes removed in-tree providers); use an exec plugin such as gke-gcloud-auth-plugin or kubelogin",
                    provider.name
                ),
            });
        }
        oidc = Some(oidc_config(
            &provider.config,
            &field("auth-provider.config"),
            &source_name,
        )?);
    }
    let certificate = load_pem(
        &user.client_certificate_data,
        &user.client_certificate,
        &field("client-certificate"),
        &source_name,
    )?;
    let key = load_pem(
        &user.client_key_data,
        &user.client_key,
        &field("client-key"),
        &source_name,
    )?;
    match (certificate, key) {
        (Some(certificate), Some(key)) => {
            certified_key(
                &certificate.pem,
                &key.pem,
                (&certificate.field, &key.field),
                &source_name,
            )?;
            config.tls.client_certificate = Some(certificate.source);
            config.tls.client_key = Some(key.source);
        }
        (None, None) => {}
        (Some(_), None) => {
            return Err(ConfigError::InvalidField {
                field: field("client-key"),
                source_name,
                message: "is missing while a client certificate is set".to_string(),
            });
        }
        (None, Some(_)) => {
            return Err(ConfigError::InvalidField {
                field: field("client-certificate"),
                source_name,
                message: "is missing while a client key is set".to_string(),
            });
        }
    }
    let token = user.token.clone().filter(|t| !t.is_empty());
    let token_file = user.token_file.clone().filter(|t| !t.is_empty());
    let basic = user.username.clone().filter(|u| !u.is_empty());
    if basic.is_some() && (token.is_some() || token_file.is_some()) {
        return Err(ConfigError::InvalidField {
            field: field("username"),
            source_name,
            message: "basic auth and a bearer token cannot both be set".to_string(),
        });
    }
    // One credential; where a user sets several, the one that wins is
    // the exec plugin, then the OIDC provider, then the token file (with
    // the token as its fallback), then the token, then basic auth.
    config.credentials = match (user.exec.clone(), oidc, token_file, token, basic) {
        (Some(exec), ..) => Credentials::Exec(exec),
        (None, Some(oidc), ..) => Credentials::Oidc(oidc),
        (None, None, Some(path), token, _) => Credentials::TokenFile {
            path: PathBuf::from(path),
            fallback: token.map(Secret::new),
        },
        (None, None, None, Some(token), _) => Credentials::BearerToken(Secret::new(token)),
        (None, None, None, None, Some(username)) => Credentials::Basic {
            username,
            password: Secret::new(user.password.clone().unwrap_or_default()),
        },
        (None, None, None, None, None) => Credentials::None,
    };
    config.impersonate = Impersonation {
        user: user.impersonate.clone().filter(|s| !s.is_empty()),
        uid: user.impersonate_uid.clone().filter(|s| !s.is_empty()),
        groups: user.impersonate_groups.clone().unwrap_or_default(),
        extra: user.impersonate_user_extra.clone().unwrap_or_default(),
    };
    Ok(())
}

/// A PEM setting as loaded: where it comes from, the kubeconfig field that
/// gave it (for errors), and its text (read once, to check it).
struct LoadedPem {
    source: PemSource,
    field: String,
    pem: Vec<u8>,
}

/// Loads a PEM setting given as base64 in `<field>-data` (which wins) or as
/// a file named by `<field>`.
/// The `oidc` auth-provider's settings, as client-go's plugin reads them.
fn oidc_config(
    settings: &std::collections::BTreeMap<String, String>,
    field: &str,
    source_name: &str,
) -> Result<OidcConfig, ConfigError> {
    let text = |key: &str| settings.get(key).filter(|v| !v.is_empty()).cloned();
    let client_id = text("client-id").ok_or_else(|| ConfigError::InvalidField {
        field: format!("{field}.client-id"),
        source_name: source_name.to_string(),
        message: "is required by the oidc auth-provider".to_string(),
    })?;
    if text("id-token").is_none()
        && (text("refresh-token").is_none() || text("idp-issuer-url").is_none())
    {
        return Err(ConfigError::InvalidField {
            field: format!("{field}.id-token"),
            source_name: source_name.to_string(),
            message: "the oidc auth-provider needs an id-token, or a refresh-token and idp-issuer-url to get one".to_string(),
        });
    }
    let authority = load_pem(
        &text("idp-certificate-authority-data"),
        &text("idp-certificate-authority"),
        &format!("{field}.idp-certificate-authority"),
        source_name,
    )?;
    Ok(OidcConfig {
        id_token: text("id-token").map(Secret::new),
        refresh_token: text("refresh-token").map(Secret::new),
        issuer_url: text("idp-issuer-url"),
        client_id,
        client_secret: text("client-secret").map(Secret::new),
        issuer_certificate_authority: authority.map(|loaded| loaded.source),
    })
}

fn load_pem(
    data: &Option<String>,
    file: &Option<String>,
    field: &str,
    source_name: &str,
) -> Result<Option<LoadedPem>, ConfigError> {
    if let Some(data) = data.as_deref().filter(|d| !d.trim().is_empty()) {
        let data_field = format!("{field}-data");
        let compact: String = data.split_whitespace().collect();
        let pem = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .map_err(|e| ConfigError::InvalidField {
                field: data_field.clone(),
                source_name: source_name.to_string(),
                message: format!("is not valid base64: {e}"),
            })?;
        return Ok(Some(LoadedPem {
            source: PemSource::Data(pem.clone()),
            field: data_field,
            pem,
        }));
    }
    match file.as_deref().filter(|f| !f.is_empty()) {
        Some(path) => {
            let source = PemSource::File(PathBuf::from(path));
            let pem = read_pem(&source, field, source_name)?;
            Ok(Some(LoadedPem {
                source,
                field: field.to_string(),
                pem,
            }))
        }
        None => Ok(None),
    }
}
