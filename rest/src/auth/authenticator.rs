//! [`Authenticator`]: the `Authorization` header of each attempt of a
//! request, from the [`Credentials`] the configuration chose (client-go's
//! `transport` round trippers and `plugin/pkg/client/auth`).

use std::sync::Arc;

use base64::Engine as _;
use reqwest::header::HeaderValue;
use tokio::sync::Mutex;

use crate::auth::authorization::{Authorization, bearer};
use crate::auth::error::{AuthError, AuthFailure};
use crate::auth::exec::ExecAuthenticator;
use crate::auth::exec_plugin::ExecClusterInfo;
use crate::auth::oidc::OidcAuthenticator;
use crate::auth::token_file::TokenFile;
use crate::config::credentials::Credentials;
use crate::config::pem::read_pem;
use crate::config::rest_config::{Config, Proxy};
use crate::transport::client_certificate::ClientCertificateSlot;

/// Produces each attempt's [`Authorization`] from the configured
/// [`Credentials`]; shared by every request of a client.
#[derive(Debug)]
pub(crate) enum Authenticator {
    None,
    Static(HeaderValue),
    TokenFile(TokenFile),
    Exec(Box<ExecAuthenticator>),
    Oidc(Box<OidcAuthenticator>),
}

impl Authenticator {
    pub(crate) fn new(
        config: &Config,
        certificate_slot: &Arc<ClientCertificateSlot>,
    ) -> Result<Self, AuthFailure> {
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
            Credentials::Oidc(oidc) => Authenticator::Oidc(Box::new(OidcAuthenticator::new(
                oidc.clone(),
                config.origin.clone(),
            ))),
        })
    }

    /// The authorization for the next attempt (may read a file or run a
    /// plugin).
    pub(crate) async fn authorization(&self) -> Result<Authorization, AuthFailure> {
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
fn exec_cluster_info(config: &Config) -> Result<ExecClusterInfo, AuthFailure> {
    Ok(ExecClusterInfo {
        server: config.host_url(),
        tls_server_name: config.tls.server_name.clone(),
        insecure_skip_tls_verify: config.tls.insecure_skip_verify,
        certificate_authority_data: match &config.tls.certificate_authority {
            Some(source) => Some(base64::engine::general_purpose::STANDARD.encode(read_pem(
                source,
                "certificate-authority",
                &config.origin,
            )?)),
            None => None,
        },
        proxy_url: match &config.proxy {
            Proxy::Url(url) => Some(url.clone()),
            _ => None,
        },
    })
}
