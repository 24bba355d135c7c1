//! Credentials on every request (client-go's `transport` round trippers
//! and `plugin/pkg/client/auth`): [`Credentials`] says which one the
//! configuration chose, and the [`Authenticator`] built from it produces
//! the `Authorization` header of each attempt.
//!
//! | file | credential |
//! |---|---|
//! | `token_file.rs` | a bearer token file read again every minute |
//! | `exec_plugin.rs`, `exec.rs` | an exec plugin: running it, and caching its credential |
//! | `oidc.rs` | a kubeconfig's `oidc` auth-provider |
//! | `client_certificate.rs` | the client certificate a connection presents |

mod client_certificate;
mod credentials;
mod exec;
mod exec_interactivity;
mod exec_plugin;
mod oidc;
mod token_file;

use std::sync::Arc;

use base64::Engine as _;
use reqwest::header::HeaderValue;
use tokio::sync::Mutex;

pub(crate) use client_certificate::ClientCertificateSlot;
pub use credentials::Credentials;
pub use exec_plugin::{DEFAULT_EXEC_TIMEOUT, EXEC_API_VERSIONS, ExecConfig, ExecEnvVar};
pub use oidc::OidcConfig;

use crate::config::Config;
use crate::error::{AuthError, Error};
use exec::ExecAuthenticator;
use exec_plugin::ExecClusterInfo;
use token_file::TokenFile;

/// What one attempt of a request carries.
#[derive(Debug, Clone, Default)]
pub(crate) struct Authorization {
    /// The `Authorization` header, when there is one.
    pub(crate) header: Option<HeaderValue>,
    /// Whether the client certificate changed while getting it (the
    /// connection pool must be dropped so new connections present it).
    pub(crate) certificate_changed: bool,
}

impl Authorization {
    /// An `Authorization` header and no certificate change.
    fn with_header(header: HeaderValue) -> Self {
        Authorization {
            header: Some(header),
            certificate_changed: false,
        }
    }
}

/// Produces each attempt's [`Authorization`] from the configured
/// [`Credentials`]; shared by every request of a client.
#[derive(Debug)]
pub(crate) enum Authenticator {
    None,
    Static(HeaderValue),
    TokenFile(TokenFile),
    Exec(Box<ExecAuthenticator>),
    Oidc(Box<oidc::OidcAuthenticator>),
}

impl Authenticator {
    pub(crate) fn new(
        config: &Config,
        certificate_slot: &Arc<ClientCertificateSlot>,
    ) -> Result<Self, Error> {
        Ok(match &config.credentials {
            Credentials::None => Authenticator::None,
            Credentials::BearerToken(token) => Authenticator::Static(bearer(token.expose())?),
            Credentials::TokenFile { path, fallback } => Authenticator::TokenFile(TokenFile {
                path: path.clone(),
                fallback: fallback.as_ref().map(|t| t.expose().to_string()),
                cached: Mutex::new(None),
            }),
            Credentials::Basic { username, password } => {
                let encoded = base64::engine::general_purpose::STANDARD
                    .encode(format!("{username}:{}", password.expose()));
                let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
                    .map_err(|_| AuthError::InvalidHeaderValue { what: "username" })?;
                value.set_sensitive(true);
                Authenticator::Static(value)
            }
            Credentials::Exec(exec) => Authenticator::Exec(Box::new(ExecAuthenticator {
                config: exec.clone(),
                cluster: exec_cluster_info(config)?,
                cached: Mutex::new(None),
                certificate_slot: Arc::clone(certificate_slot),
                origin: config.origin.clone(),
            })),
            Credentials::Oidc(oidc) => Authenticator::Oidc(Box::new(oidc::OidcAuthenticator::new(
                oidc.clone(),
                config.origin.clone(),
            ))),
        })
    }

    /// The authorization for the next attempt (may read a file or run a
    /// plugin).
    pub(crate) async fn authorization(&self) -> Result<Authorization, Error> {
        match self {
            Authenticator::None => Ok(Authorization::default()),
            Authenticator::Static(value) => Ok(Authorization::with_header(value.clone())),
            Authenticator::TokenFile(file) => Ok(Authorization::with_header(file.header().await?)),
            Authenticator::Exec(exec) => exec.authorization().await,
            Authenticator::Oidc(oidc) => Ok(Authorization {
                header: oidc.header().await?,
                certificate_changed: false,
            }),
        }
    }

    /// After a 401 with `used`: forgets a cached credential that may be
    /// stale and says whether asking again can help (the request is then
    /// sent once more).
    pub(crate) async fn unauthorized(&self, used: &Authorization) -> bool {
        match self {
            Authenticator::None | Authenticator::Static(_) => false,
            Authenticator::TokenFile(file) => file.invalidate(used).await,
            Authenticator::Exec(exec) => exec.invalidate(used).await,
            Authenticator::Oidc(oidc) => oidc.invalidate().await,
        }
    }
}

/// What an exec plugin is told of the cluster (`KUBERNETES_EXEC_INFO`).
fn exec_cluster_info(config: &Config) -> Result<ExecClusterInfo, Error> {
    Ok(ExecClusterInfo {
        server: config.host_url(),
        tls_server_name: config.tls.server_name.clone(),
        insecure_skip_tls_verify: config.tls.insecure_skip_verify,
        certificate_authority_data: match &config.tls.certificate_authority {
            Some(source) => Some(base64::engine::general_purpose::STANDARD.encode(
                crate::tls::read_pem(source, "certificate-authority", &config.origin)?,
            )),
            None => None,
        },
        proxy_url: match &config.proxy {
            crate::config::Proxy::Url(url) => Some(url.clone()),
            _ => None,
        },
    })
}

/// A bearer token as an `Authorization` header, marked sensitive.
pub(crate) fn bearer(token: &str) -> Result<HeaderValue, AuthError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim())).map_err(|_| {
        AuthError::InvalidHeaderValue {
            what: "bearer token",
        }
    })?;
    value.set_sensitive(true);
    Ok(value)
}
