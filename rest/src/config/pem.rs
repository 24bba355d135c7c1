//! [`PemSource`]: PEM text given inline or as a file, and reading it:
//! certificates, private keys, and a certificate with its key checked to
//! belong together (client-go's `rest.TLSClientConfig` data and files).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

use crate::config::error::ConfigError;

/// PEM text given inline or as a file to read.
#[derive(Clone, PartialEq, Eq)]
pub enum PemSource {
    /// The PEM bytes themselves (a kubeconfig's `*-data` field, decoded).
    Data(Vec<u8>),
    /// A file holding PEM text.
    File(PathBuf),
}

impl fmt::Debug for PemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PemSource::Data(bytes) => write!(f, "Data({} bytes)", bytes.len()),
            PemSource::File(path) => write!(f, "File({})", path.display()),
        }
    }
}

/// Reads a PEM source, naming the setting and the configuration on failure.
pub(crate) fn read_pem(
    source: &PemSource,
    field: &str,
    origin: &str,
) -> Result<Vec<u8>, ConfigError> {
    match source {
        PemSource::Data(bytes) => Ok(bytes.clone()),
        PemSource::File(path) => std::fs::read(path).map_err(|source| ConfigError::ReadFile {
            what: format!("{field} (from {origin})"),
            path: path.clone(),
            source,
        }),
    }
}

/// A [`ConfigError::Tls`] for `field` of the configuration `origin`.
pub(crate) fn tls_error(field: &str, origin: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Tls {
        field: field.to_string(),
        source_name: origin.to_string(),
        message: message.into(),
    }
}

/// Parses every certificate in PEM text; at least one must be there.
pub(crate) fn parse_certificates(
    pem: &[u8],
    field: &str,
    origin: &str,
) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let mut certificates = Vec::new();
    for item in CertificateDer::pem_slice_iter(pem) {
        let certificate = item.map_err(|e| tls_error(field, origin, format!("bad PEM: {e}")))?;
        certificates.push(certificate);
    }
    if certificates.is_empty() {
        return Err(tls_error(field, origin, "no PEM CERTIFICATE block found"));
    }
    Ok(certificates)
}

/// Parses a private key (PKCS#8, PKCS#1 or SEC1) from PEM text.
pub(crate) fn parse_private_key(
    pem: &[u8],
    field: &str,
    origin: &str,
) -> Result<PrivateKeyDer<'static>, ConfigError> {
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|e| tls_error(field, origin, format!("no usable PEM private key: {e}")))
}

/// A certificate and key checked to belong together, ready for rustls.
/// `fields` names the certificate's and the key's settings in errors.
pub(crate) fn certified_key(
    certificate_pem: &[u8],
    key_pem: &[u8],
    fields: (&str, &str),
    origin: &str,
) -> Result<Arc<CertifiedKey>, ConfigError> {
    let (certificate_field, key_field) = fields;
    let chain = parse_certificates(certificate_pem, certificate_field, origin)?;
    let key = parse_private_key(key_pem, key_field, origin)?;
    let provider = rustls::crypto::ring::default_provider();
    let certified = CertifiedKey::from_der(chain, key, &provider).map_err(|e| {
        tls_error(
            key_field,
            origin,
            format!("unusable, or does not fit the certificate: {e}"),
        )
    })?;
    Ok(Arc::new(certified))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_pem_names_the_field_and_origin() {
        let error = parse_certificates(b"not pem at all", "certificate-authority", "kubeconfig /x")
            .unwrap_err()
            .to_string();
        assert!(error.contains("certificate-authority"), "{error}");
        assert!(error.contains("kubeconfig /x"), "{error}");
        let error = parse_private_key(b"-----BEGIN NOTHING-----\n", "client-key", "k")
            .unwrap_err()
            .to_string();
        assert!(error.contains("client-key"), "{error}");
    }
}
