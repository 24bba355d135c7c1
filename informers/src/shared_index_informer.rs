//! [`SharedIndexInformer`]: one list and watch of a resource, an indexed
//! cache, and any number of handlers (client-go's `sharedIndexInformer`),
//! keeping its objects in either [`Storage`].

use std::fmt;
use std::sync::{Arc, Weak};

use clientgo_apimachinery::{ApiObject, ApiResource, Object, Protobuf};
use clientgo_listwatch::{ListerWatcher, ResourceListerWatcher, ShardedListerWatcher};
use clientgo_reflector::{Error as ReflectorError, WaitError};
use clientgo_rest::ResourceClient;
use clientgo_store::ResourceEventHandler;
use clientgo_store::{Indexer, Indexers, ObjectOrTombstone, TransformFunc};
use tokio_util::sync::CancellationToken;

use crate::compact_index::{DecodeFn, decoded_indexers_with};
use crate::decode_cache::{DecodeCache, Entry};
use crate::error::Error;
use crate::handler_options::HandlerOptions;
use crate::informer::{InformerCore, InformerStats, short_type_name};
use crate::informer_options::SharedIndexInformerOptions;
use crate::listener::ListenerView;
use crate::lister::Lister;
use crate::metadata_index::{MetadataIndexers, over_metadata};
use crate::metadata_view::{MetadataFor, MetadataView};
use crate::registration::ResourceEventHandlerRegistration;
use crate::resume_source::ResumeSource;
use crate::storage::Storage;
use crate::sync_signal::SyncChanges;
use crate::transform::{MetadataTransform, ingest_metadata_transform};
use crate::warm_restart::{SnapshotSource, SnapshotStats, named_source};

/// The engine of one informer, over the type its cache keeps.
enum Engine<K> {
    Decoded(InformerCore<K>),
    Compact {
        core: InformerCore<Entry<K>>,
        decoder: Arc<DecodeCache<K>>,
        /// `Compact` or `CompactLz4`.
        storage: Storage,
    },
}

/// Runs `$body` with `$core` bound to the engine's core, whichever it is.
macro_rules! with_core {
    ($engine:expr, $core:ident => $body:expr) => {
        match $engine {
            Engine::Decoded($core) => $body,
            Engine::Compact { core: $core, .. } => $body,
        }
    };
}

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
    engine: Arc<Engine<K>>,
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

/// A handle on an informer that does not keep it alive: what a handler
/// registration holds, so a handler that captures its own registration
/// does not keep its informer (and itself) alive forever.
pub(crate) struct WeakInformer<K>(Weak<Engine<K>>);

impl<K> Clone for WeakInformer<K> {
    fn clone(&self) -> Self {
        WeakInformer(Weak::clone(&self.0))
    }
}

impl<K> WeakInformer<K> {
    /// The informer, while any strong handle on it exists.
    pub(crate) fn upgrade(&self) -> Option<SharedIndexInformer<K>> {
        self.0
            .upgrade()
            .map(|engine| SharedIndexInformer { engine })
    }

    /// Whether this is a handle on `informer`.
    fn is(&self, informer: &SharedIndexInformer<K>) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&informer.engine))
    }
}

impl<K> SharedIndexInformer<K> {
    /// The informer's name (logs, metrics, sync errors).
    pub fn name(&self) -> &str {
        with_core!(&*self.engine, core => core.name())
    }

    /// Whether two handles are the same informer.
    pub fn same_informer(&self, other: &SharedIndexInformer<K>) -> bool {
        Arc::ptr_eq(&self.engine, &other.engine)
    }

    /// How the cache keeps objects.
    pub fn storage(&self) -> Storage {
        match &*self.engine {
            Engine::Decoded(_) => Storage::Decoded,
            Engine::Compact { storage, .. } => *storage,
        }
    }
}

impl<K> SharedIndexInformer<K>
where
    K: ApiObject,
{
    /// An informer over any [`ListerWatcher`] of `K`; it keeps decoded
    /// objects, whatever `options.storage` says (the source hands it
    /// decoded objects). Nothing is requested until [`run`](Self::run).
    pub fn new<L>(lister_watcher: L, mut options: SharedIndexInformerOptions<K>) -> Self
    where
        L: ListerWatcher<K> + Clone + 'static,
    {
        let snapshot = options.snapshot.take();
        let lister_watcher =
            ShardedListerWatcher::maybe(lister_watcher, options.shard_selector.take());
        let shard = lister_watcher.status();
        let core = InformerCore::new(
            lister_watcher,
            decoded_options(options),
            None,
            |name, identity| named_source::<K>(snapshot?, name, identity),
        );
        core.set_shard_status(shard);
        SharedIndexInformer {
            engine: Arc::new(Engine::Decoded(core)),
        }
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
        let snapshot = options.snapshot.take();
        let lister_watcher =
            ShardedListerWatcher::maybe(lister_watcher, options.shard_selector.take());
        let shard = lister_watcher.status();
        let options = SharedIndexInformerOptions {
            resource: Some(options.resource.unwrap_or(resource)),
            ..options
        };
        let storage = options.storage;
        let engine = if storage != Storage::Decoded && K::compactable() {
            let decoder = Arc::new(DecodeCache::new(
                options.decode_cache_bytes,
                options.transform.clone(),
            ));
            let options = compact_options(options, &decoder);
            let core = InformerCore::new(
                lister_watcher.retyped::<Entry<K>>(),
                options,
                Some(discovery),
                |name, identity| {
                    let source = SnapshotSource::<Entry<K>>::new(snapshot?, name, identity);
                    Some(Box::new(source) as Box<dyn ResumeSource<Entry<K>>>)
                },
            );
            Engine::Compact {
                core,
                decoder,
                storage,
            }
        } else {
            Engine::Decoded(InformerCore::new(
                lister_watcher,
                decoded_options(options),
                Some(discovery),
                |name, identity| named_source::<K>(snapshot?, name, identity),
            ))
        };
        with_core!(&engine, core => core.set_shard_status(shard));
        SharedIndexInformer {
            engine: Arc::new(engine),
        }
    }

    /// Whether the server serves this informer's resource, by discovery:
    /// `None` when it cannot tell (an informer not made from a client, or
    /// discovery itself failed).
    pub async fn resource_served(&self) -> Option<bool> {
        with_core!(&*self.engine, core => core.resource_served().await)
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
        with_core!(&*self.engine, core => core.run(cancel).await)
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
        let listener: Arc<dyn ListenerView> = match &*self.engine {
            Engine::Decoded(core) => core.add_handler(Box::new(handler), &name, &options)?,
            Engine::Compact { core, decoder, .. } => core.add_handler(
                Box::new(DecodingFor {
                    decoder: Arc::clone(decoder),
                    handler,
                }),
                &name,
                &options,
            )?,
        };
        Ok(self.registration(listener))
    }

    /// The registration of `listener`, one of this informer's.
    fn registration(&self, listener: Arc<dyn ListenerView>) -> ResourceEventHandlerRegistration<K> {
        ResourceEventHandlerRegistration {
            informer: WeakInformer(Arc::downgrade(&self.engine)),
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
        let handler = MetadataFor(handler);
        let listener: Arc<dyn ListenerView> = with_core!(&*self.engine, core => core.add_handler(Box::new(handler), &name, &options)?);
        Ok(self.registration(listener))
    }

    /// Removes a handler and returns at once (client-go's
    /// `RemoveEventHandler`): notifications not yet delivered are dropped;
    /// a call in progress may still be running. Removing a handler twice,
    /// or one registered with another informer, does nothing.
    pub fn remove_event_handler(&self, registration: &ResourceEventHandlerRegistration<K>) {
        if registration.informer.is(self) {
            with_core!(&*self.engine, core => core.remove_handler(registration.listener.id()));
        }
    }

    /// Removes a handler and waits until its thread has ended, so the
    /// handler is never called again once this returns (client-go's
    /// `ShutDownEventHandler`). Never call it from the handler itself: it
    /// would wait for its own end.
    pub async fn shutdown_event_handler(&self, registration: &ResourceEventHandlerRegistration<K>) {
        if !registration.informer.is(self) {
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
        with_core!(&*self.engine, core => core.has_synced())
    }

    /// A watcher of this informer's sync state: signalled when it syncs,
    /// reports a list or watch error, stops, or one of its handlers has
    /// received its initial adds. Take it before looking at the state.
    pub fn sync_changes(&self) -> SyncChanges {
        with_core!(&*self.engine, core => core.sync_changes())
    }

    /// Whether [`run`](Self::run) has begun.
    pub fn is_started(&self) -> bool {
        with_core!(&*self.engine, core => core.is_started())
    }

    /// Whether [`run`](Self::run) has returned.
    pub fn is_stopped(&self) -> bool {
        with_core!(&*self.engine, core => core.is_stopped())
    }

    /// Adds whole-object indexes to the cache, before or while running;
    /// objects already cached are indexed at once (in compact storage each
    /// is decoded once for them). Fails for a name already in use, for an
    /// index function that fails on a cached object, and after the
    /// informer stopped.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        match &*self.engine {
            Engine::Decoded(core) => core.add_indexers(indexers),
            Engine::Compact { core, decoder, .. } => {
                core.add_indexers(decoded_indexers_with(indexers, &decode_fn(decoder)))
            }
        }
    }

    /// Adds metadata indexes, which never decode; as
    /// [`add_indexers`](Self::add_indexers) otherwise.
    pub fn add_metadata_indexers(&self, indexers: MetadataIndexers) -> Result<(), Error> {
        with_core!(&*self.engine, core => core.add_indexers(over_metadata(indexers)))
    }

    /// The cache of decoded objects (client-go's `GetIndexer`), in
    /// [`Storage::Decoded`]; `None` in compact storage, whose cache keeps
    /// entries (read it through [`lister`](Self::lister)). Its objects
    /// are shared: never mutate them.
    pub fn indexer(&self) -> Option<&Arc<Indexer<K>>> {
        match &*self.engine {
            Engine::Decoded(core) => Some(core.indexer()),
            Engine::Compact { .. } => None,
        }
    }

    /// The bytes the cache's entries hold on the heap (bytes as received
    /// and parsed metadata, an estimate without allocator overhead), in
    /// compact storage; `None` in decoded storage. It reads every entry.
    pub fn cache_bytes(&self) -> Option<usize> {
        match &*self.engine {
            Engine::Decoded(_) => None,
            Engine::Compact { core, .. } => {
                let mut bytes = 0;
                core.indexer()
                    .for_each(|_, entry| bytes += entry.heap_bytes());
                Some(bytes)
            }
        }
    }

    /// A lister over the cache.
    pub fn lister(&self) -> Lister<K> {
        match &*self.engine {
            Engine::Decoded(core) => {
                Lister::new(Arc::clone(core.indexer()), core.group_resource().clone())
            }
            Engine::Compact { core, decoder, .. } => Lister::compact(
                Arc::clone(core.indexer()),
                Arc::clone(decoder),
                core.group_resource().clone(),
            ),
        }
    }

    /// The resource cached, when known.
    pub fn resource(&self) -> Option<&ApiResource> {
        with_core!(&*self.engine, core => core.resource())
    }

    /// The resourceVersion of the last list or watch event the reflector
    /// received; "" before the first sync (client-go's
    /// `LastSyncResourceVersion`). The cache may lag it slightly: use
    /// [`wait_for_resource_version`](Self::wait_for_resource_version) to
    /// wait for the cache.
    pub fn last_sync_resource_version(&self) -> String {
        with_core!(&*self.engine, core => core.last_sync_resource_version())
    }

    /// Waits until the **cache** holds `resource_version` or a later one
    /// (compared as integers), so after a write answered with
    /// resourceVersion R, waiting for R makes listers show the write (read
    /// your own writes). Handlers may not have been told yet. Fails at
    /// once for a non-integer, and when the informer stops first; wrap it
    /// in a timeout to bound the wait.
    pub async fn wait_for_resource_version(&self, resource_version: &str) -> Result<(), WaitError> {
        with_core!(&*self.engine, core => core.wait_for_resource_version(resource_version).await)
    }

    /// The last list or watch error since the last successful sync (so a
    /// caller can say why the cache is not synced).
    pub fn last_error(&self) -> Option<Arc<ReflectorError>> {
        with_core!(&*self.engine, core => core.last_error())
    }

    /// Counters of the informer's snapshots (warm restart): loaded,
    /// refused, written. All zero without
    /// [`snapshot`](SharedIndexInformerOptions::snapshot).
    pub fn snapshot_stats(&self) -> SnapshotStats {
        with_core!(&*self.engine, core => core.snapshot_stats())
    }

    /// Counters of the informer's work.
    pub fn stats(&self) -> InformerStats {
        match &*self.engine {
            Engine::Decoded(core) => core.stats(),
            Engine::Compact { core, decoder, .. } => InformerStats {
                decodes: decoder.stats(),
                ..core.stats()
            },
        }
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

/// The options of a decoded informer: metadata indexes and transform
/// joined to the whole-object ones.
fn decoded_options<K>(options: SharedIndexInformerOptions<K>) -> SharedIndexInformerOptions<K>
where
    K: Object + Send + Sync + 'static,
{
    let mut indexers = over_metadata::<K>(options.metadata_indexers);
    indexers.extend(options.indexers);
    let transform = match options.transform {
        Some(transform) => Some(after_metadata(options.metadata_transform, transform)),
        None => options.metadata_transform.map(ingest_metadata_transform),
    };
    SharedIndexInformerOptions {
        metadata_indexers: MetadataIndexers::new(),
        indexers,
        metadata_transform: None,
        transform,
        ..options
    }
}

/// `transform`, after `metadata` when there is one.
fn after_metadata<K>(
    metadata: Option<MetadataTransform>,
    transform: TransformFunc<K>,
) -> TransformFunc<K>
where
    K: Object + Send + Sync + 'static,
{
    match metadata {
        None => transform,
        Some(change) => {
            let change = ingest_metadata_transform::<K>(change);
            Arc::new(move |object| transform(change(object)?))
        }
    }
}

/// The options of the core of a compact informer: metadata indexes over
/// entries; whole-object indexes decoding once per entry version, through
/// `decoder` (so with its transform); the metadata transform at ingest,
/// on entries (the whole-object one goes to the decoder).
fn compact_options<K>(
    options: SharedIndexInformerOptions<K>,
    decoder: &Arc<DecodeCache<K>>,
) -> SharedIndexInformerOptions<Entry<K>>
where
    K: ApiObject,
{
    let mut indexers = over_metadata::<Entry<K>>(options.metadata_indexers);
    if !options.indexers.is_empty() {
        indexers.extend(decoded_indexers_with(options.indexers, &decode_fn(decoder)));
    }
    SharedIndexInformerOptions {
        name: options.name,
        resource: options.resource,
        resync_period: options.resync_period,
        storage: options.storage,
        metadata_indexers: MetadataIndexers::new(),
        indexers,
        metadata_transform: None,
        transform: entry_transform(
            options.metadata_transform,
            options.storage == Storage::CompactLz4,
        ),
        decode_cache_bytes: options.decode_cache_bytes,
        reflector: options.reflector,
        metrics: options.metrics,
        // Taken by the constructor, which makes the resume source.
        snapshot: None,
        // Taken by the constructor, which shards the source.
        shard_selector: None,
    }
}

/// Decodes entries for whole-object index functions through `decoder`.
fn decode_fn<K>(decoder: &Arc<DecodeCache<K>>) -> DecodeFn<K, Protobuf>
where
    K: ApiObject,
{
    let decoder = Arc::clone(decoder);
    Arc::new(move |entry: &Entry<K>| decoder.decode(entry).map_err(|error| error.to_string()))
}

/// What a compact informer does to each entry at ingest: the metadata
/// transform ([`Compact::change_metadata`](clientgo_apimachinery::Compact::change_metadata):
/// dropping managedFields cuts them from the body too), then, in
/// `CompactLz4`, the compression. A fresh entry is changed in place; a
/// shared one (the cache's own on a relist, or one resumed from a
/// snapshot) is copied only if the metadata change alters it or it is
/// still to be compressed. `None` when
/// there is nothing to do.
fn entry_transform<K>(
    change: Option<MetadataTransform>,
    compress: bool,
) -> Option<TransformFunc<Entry<K>>>
where
    K: Object + Send + Sync + 'static,
{
    if change.is_none() && !compress {
        return None;
    }
    let apply = move |entry: &mut Entry<K>, change: &Option<MetadataTransform>| {
        if let Some(change) = change {
            entry.change_metadata(&**change);
        }
        if compress {
            entry.compress();
        }
    };
    Some(Arc::new(move |mut entry: Arc<Entry<K>>| {
        if let Some(owned) = Arc::get_mut(&mut entry) {
            apply(owned, &change);
            return Ok(entry);
        }
        let changes = change
            .as_ref()
            .is_some_and(|change| entry.changed_by(&**change));
        let to_compress = compress && entry.compressible();
        if !(changes || to_compress) {
            return Ok(entry);
        }
        let mut changed = (*entry).clone();
        apply(&mut changed, &change);
        Ok(Arc::new(changed))
    }))
}

/// A handler of `K` listening to a compact informer: decodes each entry
/// through the informer's decoder (and its transform).
struct DecodingFor<K, H> {
    decoder: Arc<DecodeCache<K>>,
    handler: H,
}

impl<K, H> ResourceEventHandler<Entry<K>> for DecodingFor<K, H>
where
    K: ApiObject,
    H: ResourceEventHandler<K>,
{
    fn on_add(&mut self, object: &Arc<Entry<K>>, is_in_initial_list: bool) {
        if let Some(object) = self.decoder.for_handler(object) {
            self.handler.on_add(&object, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: &Arc<Entry<K>>, new: &Arc<Entry<K>>) {
        if let (Some(old), Some(new)) =
            (self.decoder.for_handler(old), self.decoder.for_handler(new))
        {
            self.handler.on_update(&old, &new);
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<Entry<K>>) {
        if let Some(deleted) = object.filter_map(|object| self.decoder.for_handler(object)) {
            self.handler.on_delete(&deleted);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn entry() -> Arc<Entry<ConfigMap>> {
        Arc::new(
            Entry::<ConfigMap>::from_json(
                r#"{"metadata":{"name":"a","namespace":"n","managedFields":[{"manager":"m"}]},"data":{"k":"v"}}"#,
            )
            .unwrap(),
        )
    }

    #[test]
    fn a_fresh_entry_is_changed_in_place_and_a_shared_one_copied_only_when_needed() {
        let strip: MetadataTransform = Arc::new(|meta| meta.managed_fields = None);
        let transform = entry_transform::<ConfigMap>(Some(strip), true).unwrap();

        let fresh = entry();
        let address = Arc::as_ptr(&fresh);
        let done = transform(fresh).unwrap();
        assert_eq!(Arc::as_ptr(&done), address, "in place");
        assert!(!done.compressible(), "compressed");
        assert!(done.decode().unwrap().metadata.managed_fields.is_none());

        // The cache's own entry, already transformed: returned as is.
        let again = transform(Arc::clone(&done)).unwrap();
        assert!(Arc::ptr_eq(&again, &done));

        // A shared entry from an older snapshot: copied, the original kept.
        let resumed = entry();
        let held = Arc::clone(&resumed);
        let copied = transform(resumed).unwrap();
        assert!(!Arc::ptr_eq(&copied, &held));
        assert!(held.compressible(), "the shared original is untouched");
        assert!(!copied.compressible());
        assert!(transform_is_none_without_work());
    }

    fn transform_is_none_without_work() -> bool {
        entry_transform::<ConfigMap>(None, false).is_none()
    }
}
