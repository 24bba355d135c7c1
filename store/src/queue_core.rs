//! [`QueueCore`]: what every queue of this crate shares: one lock over the
//! pending items, the closed flag and the initial-population count, and
//! one wake-up for waiting pops.

use std::ops::{Deref, DerefMut};
use std::pin::pin;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::queue::InitialPopulation;

/// A queue's state under its lock: the queue's own pending items (`S`,
/// reached through `Deref`) with the closed flag and the initial-population
/// count every queue keeps.
#[derive(Debug)]
pub(crate) struct Guarded<S> {
    pending: S,
    /// Whether the first list has been delivered.
    pub(crate) initial: InitialPopulation,
    /// Whether the queue was closed.
    pub(crate) closed: bool,
}

impl<S> Deref for Guarded<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.pending
    }
}

impl<S> DerefMut for Guarded<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.pending
    }
}

/// The lock, flags and wake-up of one queue ([`Fifo`](crate::Fifo),
/// [`DeltaFifo`](crate::DeltaFifo), [`RealFifo`](crate::RealFifo),
/// [`Heap`](crate::Heap)).
///
/// **Locking.** One `parking_lot` mutex; producers hold it for the length
/// of one change, [`pop`](Self::pop) while it takes an item (and, unless
/// the queue releases it, while the consumer processes it). **Waking.**
/// Every change that may let a pop proceed calls [`wake`](Self::wake),
/// which wakes every waiting pop; a pop registers before it looks, so no
/// wake-up between its look and its wait is lost.
#[derive(Debug)]
pub(crate) struct QueueCore<S> {
    state: Mutex<Guarded<S>>,
    notify: Notify,
}

impl<S> QueueCore<S> {
    /// An open queue holding `pending`, not yet populated.
    pub(crate) fn new(pending: S) -> Self {
        QueueCore {
            state: Mutex::new(Guarded {
                pending,
                initial: InitialPopulation::default(),
                closed: false,
            }),
            notify: Notify::new(),
        }
    }

    /// Locks the state.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Guarded<S>> {
        self.state.lock()
    }

    /// Wakes every waiting pop to look again.
    pub(crate) fn wake(&self) {
        self.notify.notify_waiters();
    }

    /// Applies `change` under the lock, then wakes waiting pops.
    pub(crate) fn change<T>(&self, change: impl FnOnce(&mut Guarded<S>) -> T) -> T {
        let result = change(&mut self.state.lock());
        self.wake();
        result
    }

    /// Closes the queue: pops drain what is pending, then report closed.
    pub(crate) fn close(&self) {
        self.change(|state| state.closed = true);
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Whether the first list has been delivered.
    pub(crate) fn has_synced(&self) -> bool {
        self.state.lock().initial.has_synced()
    }

    /// Waits until `take`, called under the lock after every wake-up,
    /// yields an item; `None` once the queue is closed and `take` finds
    /// nothing. `take` returns `None` exactly when nothing is pending; it
    /// may release the lock while processing (`MutexGuard::unlocked`).
    pub(crate) async fn pop<T>(
        &self,
        mut take: impl FnMut(&mut MutexGuard<'_, Guarded<S>>) -> Option<T>,
    ) -> Option<T> {
        loop {
            let mut notified = pin!(self.notify.notified());
            notified.as_mut().enable();
            {
                let mut state = self.state.lock();
                if let Some(item) = take(&mut state) {
                    return Some(item);
                }
                if state.closed {
                    return None;
                }
            }
            notified.await;
        }
    }
}
