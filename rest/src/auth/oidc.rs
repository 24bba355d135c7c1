//! The `oidc` auth-provider of kubeconfig files: an OpenID Connect ID
//! token sent as the bearer token, refreshed through the issuer's token
//! endpoint with the refresh token when it has expired (as client-go's
//! `oidc` plugin does). Nothing is written back to the kubeconfig: a
//! refreshed token lives as long as the client.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use reqwest::header::HeaderValue;
use tokio::sync::Mutex;

use crate::config::PemSource;
use crate::error::{AuthError, Error};
use crate::secret::Secret;

/// How long before its expiry an ID token is refreshed.
const EXPIRY_MARGIN: Duration = Duration::from_secs(10);

/// An `auth-provider: {name: oidc, config: …}` entry.
#[derive(Clone, Debug, Default)]
pub struct OidcConfig {
    /// `id-token`: the current ID token (a JWT).
    pub id_token: Option<Secret>,
    /// `refresh-token`: trades for a new ID token once it expires.
    pub refresh_token: Option<Secret>,
    /// `idp-issuer-url`: the issuer, whose discovery document names the
    /// token endpoint.
    pub issuer_url: Option<String>,
    /// `client-id`.
    pub client_id: String,
    /// `client-secret`.
    pub client_secret: Option<Secret>,
    /// `idp-certificate-authority(-data)`: the issuer's CA (the system's
    /// roots when unset).
    pub issuer_certificate_authority: Option<PemSource>,
}

/// Puts the ID token on requests, refreshing it when it has expired.
#[derive(Debug)]
pub(crate) struct OidcAuthenticator {
    config: OidcConfig,
    origin: String,
    /// The ID token in use, and the refresh token to renew it with.
    current: Mutex<(Option<String>, Option<String>)>,
}

impl OidcAuthenticator {
    pub(crate) fn new(config: OidcConfig, origin: String) -> Self {
        let id = config.id_token.as_ref().map(|t| t.expose().to_string());
        let refresh = config
            .refresh_token
            .as_ref()
            .map(|t| t.expose().to_string());
        OidcAuthenticator {
            config,
            origin,
            current: Mutex::new((id, refresh)),
        }
    }

    /// The `Authorization` header: the ID token, refreshed first when it
    /// has expired (or is about to) and a refresh token and issuer are
    /// known; an expired token that cannot be refreshed is sent as it is
    /// (the server answers 401).
    pub(crate) async fn header(&self) -> Result<Option<HeaderValue>, Error> {
        let mut current = self.current.lock().await;
        let fresh = current
            .0
            .as_deref()
            .is_some_and(|token| !expires_within(token, EXPIRY_MARGIN));
        if !fresh && current.1.is_some() && self.config.issuer_url.is_some() {
            let refresh_token = current.1.clone().unwrap_or_default();
            // Boxed: refreshing sends requests through a client of its own,
            // whose requests get credentials through this same path.
            let (id, refresh) = Box::pin(self.refresh(&refresh_token)).await?;
            current.0 = Some(id);
            if let Some(refresh) = refresh {
                current.1 = Some(refresh);
            }
        }
        match current.0.as_deref() {
            Some(token) => Ok(Some(super::bearer(token)?)),
            None => Ok(None),
        }
    }

    /// After a 401: the token is treated as expired, so the next request
    /// refreshes it, when it can be refreshed.
    pub(crate) async fn invalidate(&self) -> bool {
        let mut current = self.current.lock().await;
        let can_refresh = current.1.is_some() && self.config.issuer_url.is_some();
        if can_refresh {
            current.0 = None;
        }
        can_refresh
    }

    /// Trades the refresh token for a new ID token (and maybe a new
    /// refresh token) at the issuer's token endpoint.
    async fn refresh(&self, refresh_token: &str) -> Result<(String, Option<String>), Error> {
        let issuer = self.config.issuer_url.clone().unwrap_or_default();
        let failed = |message: String| {
            Error::from(AuthError::OidcRefresh {
                issuer: issuer.clone(),
                message,
            })
        };
        let client = |url: &str| -> Result<crate::RestClient, Error> {
            let mut config = crate::Config::new(url);
            config.origin = format!("{} (oidc issuer)", self.origin);
            config.tls.certificate_authority = self.config.issuer_certificate_authority.clone();
            crate::RestClient::new(config)
        };
        let discovery: serde_json::Value = client(&issuer)?
            .get()
            .abs_path("/.well-known/openid-configuration")
            .send()
            .await
            .map_err(|error| failed(format!("discovery failed: {error}")))?;
        let endpoint = discovery["token_endpoint"]
            .as_str()
            .ok_or_else(|| failed("the discovery document names no token_endpoint".into()))?
            .to_string();
        // Built whole before any await (the serializer is not Send).
        let form = {
            let mut form = form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "refresh_token")
                .append_pair("refresh_token", refresh_token)
                .append_pair("client_id", &self.config.client_id);
            if let Some(secret) = &self.config.client_secret {
                form.append_pair("client_secret", secret.expose());
            }
            form.finish()
        };
        let parsed = reqwest::Url::parse(&endpoint).map_err(|error| {
            failed(format!(
                "the token endpoint {endpoint:?} is not a URL: {error}"
            ))
        })?;
        let origin = parsed.origin().ascii_serialization();
        let answer: serde_json::Value = client(&origin)?
            .post()
            .abs_path(parsed.path())
            .body(form, "application/x-www-form-urlencoded")
            .send()
            .await
            .map_err(|error| {
                failed(format!(
                    "the token endpoint refused: {}",
                    error
                        .status()
                        .map_or_else(|| error.to_string(), |s| s.message.clone())
                ))
            })?;
        let id_token = answer["id_token"]
            .as_str()
            .filter(|token| !token.is_empty())
            .ok_or_else(|| failed("the token endpoint's answer has no id_token".into()))?
            .to_string();
        let refresh = answer["refresh_token"].as_str().map(str::to_string);
        tracing::debug!(%issuer, "refreshed the oidc ID token");
        Ok((id_token, refresh))
    }
}

/// Whether the JWT `token` expires within `margin` (or has no readable
/// `exp`, which counts as expired only when it cannot be parsed at all:
/// a token without `exp` never expires).
fn expires_within(token: &str, margin: Duration) -> bool {
    let Some(payload) = token.split('.').nth(1) else {
        return true;
    };
    let Ok(bytes) =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('='))
    else {
        return true;
    };
    let Ok(claims) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return true;
    };
    let Some(expiry) = claims["exp"].as_f64() else {
        return false;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    expiry <= now + margin.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(exp: Option<i64>) -> String {
        let claims = match exp {
            Some(exp) => serde_json::json!({"sub": "me", "exp": exp}),
            None => serde_json::json!({"sub": "me"}),
        };
        let encode = |v: &serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        format!(
            "{}.{}.sig",
            encode(&serde_json::json!({"alg": "none"})),
            encode(&claims)
        )
    }

    #[test]
    fn expiry_is_read_from_the_token() {
        assert!(expires_within(&jwt(Some(1)), EXPIRY_MARGIN), "long expired");
        assert!(!expires_within(&jwt(Some(4_000_000_000)), EXPIRY_MARGIN));
        assert!(
            !expires_within(&jwt(None), EXPIRY_MARGIN),
            "no exp: never expires"
        );
        assert!(expires_within("not-a-jwt", EXPIRY_MARGIN));
        assert!(expires_within("a.!!!.c", EXPIRY_MARGIN));
    }
}
