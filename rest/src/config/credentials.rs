//! [`Credentials`]: who the client says it is, one choice in
//! [`Config::credentials`](crate::Config::credentials).

use std::path::PathBuf;

use crate::config::exec::ExecConfig;
use crate::config::oidc::OidcConfig;
use crate::config::secret::Secret;

/// The credential a client puts on every request (client-go's
/// `rest.Config` token, token file, basic auth, exec provider and
/// auth-provider fields, of which a kubeconfig user sets one).
///
/// A client certificate is not a variant: it is part of
/// [`TlsConfig`](crate::config::TlsConfig) and may be presented with any of
/// these, as in client-go. Impersonation is separate as well
/// ([`Config::impersonate`](crate::Config::impersonate)).
///
/// After a `401 Unauthorized`, a credential that may have gone stale is
/// fetched again and the request sent once more: an exec plugin's or an
/// OIDC token, and a token file's when the token sent is the one cached
/// (not the fallback, and not one already replaced by a re-read).
/// `Debug` redacts every secret.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Credentials {
    /// No `Authorization` header (anonymous, or a client certificate only).
    #[default]
    None,
    /// A bearer token.
    BearerToken(Secret),
    /// A file holding the bearer token, read again every
    /// [`TOKEN_FILE_REFRESH`](crate::config::TOKEN_FILE_REFRESH) (a service
    /// account's projected token). A failed re-read keeps the token read
    /// before; `fallback` (a kubeconfig's `token` beside its `tokenFile`)
    /// is used when the file was never readable, as client-go does.
    TokenFile {
        /// Where the token is.
        path: PathBuf,
        /// The token used while the file cannot be read.
        fallback: Option<Secret>,
    },
    /// HTTP basic authentication.
    Basic {
        /// The user name.
        username: String,
        /// The password.
        password: Secret,
    },
    /// An exec plugin that hands out a token or a client certificate.
    Exec(ExecConfig),
    /// A kubeconfig's `oidc` auth-provider: an ID token, refreshed with the
    /// refresh token through the issuer when it expires.
    Oidc(OidcConfig),
}

impl Credentials {
    /// Which kind of credential this is, for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Credentials::None => "none",
            Credentials::BearerToken(_) => "bearer token",
            Credentials::TokenFile { .. } => "bearer token file",
            Credentials::Basic { .. } => "basic auth",
            Credentials::Exec(_) => "exec plugin",
            Credentials::Oidc(_) => "oidc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_every_secret() {
        let all = [
            Credentials::BearerToken(Secret::new("token-value")),
            Credentials::TokenFile {
                path: "/t".into(),
                fallback: Some(Secret::new("fallback-value")),
            },
            Credentials::Basic {
                username: "me".to_string(),
                password: Secret::new("password-value"),
            },
        ];
        for credentials in all {
            let shown = format!("{credentials:?}");
            for secret in ["token-value", "fallback-value", "password-value"] {
                assert!(!shown.contains(secret), "{shown}");
            }
        }
    }
}
