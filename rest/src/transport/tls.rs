//! TLS through rustls with the ring provider: trusted roots, server name
//! override, skip-verify, and a client certificate that can change while the
//! client runs (exec plugins hand out new ones).

use std::path::Path;
use std::sync::Arc;

use parking_lot::RwLock;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::config::error::ConfigError;
use crate::config::pem::{parse_certificates, read_pem, tls_error};
use crate::config::rest_config::Config;
use crate::transport::client_certificate::ClientCertificateSlot;

/// Where distributions keep the system's certificate bundle, tried in order
/// after `SSL_CERT_FILE` when no certificate authority is configured.
const SYSTEM_BUNDLES: [&str; 5] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
];

/// How the server's certificate is verified, replaceable while the client
/// runs (a certificate authority file that changed). rustls asks at every
/// handshake, so a new one takes effect on the next connection. With a
/// server name set (client-go's `TLSClientConfig.ServerName`), the
/// certificate is verified against it instead of the URL's host.
#[derive(Debug)]
pub(crate) struct ServerVerifierSlot {
    current: RwLock<Arc<dyn ServerCertVerifier>>,
    server_name: Option<ServerName<'static>>,
}

impl ServerVerifierSlot {
    /// Replaces the verifier.
    pub(crate) fn set(&self, verifier: Arc<dyn ServerCertVerifier>) {
        *self.current.write() = verifier;
    }

    fn get(&self) -> Arc<dyn ServerCertVerifier> {
        Arc::clone(&self.current.read())
    }
}

impl ServerCertVerifier for ServerVerifierSlot {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let server_name = self.server_name.as_ref().unwrap_or(server_name);
        self.get()
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()
            .verify_tls12_signature(message, certificate, signature)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()
            .verify_tls13_signature(message, certificate, signature)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.get().supported_verify_schemes()
    }
}

/// A verifier trusting the certificates in `ca_pem` (a certificate
/// authority file re-read while the client runs).
/// `origin` names the configuration in errors.
pub(crate) fn verifier_for_ca(
    ca_pem: &[u8],
    origin: &str,
) -> Result<Arc<dyn ServerCertVerifier>, ConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    add_ca_certificates(&mut roots, ca_pem, origin)?;
    pinned_verifier(roots, origin)
}

/// Verifies against `roots`.
fn pinned_verifier(
    roots: rustls::RootCertStore,
    origin: &str,
) -> Result<Arc<dyn ServerCertVerifier>, ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| tls_error("certificate-authority", origin, e.to_string()))?;
    Ok(verifier)
}

/// What [`client_tls_config`] builds.
pub(crate) struct ClientTls {
    /// The rustls configuration.
    pub(crate) config: rustls::ClientConfig,
    /// Its server verifier, replaceable when a certificate authority file
    /// is re-read.
    pub(crate) verifier: Arc<ServerVerifierSlot>,
    /// The certificate authority's PEM as read (none when the system's
    /// roots are used or verification is off).
    pub(crate) authority_pem: Option<Vec<u8>>,
}

/// Builds the rustls configuration for `config`, with `client_certificate`
/// as the source of client certificates and the server verifier in a new
/// [`ServerVerifierSlot`].
pub(crate) fn client_tls_config(
    config: &Config,
    client_certificate: Arc<ClientCertificateSlot>,
) -> Result<ClientTls, ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::HttpClient(format!("TLS protocol versions: {e}")))?;
    let origin = config.origin.as_str();

    let mut authority_pem = None;
    let (verifier, server_name): (Arc<dyn ServerCertVerifier>, _) = if config
        .tls
        .insecure_skip_verify
    {
        tracing::warn!(
            host = %config.host,
            origin,
            "TLS certificate verification is disabled (insecure-skip-tls-verify): anyone on the path can impersonate the API server"
        );
        let schemes = provider
            .signature_verification_algorithms
            .supported_schemes();
        (Arc::new(NoVerification { schemes }), None)
    } else {
        let (roots, pem) = root_store(config)?;
        authority_pem = pem;
        let server_name = match &config.tls.server_name {
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|e| {
                tls_error(
                    "tls-server-name",
                    origin,
                    format!("{name:?} is not a valid name: {e}"),
                )
            })?),
            None => None,
        };
        (pinned_verifier(roots, origin)?, server_name)
    };
    let verifier = Arc::new(ServerVerifierSlot {
        current: RwLock::new(verifier),
        server_name,
    });

    let mut tls = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::clone(&verifier) as Arc<dyn ServerCertVerifier>)
        .with_client_cert_resolver(client_certificate);
    tls.alpn_protocols = if config.tls.disable_http2 {
        vec![b"http/1.1".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(ClientTls {
        config: tls,
        verifier,
        authority_pem,
    })
}

/// The trusted roots: the configured certificate authority (with its PEM,
/// as read) or the system's.
fn root_store(config: &Config) -> Result<(rustls::RootCertStore, Option<Vec<u8>>), ConfigError> {
    let origin = config.origin.as_str();
    let mut roots = rustls::RootCertStore::empty();
    match &config.tls.certificate_authority {
        Some(source) => {
            let pem = read_pem(source, "certificate-authority", origin)?;
            add_ca_certificates(&mut roots, &pem, origin)?;
            return Ok((roots, Some(pem)));
        }
        None => {
            let added = add_system_roots(&mut roots);
            if added == 0 {
                tracing::warn!(
                    origin,
                    "no certificate authority configured and no system bundle found; TLS connections will fail"
                );
            }
        }
    }
    Ok((roots, None))
}

/// Adds every certificate of a certificate authority's PEM text.
fn add_ca_certificates(
    roots: &mut rustls::RootCertStore,
    pem: &[u8],
    origin: &str,
) -> Result<(), ConfigError> {
    for certificate in parse_certificates(pem, "certificate-authority", origin)? {
        roots.add(certificate).map_err(|e| {
            tls_error(
                "certificate-authority",
                origin,
                format!("unusable certificate: {e}"),
            )
        })?;
    }
    Ok(())
}

/// Adds the system's trusted certificates; returns how many were added.
fn add_system_roots(roots: &mut rustls::RootCertStore) -> usize {
    let from_environment = std::env::var_os("SSL_CERT_FILE").map(std::path::PathBuf::from);
    let candidates = from_environment
        .into_iter()
        .chain(SYSTEM_BUNDLES.iter().map(std::path::PathBuf::from));
    for path in candidates {
        if let Some(added) = add_bundle(roots, &path)
            && added > 0
        {
            return added;
        }
    }
    0
}

fn add_bundle(roots: &mut rustls::RootCertStore, path: &Path) -> Option<usize> {
    let pem = std::fs::read(path).ok()?;
    let certificates: Vec<_> = CertificateDer::pem_slice_iter(&pem)
        .filter_map(Result::ok)
        .collect();
    let (added, _ignored) = roots.add_parsable_certificates(certificates);
    Some(added)
}

/// Accepts any server certificate: `insecure-skip-tls-verify`.
#[derive(Debug)]
struct NoVerification {
    schemes: Vec<SignatureScheme>,
}

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _certificate: &CertificateDer<'_>,
        _signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _certificate: &CertificateDer<'_>,
        _signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes.clone()
    }
}
