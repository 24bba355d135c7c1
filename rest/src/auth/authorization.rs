//! [`Authorization`]: what one attempt of a request carries, and
//! [`bearer`], a token as an `Authorization` header.

use reqwest::header::HeaderValue;

use crate::auth::error::AuthError;

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
    pub(crate) fn with_header(header: HeaderValue) -> Self {
        Authorization {
            header: Some(header),
            certificate_changed: false,
        }
    }
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
