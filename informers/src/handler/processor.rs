//! [`Processor`]: hands each notification to the registered handlers
//! (client-go's `sharedProcessor`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::Object;
use parking_lot::{Mutex, MutexGuard, RwLock};

use crate::handler::listener::Listener;
use crate::handler::notification::Notification;

/// The registered handlers of one informer, and their resync periods.
///
/// **Locking.** A read lock is held while a notification is queued to
/// every listener (queuing never waits for a handler); adding and removing
/// listeners take the write lock. The periods' mutex is held for the whole
/// of a handler's registration, and by the informer's start while it
/// freezes them.
pub(crate) struct Processor<K> {
    listeners: RwLock<Vec<Arc<Listener<K>>>>,
    periods: Mutex<ResyncPeriods>,
}

/// The resync periods: the only setting of an informer that may change
/// after it is made (client-go's `resyncCheckPeriod` rule: handlers added
/// before the start may lower the check period; once the reflector has
/// taken it, it is frozen).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResyncPeriods {
    /// The period of handlers added without one.
    pub(crate) default: Duration,
    /// How often the reflector asks whether any handler is due.
    pub(crate) check: Duration,
    /// Whether the informer has started, so `check` no longer changes.
    pub(crate) frozen: bool,
}

impl<K> Processor<K> {
    /// The resync periods, locked (see the type's locking rule).
    pub(crate) fn periods(&self) -> MutexGuard<'_, ResyncPeriods> {
        self.periods.lock()
    }

    /// Freezes the check period, as the informer starts; returns it.
    pub(crate) fn freeze(&self) -> Duration {
        let mut periods = self.periods.lock();
        periods.frozen = true;
        periods.check
    }

    /// Closes every listener, so their threads end (used when the informer
    /// is dropped without having run).
    pub(crate) fn close_all(&self) {
        for listener in self.listeners.read().iter() {
            listener.close();
        }
    }
}

impl<K: Object + Send + Sync + 'static> Processor<K> {
    /// A processor whose handlers resync every `default_resync` unless
    /// they ask otherwise (zero: never).
    pub(crate) fn new(default_resync: Duration) -> Self {
        Processor {
            listeners: RwLock::new(Vec::new()),
            periods: Mutex::new(ResyncPeriods {
                default: default_resync,
                check: default_resync,
                frozen: false,
            }),
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
