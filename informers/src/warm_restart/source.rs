//! Warm restart: an informer that saves its cache (see `format.rs` for
//! the file) and, in its next process, resumes from it with a watch
//! instead of listing everything again. [`SnapshotSource`] is the
//! [`ResumeSource`] that does it with a file per informer.
//!
//! - **Which informers save.** Those whose cache keeps objects with a
//!   [`RecordCodec`]: every informer in compact storage (its entries are
//!   `Compact<K, Protobuf>`), and an informer that keeps an entry type
//!   itself (an explicit `Compact<Pod>` informer) when that type is named
//!   with [`SnapshotOptions::entry_type`]. Any other informer logs a
//!   warning and lists as usual.
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

use std::any::TypeId;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_apimachinery::{Object, RecordCodec};
use clientgo_reflector::ResumePoint;
use clientgo_store::Indexer;
use futures_util::future::BoxFuture;

use crate::warm_restart::format;
use crate::warm_restart::options::{EntryTypes, SnapshotOptions, SnapshotStats};
use crate::warm_restart::resume::ResumeSource;

#[derive(Debug, Default)]
struct SnapshotCounters {
    loaded: AtomicU64,
    rejected: AtomicU64,
    written: AtomicU64,
    write_errors: AtomicU64,
    last_bytes: AtomicU64,
    last_write_micros: AtomicU64,
}

impl SnapshotCounters {
    fn read(&self) -> SnapshotStats {
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

/// Makes the snapshot source of an informer of `K` from its options, name
/// and source identity (see [`SnapshotSource::new`]).
type MakeSource<K> = fn(SnapshotOptions, &str, &str) -> Box<dyn ResumeSource<K>>;

/// The maker of `K`'s sources in `types`, when `K` was named.
fn maker<K: 'static>(types: &EntryTypes) -> Option<MakeSource<K>> {
    types
        .get(TypeId::of::<K>())
        .and_then(|make| make.downcast_ref::<MakeSource<K>>())
        .copied()
}

impl SnapshotOptions {
    /// Also saves informers that keep `T` objects themselves: an explicit
    /// `Compact<Pod>` or `Compact<Pod, Protobuf>` informer, made directly
    /// or by a factory in any storage. Informers in compact storage save
    /// without it; an informer of a type not named here does not save (a
    /// generic informer cannot ask its type whether it can be saved, so
    /// the options say it).
    #[must_use]
    pub fn entry_type<T>(mut self) -> Self
    where
        T: Object + RecordCodec + Send + Sync + 'static,
    {
        let make: MakeSource<T> =
            |options, name, identity| Box::new(SnapshotSource::<T>::new(options, name, identity));
        self.entry_types.insert(
            TypeId::of::<T>(),
            std::any::type_name::<T>(),
            Arc::new(make),
        );
        self
    }
}

/// The snapshot source of an informer keeping `K` (any type), if
/// `options` names `K` as an entry type; else `None`, with a warning.
pub(crate) fn named_source<K: 'static>(
    options: SnapshotOptions,
    name: &str,
    source_identity: &str,
) -> Option<Box<dyn ResumeSource<K>>> {
    let Some(make) = maker::<K>(&options.entry_types) else {
        tracing::warn!(
            kind = std::any::type_name::<K>(),
            "this informer keeps objects that are not saved (informers in compact storage are, \
             and entry types named with SnapshotOptions::entry_type); no snapshots"
        );
        return None;
    };
    Some(make(options, name, source_identity))
}

/// One informer's snapshot file and what it needs to write and read it.
pub(crate) struct SnapshotSource<K> {
    options: SnapshotOptions,
    path: PathBuf,
    identity: String,
    /// Given each object read back (a protobuf entry's message decoder).
    restore: Option<fn(&mut K)>,
    counters: Arc<SnapshotCounters>,
    /// Held while writing: a periodic save still running when the final
    /// one starts finishes first (both write the same temporary file).
    writing: tokio::sync::Mutex<()>,
}

impl<K: Object + RecordCodec + Send + Sync + 'static> SnapshotSource<K> {
    /// The file of the informer `name` over a source of `source_identity`;
    /// the identity written into the file adds the object type and the
    /// transform's name to the source's.
    pub(crate) fn new(options: SnapshotOptions, name: &str, source_identity: &str) -> Self {
        let identity = format!(
            "{source_identity} type={} transform={:?}",
            std::any::type_name::<K>(),
            options.transform_id
        );
        let path = format::file_for(&options.dir, name, &identity);
        SnapshotSource {
            options,
            path,
            identity,
            restore: clientgo_listwatch::restore_fn::<K>(),
            counters: Arc::default(),
            writing: tokio::sync::Mutex::new(()),
        }
    }

    async fn read(&self) -> Option<ResumePoint<K>> {
        let (path, identity, restore) = (self.path.clone(), self.identity.clone(), self.restore);
        let read =
            tokio::task::spawn_blocking(move || format::read::<K>(&path, &identity, restore)).await;
        let counters = &self.counters;
        match read {
            Ok(Ok(Some(loaded))) => {
                counters.loaded.fetch_add(1, Ordering::Relaxed);
                tracing::info!(
                    path = %self.path.display(),
                    objects = loaded.objects.len(),
                    resource_version = %loaded.resource_version,
                    "resuming from a snapshot"
                );
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

    async fn write(&self, indexer: Arc<Indexer<K>>) {
        let _writing = self.writing.lock().await;
        let (path, identity) = (self.path.clone(), self.identity.clone());
        let counters = Arc::clone(&self.counters);
        let done = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let (objects, resource_version) = indexer.list_with_resource_version();
            if resource_version.is_empty() {
                return;
            }
            match format::write(&path, &identity, &objects, &resource_version) {
                Ok(written) => {
                    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                    counters.written.fetch_add(1, Ordering::Relaxed);
                    counters.last_bytes.store(written.bytes, Ordering::Relaxed);
                    counters.last_write_micros.store(micros, Ordering::Relaxed);
                    tracing::debug!(
                        path = %path.display(),
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
            self.counters.write_errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%error, "the snapshot's writer failed");
        }
    }
}

impl<K: Object + RecordCodec + Send + Sync + 'static> ResumeSource<K> for SnapshotSource<K> {
    fn load(&self) -> BoxFuture<'_, Option<ResumePoint<K>>> {
        Box::pin(self.read())
    }

    fn settle(&self) -> Duration {
        self.options.settle
    }

    fn save(&self, cache: Arc<Indexer<K>>) -> BoxFuture<'_, ()> {
        Box::pin(self.write(cache))
    }

    fn save_interval(&self) -> Duration {
        self.options.interval
    }

    fn stats(&self) -> SnapshotStats {
        self.counters.read()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use clientgo_apimachinery::{Compact, Protobuf};
    use clientgo_protobuf::Message;
    use clientgo_store::{IndexerOptions, ReflectorStore};
    use k8s_openapi::api::core::v1::{Pod, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    type Entry = Compact<Pod, Protobuf>;

    #[tokio::test]
    async fn a_protobuf_entry_comes_back_from_its_snapshot_with_its_decoder() {
        let dir = tempfile::tempdir().unwrap();
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("n".into()),
                resource_version: Some("5".into()),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec::default()),
            ..Pod::default()
        };
        let entry: Entry = clientgo_protobuf::compact_from_message(&pod.encode()).unwrap();
        let cache = Arc::new(Indexer::new(IndexerOptions::default()));
        cache.replace(vec![Arc::new(entry)], "5").unwrap();
        let options = SnapshotOptions::new(dir.path()).entry_type::<Entry>();

        let source = named_source::<Entry>(options.clone(), "pods", "server pods").unwrap();
        source.save(Arc::clone(&cache)).await;
        assert_eq!(source.stats().written, 1);
        let again = named_source::<Entry>(options, "pods", "server pods").unwrap();
        let point = again.load().await.unwrap();
        assert_eq!(point.resource_version, "5");
        assert_eq!(point.objects.len(), 1);
        assert_eq!(point.objects[0].decode().unwrap().spec, pod.spec);
    }

    #[test]
    fn only_named_entry_types_get_a_source() {
        let options = SnapshotOptions::new("unused").entry_type::<Entry>();
        assert!(named_source::<Entry>(options.clone(), "a", "b").is_some());
        assert!(named_source::<Compact<Pod>>(options.clone(), "a", "b").is_none());
        assert!(named_source::<Pod>(options.clone(), "a", "b").is_none());
        assert_eq!(
            format!("{:?}", options.entry_types),
            format!("[{:?}]", std::any::type_name::<Entry>())
        );
        assert_eq!(
            options,
            SnapshotOptions::new("unused").entry_type::<Entry>()
        );
        assert_ne!(options, SnapshotOptions::new("unused"));
    }
}
