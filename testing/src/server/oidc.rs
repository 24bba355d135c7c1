//! An OpenID Connect issuer on the test server, for clients' `oidc`
//! auth-provider: discovery at `/.well-known/openid-configuration` and a
//! token endpoint at `/oidc/token` that trades one refresh token for an
//! ID token, as an identity provider does. Both answer without
//! authentication (they are the identity provider's, not the API's).

use bytes::Bytes;
use hyper::{Method, Response};

use crate::api::responses::{ResponseBody, json_response};

/// Path of the discovery document.
pub(crate) const DISCOVERY_PATH: &str = "/.well-known/openid-configuration";
/// Path of the token endpoint.
pub(crate) const TOKEN_PATH: &str = "/oidc/token";

/// What the issuer trades.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcIssuer {
    /// The client ID the token endpoint expects.
    pub client_id: String,
    /// The refresh token it accepts.
    pub refresh_token: String,
    /// The ID token it hands out for it.
    pub id_token: String,
    /// The refresh token it hands out with it (rotated, as many issuers do).
    pub next_refresh_token: String,
}

/// The issuer's answer to `path`, when it is one of its paths.
pub(crate) fn answer(
    issuer: &OidcIssuer,
    base_url: &str,
    method: &Method,
    path: &str,
    body: &Bytes,
) -> Option<Response<ResponseBody>> {
    match (method, path) {
        (&Method::GET, DISCOVERY_PATH) => Some(json_response(
            200,
            serde_json::to_vec(&serde_json::json!({
                "issuer": base_url,
                "token_endpoint": format!("{base_url}{TOKEN_PATH}"),
                "response_types_supported": ["id_token"],
            }))
            .unwrap_or_default(),
        )),
        (&Method::POST, TOKEN_PATH) => {
            let form: std::collections::HashMap<String, String> =
                form_urlencoded::parse(body).into_owned().collect();
            let field = |name: &str| form.get(name).map(String::as_str).unwrap_or_default();
            let good = field("grant_type") == "refresh_token"
                && field("refresh_token") == issuer.refresh_token
                && field("client_id") == issuer.client_id;
            Some(if good {
                json_response(
                    200,
                    serde_json::to_vec(&serde_json::json!({
                        "id_token": issuer.id_token,
                        "refresh_token": issuer.next_refresh_token,
                        "token_type": "Bearer",
                    }))
                    .unwrap_or_default(),
                )
            } else {
                json_response(400, br#"{"error":"invalid_grant"}"#.to_vec())
            })
        }
        _ => None,
    }
}
