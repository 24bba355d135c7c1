//! [`CertificateWatcher`]: the serving certificate and key read from
//! files, and read again when they change, as controller-runtime's
//! certwatcher. Connections in progress keep the certificate they began
//! with; new ones get the new one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

use crate::error::Error;

/// The certificate served now, swapped when the files change.
#[derive(Debug)]
pub(crate) struct CertificateWatcher {
    certificate_file: PathBuf,
    key_file: PathBuf,
    current: RwLock<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    key: Arc<CertifiedKey>,
    /// The files' bytes, to see a change.
    certificate_pem: Vec<u8>,
    key_pem: Vec<u8>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn load(
    certificate_file: &Path,
    key_file: &Path,
    certificate_pem: &[u8],
    key_pem: &[u8],
) -> Result<Arc<CertifiedKey>, Error> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(certificate_pem)
        .collect::<Result<_, _>>()
        .map_err(|error| Error::Certificate {
            file: certificate_file.to_path_buf(),
            message: format!("not PEM certificates: {error}"),
        })?;
    if chain.is_empty() {
        return Err(Error::Certificate {
            file: certificate_file.to_path_buf(),
            message: "no certificate in it".into(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| Error::Certificate {
        file: key_file.to_path_buf(),
        message: format!("not a PEM private key: {error}"),
    })?;
    let signing = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|error| Error::Certificate {
            file: key_file.to_path_buf(),
            message: format!("an unsupported private key: {error}"),
        })?;
    let certified = CertifiedKey::new(chain, signing);
    certified.keys_match().map_err(|error| Error::Certificate {
        file: key_file.to_path_buf(),
        message: format!("the key does not match the certificate: {error}"),
    })?;
    Ok(Arc::new(certified))
}

fn read(file: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(file).map_err(|source| Error::CertificateFile {
        file: file.to_path_buf(),
        source,
    })
}

impl CertificateWatcher {
    /// Reads both files now: a missing or bad file fails at once.
    pub(crate) fn new(certificate_file: &Path, key_file: &Path) -> Result<Self, Error> {
        let certificate_pem = read(certificate_file)?;
        let key_pem = read(key_file)?;
        let key = load(certificate_file, key_file, &certificate_pem, &key_pem)?;
        Ok(CertificateWatcher {
            certificate_file: certificate_file.to_path_buf(),
            key_file: key_file.to_path_buf(),
            current: RwLock::new(Loaded {
                key,
                certificate_pem,
                key_pem,
            }),
        })
    }

    /// Reads the files again and swaps the certificate if they changed
    /// and parse; `Ok(true)` when swapped. A half-written pair (a key
    /// that does not match yet) is an error, and the old pair is kept.
    pub(crate) fn reload(&self) -> Result<bool, Error> {
        let certificate_pem = read(&self.certificate_file)?;
        let key_pem = read(&self.key_file)?;
        {
            let current = self.current.read();
            if current.certificate_pem == certificate_pem && current.key_pem == key_pem {
                return Ok(false);
            }
        }
        let key = load(
            &self.certificate_file,
            &self.key_file,
            &certificate_pem,
            &key_pem,
        )?;
        *self.current.write() = Loaded {
            key,
            certificate_pem,
            key_pem,
        };
        Ok(true)
    }

    /// Reloads every `interval` until `stop`; a failed reload is logged
    /// and the certificate served stays.
    pub(crate) async fn watch(self: Arc<Self>, interval: Duration, stop: CancellationToken) {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(interval) => {}
            }
            match self.reload() {
                Ok(true) => {
                    tracing::info!(file = %self.certificate_file.display(), "webhook serving certificate reloaded")
                }
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "webhook serving certificate not reloaded"),
            }
        }
    }
}

impl ResolvesServerCert for CertificateWatcher {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.current.read().key))
    }
}
