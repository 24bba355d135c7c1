//! Credentials on every request: basic auth, a bearer token, a token file
//! read again every minute, or an exec plugin's token or certificate.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use reqwest::header::HeaderValue;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::config::{Config, TOKEN_FILE_REFRESH};
use crate::error::{AuthError, Error};
use crate::exec::{ExecClusterInfo, ExecConfig, ExecCredential, run_plugin};
use crate::tls::{ClientCertificateSlot, certified_key};

/// A credential is refreshed this long before it expires.
const EXPIRY_LEEWAY: Duration = Duration::from_secs(10);

/// What to put on a request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Credentials {
    /// The `Authorization` header, when there is one.
    pub(crate) authorization: Option<HeaderValue>,
    /// Whether the client certificate changed while getting these (the
    /// connection pool must be dropped so new connections present it).
    pub(crate) certificate_changed: bool,
}

/// Puts credentials on requests.
#[derive(Debug)]
pub(crate) enum Authenticator {
    None,
    Static(HeaderValue),
    TokenFile(TokenFile),
    Exec(Box<ExecAuthenticator>),
    Oidc(Box<crate::oidc::OidcAuthenticator>),
}

impl Authenticator {
    pub(crate) fn new(
        config: &Config,
        certificate_slot: &Arc<ClientCertificateSlot>,
    ) -> Result<Self, Error> {
        if let Some(exec) = &config.exec {
            let cluster = ExecClusterInfo {
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
            };
            return Ok(Authenticator::Exec(Box::new(ExecAuthenticator {
                config: exec.clone(),
                cluster,
                cached: Mutex::new(None),
                certificate_slot: Arc::clone(certificate_slot),
                origin: config.origin.clone(),
            })));
        }
        if let Some(oidc) = &config.oidc {
            return Ok(Authenticator::Oidc(Box::new(
                crate::oidc::OidcAuthenticator::new(oidc.clone(), config.origin.clone()),
            )));
        }
        if let Some(path) = &config.bearer_token_file {
            return Ok(Authenticator::TokenFile(TokenFile {
                path: path.clone(),
                fallback: config.bearer_token.as_ref().map(|t| t.expose().to_string()),
                cached: Mutex::new(None),
            }));
        }
        if let Some(token) = &config.bearer_token {
            return Ok(Authenticator::Static(bearer(token.expose())?));
        }
        if let Some(username) = &config.username {
            let password = config.password.as_ref().map_or("", |p| p.expose());
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
            let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
                .map_err(|_| AuthError::InvalidHeaderValue { what: "username" })?;
            value.set_sensitive(true);
            return Ok(Authenticator::Static(value));
        }
        Ok(Authenticator::None)
    }

    /// The credentials for the next request (may read a file or run a
    /// plugin).
    pub(crate) async fn credentials(&self) -> Result<Credentials, Error> {
        match self {
            Authenticator::None => Ok(Credentials::default()),
            Authenticator::Static(value) => Ok(Credentials {
                authorization: Some(value.clone()),
                certificate_changed: false,
            }),
            Authenticator::TokenFile(file) => Ok(Credentials {
                authorization: Some(file.header().await?),
                certificate_changed: false,
            }),
            Authenticator::Exec(exec) => exec.credentials().await,
            Authenticator::Oidc(oidc) => Ok(Credentials {
                authorization: oidc.header().await?,
                certificate_changed: false,
            }),
        }
    }

    /// After a 401 with `used`: forgets a cached credential that may be
    /// stale and says whether asking again can help (the request is then
    /// retried once).
    pub(crate) async fn unauthorized(&self, used: &Credentials) -> bool {
        match self {
            Authenticator::None | Authenticator::Static(_) => false,
            Authenticator::TokenFile(file) => file.invalidate(used).await,
            Authenticator::Exec(exec) => exec.invalidate(used).await,
            Authenticator::Oidc(oidc) => oidc.invalidate().await,
        }
    }
}

pub(crate) fn bearer(token: &str) -> Result<HeaderValue, AuthError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim())).map_err(|_| {
        AuthError::InvalidHeaderValue {
            what: "bearer token",
        }
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// A bearer token read from a file, cached for [`TOKEN_FILE_REFRESH`].
#[derive(Debug)]
pub(crate) struct TokenFile {
    path: PathBuf,
    /// `Config::bearer_token`, used when the file was never readable.
    fallback: Option<String>,
    cached: Mutex<Option<(HeaderValue, Instant)>>,
}

impl TokenFile {
    async fn header(&self) -> Result<HeaderValue, Error> {
        let mut cached = self.cached.lock().await;
        if let Some((value, read_at)) = cached.as_ref()
            && read_at.elapsed() < TOKEN_FILE_REFRESH
        {
            return Ok(value.clone());
        }
        match self.read().await {
            Ok(value) => {
                *cached = Some((value.clone(), Instant::now()));
                Ok(value)
            }
            Err(error) => {
                // client-go keeps using the token it has when a re-read
                // fails; only the first read is fatal.
                if let Some((value, _)) = cached.as_ref() {
                    tracing::warn!(%error, "cannot re-read the bearer token file; keeping the previous token");
                    return Ok(value.clone());
                }
                if let Some(token) = &self.fallback {
                    tracing::warn!(%error, "cannot read the bearer token file; using the configured token");
                    return Ok(bearer(token)?);
                }
                Err(error)
            }
        }
    }

    async fn read(&self) -> Result<HeaderValue, Error> {
        let text = tokio::fs::read_to_string(&self.path)
            .await
            .map_err(|source| AuthError::TokenFile {
                path: self.path.clone(),
                source,
            })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(AuthError::EmptyTokenFile {
                path: self.path.clone(),
            }
            .into());
        }
        Ok(bearer(token)?)
    }

    async fn invalidate(&self, used: &Credentials) -> bool {
        let mut cached = self.cached.lock().await;
        let stale = matches!((cached.as_ref(), &used.authorization), (Some((value, _)), Some(used)) if value == used);
        if stale {
            *cached = None;
        }
        stale
    }
}

/// An exec plugin's credential, cached until it expires.
#[derive(Debug)]
pub(crate) struct ExecAuthenticator {
    config: ExecConfig,
    cluster: ExecClusterInfo,
    cached: Mutex<Option<CachedExec>>,
    certificate_slot: Arc<ClientCertificateSlot>,
    origin: String,
}

#[derive(Debug)]
struct CachedExec {
    credential: ExecCredential,
    authorization: Option<HeaderValue>,
}

impl ExecAuthenticator {
    async fn credentials(&self) -> Result<Credentials, Error> {
        // One plugin run at a time; callers queue behind it and share its
        // result.
        let mut cached = self.cached.lock().await;
        if let Some(current) = cached.as_ref()
            && !expired(&current.credential)
        {
            return Ok(Credentials {
                authorization: current.authorization.clone(),
                certificate_changed: false,
            });
        }
        let credential = run_plugin(&self.config, Some(&self.cluster)).await?;
        let authorization = match &credential.token {
            Some(token) => Some(bearer(token)?),
            None => None,
        };
        let key = match &credential.client_certificate {
            Some((certificate, key)) => Some(certified_key(
                certificate.as_bytes(),
                key.as_bytes(),
                ("status.clientCertificateData", "status.clientKeyData"),
                &format!("exec plugin {:?} ({})", self.config.command, self.origin),
            )?),
            None => None,
        };
        let certificate_changed = key.is_some() && self.certificate_slot.set(key);
        tracing::debug!(
            command = %self.config.command,
            expires = ?credential.expires,
            certificate_changed,
            "exec credential plugin ran"
        );
        *cached = Some(CachedExec {
            credential,
            authorization: authorization.clone(),
        });
        Ok(Credentials {
            authorization,
            certificate_changed,
        })
    }

    async fn invalidate(&self, used: &Credentials) -> bool {
        let mut cached = self.cached.lock().await;
        match cached.as_ref() {
            // Someone already refreshed since this request was sent.
            Some(current) if current.authorization != used.authorization => true,
            Some(_) => {
                *cached = None;
                true
            }
            None => true,
        }
    }
}

fn expired(credential: &ExecCredential) -> bool {
    match credential.expires {
        None => false,
        Some(expires) => {
            let leeway = jiff::SignedDuration::try_from(EXPIRY_LEEWAY).unwrap_or_default();
            jiff::Timestamp::now() >= expires.checked_sub(leeway).unwrap_or(expires)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_token_file_is_read_again_after_a_minute() {
        let path = std::env::temp_dir().join(format!("clientgo-rest-token-{}", std::process::id()));
        std::fs::write(&path, "first\n").unwrap();
        let file = TokenFile {
            path: path.clone(),
            fallback: None,
            cached: Mutex::new(None),
        };
        assert_eq!(file.header().await.unwrap(), "Bearer first");
        std::fs::write(&path, "second").unwrap();
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(file.header().await.unwrap(), "Bearer first", "cached");
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(file.header().await.unwrap(), "Bearer second", "re-read");
        // A failed re-read keeps the last good token.
        std::fs::remove_file(&path).unwrap();
        tokio::time::advance(TOKEN_FILE_REFRESH).await;
        assert_eq!(file.header().await.unwrap(), "Bearer second");
    }
}
