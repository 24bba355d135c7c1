//! [`SharedIndexInformerOptions`]: how one informer is built (name,
//! resource, resync, indexers, transform, reflector options, metrics).

use clientgo_apimachinery::ShardSelector;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiResource, Object};
use clientgo_reflector::ReflectorOptions;
use clientgo_store::Indexers;

use crate::cache::decode_cache::DEFAULT_DECODE_CACHE_BYTES;
use crate::cache::metadata_index::{MetadataIndexers, namespace_metadata_indexers};
use crate::cache::storage::Storage;
use crate::cache::transform::Transform;
use crate::metrics::provider::{InformerMetricsProvider, NoopMetricsProvider};
use crate::warm_restart::options::SnapshotOptions;

/// How a [`SharedIndexInformer`](crate::SharedIndexInformer) is built:
/// everything the informer is configured with is here, complete before it
/// is made (client-go's `SetTransform` and `SetWatchErrorHandler`, which
/// fail once the informer has started, are the `transform` and
/// `reflector.watch_error_handler` settings). Only handlers and indexes
/// are added to an informer afterwards.
///
/// | setting | default | client-go |
/// |---|---|---|
/// | `name` | the ListerWatcher's description | `Identifier` / type name |
/// | `resource` | from the client, when built with `from_client` | the example object's type |
/// | `resync_period` | zero: no resync | `defaultEventHandlerResyncPeriod` |
/// | `storage` | [`Storage::Compact`] | decoded objects |
/// | `metadata_indexers` | the namespace index | none (the factories add the namespace index) |
/// | `indexers` | none | `Indexers` |
/// | `transform` | none | `SetTransform` |
/// | `keep_managed_fields` | false: dropped | kept (kube-controller-manager drops them) |
/// | `decode_cache_bytes` | [`DEFAULT_DECODE_CACHE_BYTES`](crate::DEFAULT_DECODE_CACHE_BYTES) | none |
/// | `reflector` | the reflector's defaults (watch-list on, backoff 800 ms to 30 s) | the same |
/// | `reflector.watch_error_handler` (or [`watch_error_handler`](Self::watch_error_handler)) | errors are logged | `SetWatchErrorHandler` |
/// | `metrics` | nothing recorded | `InformerMetricsProvider` |
/// | `snapshot` | none: every start lists | none (warm restart is ours) |
pub struct SharedIndexInformerOptions<K> {
    /// The name in logs, metrics and sync errors.
    pub name: Option<String>,
    /// The resource cached (listers name it in not-found errors).
    pub resource: Option<ApiResource>,
    /// The resync period of handlers added without one; also the
    /// informer's resync check period. Zero: no resync.
    pub resync_period: Duration,
    /// How the cache keeps objects, for an informer made from a client
    /// (one over a custom [`ListerWatcher`](clientgo_listwatch::ListerWatcher)
    /// of `K` keeps them decoded).
    pub storage: Storage,
    /// Indexes over the metadata, which never decode.
    pub metadata_indexers: MetadataIndexers,
    /// Indexes over whole objects (in compact storage, each object
    /// version is decoded once for them, at ingest; see
    /// [`Stored::indexers`](crate::Stored::indexers)).
    pub indexers: Indexers<K>,
    /// Applied to every object before it is queued and cached, once per
    /// arriving version, in every storage (see [`Transform`] for the
    /// rule).
    pub transform: Option<Transform<K>>,
    /// Keep `metadata.managedFields` (false: they are dropped where
    /// objects are decoded, and never built, as kube-controller-manager
    /// and kube-scheduler drop them "for memory efficiency"; client-go's
    /// own default keeps them). An object read from such a cache and sent
    /// back in an update leaves the server's managed fields as they are
    /// (the server keeps them when an update carries none); keep them for
    /// a controller that reads field ownership.
    pub keep_managed_fields: bool,
    /// The bytes of decoded objects a compact informer's listers keep, as
    /// estimated (0 keeps none). Once full, its main part takes a new
    /// decode only in place of one read less often lately. Raise it to the
    /// objects a controller reads again and again (the pods of every group
    /// it lists in turn, say) to decode each of them once.
    pub decode_cache_bytes: usize,
    /// The reflector's settings. The informer sets its resync period,
    /// `should_resync`, transform and known objects itself.
    pub reflector: ReflectorOptions,
    /// Creates the informer's and its handlers' metrics.
    pub metrics: Arc<dyn InformerMetricsProvider>,
    /// Saves the cache to disk and resumes from it at the next start
    /// (warm restart): in compact storage, or for an entry type named
    /// with [`SnapshotOptions::entry_type`].
    pub snapshot: Option<SnapshotOptions>,
    /// Caches only these shards of the collection (Kubernetes 1.36's
    /// `shardSelector`): filtered by a server that applies it, else by the
    /// informer itself (see
    /// [`ShardedListerWatcher`](clientgo_listwatch::ShardedListerWatcher));
    /// [`InformerStats::shard`](crate::InformerStats::shard) says which.
    pub shard_selector: Option<ShardSelector>,
}

impl<K: Object + 'static> Default for SharedIndexInformerOptions<K> {
    fn default() -> Self {
        SharedIndexInformerOptions {
            name: None,
            resource: None,
            resync_period: Duration::ZERO,
            storage: Storage::default(),
            metadata_indexers: namespace_metadata_indexers(),
            indexers: Indexers::new(),
            transform: None,
            keep_managed_fields: false,
            decode_cache_bytes: DEFAULT_DECODE_CACHE_BYTES,
            reflector: ReflectorOptions::default(),
            metrics: Arc::new(NoopMetricsProvider),
            snapshot: None,
            shard_selector: None,
        }
    }
}

impl<K> fmt::Debug for SharedIndexInformerOptions<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut indexes: Vec<&String> = self.indexers.keys().collect();
        indexes.sort();
        let mut metadata_indexes: Vec<&String> = self.metadata_indexers.keys().collect();
        metadata_indexes.sort();
        f.debug_struct("SharedIndexInformerOptions")
            .field("name", &self.name)
            .field("resource", &self.resource)
            .field("resync_period", &self.resync_period)
            .field("storage", &self.storage)
            .field("metadata_indexers", &metadata_indexes)
            .field("indexers", &indexes)
            .field("transform", &self.transform)
            .field("keep_managed_fields", &self.keep_managed_fields)
            .field("decode_cache_bytes", &self.decode_cache_bytes)
            .field("reflector", &self.reflector)
            .field("snapshot", &self.snapshot)
            .field("shard_selector", &self.shard_selector)
            .finish_non_exhaustive()
    }
}

impl<K> SharedIndexInformerOptions<K> {
    /// Names the informer.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Says which resource is cached.
    #[must_use]
    pub fn resource(mut self, resource: ApiResource) -> Self {
        self.resource = Some(resource);
        self
    }

    /// Sets the default handler resync period (and the check period).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Sets how the cache keeps objects.
    #[must_use]
    pub fn storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self
    }

    /// Replaces the metadata indexes (the namespace index is dropped
    /// unless included).
    #[must_use]
    pub fn metadata_indexers(mut self, indexers: MetadataIndexers) -> Self {
        self.metadata_indexers = indexers;
        self
    }

    /// Replaces the whole-object indexes.
    #[must_use]
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers = indexers;
        self
    }

    /// Transforms every object before it is cached (see the field): a
    /// [`Transform`], or a [`MetadataTransform`](crate::MetadataTransform)
    /// as the factory's options take.
    #[must_use]
    pub fn transform(mut self, transform: impl Into<Transform<K>>) -> Self {
        self.transform = Some(transform.into());
        self
    }

    /// Keeps or drops `managedFields` (see the field).
    #[must_use]
    pub fn keep_managed_fields(mut self, keep: bool) -> Self {
        self.keep_managed_fields = keep;
        self
    }

    /// Sets the decode cache's budget in bytes.
    #[must_use]
    pub fn decode_cache_bytes(mut self, bytes: usize) -> Self {
        self.decode_cache_bytes = bytes;
        self
    }

    /// Sets the reflector's settings, all of them (a watch error handler
    /// set before is replaced by `reflector.watch_error_handler`).
    #[must_use]
    pub fn reflector(mut self, reflector: ReflectorOptions) -> Self {
        self.reflector = reflector;
        self
    }

    /// Calls `handler` with every list and watch error, on the reflector's
    /// task (it must not block); the same as the reflector option of that
    /// name, so set it after [`reflector`](Self::reflector), which
    /// replaces every reflector setting.
    #[must_use]
    pub fn watch_error_handler(
        mut self,
        handler: impl Fn(&clientgo_reflector::Error) + Send + Sync + 'static,
    ) -> Self {
        self.reflector = self.reflector.watch_error_handler(handler);
        self
    }

    /// Sets the metrics provider.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<dyn InformerMetricsProvider>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Saves the cache in `options.dir` and resumes from it at the next
    /// start instead of listing (warm restart; see [`SnapshotOptions`] for
    /// which informers save; the others log a warning and list as usual).
    #[must_use]
    pub fn snapshot(mut self, options: SnapshotOptions) -> Self {
        self.snapshot = Some(options);
        self
    }

    /// Caches only `selector`'s shards (see the field).
    #[must_use]
    pub fn shard_selector(mut self, selector: ShardSelector) -> Self {
        self.shard_selector = Some(selector);
        self
    }
}
