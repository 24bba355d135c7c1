//! [`Kubeconfig`]: the kubeconfig file format (clusters, users, contexts),
//! read with serde from YAML or JSON. Unknown fields are ignored, as
//! clientcmd does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::error::ConfigError;
use crate::config::exec::ExecConfig;

/// One kubeconfig document, or several merged by [`LoadingRules`](crate::config::LoadingRules).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Kubeconfig {
    /// `v1`.
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    /// `Config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Named clusters.
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// Named users (credentials).
    #[serde(default, deserialize_with = "null_as_default")]
    pub users: Vec<NamedAuthInfo>,
    /// Named contexts (cluster + user + namespace).
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// The context used when none is asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_context: Option<String>,
    /// The files this was read from, in precedence order (not serialized).
    #[serde(skip)]
    pub files: Vec<PathBuf>,
}

/// A cluster entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedCluster {
    /// Its name.
    pub name: String,
    /// Its settings.
    #[serde(default)]
    pub cluster: Option<Cluster>,
    /// The file that defined it.
    #[serde(skip)]
    pub file: PathBuf,
}

/// A cluster's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Cluster {
    /// The API server URL.
    #[serde(default)]
    pub server: Option<String>,
    /// The name to verify the server's certificate against.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Skip verifying the server's certificate.
    #[serde(default)]
    pub insecure_skip_tls_verify: Option<bool>,
    /// A CA bundle file.
    #[serde(default)]
    pub certificate_authority: Option<String>,
    /// A CA bundle, base64 PEM (wins over the file).
    #[serde(default)]
    pub certificate_authority_data: Option<String>,
    /// A proxy for this cluster.
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// Turn off response compression.
    #[serde(default)]
    pub disable_compression: Option<bool>,
}

/// A user entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedAuthInfo {
    /// Its name.
    pub name: String,
    /// Its credentials.
    #[serde(default)]
    pub user: Option<AuthInfo>,
    /// The file that defined it.
    #[serde(skip)]
    pub file: PathBuf,
}

/// A user's credentials. `Debug` redacts the secrets.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AuthInfo {
    /// A client certificate file.
    #[serde(default)]
    pub client_certificate: Option<String>,
    /// A client certificate, base64 PEM (wins over the file).
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// The client key file.
    #[serde(default)]
    pub client_key: Option<String>,
    /// The client key, base64 PEM (wins over the file).
    #[serde(default)]
    pub client_key_data: Option<String>,
    /// A bearer token.
    #[serde(default)]
    pub token: Option<String>,
    /// A file holding the bearer token.
    #[serde(default)]
    pub token_file: Option<String>,
    /// Impersonate this user.
    #[serde(default, rename = "as")]
    pub impersonate: Option<String>,
    /// Impersonate this UID.
    #[serde(default, rename = "as-uid")]
    pub impersonate_uid: Option<String>,
    /// Impersonate these groups.
    #[serde(default, rename = "as-groups")]
    pub impersonate_groups: Option<Vec<String>>,
    /// Impersonate with these extra fields.
    #[serde(default, rename = "as-user-extra")]
    pub impersonate_user_extra: Option<BTreeMap<String, Vec<String>>>,
    /// Basic auth user name.
    #[serde(default)]
    pub username: Option<String>,
    /// Basic auth password.
    #[serde(default)]
    pub password: Option<String>,
    /// A legacy auth provider (gcp, azure, oidc); not supported: clusters
    /// moved to exec plugins.
    #[serde(default)]
    pub auth_provider: Option<AuthProvider>,
    /// An exec credential plugin.
    #[serde(default)]
    pub exec: Option<ExecConfig>,
}

impl std::fmt::Debug for AuthInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |value: &Option<String>| value.as_ref().map(|_| "<redacted>");
        f.debug_struct("AuthInfo")
            .field("client_certificate", &self.client_certificate)
            .field(
                "client_certificate_data",
                &self.client_certificate_data.as_ref().map(|d| d.len()),
            )
            .field("client_key", &self.client_key)
            .field("client_key_data", &redacted(&self.client_key_data))
            .field("token", &redacted(&self.token))
            .field("token_file", &self.token_file)
            .field("impersonate", &self.impersonate)
            .field("username", &self.username)
            .field("password", &redacted(&self.password))
            .field(
                "auth_provider",
                &self.auth_provider.as_ref().map(|p| &p.name),
            )
            .field("exec", &self.exec)
            .finish_non_exhaustive()
    }
}

/// A legacy auth provider section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuthProvider {
    /// `gcp`, `azure`, `oidc`...
    pub name: String,
    /// Its settings (`id-token`, `refresh-token`, `idp-issuer-url`,
    /// `client-id`, … for `oidc`).
    #[serde(default)]
    pub config: BTreeMap<String, String>,
}

/// A context entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedContext {
    /// Its name.
    pub name: String,
    /// What it selects.
    #[serde(default)]
    pub context: Option<Context>,
    /// The file that defined it.
    #[serde(skip)]
    pub file: PathBuf,
}

/// A context: a cluster, a user and a namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The cluster's name.
    #[serde(default)]
    pub cluster: String,
    /// The user's name (`user` in the file).
    #[serde(default, rename = "user")]
    pub user: String,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
}

/// Appends the entries of `later` whose names `entries` does not have yet:
/// the first definition of a name wins whole.
fn merge_named<T>(entries: &mut Vec<T>, later: Vec<T>, name: impl Fn(&T) -> &String) {
    for entry in later {
        if !entries.iter().any(|known| name(known) == name(&entry)) {
            entries.push(entry);
        }
    }
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

impl Kubeconfig {
    /// Parses a kubeconfig document (YAML or JSON); `path` names it in
    /// errors and is recorded as each entry's file. Relative paths are not
    /// resolved here (see [`Kubeconfig::read`]).
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        // An empty file is an empty configuration, as clientcmd reads it.
        if text.trim().is_empty() {
            return Ok(Kubeconfig {
                files: vec![path.to_path_buf()],
                ..Kubeconfig::default()
            });
        }
        let mut config: Kubeconfig =
            serde_saphyr::from_str(text).map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                message: parse_error_message(&e),
            })?;
        config.files = vec![path.to_path_buf()];
        for cluster in &mut config.clusters {
            cluster.file = path.to_path_buf();
        }
        for user in &mut config.users {
            user.file = path.to_path_buf();
        }
        for context in &mut config.contexts {
            context.file = path.to_path_buf();
        }
        Ok(config)
    }

    /// Reads and parses a file, resolving relative file paths in it
    /// against the file's directory.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::ReadFile {
            what: "kubeconfig".to_string(),
            path: path.to_path_buf(),
            source,
        })?;
        let mut config = Kubeconfig::parse(&text, path)?;
        let directory = path.parent().unwrap_or_else(|| Path::new("."));
        config.resolve_relative_paths(directory);
        Ok(config)
    }

    /// Makes every relative file path absolute against `directory`:
    /// certificate and key files, token files, and exec commands that hold
    /// a path separator (a bare command is looked up in `PATH`).
    pub fn resolve_relative_paths(&mut self, directory: &Path) {
        let resolve = |value: &mut Option<String>| {
            if let Some(path) = value.as_mut()
                && !path.is_empty()
                && Path::new(path.as_str()).is_relative()
            {
                *path = directory.join(path.as_str()).to_string_lossy().into_owned();
            }
        };
        for cluster in self.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
            resolve(&mut cluster.certificate_authority);
        }
        for user in self.users.iter_mut().filter_map(|u| u.user.as_mut()) {
            resolve(&mut user.client_certificate);
            resolve(&mut user.client_key);
            resolve(&mut user.token_file);
            if let Some(exec) = user.exec.as_mut()
                && exec.command.contains(std::path::MAIN_SEPARATOR)
                && Path::new(&exec.command).is_relative()
            {
                exec.command = directory.join(&exec.command).to_string_lossy().into_owned();
            }
        }
    }

    /// Merges `other` into `self` with clientcmd's rules: an entry (cluster,
    /// user, context) already defined by name stays whole; the current
    /// context is kept if set.
    pub fn merge(&mut self, other: Kubeconfig) {
        merge_named(&mut self.clusters, other.clusters, |c| &c.name);
        merge_named(&mut self.users, other.users, |u| &u.name);
        merge_named(&mut self.contexts, other.contexts, |c| &c.name);
        if self.current_context.as_deref().is_none_or(str::is_empty) {
            self.current_context = other.current_context.filter(|c| !c.is_empty());
        }
        self.files.extend(other.files);
    }

    /// The files read, for messages.
    pub fn files_display(&self) -> String {
        if self.files.is_empty() {
            return "the kubeconfig".to_string();
        }
        self.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The YAML parser's message without the source lines it quotes after
/// its first line: a kubeconfig holds tokens, passwords and keys, and an
/// error message must not show them. The first line names the line and
/// column.
fn parse_error_message(error: &serde_saphyr::Error) -> String {
    let message = error.to_string();
    let first = message.lines().next().unwrap_or_default().trim();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_typical_file_and_ignores_unknown_fields() {
        let text = r#"
apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: prod
  cluster:
    server: https://prod:6443
    certificate-authority: ca.crt
    extensions: []
users:
- name: admin
  user:
    token: abc
    as: someone
    as-groups: [a, b]
contexts:
- name: prod
  context: {cluster: prod, user: admin, namespace: web}
current-context: prod
"#;
        let mut config = Kubeconfig::parse(text, Path::new("/home/me/.kube/config")).unwrap();
        config.resolve_relative_paths(Path::new("/home/me/.kube"));
        assert_eq!(config.current_context.as_deref(), Some("prod"));
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(
            cluster.certificate_authority.as_deref(),
            Some("/home/me/.kube/ca.crt")
        );
        let user = config.users[0].user.as_ref().unwrap();
        assert_eq!(
            user.impersonate_groups.as_deref(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert!(!format!("{user:?}").contains("abc"));
        assert_eq!(
            config.contexts[0]
                .context
                .as_ref()
                .unwrap()
                .namespace
                .as_deref(),
            Some("web")
        );
    }

    #[test]
    fn wrong_types_and_bad_yaml_name_the_file() {
        for text in ["clusters: 5", "clusters: [", "users:\n- name: [1, 2]"] {
            let error = Kubeconfig::parse(text, Path::new("/tmp/bad-config")).unwrap_err();
            let message = error.to_string();
            assert!(message.contains("/tmp/bad-config"), "{message}");
        }
    }

    #[test]
    fn merge_keeps_the_first_definition_whole() {
        let first = Kubeconfig::parse(
            "clusters:\n- name: a\n  cluster: {server: https://first}\n",
            Path::new("/one"),
        )
        .unwrap();
        let second = Kubeconfig::parse(
            "clusters:\n- name: a\n  cluster: {server: https://second, insecure-skip-tls-verify: true}\n- name: b\n  cluster: {server: https://b}\ncurrent-context: x\n",
            Path::new("/two"),
        )
        .unwrap();
        let mut merged = first;
        merged.merge(second);
        assert_eq!(merged.clusters.len(), 2);
        let a = merged.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(a.server.as_deref(), Some("https://first"));
        assert_eq!(a.insecure_skip_tls_verify, None, "no field-level merge");
        assert_eq!(merged.current_context.as_deref(), Some("x"));
        assert_eq!(merged.clusters[1].file, Path::new("/two"));
    }
}
