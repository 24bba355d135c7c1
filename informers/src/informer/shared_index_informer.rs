//! [`SharedIndexInformer`]: one list and watch of a resource, an indexed
//! cache, and any number of handlers (client-go's `sharedIndexInformer`),
//! keeping its objects in either [`Storage`].

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::{ApiObject, ApiResource};
use clientgo_listwatch::{
    BoxedListerWatcher, ListerWatcher, ResourceListerWatcher, ShardedListerWatcher,
};
use clientgo_reflector::{Error as ReflectorError, WaitError};
use clientgo_rest::ResourceClient;
use clientgo_store::{Indexers, ResourceEventHandler};
use tokio_util::sync::CancellationToken;

use crate::cache::decode_cache::{DecodeCache, Entry};
use crate::cache::lister::Lister;
use crate::cache::metadata_index::{MetadataIndexers, over_metadata};
use crate::cache::metadata_view::MetadataView;
use crate::cache::storage::Storage;
use crate::cache::stored::Stored;
use crate::cache::transform::Ingest;
use crate::error::Error;
use crate::handler::options::HandlerOptions;
use crate::handler::sync_signal::SyncChanges;
use crate::informer::engine::{Engine, StoredEngine};
use crate::informer::options::SharedIndexInformerOptions;
use crate::informer::pipeline::{Pipeline, PipelineConfig, short_type_name};
use crate::informer::registration::ResourceEventHandlerRegistration;
use crate::informer::stats::InformerStats;
use crate::warm_restart::options::SnapshotOptions;
use crate::warm_restart::options::SnapshotStats;
use crate::warm_restart::resume::ResumeSource;
use crate::warm_restart::source::{SnapshotSource, named_source};

/// One list and watch of a resource shared by many handlers, with an
/// indexed cache (client-go's `SharedIndexInformer`).
///
/// **Pipeline.** A reflector lists (or watch-lists) and watches the
/// resource into a `RealFifo` in atomic mode; the informer's task pops
/// deltas, applies each pop to the cache (a relist in one step, a batch of
/// watch events in one transaction) and only then queues the notifications
/// to every handler.
///
/// **Storage.** An informer made from a client keeps, by default, each
/// object's bytes as received with its metadata parsed
/// ([`Storage::Compact`]); handlers still take `&Arc<K>` and listers
/// return `Arc<K>`, decoded on demand (once per event for every handler
/// of it; through a bounded cache of recent decodes for listers).
/// [`Storage::Decoded`] keeps decoded objects, as client-go does: then
/// objects are the decoder's `Arc<K>` all the way, shared by the FIFO, the
/// cache and every handler. See [`Storage`] for the trade.
///
/// **Contract** (client-go's): the cache is eventually consistent and
/// goes through a subsequence of each object's states; notifications to
/// one handler are sequential and in order per object; there is no order
/// across objects; a delete carries the last known state.
///
/// **Handlers** each run on their own thread with their own queue (see
/// [`HandlerQueue`](crate::HandlerQueue)), so a slow handler delays
/// neither the cache nor other handlers.
///
/// The informer is a cheap handle: clones share the same cache and
/// handlers. Drive it with [`run`](Self::run) on one task.
pub struct SharedIndexInformer<K> {
    engine: Arc<dyn Engine<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        SharedIndexInformer {
            engine: Arc::clone(&self.engine),
        }
    }
}

impl<K> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.name())
            .field("storage", &self.storage())
            .finish_non_exhaustive()
    }
}

impl<K> ResourceEventHandlerRegistration<K> {
    /// The informer the handler is registered with; `None` once every
    /// other handle on it was dropped.
    pub fn informer(&self) -> Option<SharedIndexInformer<K>> {
        self.informer
            .upgrade()
            .map(|engine| SharedIndexInformer { engine })
    }

    /// Whether this registration is with `informer`.
    fn is_with(&self, informer: &SharedIndexInformer<K>) -> bool {
        std::ptr::addr_eq(self.informer.as_ptr(), Arc::as_ptr(&informer.engine))
    }
}

impl<K> SharedIndexInformer<K> {
    /// The informer's name (logs, metrics, sync errors).
    pub fn name(&self) -> &str {
        &self.engine.state().name
    }

    /// Whether two handles are the same informer.
    pub fn same_informer(&self, other: &SharedIndexInformer<K>) -> bool {
        Arc::ptr_eq(&self.engine, &other.engine)
    }

    /// How the cache keeps objects.
    pub fn storage(&self) -> Storage {
        self.engine.storage()
    }
}

impl<K> SharedIndexInformer<K>
where
    K: ApiObject,
{
    /// An informer over any [`ListerWatcher`] of a [`Stored`] form of
    /// `K`: of `K` itself (the informer then keeps decoded objects, as
    /// client-go does) or of `Compact<K, B>` entries (kept compact, decoded
    /// for handlers and listers of `K`). The source's type says which, so
    /// `options.storage` is read only for whether to compress compact
    /// entries ([`Storage::CompactLz4`]); [`storage`](Self::storage) tells.
    /// Nothing is requested until [`run`](Self::run).
    pub fn new<S, L>(lister_watcher: L, options: SharedIndexInformerOptions<K>) -> Self
    where
        S: Stored<K>,
        L: ListerWatcher<S> + Clone + 'static,
    {
        Self::build(lister_watcher, options, None, named_source::<S>)
    }

    /// An informer over a typed, dynamic or metadata client, keeping
    /// objects as `options.storage` says; the resource and name come from
    /// the client unless set in `options`.
    pub fn from_client(client: ResourceClient<K>, options: SharedIndexInformerOptions<K>) -> Self {
        let discovery = client.client().clone();
        Self::from_lister_watcher(ResourceListerWatcher::new(client), options, discovery)
    }

    /// An informer over a client's lister-watcher (what factories build),
    /// keeping objects as `options.storage` says.
    pub(crate) fn from_lister_watcher(
        lister_watcher: ResourceListerWatcher<K>,
        mut options: SharedIndexInformerOptions<K>,
        discovery: clientgo_rest::RestClient,
    ) -> Self {
        let resource = lister_watcher.client().resource().clone();
        options.resource = Some(options.resource.unwrap_or(resource));
        let lister_watcher = lister_watcher.skip_managed_fields(!options.keep_managed_fields);
        if options.storage != Storage::Decoded && K::compactable() {
            Self::build(
                lister_watcher.retyped::<Entry<K>>(),
                options,
                Some(discovery),
                |snapshot, name, identity| {
                    let source = SnapshotSource::<Entry<K>>::new(snapshot, name, identity);
                    Some(Box::new(source) as Box<dyn ResumeSource<Entry<K>>>)
                },
            )
        } else {
            Self::build(lister_watcher, options, Some(discovery), named_source::<K>)
        }
    }

    /// The informer over `lister_watcher`'s entries of `S`: its source
    /// sharded and boxed, its indexes and ingest worked out for `S`, its
    /// snapshots made by `resume_source`.
    fn build<S, L>(
        lister_watcher: L,
        options: SharedIndexInformerOptions<K>,
        discovery: Option<clientgo_rest::RestClient>,
        resume_source: impl FnOnce(SnapshotOptions, &str, &str) -> Option<Box<dyn ResumeSource<S>>>,
    ) -> Self
    where
        S: Stored<K>,
        L: ListerWatcher<S> + Clone + 'static,
    {
        let SharedIndexInformerOptions {
            name,
            resource,
            resync_period,
            storage,
            metadata_indexers,
            indexers,
            transform,
            keep_managed_fields,
            decode_cache_bytes,
            reflector,
            metrics,
            snapshot,
            shard_selector,
        } = options;
        let (lister_watcher, shard) = match shard_selector {
            Some(selector) => {
                let sharded = ShardedListerWatcher::new(lister_watcher, selector);
                let status = sharded.status();
                (BoxedListerWatcher::new(sharded), Some(status))
            }
            None => (BoxedListerWatcher::new(lister_watcher), None),
        };
        let compress = S::DECODES && storage == Storage::CompactLz4;
        let mut all_indexers = over_metadata::<S>(metadata_indexers);
        all_indexers.extend(S::indexers(indexers));
        let decoder = Arc::new(DecodeCache::<K, S>::new(decode_cache_bytes));
        let config = PipelineConfig {
            name,
            resource,
            resync_period,
            indexers: all_indexers,
            ingest: S::ingest(Ingest::new(transform, keep_managed_fields, compress)),
            reflector,
            metrics,
            discovery,
            shard,
            superseded: S::DECODES
                .then(|| Arc::clone(&decoder) as Arc<dyn crate::cache::superseded::Superseded<S>>),
        };
        let pipeline = Pipeline::new(lister_watcher, config, |name, identity| {
            // A cache keeping managedFields is another cache: never
            // resumed from one that dropped them, nor the other way.
            let identity = match keep_managed_fields {
                true => format!("{identity} keep_managed_fields=true"),
                false => identity.to_string(),
            };
            resume_source(snapshot?, name, &identity)
        });
        let storage = match (S::DECODES, compress) {
            (false, _) => Storage::Decoded,
            (true, false) => Storage::Compact,
            (true, true) => Storage::CompactLz4,
        };
        SharedIndexInformer {
            engine: Arc::new(StoredEngine::new(pipeline, decoder, storage)),
        }
    }

    /// Whether the server serves this informer's resource, by discovery:
    /// `None` when it cannot tell (an informer not made from a client, or
    /// discovery itself failed).
    pub async fn resource_served(&self) -> Option<bool> {
        self.engine.state().resource_served().await
    }

    /// Lists, watches and delivers until `cancel` fires (client-go's
    /// `Run`). Returns after the reflector has stopped and every handler's
    /// thread has ended (a handler call in progress finishes; notifications
    /// not yet delivered are dropped). A second call logs a warning and
    /// returns at once; an informer cannot be restarted.
    ///
    /// Dropping the returned future before it completes stops the informer
    /// too: the reflector's task is aborted (no request reaches the server
    /// after the drop), the queue closes and every handler's thread ends
    /// once its call in progress returns; the informer is then stopped.
    pub async fn run(&self, cancel: CancellationToken) {
        self.engine.run(cancel).await
    }

    /// Registers a handler with the informer's default resync period.
    /// See [`add_event_handler_with_options`](Self::add_event_handler_with_options).
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K> + 'static,
    ) -> Result<ResourceEventHandlerRegistration<K>, Error> {
        self.add_event_handler_with_options(handler, HandlerOptions::default())
    }

    /// Registers a handler (client-go's `AddEventHandlerWithOptions`).
    ///
    /// - **Resync period** (the option, else the informer's default): a
    ///   non-zero period under 1 s is raised to 1 s. If it is below the
    ///   informer's resync check period, then before start the check period
    ///   is lowered to it (and every handler's period recomputed); after
    ///   start the handler's period is raised to the check period. An
    ///   informer without resync (check period zero) gives no handler a
    ///   resync.
    /// - **Before start** the handler receives the initial list as adds
    ///   with `is_in_initial_list = true`.
    /// - **While running** it first receives an add (`is_in_initial_list =
    ///   true`) for every cached object, queued while no other change is
    ///   being distributed, then live changes; its registration reports
    ///   synced only once those adds are delivered.
    /// - **After the informer stopped** it is an error.
    /// - **In compact storage** each object is decoded on the handler's
    ///   thread; the handlers of one event share one decode while any of
    ///   them holds it. An object that does not decode is logged, counted
    ///   ([`DecodeStats::errors`](crate::DecodeStats::errors)) and skipped
    ///   for the handler; the cache keeps it.
    ///
    /// The handler's thread starts at once; failing to start it is an
    /// error.
    pub fn add_event_handler_with_options(
        &self,
        handler: impl ResourceEventHandler<K> + 'static,
        options: HandlerOptions,
    ) -> Result<ResourceEventHandlerRegistration<K>, Error> {
        let (name, options) = named(&handler, options);
        let listener = self
            .engine
            .add_handler(Box::new(handler), &name, &options)?;
        Ok(self.registration(listener))
    }

    /// The registration of `listener`, one of this informer's.
    fn registration(
        &self,
        listener: Arc<dyn crate::handler::listener::ListenerView>,
    ) -> ResourceEventHandlerRegistration<K> {
        ResourceEventHandlerRegistration {
            informer: Arc::downgrade(&self.engine),
            listener,
        }
    }

    /// Registers a handler of metadata with the informer's default
    /// resync period; see
    /// [`add_metadata_event_handler_with_options`](Self::add_metadata_event_handler_with_options).
    pub fn add_metadata_event_handler(
        &self,
        handler: impl ResourceEventHandler<MetadataView> + 'static,
    ) -> Result<ResourceEventHandlerRegistration<K>, Error> {
        self.add_metadata_event_handler_with_options(handler, HandlerOptions::default())
    }

    /// Registers a handler that reads only metadata (keys, labels,
    /// owners: what a controller that enqueues keys reads), as
    /// [`add_event_handler_with_options`](Self::add_event_handler_with_options)
    /// in every other respect. It is given [`MetadataView`]s of the cached
    /// objects: nothing is decoded or copied for it, in either storage.
    pub fn add_metadata_event_handler_with_options(
        &self,
        handler: impl ResourceEventHandler<MetadataView> + 'static,
        options: HandlerOptions,
    ) -> Result<ResourceEventHandlerRegistration<K>, Error> {
        let (name, options) = named(&handler, options);
        let listener = self
            .engine
            .add_metadata_handler(Box::new(handler), &name, &options)?;
        Ok(self.registration(listener))
    }

    /// Removes a handler and returns at once (client-go's
    /// `RemoveEventHandler`): notifications not yet delivered are dropped;
    /// a call in progress may still be running. Removing a handler twice,
    /// or one registered with another informer, does nothing.
    pub fn remove_event_handler(&self, registration: &ResourceEventHandlerRegistration<K>) {
        if registration.is_with(self) {
            self.engine.remove_handler(registration.listener.id());
        }
    }

    /// Removes a handler and waits until its thread has ended, so the
    /// handler is never called again once this returns (client-go's
    /// `ShutDownEventHandler`). Never call it from the handler itself: it
    /// would wait for its own end.
    pub async fn shutdown_event_handler(&self, registration: &ResourceEventHandlerRegistration<K>) {
        if !registration.is_with(self) {
            return;
        }
        self.remove_event_handler(registration);
        registration.listener.done().cancelled().await;
    }

    /// Whether the initial list has been applied to the cache and handed
    /// to the handlers' queues (client-go's `HasSynced`). Handlers may not
    /// have processed it yet: see
    /// [`ResourceEventHandlerRegistration::has_synced`].
    pub fn has_synced(&self) -> bool {
        self.engine.state().has_synced()
    }

    /// A watcher of this informer's sync state: signalled when it syncs,
    /// reports a list or watch error, stops, or one of its handlers has
    /// received its initial adds. Take it before looking at the state.
    pub fn sync_changes(&self) -> SyncChanges {
        self.engine.state().sync_changes()
    }

    /// Whether [`run`](Self::run) has begun.
    pub fn is_started(&self) -> bool {
        self.engine.state().is_started()
    }

    /// Whether [`run`](Self::run) has returned.
    pub fn is_stopped(&self) -> bool {
        self.engine.state().is_stopped()
    }

    /// Adds whole-object indexes to the cache, before or while running;
    /// objects already cached are indexed at once (in compact storage each
    /// is decoded once for them). Fails for a name already in use, for an
    /// index function that fails on a cached object, and after the
    /// informer stopped.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.engine.add_indexers(indexers)
    }

    /// Adds metadata indexes, which never decode; as
    /// [`add_indexers`](Self::add_indexers) otherwise.
    pub fn add_metadata_indexers(&self, indexers: MetadataIndexers) -> Result<(), Error> {
        self.engine.add_metadata_indexers(indexers)
    }

    /// The bytes the cache's entries hold on the heap: an estimate
    /// without allocator overhead (see [`Stored::heap_bytes`]: a compact
    /// entry's bytes as received and parsed metadata; a decoded object's
    /// JSON length, a floor). It reads every entry.
    pub fn cache_bytes(&self) -> usize {
        self.engine.cache_bytes()
    }

    /// A lister over the cache (client-go's `GetIndexer` and generated
    /// listers: reads by key, label selector and index).
    pub fn lister(&self) -> Lister<K> {
        self.engine.lister()
    }

    /// The resource cached, when known.
    pub fn resource(&self) -> Option<&ApiResource> {
        self.engine.state().resource.as_ref()
    }

    /// The resourceVersion of the last list or watch event the reflector
    /// received; "" before the first sync (client-go's
    /// `LastSyncResourceVersion`). The cache may lag it slightly: use
    /// [`wait_for_resource_version`](Self::wait_for_resource_version) to
    /// wait for the cache.
    pub fn last_sync_resource_version(&self) -> String {
        self.engine.state().last_sync_resource_version()
    }

    /// Waits until the **cache** holds `resource_version` or a later one
    /// (compared as integers), so after a write answered with
    /// resourceVersion R, waiting for R makes listers show the write (read
    /// your own writes). Handlers may not have been told yet. Fails at
    /// once for a non-integer, and when the informer stops first; wrap it
    /// in a timeout to bound the wait.
    pub async fn wait_for_resource_version(&self, resource_version: &str) -> Result<(), WaitError> {
        self.engine
            .state()
            .wait_for_resource_version(resource_version)
            .await
    }

    /// The last list or watch error since the last successful sync (so a
    /// caller can say why the cache is not synced).
    pub fn last_error(&self) -> Option<Arc<ReflectorError>> {
        self.engine.state().last_error()
    }

    /// Counters of the informer's snapshots (warm restart): loaded,
    /// refused, written. All zero without
    /// [`snapshot`](SharedIndexInformerOptions::snapshot).
    pub fn snapshot_stats(&self) -> SnapshotStats {
        self.engine.snapshot_stats()
    }

    /// Counters of the informer's work.
    pub fn stats(&self) -> InformerStats {
        self.engine.stats()
    }
}

/// A handler's name (the option's, else its type's) and the options
/// without it.
fn named<H>(handler: &H, mut options: HandlerOptions) -> (String, HandlerOptions) {
    let name = options
        .name
        .take()
        .unwrap_or_else(|| short_type_name(std::any::type_name_of_val(handler)));
    (name, options)
}
