//! [`InformerCore`]: the engine under a
//! [`SharedIndexInformer`](crate::SharedIndexInformer), over the type its
//! cache keeps: one list and watch of a resource, an indexed cache, and
//! the handlers' listeners (client-go's `sharedIndexInformer`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use clientgo_apimachinery::clock::Clock;
use clientgo_apimachinery::{ApiObject, ApiResource, GroupResource, Object};
use clientgo_listwatch::{ListerWatcher, ShardStats, ShardStatus};
use clientgo_reflector::{
    Error as ReflectorError, Reflector, ReflectorMode, ReflectorOptions, ReflectorStats,
    ReflectorStatus, ResourceVersionTracker, ResumePoint, WaitError,
};
use clientgo_store::{
    Delta, Indexer, IndexerOptions, Indexers, KnownObjects, ObjectOrTombstone, PopError,
    ProcessError, Queue, RealFifo, RealFifoOptions, ReflectorStore, ResourceEventHandler, Store,
    process_deltas, process_deltas_in_batch,
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::decode_cache::DecodeStats;
use crate::error::Error;
use crate::handler::Notification;
use crate::handler_options::{HandlerOptions, MINIMUM_RESYNC_PERIOD};
use crate::heavy_work::{HEAVY_WORK_OBJECTS, block_in_place_if_heavy};
use crate::informer_options::SharedIndexInformerOptions;
use crate::listener::{Listener, ListenerSettings};
use crate::metrics::{InformerMetrics, InformerMetricsProvider};
use crate::processor::Processor;
use crate::resume_source::ResumeSource;
use crate::sync_signal::{SyncChanges, SyncSignal};
use crate::warm_restart::SnapshotStats;

/// Listener ids are unique across informers, so a registration from one
/// informer never removes another's handler.
static NEXT_LISTENER_ID: AtomicU64 = AtomicU64::new(1);

/// A reflector's run, its lister-watcher's type erased.
type ReflectorRun = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Builds the informer's reflector, over its queue, when it starts: with
/// the options settled then and the saved state to resume from, if any.
/// Gives the reflector's status and its run until the token fires.
type BuildReflector<K> = Box<
    dyn FnOnce(
            ReflectorOptions,
            Option<ResumePoint<K>>,
            CancellationToken,
        ) -> (ReflectorStatus, ReflectorRun)
        + Send,
>;

/// What the informer's run takes when it starts, once.
struct Start<K> {
    build_reflector: BuildReflector<K>,
    reflector_options: ReflectorOptions,
}

/// The resync periods, which handlers added before the start may still
/// lower (client-go's `resyncCheckPeriod` rule), and what the start takes:
/// `start` is `None` once the informer has started.
struct Setup<K> {
    default_resync: Duration,
    check_period: Duration,
    start: Option<Start<K>>,
}

struct Inner<K> {
    name: String,
    resource: Option<ApiResource>,
    /// What listers name in not-found errors, worked out once.
    group_resource: GroupResource,
    indexer: Arc<Indexer<K>>,
    processor: Processor<K>,
    setup: Mutex<Setup<K>>,
    /// The queue between the reflector and the cache.
    fifo: Arc<RealFifo<K>>,
    /// The reflector's status, once it is built (at the start).
    reflector: OnceLock<ReflectorStatus>,
    /// Held while a pop is applied and distributed, and while a handler
    /// added to a running informer is given the cache's contents, so the
    /// new handler sees every object exactly once (client-go's
    /// `blockDeltas`).
    block_deltas: Mutex<()>,
    stopped: CancellationToken,
    /// Signalled when the informer syncs, its reflector reports an error,
    /// or it stops; handlers' listeners signal their own syncs.
    sync_signal: SyncSignal,
    /// Whether the sync has been signalled.
    synced_signalled: AtomicBool,
    /// The cache's resourceVersion after each pop.
    resource_version: ResourceVersionTracker,
    metrics: InformerMetrics,
    metrics_provider: Arc<dyn InformerMetricsProvider>,
    clock: Arc<dyn Clock>,
    /// The client whose discovery says whether the resource is served, for
    /// informers made from a client: a 404 then tells a resource that does
    /// not exist from one about to.
    discovery: Option<clientgo_rest::RestClient>,
    /// Where a saved state is loaded from and the cache saved to (warm
    /// restart), if anywhere.
    resume: Option<Arc<dyn ResumeSource<K>>>,
    /// Who filters the shards, for a sharded informer (set once, by the
    /// constructor that sharded its source).
    shard: OnceLock<Arc<ShardStatus>>,
}

impl<K> Drop for Inner<K> {
    fn drop(&mut self) {
        // Handlers of an informer that never ran (or whose run future was
        // dropped) still have threads waiting for notifications.
        self.processor.close_all();
    }
}

/// Stops a run whose future is dropped before it returns (in a `select!`,
/// a timeout, an aborted task): without it the reflector's task would go
/// on listing and watching into a queue nobody pops. Dropping cancels the
/// run's token, aborts the reflector's task (its watch connection closes),
/// closes the queue, ends every handler's thread (a call in progress
/// finishes) and marks the informer stopped; it cannot wait for the
/// threads, which a normal return does.
struct RunGuard<K: Object + Send + Sync + 'static> {
    cancel: CancellationToken,
    reflector: tokio::task::AbortHandle,
    inner: Arc<Inner<K>>,
    /// Set when the run returned normally: nothing left to do.
    returned: bool,
}

impl<K: Object + Send + Sync + 'static> Drop for RunGuard<K> {
    fn drop(&mut self) {
        if self.returned {
            return;
        }
        self.cancel.cancel();
        self.reflector.abort();
        self.inner.fifo.close();
        self.inner.processor.close_all();
        self.inner.stopped.cancel();
        self.inner.resource_version.stop();
        self.inner.sync_signal.notify();
        tracing::debug!(informer = %self.inner.name, "run dropped before it returned; stopped");
    }
}

/// The engine of a [`SharedIndexInformer`](crate::SharedIndexInformer)
/// over `K`, the type its cache keeps (the object type itself, or its
/// compact entry); the public type's documentation states the contract.
/// A cheap handle: clones share the cache and handlers.
pub(crate) struct InformerCore<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for InformerCore<K> {
    fn clone(&self) -> Self {
        InformerCore {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K> fmt::Debug for InformerCore<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.inner.name)
            .field("started", &self.inner.setup.lock().start.is_none())
            .field("stopped", &self.inner.stopped.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl<K> InformerCore<K> {
    /// The informer's name (logs, metrics, sync errors).
    pub(crate) fn name(&self) -> &str {
        &self.inner.name
    }
}

/// What a running informer's reflector and queue report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InformerStats {
    /// The reflector's counters (zero before start).
    pub reflector: ReflectorStats,
    /// How the reflector synced last.
    pub mode: Option<ReflectorMode>,
    /// Deltas waiting in the FIFO.
    pub queued: usize,
    /// Objects cached.
    pub cached: usize,
    /// Registered handlers.
    pub handlers: usize,
    /// Decodes of cached entries, in compact storage (all zero in decoded
    /// storage).
    pub decodes: DecodeStats,
    /// For a sharded informer: whether the server or the informer filters
    /// the shards, and how much the informer dropped.
    pub shard: Option<ShardStats>,
}

impl<K> InformerCore<K>
where
    K: ApiObject,
{
    /// An informer over any [`ListerWatcher`]; `discovery`, when given,
    /// is the client whose discovery says whether the resource is served
    /// (a 404 then tells a resource that does not exist from one about to).
    /// Nothing is requested until [`run`](Self::run). `resume_source`
    /// makes the informer's resume source, if it has one, from its name
    /// and the ListerWatcher's identity (server, resource, namespace,
    /// selectors); the informer's `snapshot` option is not read here.
    pub(crate) fn new<L>(
        lister_watcher: L,
        options: SharedIndexInformerOptions<K>,
        discovery: Option<clientgo_rest::RestClient>,
        resume_source: impl FnOnce(&str, &str) -> Option<Box<dyn ResumeSource<K>>>,
    ) -> Self
    where
        L: ListerWatcher<K> + Clone + 'static,
    {
        let name = options
            .name
            .clone()
            .unwrap_or_else(|| lister_watcher.describe());
        let resume = resume_source(&name, &lister_watcher.identity()).map(Arc::from);
        let clock = Arc::clone(&options.reflector.clock);
        let metrics = InformerMetrics::new(&*options.metrics, &name);
        let indexer = Arc::new(Indexer::new(
            IndexerOptions::default().indexers(options.indexers),
        ));
        // The queue prepares each object once as it arrives: the cache's
        // Arc of an unchanged object, else the object transformed.
        let known: Arc<dyn KnownObjects<K>> = Arc::clone(&indexer) as Arc<dyn KnownObjects<K>>;
        let mut fifo_options = RealFifoOptions::default()
            .name(name.clone())
            .reuse_from(known);
        if let Some(transform) = options.transform {
            fifo_options = fifo_options.transform(transform);
        }
        let fifo = Arc::new(RealFifo::new(fifo_options));
        let store: Arc<dyn ReflectorStore<K>> = Arc::clone(&fifo) as Arc<dyn ReflectorStore<K>>;
        let build_reflector: BuildReflector<K> =
            Box::new(move |reflector_options, resume, cancel| {
                let mut reflector = Reflector::new(lister_watcher, store, reflector_options);
                if let Some(point) = resume {
                    reflector = reflector.resume_from(point);
                }
                (reflector.status(), Box::pin(reflector.run(cancel)))
            });
        let group_resource = match &options.resource {
            Some(resource) => resource.group_resource(),
            None => GroupResource::new("", name.clone()),
        };
        InformerCore {
            inner: Arc::new(Inner {
                name,
                group_resource,
                resource: options.resource,
                indexer,
                processor: Processor::new(),
                setup: Mutex::new(Setup {
                    default_resync: options.resync_period,
                    check_period: options.resync_period,
                    start: Some(Start {
                        build_reflector,
                        reflector_options: options.reflector,
                    }),
                }),
                fifo,
                reflector: OnceLock::new(),
                block_deltas: Mutex::new(()),
                stopped: CancellationToken::new(),
                sync_signal: SyncSignal::new(),
                synced_signalled: AtomicBool::new(false),
                resource_version: ResourceVersionTracker::new(),
                metrics,
                metrics_provider: options.metrics,
                clock,
                discovery,
                resume,
                shard: OnceLock::new(),
            }),
        }
    }

    /// Reports `status` in [`InformerStats::shard`].
    pub(crate) fn set_shard_status(&self, status: Option<Arc<ShardStatus>>) {
        if let Some(status) = status {
            let _ = self.inner.shard.set(status);
        }
    }

    /// Whether the server serves this informer's resource, by discovery:
    /// `None` when it cannot tell (an informer not made from a client, or
    /// discovery itself failed).
    pub(crate) async fn resource_served(&self) -> Option<bool> {
        let client = self.inner.discovery.as_ref()?;
        let resource = self.inner.resource.as_ref()?;
        match client
            .discover_group_version(&resource.group_version())
            .await
        {
            Ok(resources) => Some(
                resources
                    .iter()
                    .any(|served| served.resource.plural() == resource.plural()),
            ),
            // The group version itself is not served.
            Err(error) if error.is_not_found() => Some(false),
            Err(_) => None,
        }
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
    pub(crate) async fn run(&self, cancel: CancellationToken) {
        let span = tracing::info_span!("informer", name = %self.inner.name);
        self.run_inner(cancel).instrument(span).await;
    }

    async fn run_inner(&self, cancel: CancellationToken) {
        let inner = &self.inner;
        let Some(Start {
            build_reflector,
            mut reflector_options,
        }) = self.begin()
        else {
            return;
        };
        let mut resume = None;
        if let Some(source) = &inner.resume {
            resume = source.load().await;
            if resume.is_some() {
                reflector_options.resume_settle = source.settle();
            }
        }
        let fifo = &inner.fifo;
        let weak: Weak<Inner<K>> = Arc::downgrade(&self.inner);
        reflector_options.should_resync = Some(Arc::new(move || {
            weak.upgrade()
                .is_some_and(|inner| inner.processor.should_resync(inner.clock.now()))
        }));
        // The run's own token: cancelled by the caller's, or by the guard
        // when this future is dropped before it returns.
        let cancel = cancel.child_token();
        let (status, reflector) = build_reflector(reflector_options, resume, cancel.clone());
        let _ = inner.reflector.set(status);
        let reflector_task = tokio::spawn(reflector.in_current_span());
        let mut guard = RunGuard {
            cancel: cancel.clone(),
            reflector: reflector_task.abort_handle(),
            inner: Arc::clone(&self.inner),
            returned: false,
        };
        tracing::debug!("started");
        if let Some(source) = &inner.resume
            && !source.save_interval().is_zero()
        {
            tokio::spawn(self.save_periodically(Arc::clone(source), cancel.clone()));
        }

        loop {
            let started = Instant::now();
            let popped = tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                popped = fifo.pop_batch(
                    |deltas, initial| self.apply_batch(deltas, initial),
                    |delta, initial| self.apply_one(delta, initial),
                ) => popped,
            };
            match popped {
                Ok(()) => {}
                Err(PopError::Closed) => break,
                Err(PopError::Process(error)) => {
                    tracing::warn!(%error, "could not apply every change to the cache; the next relist repairs it");
                }
            }
            self.after_pop(fifo, started);
        }

        fifo.close();
        if let Err(error) = reflector_task.await {
            tracing::error!(%error, "the reflector's task failed");
        }
        if let Some(source) = &inner.resume
            && fifo.has_synced()
        {
            source.save(Arc::clone(&inner.indexer)).await;
        }
        self.finish(inner.processor.listeners()).await;
        guard.returned = true;
        tracing::debug!("stopped");
    }

    /// Saves the cache every interval while synced, until `cancel` fires.
    fn save_periodically(
        &self,
        source: Arc<dyn ResumeSource<K>>,
        cancel: CancellationToken,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let inner = Arc::downgrade(&self.inner);
        async move {
            let mut ticks = tokio::time::interval(source.save_interval());
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                tokio::select! {
                    () = cancel.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                let Some(inner) = inner.upgrade() else { return };
                if inner.fifo.has_synced() {
                    source.save(Arc::clone(&inner.indexer)).await;
                }
            }
        }
    }

    /// Marks the informer started and hands out what the run needs, its
    /// reflector options settled; `None` when it already ran.
    fn begin(&self) -> Option<Start<K>> {
        let mut setup = self.inner.setup.lock();
        let Some(mut start) = setup.start.take() else {
            tracing::warn!("the informer has already been started; this run returns at once");
            return None;
        };
        let options = &mut start.reflector_options;
        options.resync_period = setup.check_period;
        // Every reported error wakes sync waiters (it may be a lasting
        // one), then goes to the user's handler.
        let signal = self.inner.sync_signal.clone();
        let user_handler = options.watch_error_handler.clone();
        options.watch_error_handler = Some(Arc::new(move |error| {
            signal.notify();
            if let Some(handler) = &user_handler {
                handler(error);
            }
        }));
        if options.name.is_none() {
            options.name = Some(self.inner.name.clone());
        }
        Some(start)
    }

    /// Stops every handler, waits for their threads, marks the informer
    /// stopped.
    async fn finish(&self, listeners: Vec<Arc<Listener<K>>>) {
        for listener in &listeners {
            listener.close();
        }
        for listener in &listeners {
            listener.finished().await;
        }
        self.inner.stopped.cancel();
        self.inner.resource_version.stop();
        self.inner.sync_signal.notify();
    }

    /// Applies one delta. A relist (`ReplacedAll`) or resync (`SyncAll`)
    /// of a large cache runs off the async workers.
    fn apply_one(&self, delta: Delta<K>, is_in_initial_list: bool) -> Result<(), ProcessError> {
        let inner = &self.inner;
        let heavy = match &delta {
            Delta::ReplacedAll { objects, .. } => {
                objects.len().max(inner.indexer.len()) >= HEAVY_WORK_OBJECTS
            }
            Delta::SyncAll => inner.indexer.len() >= HEAVY_WORK_OBJECTS,
            _ => false,
        };
        block_in_place_if_heavy(heavy, || {
            let _blocked = inner.block_deltas.lock();
            process_deltas(
                &mut HandlerNotifier(&inner.processor),
                &*inner.indexer,
                inner.indexer.key_func(),
                vec![delta],
                is_in_initial_list,
            )
        })
    }

    fn apply_batch(
        &self,
        deltas: Vec<Delta<K>>,
        is_in_initial_list: bool,
    ) -> Result<(), ProcessError> {
        let inner = &self.inner;
        block_in_place_if_heavy(deltas.len() >= HEAVY_WORK_OBJECTS, || {
            let _blocked = inner.block_deltas.lock();
            process_deltas_in_batch(
                &mut HandlerNotifier(&inner.processor),
                &inner.indexer,
                deltas,
                is_in_initial_list,
            )
        })
    }

    fn after_pop(&self, fifo: &RealFifo<K>, started: Instant) {
        let inner = &self.inner;
        // After the first sync this is one atomic load per pop; the queue's
        // lock is taken only until then.
        if !inner.synced_signalled.load(Ordering::Acquire)
            && fifo.has_synced()
            && !inner.synced_signalled.swap(true, Ordering::AcqRel)
        {
            inner.sync_signal.notify();
        }
        inner
            .metrics
            .processing_latency
            .observe(started.elapsed().as_secs_f64());
        inner.metrics.queued_items.set(fifo.len() as f64);
        let resource_version = inner.indexer.last_store_sync_resource_version();
        if let Ok(number) = resource_version.parse::<u64>() {
            inner.metrics.store_resource_version.set(number as f64);
        }
        inner.resource_version.set(&resource_version);
    }

    /// Registers `handler` under `name`; see
    /// [`SharedIndexInformer::add_event_handler_with_options`](crate::SharedIndexInformer::add_event_handler_with_options).
    pub(crate) fn add_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<K>>,
        name: &str,
        options: &HandlerOptions,
    ) -> Result<Arc<Listener<K>>, Error> {
        let inner = &self.inner;
        let mut setup = inner.setup.lock();
        if inner.stopped.is_cancelled() {
            return Err(Error::Stopped {
                informer: inner.name.clone(),
                action: "add an event handler",
            });
        }
        let now = inner.clock.now();
        let mut requested = options.resync_period.unwrap_or(setup.default_resync);
        if !requested.is_zero() && requested < MINIMUM_RESYNC_PERIOD {
            tracing::warn!(
                handler = %name,
                ?requested,
                "resync period too short; raised to {MINIMUM_RESYNC_PERIOD:?}"
            );
            requested = MINIMUM_RESYNC_PERIOD;
        }
        if !requested.is_zero() && requested < setup.check_period {
            if setup.start.is_none() {
                tracing::warn!(
                    handler = %name,
                    ?requested,
                    check_period = ?setup.check_period,
                    "the informer has started: the handler's resync period is raised to the check period"
                );
                requested = setup.check_period;
            } else {
                setup.check_period = requested;
                for listener in inner.processor.listeners() {
                    let (listener_requested, _) = listener.resync_periods();
                    listener.set_resync_period(
                        effective_resync_period(listener_requested, requested),
                        now,
                    );
                }
            }
        }
        let resync_period = effective_resync_period(requested, setup.check_period);
        let settings = ListenerSettings {
            id: NEXT_LISTENER_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_string(),
            queue: options.queue,
            requested_resync: requested,
            resync_period,
            now,
            sync_signal: inner.sync_signal.clone(),
            pending_metric: inner.metrics_provider.handler_pending(&inner.name, name),
            latency_metric: inner.metrics_provider.handler_latency(&inner.name, name),
        };
        let listener =
            Listener::spawn(settings, handler).map_err(|source| Error::HandlerThread {
                informer: inner.name.clone(),
                handler: name.to_string(),
                source,
            })?;
        if setup.start.is_none() {
            // The replay of a large cache runs off the async workers.
            block_in_place_if_heavy(inner.indexer.len() >= HEAVY_WORK_OBJECTS, || {
                let _blocked = inner.block_deltas.lock();
                inner.processor.add(Arc::clone(&listener));
                listener.push_all(inner.indexer.list().into_iter().map(|object| {
                    Notification::Add {
                        object,
                        is_in_initial_list: true,
                    }
                }));
            });
        } else {
            inner.processor.add(Arc::clone(&listener));
        }
        drop(setup);
        tracing::debug!(handler = %name, ?resync_period, "handler added");
        Ok(listener)
    }

    /// Removes the handler whose listener is `id`, at once; pending
    /// notifications are dropped. Unknown ids do nothing.
    pub(crate) fn remove_handler(&self, id: u64) {
        if let Some(listener) = self.inner.processor.remove(id) {
            listener.close();
            tracing::debug!(handler = %listener.name, "handler removed");
        }
    }

    /// Whether the initial list has been applied to the cache and handed
    /// to the handlers' queues (client-go's `HasSynced`). Handlers may not
    /// have processed it yet: see
    /// [`ResourceEventHandlerRegistration::has_synced`].
    pub(crate) fn has_synced(&self) -> bool {
        self.inner.fifo.has_synced()
    }

    /// A watcher of this informer's sync state: signalled when it syncs,
    /// reports a list or watch error, stops, or one of its handlers has
    /// received its initial adds. Take it before looking at the state.
    pub(crate) fn sync_changes(&self) -> SyncChanges {
        self.inner.sync_signal.subscribe()
    }

    /// Whether [`run`](Self::run) has begun.
    pub(crate) fn is_started(&self) -> bool {
        self.inner.setup.lock().start.is_none()
    }

    /// Whether [`run`](Self::run) has returned.
    pub(crate) fn is_stopped(&self) -> bool {
        self.inner.stopped.is_cancelled()
    }

    /// Adds indexes to the cache, before or while running; objects already
    /// cached are indexed at once. Fails for a name already in use, for an
    /// index function that fails on a cached object, and after the
    /// informer stopped.
    pub(crate) fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        if self.is_stopped() {
            return Err(Error::Stopped {
                informer: self.inner.name.clone(),
                action: "add indexers",
            });
        }
        self.inner
            .indexer
            .add_indexers(indexers)
            .map_err(|source| Error::Store {
                informer: self.inner.name.clone(),
                source,
            })
    }

    /// The cache (client-go's `GetIndexer`). Its objects are shared:
    /// never mutate them.
    pub(crate) fn indexer(&self) -> &Arc<Indexer<K>> {
        &self.inner.indexer
    }

    /// What listers name in not-found errors.
    pub(crate) fn group_resource(&self) -> &GroupResource {
        &self.inner.group_resource
    }

    /// The resource cached, when known.
    pub(crate) fn resource(&self) -> Option<&ApiResource> {
        self.inner.resource.as_ref()
    }

    /// The resourceVersion of the last list or watch event the reflector
    /// received; "" before the first sync (client-go's
    /// `LastSyncResourceVersion`). The cache may lag it slightly: use
    /// [`wait_for_resource_version`](Self::wait_for_resource_version) to
    /// wait for the cache.
    pub(crate) fn last_sync_resource_version(&self) -> String {
        self.inner
            .reflector
            .get()
            .map(|reflector| reflector.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// Waits until the **cache** holds `resource_version` or a later one
    /// (compared as integers), so after a write answered with
    /// resourceVersion R, waiting for R makes listers show the write (read
    /// your own writes). Handlers may not have been told yet. Fails at
    /// once for a non-integer, and when the informer stops first; wrap it
    /// in a timeout to bound the wait.
    pub(crate) async fn wait_for_resource_version(
        &self,
        resource_version: &str,
    ) -> Result<(), WaitError> {
        self.inner.resource_version.wait_for(resource_version).await
    }

    /// The last list or watch error since the last successful sync (so a
    /// caller can say why the cache is not synced).
    pub(crate) fn last_error(&self) -> Option<Arc<ReflectorError>> {
        self.inner
            .reflector
            .get()
            .and_then(|reflector| reflector.last_error())
    }

    /// Counters of the informer's snapshots (warm restart): loaded,
    /// refused, written. All zero without
    /// [`snapshot`](SharedIndexInformerOptions::snapshot).
    pub(crate) fn snapshot_stats(&self) -> SnapshotStats {
        self.inner
            .resume
            .as_ref()
            .map(|source| source.stats())
            .unwrap_or_default()
    }

    /// Counters of the informer's work.
    pub(crate) fn stats(&self) -> InformerStats {
        let reflector = self.inner.reflector.get();
        InformerStats {
            reflector: reflector.map(|r| r.stats()).unwrap_or_default(),
            mode: reflector.map(|r| r.mode()),
            queued: self.inner.fifo.len(),
            cached: self.inner.indexer.len(),
            handlers: self.inner.processor.len(),
            decodes: DecodeStats::default(),
            shard: self.inner.shard.get().map(|status| status.stats()),
        }
    }
}

/// The informer's own handler for `process_deltas`: turns each change into
/// a notification for the handlers. An update whose old and new objects
/// have the same resourceVersion is a resync and goes only to handlers due
/// for one.
struct HandlerNotifier<'a, K>(&'a Processor<K>);

impl<K: Object + Send + Sync + 'static> ResourceEventHandler<K> for HandlerNotifier<'_, K> {
    fn on_add(&mut self, object: &Arc<K>, is_in_initial_list: bool) {
        self.0.distribute(
            Notification::Add {
                object: Arc::clone(object),
                is_in_initial_list,
            },
            false,
        );
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        let is_sync = old.resource_version() == new.resource_version();
        self.0.distribute(
            Notification::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            is_sync,
        );
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        self.0
            .distribute(Notification::Delete(object.clone()), false);
    }
}

/// client-go's `determineResyncPeriod`: no resync when the handler asks
/// for none or the informer does none; else at least the check period.
fn effective_resync_period(requested: Duration, check_period: Duration) -> Duration {
    if requested.is_zero() {
        return Duration::ZERO;
    }
    if check_period.is_zero() {
        tracing::warn!(
            ?requested,
            "the informer does not resync (its resync period is zero), so neither does this handler"
        );
        return Duration::ZERO;
    }
    requested.max(check_period)
}

/// `a::b::Handler<c::D>` → `Handler`.
pub(crate) fn short_type_name(full: &str) -> String {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resync_periods_follow_client_go() {
        let s = Duration::from_secs;
        assert_eq!(effective_resync_period(s(0), s(10)), s(0));
        assert_eq!(effective_resync_period(s(5), s(0)), s(0));
        assert_eq!(effective_resync_period(s(5), s(10)), s(10));
        assert_eq!(effective_resync_period(s(30), s(10)), s(30));
    }

    #[test]
    fn handler_names_are_short() {
        assert_eq!(
            short_type_name(
                "clientgo_informers::handler_funcs::ResourceEventHandlerFuncs<k8s::Pod>"
            ),
            "ResourceEventHandlerFuncs"
        );
        assert_eq!(short_type_name("Plain"), "Plain");
    }
}
