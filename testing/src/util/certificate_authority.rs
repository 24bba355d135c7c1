//! [`CertificateAuthority`]: a CA made in memory, and the serving and
//! client certificates it signs. The test server's TLS and envtest's
//! control plane both take their certificates from one.

use std::net::{IpAddr, Ipv4Addr};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::CertificateDer;

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

/// How a serving certificate is made; the defaults make one a client
/// trusting its CA accepts for `localhost` and 127.0.0.1. The others make
/// certificates a client must refuse, to test that it does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerCertificateOptions {
    /// The DNS names the certificate is for, instead of `localhost` and
    /// 127.0.0.1 (names alone: no IP address then).
    pub names: Option<Vec<String>>,
    /// Makes a certificate that expired in the year 2000.
    pub expired: bool,
}

/// A certificate authority generated in memory (an ECDSA P-256 key, never
/// written anywhere by this type). Signing is cheap (well under a
/// millisecond), so a test may mint a certificate per user.
pub struct CertificateAuthority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl std::fmt::Debug for CertificateAuthority {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .finish_non_exhaustive()
    }
}

impl CertificateAuthority {
    /// A new CA whose certificate names it `common_name`.
    pub fn new(common_name: &str) -> Result<Self, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        Ok(CertificateAuthority { issuer })
    }

    /// The CA's certificate (PEM): what clients trust.
    pub fn certificate_pem(&self) -> String {
        self.issuer.pem()
    }

    /// The CA's certificate (DER).
    pub fn certificate_der(&self) -> &CertificateDer<'static> {
        self.issuer.der()
    }

    /// The CA's certificate and private key (PEM), for a program that
    /// signs with it (kube-apiserver's `--client-ca-file` takes only the
    /// certificate).
    pub fn certificate_and_key(&self) -> CertificateAndKey {
        CertificateAndKey {
            certificate_pem: self.issuer.pem(),
            key_pem: self.issuer.key().serialize_pem(),
        }
    }

    /// A serving certificate (`serverAuth`) for what `options` name.
    pub fn serving_certificate(
        &self,
        options: &ServerCertificateOptions,
    ) -> Result<CertificateAndKey, rcgen::Error> {
        let mut params = match &options.names {
            Some(names) => CertificateParams::new(names.clone())?,
            None => {
                let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
                params
                    .subject_alt_names
                    .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
                params
            }
        };
        if options.expired {
            params.not_before = rcgen::date_time_ymd(1999, 1, 1);
            params.not_after = rcgen::date_time_ymd(2000, 1, 1);
        }
        params
            .distinguished_name
            .push(DnType::CommonName, "clientgo-testing");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(&params)
    }

    /// A client certificate (`clientAuth`) for `user` in `groups`, as
    /// Kubernetes reads one: the common name is the user, each
    /// organization a group.
    pub fn client_certificate(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<CertificateAndKey, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, user);
        for group in groups {
            params
                .distinguished_name
                .push(DnType::OrganizationName, *group);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(&params)
    }

    fn sign(&self, params: &CertificateParams) -> Result<CertificateAndKey, rcgen::Error> {
        let key = KeyPair::generate()?;
        let certificate = params.signed_by(&key, &self.issuer)?;
        Ok(CertificateAndKey {
            certificate_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A fresh key pair (ECDSA P-256) as `(private PKCS#8 PEM, public SPKI
/// PEM)`: kube-apiserver's service-account signing and verifying keys.
pub fn generate_key_pair() -> Result<(String, String), rcgen::Error> {
    let key = KeyPair::generate()?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_debug_form_hides_keys() {
        let ca = CertificateAuthority::new("test CA").unwrap();
        let pair = ca.certificate_and_key();
        assert!(!format!("{pair:?}").contains("PRIVATE"));
        assert!(pair.key_pem.contains("PRIVATE KEY"));
    }
}
