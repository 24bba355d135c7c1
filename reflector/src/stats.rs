//! [`ReflectorStats`]: what a reflector has done, counted.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of a reflector's work since it was created, for metrics, tests
/// and soak reports. Read with [`ReflectorStatus::stats`](crate::ReflectorStatus::stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReflectorStats {
    /// Completed lists (each one a replace of the store).
    pub lists: u64,
    /// Completed watch-lists (initial events up to the end bookmark).
    pub watch_lists: u64,
    /// Times a watch-list failed and a list was used instead.
    pub watch_list_fallbacks: u64,
    /// Watches opened (watch-lists included).
    pub watches: u64,
    /// Watches reopened from the last resourceVersion without a relist.
    pub rewatches: u64,
    /// Add, update and delete events applied.
    pub events: u64,
    /// Bookmarks received.
    pub bookmarks: u64,
    /// Watches ended by the idle timeout.
    pub idle_timeouts: u64,
    /// Backoff waits.
    pub backoffs: u64,
    /// Errors reported.
    pub errors: u64,
    /// Resyncs of the store.
    pub resyncs: u64,
    /// Syncs resumed from a saved state by a watch (no list).
    pub resumes: u64,
    /// Resumes refused with 410 Gone (or an expired resourceVersion),
    /// followed by a list.
    pub resume_fallbacks: u64,
    /// Watch events skipped because their object named another type than
    /// the watched resource's.
    pub other_type_events: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) lists: AtomicU64,
    pub(crate) watch_lists: AtomicU64,
    pub(crate) watch_list_fallbacks: AtomicU64,
    pub(crate) watches: AtomicU64,
    pub(crate) rewatches: AtomicU64,
    pub(crate) events: AtomicU64,
    pub(crate) bookmarks: AtomicU64,
    pub(crate) idle_timeouts: AtomicU64,
    pub(crate) backoffs: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) resyncs: AtomicU64,
    pub(crate) resumes: AtomicU64,
    pub(crate) resume_fallbacks: AtomicU64,
    pub(crate) other_type_events: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> ReflectorStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        ReflectorStats {
            lists: read(&self.lists),
            watch_lists: read(&self.watch_lists),
            watch_list_fallbacks: read(&self.watch_list_fallbacks),
            watches: read(&self.watches),
            rewatches: read(&self.rewatches),
            events: read(&self.events),
            bookmarks: read(&self.bookmarks),
            idle_timeouts: read(&self.idle_timeouts),
            backoffs: read(&self.backoffs),
            errors: read(&self.errors),
            resyncs: read(&self.resyncs),
            resumes: read(&self.resumes),
            resume_fallbacks: read(&self.resume_fallbacks),
            other_type_events: read(&self.other_type_events),
        }
    }
}
