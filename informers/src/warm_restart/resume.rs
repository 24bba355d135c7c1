//! [`ResumeSource`]: the layer between an informer and its reflector that
//! warm restart plugs into.
//!
//! An informer with a source asks it, once before its reflector starts,
//! for a saved state to resume from, and hands it the cache to save while
//! it runs and when it stops. The informer knows nothing of files or
//! formats; the reflector knows only the [`ResumePoint`] it is given.
//! [`SnapshotSource`](crate::warm_restart::source::SnapshotSource) is the source
//! an informer gets from [`SnapshotOptions`](crate::SnapshotOptions).

use std::sync::Arc;
use std::time::Duration;

use clientgo_reflector::ResumePoint;
use clientgo_store::Indexer;
use futures_util::future::BoxFuture;

use crate::warm_restart::options::SnapshotStats;

/// Where an informer's saved state comes from and goes to.
///
/// Calls: [`load`](Self::load) once, before the reflector starts;
/// [`save`](Self::save) only while the informer is synced, every
/// [`save_interval`](Self::save_interval) and once when it stops (a
/// periodic save may still be running then: a source that cannot write
/// twice at once serializes them). Neither fails the informer: a source
/// logs and counts its own failures.
pub(crate) trait ResumeSource<K>: Send + Sync {
    /// The state to resume from; `None` to list as usual.
    fn load(&self) -> BoxFuture<'_, Option<ResumePoint<K>>>;

    /// How long the watch from a loaded state must be quiet for its
    /// replay to count as consumed (the reflector's
    /// [`resume_settle`](clientgo_reflector::ReflectorOptions::resume_settle)).
    fn settle(&self) -> Duration;

    /// Saves the cache's state: its objects and the resourceVersion they
    /// reflect, read together under its lock.
    fn save(&self, cache: Arc<Indexer<K>>) -> BoxFuture<'_, ()>;

    /// How often to save while running; zero: only when the informer
    /// stops.
    fn save_interval(&self) -> Duration;

    /// The source's counters.
    fn stats(&self) -> SnapshotStats;
}
