//! [`SyncSignal`] and [`SyncChanges`]: how a cache-sync wait learns, without
//! polling, that an informer's sync state may have changed.

use std::sync::Arc;

use tokio::sync::watch;

/// The sending side: an informer signals when it syncs, when its
/// reflector reports an error and when it stops; a handler's listener when
/// it has delivered its initial adds or is removed. Cheap to clone; every
/// clone signals the same watchers.
#[derive(Debug, Clone)]
pub(crate) struct SyncSignal {
    changes: Arc<watch::Sender<u64>>,
}

impl SyncSignal {
    pub(crate) fn new() -> Self {
        SyncSignal {
            changes: Arc::new(watch::channel(0).0),
        }
    }

    /// Says that the sync state may have changed; wakes every watcher.
    pub(crate) fn notify(&self) {
        self.changes.send_modify(|generation| {
            *generation = generation.wrapping_add(1);
        });
    }

    /// A watcher that sees the signals sent from now on.
    pub(crate) fn subscribe(&self) -> SyncChanges {
        SyncChanges {
            changes: self.changes.subscribe(),
        }
    }
}

/// Signals that an informer's or registration's sync state may have
/// changed, from [`InformerSynced::sync_changes`](crate::InformerSynced::sync_changes).
///
/// Take it **before** looking at the state: a change between the look and
/// the wait then still completes the next [`changed`](Self::changed).
#[derive(Debug)]
pub struct SyncChanges {
    changes: watch::Receiver<u64>,
}

impl SyncChanges {
    /// Completes at the first signal since this watcher was made or last
    /// completed, and at once when the informer and its handlers are gone
    /// (that is a change too: whoever waits looks again and finds it
    /// stopped). Cancel-safe.
    pub async fn changed(&mut self) {
        // An error means every sender is gone.
        let _closed = self.changes.changed().await;
    }
}
