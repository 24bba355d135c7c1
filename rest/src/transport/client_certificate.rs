//! The client certificate a connection presents: from the configuration,
//! or an exec plugin's, replaced while the client runs.

use std::sync::Arc;

use parking_lot::RwLock;
use rustls::SignatureScheme;
use rustls::client::ResolvesClientCert;
use rustls::sign::CertifiedKey;

/// The client certificate to present, replaceable while the client runs.
/// rustls asks for it at every handshake, so a new certificate takes effect
/// on the next connection.
#[derive(Debug, Default)]
pub(crate) struct ClientCertificateSlot {
    current: RwLock<Option<Arc<CertifiedKey>>>,
}

impl ClientCertificateSlot {
    /// Replaces the certificate; returns whether it changed.
    pub(crate) fn set(&self, key: Option<Arc<CertifiedKey>>) -> bool {
        let mut current = self.current.write();
        let changed = match (&*current, &key) {
            (Some(old), Some(new)) => old.cert != new.cert,
            (None, None) => false,
            _ => true,
        };
        *current = key;
        changed
    }
}

impl ResolvesClientCert for ClientCertificateSlot {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.current.read().clone()
    }

    fn has_certs(&self) -> bool {
        self.current.read().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_reports_changes() {
        let slot = ClientCertificateSlot::default();
        assert!(!slot.has_certs());
        assert!(!slot.set(None));
    }
}
