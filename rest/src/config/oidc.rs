//! [`OidcConfig`]: a kubeconfig user's `oidc` auth-provider settings
//! (clientcmd's `api.AuthProviderConfig` for the `oidc` plugin).

use crate::config::pem::PemSource;
use crate::config::secret::Secret;

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
