//! The [`Queue`] trait shared by [`DeltaFifo`](crate::DeltaFifo) and
//! [`RealFifo`](crate::RealFifo), the initial-population count every queue
//! keeps, and the slow-pop log line.

use std::future::Future;

use crate::delta::Deltas;
use crate::error::PopError;
use crate::store::ReflectorStore;

/// A queue of deltas between a reflector (the producer) and an informer's
/// processing loop (the consumer): client-go's `Queue`.
///
/// There is no way to put an item back: client-go removed `ErrRequeue` in
/// 1.33 because requeueing at the tail moves the informer back in time and
/// requeueing at the head wedges the queue. A consumer that fails to process
/// an item must recover on its own (the next resync or relist delivers the
/// object again).
pub trait Queue<K>: ReflectorStore<K> {
    /// Waits for the next item and hands it to `process` together with
    /// `is_in_initial_list` (true while the items of the first replace are
    /// still being popped). Returns [`PopError::Closed`] only when the queue
    /// is closed *and* empty: items queued before `close` are still
    /// delivered. `process` must not call back into the queue.
    fn pop<E, F>(&self, process: F) -> impl Future<Output = Result<(), PopError<E>>> + Send
    where
        F: FnOnce(Deltas<K>, bool) -> Result<(), E> + Send,
        E: Send;

    /// Whether the first replace (or, before any replace, the first add,
    /// update or delete) has been fully popped.
    fn has_synced(&self) -> bool;

    /// Closes the queue: pops drain what is queued, then return
    /// [`PopError::Closed`].
    fn close(&self);

    /// Whether [`close`](Queue::close) was called.
    fn is_closed(&self) -> bool;
}

/// Whether a queue's first list has been delivered: client-go's
/// `populated` and `initialPopulationCount`, shared by every queue.
///
/// A queue is synced once the items of its first replace have all been
/// delivered, or at once when an add, update or delete came before any
/// replace. Later replaces do not count.
#[derive(Debug, Default)]
pub(crate) struct InitialPopulation {
    populated: bool,
    remaining: usize,
}

impl InitialPopulation {
    /// An add, update or delete happened.
    pub(crate) fn populate(&mut self) {
        self.populated = true;
    }

    /// A replace left `queued` items to deliver; only the first counts.
    pub(crate) fn replace(&mut self, queued: usize) {
        if !self.populated {
            self.populated = true;
            self.remaining = queued;
        }
    }

    /// `count` items were delivered (or dropped).
    pub(crate) fn delivered(&mut self, count: usize) {
        self.remaining = self.remaining.saturating_sub(count);
    }

    /// How many items of the first list are still to be delivered.
    pub(crate) fn remaining(&self) -> usize {
        self.remaining
    }

    /// Whether the first list has been delivered.
    pub(crate) fn has_synced(&self) -> bool {
        self.populated && self.remaining == 0
    }
}

/// How many items a queue may hold before a slow `process` call is worth a
/// log line, and how slow that is (client-go's trace thresholds).
pub(crate) const SLOW_POP_DEPTH: usize = 10;
pub(crate) const SLOW_POP: std::time::Duration = std::time::Duration::from_millis(100);

/// Logs a pop that took long while the queue was deep.
pub(crate) fn trace_slow_pop(queue: &str, depth: usize, started: std::time::Instant) {
    let elapsed = started.elapsed();
    if depth > SLOW_POP_DEPTH && elapsed > SLOW_POP {
        tracing::warn!(
            queue,
            depth,
            elapsed_ms = elapsed.as_millis() as u64,
            "processing a popped item took long while the queue was deep"
        );
    }
}
