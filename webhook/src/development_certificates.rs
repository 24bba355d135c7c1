//! [`DevelopmentCertificates`]: a CA and a serving certificate made on
//! the spot, for tests and for running an operator's webhooks outside the
//! cluster (kube-apiserver then calls a URL on this machine).

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};

use crate::error::Error;

/// A self-signed CA (ECDSA P-256, one week) and the serving certificates
/// it signs. The CA's PEM is what a webhook configuration's `caBundle`
/// trusts; [`serving`](Self::serving) makes a new serving pair from the
/// same CA, as a rotation does.
pub struct DevelopmentCertificates {
    issuer: CertifiedIssuer<'static, KeyPair>,
    hosts: Vec<String>,
}

impl std::fmt::Debug for DevelopmentCertificates {
    /// Never prints a key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevelopmentCertificates")
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

/// A serving certificate and its key, PEM.
#[derive(Clone)]
pub struct ServingPair {
    /// The certificate.
    pub certificate_pem: String,
    /// Its private key.
    pub key_pem: String,
}

impl std::fmt::Debug for ServingPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingPair")
            .field("key_pem", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl DevelopmentCertificates {
    /// A CA for serving certificates valid for `hosts` (DNS names or IP
    /// addresses: `localhost`, `127.0.0.1`).
    pub fn new(hosts: &[&str]) -> Result<Self, Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "clientgo webhook development CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params.not_after = rcgen::date_time_ymd(2100, 1, 1);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        Ok(DevelopmentCertificates {
            issuer,
            hosts: hosts.iter().map(|host| (*host).to_owned()).collect(),
        })
    }

    /// The CA certificate (PEM): the `caBundle`.
    pub fn ca_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A new serving pair for the hosts.
    pub fn serving(&self) -> Result<ServingPair, Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "clientgo webhook");
        for host in &self.hosts {
            params.subject_alt_names.push(match host.parse::<IpAddr>() {
                Ok(address) => SanType::IpAddress(address),
                Err(_) => SanType::DnsName(host.clone().try_into()?),
            });
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate()?;
        let certificate = params.signed_by(&key, &self.issuer)?;
        Ok(ServingPair {
            certificate_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// A new serving pair written to `tls.crt` and `tls.key` in `folder`
    /// (made if missing), each replaced whole by a rename; the two paths.
    pub fn write_serving(&self, folder: &Path) -> Result<(PathBuf, PathBuf), Error> {
        let pair = self.serving()?;
        std::fs::create_dir_all(folder).map_err(|source| Error::Write {
            file: folder.to_path_buf(),
            source,
        })?;
        let certificate = folder.join("tls.crt");
        let key = folder.join("tls.key");
        write_whole(&key, pair.key_pem.as_bytes())?;
        write_whole(&certificate, pair.certificate_pem.as_bytes())?;
        Ok((certificate, key))
    }
}

fn write_whole(file: &Path, bytes: &[u8]) -> Result<(), Error> {
    let staging = file.with_extension("new");
    let failed = |source| Error::Write {
        file: file.to_path_buf(),
        source,
    };
    std::fs::write(&staging, bytes).map_err(failed)?;
    std::fs::rename(&staging, file).map_err(failed)
}
