//! Warm restart: an informer that saves its cache (see `snapshot.rs` for
//! the file) and, in its next process, resumes from it with a watch
//! instead of listing everything again.
//!
//! - **Saving.** While the informer runs and is synced, its cache and the
//!   resourceVersion it reflects are read under the cache's lock (a
//!   consistent pair) and written every [`SnapshotOptions::interval`], and
//!   once more when it stops (its cancellation token fired). Writing runs
//!   on a blocking thread; the cache is locked only while its `Arc`s are
//!   copied.
//! - **Resuming.** At start, a valid snapshot of this very source is
//!   handed to the reflector, which watches from its resourceVersion (no
//!   list, no watch-list), folds the replay in and replaces the queue once:
//!   handlers receive one add per object as from an initial list, and the
//!   informer reports synced after that. A snapshot that is missing is
//!   not an error; one that is damaged, of another format, source, type
//!   or transform is refused whole (logged, counted in
//!   [`SnapshotStats::rejected`]) and the informer lists as usual. When
//!   the server answers 410 Gone (the snapshot is older than its history),
//!   the snapshot's objects are delivered and then a normal list's, so
//!   objects deleted meanwhile arrive as tombstones.
//!
//! Not in client-go or kube-rs, which always list at start.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_reflector::{ReflectorOptions, ResumePoint};
use clientgo_store::Indexer;

use clientgo_apimachinery::{Object, RecordCodec};

use crate::snapshot::{self, SnapshotOptions};

/// Counters of an informer's snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnapshotStats {
    /// Snapshots found valid at start and handed to the reflector.
    pub loaded: u64,
    /// Snapshots found at start and refused (damaged, another format,
    /// source, type or transform).
    pub rejected: u64,
    /// Snapshots written.
    pub written: u64,
    /// Writes that failed (the previous snapshot stays in place).
    pub write_errors: u64,
    /// Bytes of the last snapshot written.
    pub last_bytes: u64,
    /// Microseconds the last write took (reading the cache included).
    pub last_write_micros: u64,
}

#[derive(Debug, Default)]
pub(crate) struct SnapshotCounters {
    loaded: AtomicU64,
    rejected: AtomicU64,
    written: AtomicU64,
    write_errors: AtomicU64,
    last_bytes: AtomicU64,
    last_write_micros: AtomicU64,
}

impl SnapshotCounters {
    pub(crate) fn read(&self) -> SnapshotStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        SnapshotStats {
            loaded: read(&self.loaded),
            rejected: read(&self.rejected),
            written: read(&self.written),
            write_errors: read(&self.write_errors),
            last_bytes: read(&self.last_bytes),
            last_write_micros: read(&self.last_write_micros),
        }
    }
}

/// One informer's snapshot file and what it needs to write and read it.
pub(crate) struct SnapshotFile<K> {
    options: SnapshotOptions,
    codec: RecordCodec<K>,
    path: PathBuf,
    identity: String,
}

impl<K> Clone for SnapshotFile<K> {
    fn clone(&self) -> Self {
        SnapshotFile {
            options: self.options.clone(),
            codec: self.codec,
            path: self.path.clone(),
            identity: self.identity.clone(),
        }
    }
}

impl<K: Object + Send + Sync + 'static> SnapshotFile<K> {
    /// The file of the informer `name` over a source of `source_identity`;
    /// `None` (with a warning) when objects of type `K` cannot be saved
    /// ([`Object::record_codec`]). The identity written into the file adds
    /// the object type and the transform's name to the source's.
    pub(crate) fn new(options: SnapshotOptions, name: &str, source_identity: &str) -> Option<Self> {
        let Some(codec) = K::record_codec() else {
            tracing::warn!(
                kind = std::any::type_name::<K>(),
                "objects of this type cannot be saved (only compact entries can); no snapshots"
            );
            return None;
        };
        let identity = format!(
            "{source_identity} type={} transform={:?}",
            std::any::type_name::<K>(),
            options.transform_id
        );
        let path = snapshot::file_for(&options.dir, name, &identity);
        Some(SnapshotFile {
            options,
            codec,
            path,
            identity,
        })
    }

    /// How often to save.
    pub(crate) fn interval(&self) -> Duration {
        self.options.interval
    }

    /// Reads the snapshot, if any, as the point to resume from, setting
    /// the reflector's settle time for it; a refused one is logged and
    /// counted.
    pub(crate) async fn load(
        &self,
        reflector_options: &mut ReflectorOptions,
        counters: &SnapshotCounters,
    ) -> Option<ResumePoint<K>> {
        let file = self.clone();
        let read = tokio::task::spawn_blocking(move || {
            snapshot::read(file.codec, &file.path, &file.identity)
        })
        .await;
        match read {
            Ok(Ok(Some(loaded))) => {
                counters.loaded.fetch_add(1, Ordering::Relaxed);
                tracing::info!(
                    path = %self.path.display(),
                    objects = loaded.objects.len(),
                    resource_version = %loaded.resource_version,
                    "resuming from a snapshot"
                );
                reflector_options.resume_settle = self.options.settle;
                return Some(ResumePoint {
                    objects: loaded.objects,
                    resource_version: loaded.resource_version,
                });
            }
            Ok(Ok(None)) => {
                tracing::debug!(path = %self.path.display(), "no snapshot; listing");
            }
            Ok(Err(error)) => {
                counters.rejected.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%error, "snapshot refused; listing instead");
            }
            Err(error) => {
                counters.rejected.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%error, "reading the snapshot failed; listing instead");
            }
        }
        None
    }

    /// Writes the cache's current state (when it has one: a synced cache
    /// with a resourceVersion). Never fails the informer: a failure is
    /// logged and counted, and the previous snapshot stays in place.
    pub(crate) async fn save(&self, indexer: &Arc<Indexer<K>>, counters: &Arc<SnapshotCounters>) {
        let file = self.clone();
        let indexer = Arc::clone(indexer);
        let counters_for_write = Arc::clone(counters);
        let done = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let (objects, resource_version) = indexer.list_with_resource_version();
            if resource_version.is_empty() {
                return;
            }
            let counters = counters_for_write;
            match snapshot::write(
                file.codec,
                &file.path,
                &file.identity,
                &objects,
                &resource_version,
            ) {
                Ok(written) => {
                    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                    counters.written.fetch_add(1, Ordering::Relaxed);
                    counters.last_bytes.store(written.bytes, Ordering::Relaxed);
                    counters.last_write_micros.store(micros, Ordering::Relaxed);
                    tracing::debug!(
                        path = %file.path.display(),
                        objects = written.objects,
                        bytes = written.bytes,
                        micros,
                        %resource_version,
                        "snapshot written"
                    );
                }
                Err(error) => {
                    counters.write_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(%error, "could not write the snapshot");
                }
            }
        })
        .await;
        if let Err(error) = done {
            counters.write_errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%error, "the snapshot's writer failed");
        }
    }
}
