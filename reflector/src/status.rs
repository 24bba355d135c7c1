//! [`ReflectorStatus`]: the cheap, cloneable view of a running reflector.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use parking_lot::Mutex;

use crate::error::Error;
use crate::resource_version::{ResourceVersionTracker, WaitError};
use crate::stats::{Counters, ReflectorStats};

/// How a reflector got its current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReflectorMode {
    /// No list or watch-list has completed yet.
    NotSynced,
    /// The last sync streamed the state as watch events (watch-list).
    WatchList,
    /// The last sync was a list (watch-list off, unsupported or failed).
    ListWatch,
    /// The last sync resumed a saved state with a watch (warm restart).
    Resumed,
}

impl ReflectorMode {
    const ALL: [ReflectorMode; 4] = [
        ReflectorMode::NotSynced,
        ReflectorMode::WatchList,
        ReflectorMode::ListWatch,
        ReflectorMode::Resumed,
    ];
}

impl fmt::Display for ReflectorMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReflectorMode::NotSynced => "not synced",
            ReflectorMode::WatchList => "watch-list",
            ReflectorMode::ListWatch => "list and watch",
            ReflectorMode::Resumed => "resumed",
        })
    }
}

/// What a status showed before a sync was announced: what
/// [`ReflectorStatus::restore`] puts back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SyncPoint {
    mode: ReflectorMode,
}

impl SyncPoint {
    /// The mode before the sync.
    pub(crate) fn mode(&self) -> ReflectorMode {
        self.mode
    }
}

/// What a reflector shows while it runs: its last synced resourceVersion,
/// last error, counters and mode. Get one from
/// [`Reflector::status`](crate::Reflector::status) before
/// [`run`](crate::Reflector::run) takes the reflector; clones share the
/// same state and may be read from any task.
///
/// Only the reflector's task writes it. Reads take no lock the task holds
/// per event: counters are atomics, the resourceVersion a watch channel;
/// the last error's lock is taken only when an error is reported or a
/// sync clears it. Dropping a status stops nothing.
#[derive(Clone)]
pub struct ReflectorStatus {
    shared: Arc<Shared>,
}

struct Shared {
    name: String,
    resource_version: ResourceVersionTracker,
    /// A sync's resourceVersion from just before its state reaches the
    /// store until it has (see [`ReflectorStatus::announce_sync`]); what
    /// [`ReflectorStatus::last_sync_resource_version`] shows meanwhile.
    announced: Mutex<Option<String>>,
    last_error: Mutex<Option<Arc<Error>>>,
    counters: Counters,
    mode: AtomicU8,
}

impl fmt::Debug for ReflectorStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflectorStatus")
            .field("name", &self.shared.name)
            .field("mode", &self.mode())
            .field(
                "last_sync_resource_version",
                &self.last_sync_resource_version(),
            )
            .field("stopped", &self.is_stopped())
            .finish_non_exhaustive()
    }
}

impl ReflectorStatus {
    pub(crate) fn new(name: String) -> Self {
        ReflectorStatus {
            shared: Arc::new(Shared {
                name,
                resource_version: ResourceVersionTracker::new(),
                announced: Mutex::new(None),
                last_error: Mutex::new(None),
                counters: Counters::default(),
                mode: AtomicU8::new(0),
            }),
        }
    }

    /// The name used in logs.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The resourceVersion of the last list or event applied to the store;
    /// "" before the first sync. A sync's shows from just before its state
    /// reaches the store, so a consumer that sees the store synced sees it
    /// too. Not synchronised with the store otherwise: the store may
    /// already hold later events.
    pub fn last_sync_resource_version(&self) -> String {
        if let Some(announced) = &*self.shared.announced.lock() {
            return announced.clone();
        }
        self.shared.resource_version.get()
    }

    /// Waits until the reflector has applied `resource_version` or a later
    /// one (compared as integers): after a write answered with
    /// resourceVersion R, waiting for R makes the store show that write.
    /// Fails at once for a non-integer, and when the reflector stops first.
    /// Wrap it in a timeout to bound the wait.
    pub async fn wait_for_resource_version(&self, resource_version: &str) -> Result<(), WaitError> {
        self.shared
            .resource_version
            .wait_for(resource_version)
            .await
    }

    /// How the current state was obtained.
    pub fn mode(&self) -> ReflectorMode {
        let index = usize::from(self.shared.mode.load(Ordering::Relaxed));
        ReflectorMode::ALL
            .get(index)
            .copied()
            .unwrap_or(ReflectorMode::NotSynced)
    }

    /// The last error since the last successful list, watch-list or
    /// resume (so a caller waiting for a sync can say "403 Forbidden
    /// listing pods" rather than "timed out").
    pub fn last_error(&self) -> Option<Arc<Error>> {
        self.shared.last_error.lock().clone()
    }

    /// Counters of the work done so far.
    pub fn stats(&self) -> ReflectorStats {
        self.shared.counters.snapshot()
    }

    /// Whether [`run`](crate::Reflector::run) has returned.
    pub fn is_stopped(&self) -> bool {
        self.shared.resource_version.is_stopped()
    }

    // Writes, from the reflector's task only.

    pub(crate) fn counters(&self) -> &Counters {
        &self.shared.counters
    }

    pub(crate) fn set_resource_version(&self, resource_version: &str) {
        self.shared.resource_version.set(resource_version);
    }

    /// Records a sync at `resource_version` by `mode`: the last error is
    /// forgotten. `true` when the mode changed.
    pub(crate) fn synced(&self, resource_version: &str, mode: ReflectorMode) -> bool {
        self.set_resource_version(resource_version);
        *self.shared.announced.lock() = None;
        *self.shared.last_error.lock() = None;
        self.synced_mode(mode)
    }

    /// Shows a sync at `resource_version` by `mode` before its state
    /// reaches the store: the mode and the resourceVersion
    /// [`last_sync_resource_version`](Self::last_sync_resource_version)
    /// reports, but not the one waits wait for, which moves at
    /// [`synced`](Self::synced). Returns what to [`restore`](Self::restore)
    /// should the store refuse the state.
    pub(crate) fn announce_sync(&self, resource_version: &str, mode: ReflectorMode) -> SyncPoint {
        let before = SyncPoint { mode: self.mode() };
        *self.shared.announced.lock() = Some(resource_version.to_string());
        self.synced_mode(mode);
        before
    }

    /// Takes back an [`announce_sync`](Self::announce_sync) whose state
    /// the store refused.
    pub(crate) fn restore(&self, before: SyncPoint) {
        *self.shared.announced.lock() = None;
        self.synced_mode(before.mode);
    }

    fn synced_mode(&self, mode: ReflectorMode) -> bool {
        let index = ReflectorMode::ALL
            .iter()
            .position(|known| *known == mode)
            .unwrap_or(0);
        let index = u8::try_from(index).unwrap_or(0);
        self.shared.mode.swap(index, Ordering::Relaxed) != index
    }

    pub(crate) fn set_last_error(&self, error: Error) {
        *self.shared.last_error.lock() = Some(Arc::new(error));
    }

    pub(crate) fn stopped(&self) {
        self.shared.resource_version.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_round_trips_through_its_index() {
        let status = ReflectorStatus::new("pods".into());
        assert_eq!(status.mode(), ReflectorMode::NotSynced);
        for mode in ReflectorMode::ALL {
            status.synced("1", mode);
            assert_eq!(status.mode(), mode);
        }
    }

    #[test]
    fn a_sync_forgets_the_last_error() {
        let status = ReflectorStatus::new("pods".into());
        status.set_last_error(Error::IdleWatch {
            resource: "pods".into(),
            idle: std::time::Duration::from_secs(1),
        });
        assert!(status.last_error().is_some());
        assert!(status.synced("5", ReflectorMode::ListWatch));
        assert!(status.last_error().is_none());
        assert_eq!(status.last_sync_resource_version(), "5");
        assert!(!status.synced("6", ReflectorMode::ListWatch));
    }

    #[test]
    fn an_announced_sync_shows_at_once_and_a_refused_one_is_put_back() {
        let status = ReflectorStatus::new("pods".into());
        status.synced("5", ReflectorMode::ListWatch);
        let before = status.announce_sync("9", ReflectorMode::WatchList);
        assert_eq!(status.last_sync_resource_version(), "9");
        assert_eq!(status.mode(), ReflectorMode::WatchList);
        assert_eq!(
            status.shared.resource_version.get(),
            "5",
            "waits move only once the store has the state"
        );
        status.restore(before);
        assert_eq!(status.last_sync_resource_version(), "5");
        assert_eq!(status.mode(), ReflectorMode::ListWatch);

        status.announce_sync("9", ReflectorMode::WatchList);
        status.synced("9", ReflectorMode::WatchList);
        assert_eq!(status.shared.resource_version.get(), "9");
        status.set_resource_version("10");
        assert_eq!(
            status.last_sync_resource_version(),
            "10",
            "events move it on"
        );
    }
}
