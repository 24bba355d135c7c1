//! A controller's counters (controller-runtime's `controller_runtime_*`
//! metrics), read through [`ControllerHandle::stats`](crate::ControllerHandle::stats).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The live counters of one controller; every field is updated without a
/// lock by the workers.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) success: AtomicU64,
    pub(crate) error: AtomicU64,
    pub(crate) requeue_after: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) gone: AtomicU64,
    pub(crate) active_workers: AtomicU64,
    pub(crate) reconcile_micros: AtomicU64,
    pub(crate) in_flight_max: AtomicU64,
}

impl Counters {
    /// Counts one reconcile that ended with `label` after `took`.
    pub(crate) fn record(&self, label: &str, took: Duration) {
        let counter = match label {
            "success" => &self.success,
            "error" => &self.error,
            _ => &self.requeue_after,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.reconcile_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// A worker started a reconcile.
    pub(crate) fn started(&self) {
        let now = self.active_workers.fetch_add(1, Ordering::Relaxed) + 1;
        self.in_flight_max.fetch_max(now, Ordering::Relaxed);
    }

    /// A worker finished a reconcile.
    pub(crate) fn finished(&self) {
        self.active_workers.fetch_sub(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub(crate) fn snapshot(&self, max_concurrent_reconciles: usize) -> ControllerStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        ControllerStats {
            success: read(&self.success),
            errors: read(&self.error),
            requeue_after: read(&self.requeue_after),
            panics: read(&self.panics),
            gone: read(&self.gone),
            active_workers: read(&self.active_workers),
            most_active_workers: read(&self.in_flight_max),
            max_concurrent_reconciles,
            reconcile_time: Duration::from_micros(read(&self.reconcile_micros)),
        }
    }
}

/// A controller's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControllerStats {
    /// Reconciles that returned [`Action::Done`](crate::Action::Done)
    /// (`controller_runtime_reconcile_total{result="success"}`).
    pub success: u64,
    /// Reconciles that failed, panicked, or found their cached object
    /// undecodable (`result="error"`, and
    /// `controller_runtime_reconcile_errors_total`).
    pub errors: u64,
    /// Reconciles that returned
    /// [`Action::RequeueAfter`](crate::Action::RequeueAfter)
    /// (`result="requeue_after"`).
    pub requeue_after: u64,
    /// Reconciles that panicked (counted in `errors` too;
    /// `controller_runtime_reconcile_panics_total`).
    pub panics: u64,
    /// Keys taken from the queue whose object had left the cache (not
    /// reconciled).
    pub gone: u64,
    /// Reconciles running now (`controller_runtime_active_workers`).
    pub active_workers: u64,
    /// The most reconciles that ever ran at once.
    pub most_active_workers: u64,
    /// The workers (`controller_runtime_max_concurrent_reconciles`).
    pub max_concurrent_reconciles: usize,
    /// Time spent in reconciles, summed
    /// (`controller_runtime_reconcile_time_seconds_sum`).
    pub reconcile_time: Duration,
}

impl ControllerStats {
    /// Reconciles run, whatever their result.
    pub fn reconciles(&self) -> u64 {
        self.success + self.errors + self.requeue_after
    }
}
