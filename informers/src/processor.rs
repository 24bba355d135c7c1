//! [`Processor`]: hands each notification to the registered handlers
//! (client-go's `sharedProcessor`).

use std::sync::Arc;
use std::time::Instant;

use clientgo_apimachinery::Object;
use parking_lot::RwLock;

use crate::handler::Notification;
use crate::listener::Listener;

/// The registered handlers of one informer.
///
/// **Locking.** A read lock is held while a notification is queued to
/// every listener (queuing never waits for a handler); adding and removing
/// listeners take the write lock.
pub(crate) struct Processor<K> {
    listeners: RwLock<Vec<Arc<Listener<K>>>>,
}

impl<K> Processor<K> {
    /// Closes every listener, so their threads end (used when the informer
    /// is dropped without having run).
    pub(crate) fn close_all(&self) {
        for listener in self.listeners.read().iter() {
            listener.close();
        }
    }
}

impl<K: Object + Send + Sync + 'static> Processor<K> {
    pub(crate) fn new() -> Self {
        Processor {
            listeners: RwLock::new(Vec::new()),
        }
    }

    pub(crate) fn add(&self, listener: Arc<Listener<K>>) {
        self.listeners.write().push(listener);
    }

    /// Removes the listener with `id`; `None` if it is not registered.
    pub(crate) fn remove(&self, id: u64) -> Option<Arc<Listener<K>>> {
        let mut listeners = self.listeners.write();
        let position = listeners.iter().position(|l| l.id == id)?;
        Some(listeners.remove(position))
    }

    pub(crate) fn listeners(&self) -> Vec<Arc<Listener<K>>> {
        self.listeners.read().clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.listeners.read().len()
    }

    /// Queues `notification` to every listener, or (for a resync) only to
    /// the listeners whose resync is due.
    pub(crate) fn distribute(&self, notification: Notification<K>, sync: bool) {
        let listeners = self.listeners.read();
        let mut targets = listeners
            .iter()
            .filter(|l| !sync || l.is_syncing())
            .peekable();
        while let Some(listener) = targets.next() {
            if targets.peek().is_some() {
                listener.push(notification.clone());
            } else {
                listener.push(notification);
                break;
            }
        }
    }

    /// Marks the listeners whose resync is due at `now` as syncing;
    /// returns whether any is (so the informer resyncs its store).
    pub(crate) fn should_resync(&self, now: Instant) -> bool {
        let listeners = self.listeners.read();
        let mut any = false;
        for listener in listeners.iter() {
            any |= listener.should_resync(now);
        }
        any
    }
}
