//! TLS for the test server: a certificate authority generated at start, a
//! server certificate for 127.0.0.1 and `localhost`, and optionally a
//! client certificate for client-certificate authentication.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;

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

/// A certificate and its private key, PEM-encoded.
#[derive(Clone)]
pub struct CertificateAndKey {
    /// The certificate (PEM).
    pub certificate_pem: String,
    /// The private key (PKCS#8 PEM).
    pub key_pem: String,
}

impl std::fmt::Debug for CertificateAndKey {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAndKey")
            .field(
                "certificate_pem",
                &format!("{} bytes", self.certificate_pem.len()),
            )
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

/// How the server's certificate is made; the defaults make one a client
/// trusting the server's CA accepts. The others make certificates a client
/// must refuse, to test that it does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerCertificateOptions {
    /// The DNS names the certificate is for, instead of `localhost` and
    /// 127.0.0.1 (names alone: no IP address then).
    pub names: Option<Vec<String>>,
    /// Makes a certificate that expired in the year 2000.
    pub expired: bool,
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
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "clientgo-testing CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

    let mut server_params = match &certificate.names {
        Some(names) => CertificateParams::new(names.clone())?,
        None => {
            let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
            params
                .subject_alt_names
                .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
            params
        }
    };
    if certificate.expired {
        server_params.not_before = rcgen::date_time_ymd(1999, 1, 1);
        server_params.not_after = rcgen::date_time_ymd(2000, 1, 1);
    }
    server_params
        .distinguished_name
        .push(DnType::CommonName, "clientgo-testing");
    server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_key = KeyPair::generate()?;
    let server_certificate = server_params.signed_by(&server_key, &ca)?;

    let client = if with_client_certificate {
        let mut client_params = CertificateParams::new(Vec::<String>::new())?;
        client_params
            .distinguished_name
            .push(DnType::CommonName, "clientgo-testing-user");
        client_params
            .distinguished_name
            .push(DnType::OrganizationName, "system:masters");
        client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_key = KeyPair::generate()?;
        let client_certificate = client_params.signed_by(&client_key, &ca)?;
        Some(CertificateAndKey {
            certificate_pem: client_certificate.pem(),
            key_pem: client_key.serialize_pem(),
        })
    } else {
        None
    };

    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?;
    let builder = if with_client_certificate {
        let mut roots = RootCertStore::empty();
        roots.add(ca.der().clone())?;
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            // Token-authenticated clients present no certificate.
            .allow_unauthenticated()
            .build()?;
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let chain: Vec<CertificateDer<'static>> = vec![server_certificate.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let mut config = builder.with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ServerTls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        ca_pem: ca.pem(),
        client,
    })
}
