//! The `oidc` auth-provider of kubeconfig files: an OpenID Connect ID
//! token sent as the bearer token, refreshed through the issuer's token
//! endpoint with the refresh token when it has expired (as client-go's
//! `oidc` plugin does). Nothing is written back to the kubeconfig: a
//! refreshed token lives as long as the client.
//!
//! The issuer is asked through a plain HTTP client with the issuer's
//! certificate authority, as client-go's plugin does: no credentials, no
//! rate limit, and no retry (a failed refresh is the request's error; the
//! next request tries again).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use reqwest::header::HeaderValue;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use crate::auth::authorization::bearer;
use crate::auth::error::{AuthError, AuthFailure};
use crate::config::error::ConfigError;
use crate::config::oidc::OidcConfig;
use crate::config::rest_config::Config;
use crate::transport::http::{describe_http_error, issuer_client};

/// How long before its expiry an ID token is refreshed.
const EXPIRY_MARGIN: Duration = Duration::from_secs(10);

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
    pub(crate) async fn header(&self) -> Result<Option<HeaderValue>, AuthFailure> {
        let mut current = self.current.lock().await;
        let fresh = current
            .0
            .as_deref()
            .is_some_and(|token| !expires_within(token, EXPIRY_MARGIN));
        if !fresh && current.1.is_some() && self.config.issuer_url.is_some() {
            let refresh_token = current.1.clone().unwrap_or_default();
            let (id, refresh) = self.refresh(&refresh_token).await?;
            current.0 = Some(id);
            if let Some(refresh) = refresh {
                current.1 = Some(refresh);
            }
        }
        match current.0.as_deref() {
            Some(token) => Ok(Some(bearer(token)?)),
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
    async fn refresh(&self, refresh_token: &str) -> Result<(String, Option<String>), AuthFailure> {
        let issuer = self.config.issuer_url.clone().unwrap_or_default();
        let failed = |message: String| {
            AuthFailure::from(AuthError::OidcRefresh {
                issuer: issuer.clone(),
                message,
            })
        };
        // The issuer's base URL, as a client configuration for it gives it
        // (a scheme added when missing, no trailing slash), and a client
        // trusting the issuer's certificate authority.
        let mut config = Config::new(&issuer);
        config.origin = format!("{} (oidc issuer)", self.origin);
        config.tls.certificate_authority = self.config.issuer_certificate_authority.clone();
        let base = issuer_base_url(&config)?;
        let client = issuer_client(&config)?;
        let discovery_url = format!("{base}/.well-known/openid-configuration");
        let discovery: serde_json::Value = fetch_json(client.get(&discovery_url), &discovery_url)
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
        let token_url = format!("{}{}", parsed.origin().ascii_serialization(), parsed.path());
        let request = client
            .post(&token_url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form);
        let answer: serde_json::Value = fetch_json(request, &token_url)
            .await
            .map_err(|error| failed(format!("the token endpoint refused: {error}")))?;
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

/// The issuer's URL without a trailing slash, checked to be a URL (a
/// configuration error otherwise, naming the issuer's configuration).
fn issuer_base_url(config: &Config) -> Result<String, ConfigError> {
    let base = config.host_url().trim_end_matches('/').to_string();
    reqwest::Url::parse(&base).map_err(|e| ConfigError::InvalidField {
        field: "host".to_string(),
        source_name: config.origin.clone(),
        message: format!("{base:?} is not a URL: {e}"),
    })?;
    Ok(base)
}

/// Sends `request` to the issuer and decodes a 2xx JSON answer. An error
/// names the URL and, for an answer other than 2xx, its HTTP code and the
/// OAuth `error` and `error_description` when the body has them: never
/// the body itself, which may hold a token.
async fn fetch_json<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    url: &str,
) -> Result<T, String> {
    let response = request
        .header(reqwest::header::ACCEPT, "application/json, */*")
        .send()
        .await
        .map_err(|error| {
            format!(
                "HTTP request to {url} failed: {}",
                describe_http_error(&error)
            )
        })?;
    let code = response.status();
    let body = response.bytes().await.map_err(|error| {
        format!(
            "HTTP request to {url} failed: {}",
            describe_http_error(&error)
        )
    })?;
    if !code.is_success() {
        let mut message = format!("HTTP {} from {url}", code.as_u16());
        if let Ok(oauth) = serde_json::from_slice::<serde_json::Value>(&body) {
            for field in ["error", "error_description"] {
                if let Some(text) = oauth[field].as_str() {
                    message.push_str(&format!(", {field}: {text:?}"));
                }
            }
        }
        return Err(message);
    }
    serde_json::from_slice(&body)
        .map_err(|error| format!("cannot decode the answer from {url}: {error}"))
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
