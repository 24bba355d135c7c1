//! Client certificate and certificate authority files re-read while the
//! client runs, as client-go rotates them.
//!
//! client-go re-reads a client certificate and key given as files (both
//! files, no inline data) every 5 minutes and, when they changed, closes
//! its connections so the next ones present the new pair; it re-reads a
//! certificate authority given as a file (`ClientsAllowCARotation`) at most
//! once per 5 minutes, when a request is made, and moves new requests to a
//! transport trusting the new authorities. A file that cannot be read, is
//! empty or does not parse leaves the old credentials in use, and is tried
//! again after the next interval.
//!
//! Here both checks are made when a request is made and the interval has
//! passed since the last check (the certificate too: a certificate only
//! matters when a connection is opened, and connections are opened for
//! requests). A change replaces the certificate or the verifier, which
//! rustls consults at every handshake, and renews the client's connection
//! pools, so new requests open new connections; requests already in
//! flight, watches included, finish on their connections (client-go closes
//! those; a watch here ends at its timeout, within 10 minutes, and re-opens
//! with the new credentials).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::config::pem::{PemSource, certified_key};
use crate::config::rest_config::Config;
use crate::transport::client_certificate::ClientCertificateSlot;
use crate::transport::tls::{ServerVerifierSlot, verifier_for_ca};

/// What a re-read file means for the credentials in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReloadDecision {
    /// The same bytes: nothing to do.
    Unchanged,
    /// New bytes that parse: use them.
    Replace,
    /// Keep what is in use, for this reason (logged).
    Keep(String),
}

/// The decision table for one re-read: `read` is what the file (or files)
/// gave, `current` what is in use, `parse` whether the new bytes are
/// usable.
pub(crate) fn decide(
    current: &[u8],
    read: Result<Vec<u8>, String>,
    parse: impl FnOnce(&[u8]) -> Result<(), String>,
) -> (ReloadDecision, Option<Vec<u8>>) {
    match read {
        Err(error) => (
            ReloadDecision::Keep(format!("cannot be read: {error}")),
            None,
        ),
        Ok(bytes) if bytes.is_empty() => (ReloadDecision::Keep("is empty".to_string()), None),
        Ok(bytes) if bytes == current => (ReloadDecision::Unchanged, None),
        Ok(bytes) => match parse(&bytes) {
            Ok(()) => (ReloadDecision::Replace, Some(bytes)),
            Err(error) => (
                ReloadDecision::Keep(format!("does not parse: {error}")),
                None,
            ),
        },
    }
}

/// The files to watch and what was last read from them.
struct Watched {
    /// The client certificate's and key's paths and their bytes (joined,
    /// certificate first), when both are files.
    client: Option<(PathBuf, PathBuf, Vec<u8>)>,
    /// The certificate authority's path and bytes, when it is a file.
    authority: Option<(PathBuf, Vec<u8>)>,
    next_check: Instant,
}

/// Re-reads a client's certificate and certificate authority files.
pub(crate) struct TlsFileReload {
    interval: Duration,
    watched: Mutex<Watched>,
    certificate: Arc<ClientCertificateSlot>,
    verifier: Arc<ServerVerifierSlot>,
    /// Where the configuration came from, for error messages.
    origin: String,
}

impl TlsFileReload {
    /// A reloader for `config`'s files, or `None` when nothing is read from
    /// a file (or reloading is off: a zero interval, or no verification).
    /// `client_pem` and `authority_pem` are what the client was built with.
    pub(crate) fn new(
        config: &Config,
        client_pem: Option<(Vec<u8>, Vec<u8>)>,
        authority_pem: Option<Vec<u8>>,
        certificate: Arc<ClientCertificateSlot>,
        verifier: Arc<ServerVerifierSlot>,
    ) -> Option<TlsFileReload> {
        let interval = config.tls_file_reload_interval;
        if interval.is_zero() {
            return None;
        }
        let client = match (
            &config.tls.client_certificate,
            &config.tls.client_key,
            client_pem,
        ) {
            (Some(PemSource::File(cert)), Some(PemSource::File(key)), Some((c, k))) => {
                Some((cert.clone(), key.clone(), joined(&c, &k)))
            }
            _ => None,
        };
        let authority = match (&config.tls.certificate_authority, authority_pem) {
            // No PEM when verification is off: nothing to re-read then.
            (Some(PemSource::File(path)), Some(pem)) => Some((path.clone(), pem)),
            _ => None,
        };
        if client.is_none() && authority.is_none() {
            return None;
        }
        Some(TlsFileReload {
            interval,
            watched: Mutex::new(Watched {
                client,
                authority,
                next_check: Instant::now() + interval,
            }),
            certificate,
            verifier,
            origin: config.origin.clone(),
        })
    }

    /// Re-reads the files when the interval has passed since the last
    /// check (one caller checks; the others go on at once). Returns whether
    /// anything changed, so the caller renews its connections. Blocks the
    /// caller for two or three small file reads, once per interval.
    pub(crate) fn check(&self) -> bool {
        // Another caller is checking: go on with what is in use.
        let Some(mut watched) = self.watched.try_lock() else {
            return false;
        };
        let now = Instant::now();
        if now < watched.next_check {
            return false;
        }
        // Once per interval, even when the reload fails (client-go's rule).
        watched.next_check = now + self.interval;
        let origin = self.origin.as_str();
        let mut changed = false;
        if let Some((cert_path, key_path, current)) = &mut watched.client {
            let read = std::fs::read(&*cert_path)
                .and_then(|c| std::fs::read(&*key_path).map(|k| (c, k)))
                .map_err(|e| e.to_string());
            let mut built = None;
            let (decision, bytes) = decide(
                current,
                read.as_ref()
                    .map(|(c, k)| joined(c, k))
                    .map_err(Clone::clone),
                |_| {
                    let (c, k) = read.as_ref().map_err(Clone::clone)?;
                    let fields = ("client-certificate", "client-key");
                    built = Some(certified_key(c, k, fields, origin).map_err(|e| e.to_string())?);
                    Ok(())
                },
            );
            match (decision, bytes, built) {
                (ReloadDecision::Replace, Some(bytes), Some(key)) => {
                    self.certificate.set(Some(key));
                    *current = bytes;
                    changed = true;
                    tracing::info!(certificate = %cert_path.display(), "client certificate file changed; new connections present it");
                }
                (ReloadDecision::Keep(reason), _, _) => {
                    tracing::warn!(certificate = %cert_path.display(), key = %key_path.display(), "client certificate {reason}; keeping the one in use");
                }
                _ => {}
            }
        }
        if let Some((path, current)) = &mut watched.authority {
            let read = std::fs::read(&*path).map_err(|e| e.to_string());
            let mut built = None;
            let (decision, bytes) = decide(current, read, |pem| {
                built = Some(verifier_for_ca(pem, origin).map_err(|e| e.to_string())?);
                Ok(())
            });
            match (decision, bytes, built) {
                (ReloadDecision::Replace, Some(bytes), Some(verifier)) => {
                    self.verifier.set(verifier);
                    *current = bytes;
                    changed = true;
                    tracing::info!(authority = %path.display(), "certificate authority file changed; new connections trust it");
                }
                (ReloadDecision::Keep(reason), _, _) => {
                    tracing::warn!(authority = %path.display(), "certificate authority {reason}; keeping the one in use");
                }
                _ => {}
            }
        }
        changed
    }
}

/// A certificate and key as one comparable value.
fn joined(certificate: &[u8], key: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(certificate.len() + key.len() + 1);
    bytes.extend_from_slice(certificate);
    bytes.push(0);
    bytes.extend_from_slice(key);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row: name, what was read, whether it parses, the decision, and
    /// whether bytes to keep come back.
    type Row = (
        &'static str,
        Result<Vec<u8>, String>,
        bool,
        ReloadDecision,
        bool,
    );

    #[test]
    fn decision_table() {
        let ok = |_: &[u8]| Ok(());
        let bad = |_: &[u8]| Err("no PEM".to_string());
        let cases: Vec<Row> = vec![
            (
                "unreadable",
                Err("gone".into()),
                true,
                ReloadDecision::Keep("cannot be read: gone".into()),
                false,
            ),
            (
                "empty",
                Ok(vec![]),
                true,
                ReloadDecision::Keep("is empty".into()),
                false,
            ),
            (
                "same bytes",
                Ok(b"old".to_vec()),
                true,
                ReloadDecision::Unchanged,
                false,
            ),
            (
                "same bytes, even if unparsable now",
                Ok(b"old".to_vec()),
                false,
                ReloadDecision::Unchanged,
                false,
            ),
            (
                "new and good",
                Ok(b"new".to_vec()),
                true,
                ReloadDecision::Replace,
                true,
            ),
            (
                "new and bad",
                Ok(b"new".to_vec()),
                false,
                ReloadDecision::Keep("does not parse: no PEM".into()),
                false,
            ),
        ];
        for (name, read, parses, expected, gives_bytes) in cases {
            let (decision, bytes) = if parses {
                decide(b"old", read, ok)
            } else {
                decide(b"old", read, bad)
            };
            assert_eq!(decision, expected, "{name}");
            assert_eq!(bytes.is_some(), gives_bytes, "{name}");
        }
    }
}
