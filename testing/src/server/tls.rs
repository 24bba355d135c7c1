//! TLS for the test server: a certificate authority generated at start, a
//! server certificate for 127.0.0.1 and `localhost`, and optionally a
//! client certificate for client-certificate authentication.

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;

use crate::util::certificate_authority::{
    CertificateAndKey, CertificateAuthority, ServerCertificateOptions,
};

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// Generating a key or certificate failed.
    #[error("generating the test server's certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("configuring TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// The client certificate verifier could not be built.
    #[error("configuring client certificate verification: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
}

/// The server side of TLS.
pub(crate) struct ServerTls {
    pub acceptor: TlsAcceptor,
    pub ca_pem: String,
    pub client: Option<CertificateAndKey>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Generates the CA, the server certificate and (when asked) a client
/// certificate in the `system:masters` group, and builds the acceptor,
/// which offers HTTP/2 and HTTP/1.1 by ALPN.
pub(crate) fn generate(
    with_client_certificate: bool,
    certificate: &ServerCertificateOptions,
) -> Result<ServerTls, TlsSetupError> {
    let ca = CertificateAuthority::new("clientgo-testing CA")?;
    let server = ca.serving_certificate(certificate)?;
    let client = if with_client_certificate {
        Some(ca.client_certificate("clientgo-testing-user", &["system:masters"])?)
    } else {
        None
    };

    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?;
    let builder = if with_client_certificate {
        let mut roots = RootCertStore::empty();
        roots.add(ca.certificate_der().clone())?;
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            // Token-authenticated clients present no certificate.
            .allow_unauthenticated()
            .build()?;
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    // Made just above, so they parse; a failure is still an error, not a panic.
    let chain = CertificateDer::from_pem_slice(server.certificate_pem.as_bytes())
        .map_err(|_| rcgen::Error::CouldNotParseCertificate)?;
    let key = PrivateKeyDer::from_pem_slice(server.key_pem.as_bytes())
        .map_err(|_| rcgen::Error::CouldNotParseKeyPair)?;
    let mut config = builder.with_single_cert(vec![chain], key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ServerTls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        ca_pem: ca.certificate_pem(),
        client,
    })
}
