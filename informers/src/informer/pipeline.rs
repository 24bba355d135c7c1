//! [`Pipeline`]: the machinery of one informer over the type `S` its
//! cache keeps (reflector → queue → cache → handlers; client-go's
//! `sharedIndexInformer`), complete when it is made.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use clientgo_apimachinery::clock::Clock;
use clientgo_apimachinery::{ApiObject, ApiResource, GroupResource, Object};
use clientgo_listwatch::{BoxedListerWatcher, ShardStatus};
use clientgo_reflector::{Reflector, ReflectorOptions, ResourceVersionTracker};
use clientgo_store::{
    Delta, Indexer, IndexerOptions, Indexers, KnownObjects, ObjectOrTombstone, PopError,
    ProcessError, Queue, RealFifo, RealFifoOptions, ReflectorStore, ResourceEventHandler, Store,
    TransformFunc, process_deltas, process_deltas_in_batch,
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::cache::superseded::Superseded;
use crate::error::Error;
use crate::handler::listener::{Listener, ListenerSettings};
use crate::handler::notification::Notification;
use crate::handler::options::{HandlerOptions, MINIMUM_RESYNC_PERIOD};
use crate::handler::processor::Processor;
use crate::handler::sync_signal::SyncSignal;
use crate::informer::free_memory;
use crate::informer::heavy_work::{HEAVY_WORK_OBJECTS, block_in_place_if_heavy};
use crate::informer::state::InformerState;
use crate::metrics::provider::{InformerMetrics, InformerMetricsProvider};
use crate::warm_restart::options::SnapshotStats;
use crate::warm_restart::resume::ResumeSource;

/// Listener ids are unique across informers, so a registration from one
/// informer never removes another's handler.
static NEXT_LISTENER_ID: AtomicU64 = AtomicU64::new(1);

/// What a [`Pipeline`] is made with (the engine's own settings, worked out
/// from the public options).
pub(crate) struct PipelineConfig<S> {
    /// The name in logs, metrics and sync errors; the source's description
    /// when `None`.
    pub(crate) name: Option<String>,
    pub(crate) resource: Option<ApiResource>,
    /// The default resync period of handlers, and the first check period.
    pub(crate) resync_period: Duration,
    /// Every index, over the kept entries.
    pub(crate) indexers: Indexers<S>,
    /// What is done to each arriving entry.
    pub(crate) ingest: Option<TransformFunc<S>>,
    pub(crate) reflector: ReflectorOptions,
    pub(crate) metrics: Arc<dyn InformerMetricsProvider>,
    /// See [`InformerState::discovery`].
    pub(crate) discovery: Option<clientgo_rest::RestClient>,
    /// Who filters the shards, for a sharded source.
    pub(crate) shard: Option<Arc<ShardStatus>>,
    /// Told of every cached entry an update or a delete replaced (the
    /// informer's decode cache, which drops its decode of it).
    pub(crate) superseded: Option<Arc<dyn Superseded<S>>>,
}

/// The reflector of a pipeline, its source's type erased.
type PipelineReflector<S> = Reflector<S, BoxedListerWatcher<S>>;

struct Inner<S> {
    state: Arc<InformerState>,
    indexer: Arc<Indexer<S>>,
    processor: Processor<S>,
    /// The queue between the reflector and the cache.
    fifo: Arc<RealFifo<S>>,
    /// Built with the pipeline; taken by the run.
    reflector: Mutex<Option<PipelineReflector<S>>>,
    /// Held while a pop is applied and distributed, and while a handler
    /// added to a running informer is given the cache's contents, so the
    /// new handler sees every object exactly once (client-go's
    /// `blockDeltas`).
    block_deltas: Mutex<()>,
    metrics: InformerMetrics,
    metrics_provider: Arc<dyn InformerMetricsProvider>,
    clock: Arc<dyn Clock>,
    /// See [`PipelineConfig::superseded`].
    superseded: Option<Arc<dyn Superseded<S>>>,
    /// Where a saved state is loaded from and the cache saved to (warm
    /// restart), if anywhere.
    resume: Option<Arc<dyn ResumeSource<S>>>,
}

impl<S> Drop for Inner<S> {
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
struct RunGuard<S: Object + Send + Sync + 'static> {
    cancel: CancellationToken,
    reflector: tokio::task::AbortHandle,
    inner: Arc<Inner<S>>,
    /// Set when the run returned normally: nothing left to do.
    returned: bool,
}

impl<S: Object + Send + Sync + 'static> Drop for RunGuard<S> {
    fn drop(&mut self) {
        if self.returned {
            return;
        }
        self.cancel.cancel();
        self.reflector.abort();
        self.inner.fifo.close();
        self.inner.processor.close_all();
        self.inner.state.mark_stopped();
        tracing::debug!(informer = %self.inner.state.name, "run dropped before it returned; stopped");
    }
}

/// One informer's reflector, queue, cache and handlers, over `S`, the
/// type its cache keeps; the public type's documentation
/// ([`SharedIndexInformer`](crate::SharedIndexInformer)) states the
/// contract. A cheap handle: clones share everything.
pub(crate) struct Pipeline<S> {
    inner: Arc<Inner<S>>,
}

impl<S> Clone for Pipeline<S> {
    fn clone(&self) -> Self {
        Pipeline {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<S> fmt::Debug for Pipeline<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("name", &self.inner.state.name)
            .field("started", &self.inner.state.is_started())
            .field("stopped", &self.inner.state.is_stopped())
            .finish_non_exhaustive()
    }
}

impl<S> Pipeline<S>
where
    S: ApiObject,
{
    /// A pipeline over `lister_watcher`, its reflector built at once;
    /// nothing is requested until [`run`](Self::run). `resume_source`
    /// makes the resume source, if there is one, from the informer's name
    /// and the source's identity (server, resource, namespace, selectors).
    pub(crate) fn new(
        lister_watcher: BoxedListerWatcher<S>,
        config: PipelineConfig<S>,
        resume_source: impl FnOnce(&str, &str) -> Option<Box<dyn ResumeSource<S>>>,
    ) -> Self {
        use clientgo_listwatch::ListerWatcher;

        let PipelineConfig {
            name,
            resource,
            resync_period,
            indexers,
            ingest,
            mut reflector,
            metrics: metrics_provider,
            discovery,
            shard,
            superseded,
        } = config;
        let name = name.unwrap_or_else(|| lister_watcher.describe());
        let resume = resume_source(&name, &lister_watcher.identity()).map(Arc::from);
        let clock = Arc::clone(&reflector.clock);
        let metrics = InformerMetrics::new(&*metrics_provider, &name);
        let indexer = Arc::new(Indexer::new(IndexerOptions::default().indexers(indexers)));
        // The queue prepares each object once as it arrives: the cache's
        // Arc of an unchanged object, else the object through the ingest.
        let known: Arc<dyn KnownObjects<S>> = Arc::clone(&indexer) as Arc<dyn KnownObjects<S>>;
        let mut fifo_options = RealFifoOptions::default()
            .name(name.clone())
            .reuse_from(known);
        if let Some(ingest) = ingest {
            fifo_options = fifo_options.transform(ingest);
        }
        let fifo = Arc::new(RealFifo::new(fifo_options));
        let group_resource = match &resource {
            Some(resource) => resource.group_resource(),
            None => GroupResource::new("", name.clone()),
        };
        let sync_signal = SyncSignal::new();
        // Every reported error wakes sync waiters (it may be a lasting
        // one), then goes to the user's handler.
        let signal = sync_signal.clone();
        let user_handler = reflector.watch_error_handler.take();
        reflector.watch_error_handler = Some(Arc::new(move |error| {
            signal.notify();
            if let Some(handler) = &user_handler {
                handler(error);
            }
        }));
        if reflector.name.is_none() {
            reflector.name = Some(name.clone());
        }
        let inner = Arc::new_cyclic(|weak: &Weak<Inner<S>>| {
            let weak = Weak::clone(weak);
            reflector.should_resync = Some(Arc::new(move || {
                weak.upgrade()
                    .is_some_and(|inner| inner.processor.should_resync(inner.clock.now()))
            }));
            let store: Arc<dyn ReflectorStore<S>> = Arc::clone(&fifo) as Arc<dyn ReflectorStore<S>>;
            let reflector = Reflector::new(lister_watcher, store, reflector);
            let state = Arc::new(InformerState {
                name,
                resource,
                group_resource,
                reflector: reflector.status(),
                shard,
                sync_signal,
                synced: Default::default(),
                started: Default::default(),
                stopped: CancellationToken::new(),
                resource_version: ResourceVersionTracker::new(),
                discovery,
            });
            Inner {
                state,
                indexer,
                processor: Processor::new(resync_period),
                fifo,
                reflector: Mutex::new(Some(reflector)),
                block_deltas: Mutex::new(()),
                metrics,
                metrics_provider,
                clock,
                resume,
                superseded,
            }
        });
        Pipeline { inner }
    }

    /// The state every handle reads.
    pub(crate) fn state(&self) -> &Arc<InformerState> {
        &self.inner.state
    }

    /// Lists, watches and delivers until `cancel` fires; see
    /// [`SharedIndexInformer::run`](crate::SharedIndexInformer::run).
    pub(crate) async fn run(&self, cancel: CancellationToken) {
        let span = tracing::info_span!("informer", name = %self.inner.state.name);
        self.run_inner(cancel).instrument(span).await;
    }

    async fn run_inner(&self, cancel: CancellationToken) {
        let inner = &self.inner;
        let Some(mut reflector) = self.begin() else {
            return;
        };
        if let Some(source) = &inner.resume
            && let Some(point) = source.load().await
        {
            reflector = reflector.resume_from(point).resume_settle(source.settle());
        }
        let fifo = &inner.fifo;
        // The run's own token: cancelled by the caller's, or by the guard
        // when this future is dropped before it returns.
        let cancel = cancel.child_token();
        let reflector_task = tokio::spawn(reflector.run(cancel.clone()).in_current_span());
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
            && inner.state.has_synced()
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
        source: Arc<dyn ResumeSource<S>>,
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
                if inner.state.has_synced() {
                    source.save(Arc::clone(&inner.indexer)).await;
                }
            }
        }
    }

    /// Marks the informer started and hands out its reflector, with the
    /// resync check period settled; `None` when it already ran.
    fn begin(&self) -> Option<PipelineReflector<S>> {
        let check_period = self.inner.processor.freeze();
        let Some(reflector) = self.inner.reflector.lock().take() else {
            tracing::warn!("the informer has already been started; this run returns at once");
            return None;
        };
        self.inner.state.started.store(true, Ordering::Release);
        Some(reflector.resync_period(check_period))
    }

    /// Stops every handler, waits for their threads, marks the informer
    /// stopped.
    async fn finish(&self, listeners: Vec<Arc<Listener<S>>>) {
        for listener in &listeners {
            listener.close();
        }
        for listener in &listeners {
            listener.finished().await;
        }
        self.inner.state.mark_stopped();
    }

    /// Applies one delta. A relist (`ReplacedAll`) or resync (`SyncAll`)
    /// of a large cache runs off the async workers.
    fn apply_one(&self, delta: Delta<S>, is_in_initial_list: bool) -> Result<(), ProcessError> {
        let inner = &self.inner;
        let heavy = match &delta {
            Delta::ReplacedAll { objects, .. } => {
                objects.len().max(inner.indexer.len()) >= HEAVY_WORK_OBJECTS
            }
            Delta::SyncAll => inner.indexer.len() >= HEAVY_WORK_OBJECTS,
            _ => false,
        };
        let relist = matches!(delta, Delta::ReplacedAll { .. });
        let applied = block_in_place_if_heavy(heavy, || {
            let _blocked = inner.block_deltas.lock();
            process_deltas(
                &mut HandlerNotifier(&inner.processor, inner.superseded.as_deref()),
                &*inner.indexer,
                inner.indexer.key_func(),
                vec![delta],
                is_in_initial_list,
            )
        });
        // The relist's list is freed by now, and the entries it replaced
        // unless a handler's queue still holds them (those stay until the
        // next trim).
        if heavy && relist {
            free_memory::release_after_burst();
        }
        applied
    }

    fn apply_batch(
        &self,
        deltas: Vec<Delta<S>>,
        is_in_initial_list: bool,
    ) -> Result<(), ProcessError> {
        let inner = &self.inner;
        block_in_place_if_heavy(deltas.len() >= HEAVY_WORK_OBJECTS, || {
            let _blocked = inner.block_deltas.lock();
            process_deltas_in_batch(
                &mut HandlerNotifier(&inner.processor, inner.superseded.as_deref()),
                &inner.indexer,
                deltas,
                is_in_initial_list,
            )
        })
    }

    fn after_pop(&self, fifo: &RealFifo<S>, started: Instant) {
        let inner = &self.inner;
        // After the first sync this is one atomic load per pop; the queue's
        // lock is taken only until then.
        if !inner.state.has_synced() && fifo.has_synced() {
            inner.state.mark_synced();
            free_memory::release_after_burst();
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
        inner.state.resource_version.set(&resource_version);
    }

    /// Registers `handler` under `name`; see
    /// [`SharedIndexInformer::add_event_handler_with_options`](crate::SharedIndexInformer::add_event_handler_with_options).
    pub(crate) fn add_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<S>>,
        name: &str,
        options: &HandlerOptions,
    ) -> Result<Arc<Listener<S>>, Error> {
        let inner = &self.inner;
        let mut periods = inner.processor.periods();
        if inner.state.is_stopped() {
            return Err(Error::Stopped {
                informer: inner.state.name.clone(),
                action: "add an event handler",
            });
        }
        let now = inner.clock.now();
        let mut requested = options.resync_period.unwrap_or(periods.default);
        if !requested.is_zero() && requested < MINIMUM_RESYNC_PERIOD {
            tracing::warn!(
                handler = %name,
                ?requested,
                "resync period too short; raised to {MINIMUM_RESYNC_PERIOD:?}"
            );
            requested = MINIMUM_RESYNC_PERIOD;
        }
        if !requested.is_zero() && requested < periods.check {
            if periods.frozen {
                tracing::warn!(
                    handler = %name,
                    ?requested,
                    check_period = ?periods.check,
                    "the informer has started: the handler's resync period is raised to the check period"
                );
                requested = periods.check;
            } else {
                periods.check = requested;
                for listener in inner.processor.listeners() {
                    let (listener_requested, _) = listener.resync_periods();
                    listener.set_resync_period(
                        effective_resync_period(listener_requested, requested),
                        now,
                    );
                }
            }
        }
        let resync_period = effective_resync_period(requested, periods.check);
        let settings = ListenerSettings {
            id: NEXT_LISTENER_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_string(),
            queue: options.queue,
            requested_resync: requested,
            resync_period,
            now,
            sync_signal: inner.state.sync_signal.clone(),
            pending_metric: inner
                .metrics_provider
                .handler_pending(&inner.state.name, name),
            latency_metric: inner
                .metrics_provider
                .handler_latency(&inner.state.name, name),
        };
        let listener =
            Listener::spawn(settings, handler).map_err(|source| Error::HandlerThread {
                informer: inner.state.name.clone(),
                handler: name.to_string(),
                source,
            })?;
        if periods.frozen {
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
        drop(periods);
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

    /// Adds indexes to the cache, before or while running; objects already
    /// cached are indexed at once. Fails for a name already in use, for an
    /// index function that fails on a cached object, and after the
    /// informer stopped.
    pub(crate) fn add_indexers(&self, indexers: Indexers<S>) -> Result<(), Error> {
        let state = &self.inner.state;
        if state.is_stopped() {
            return Err(Error::Stopped {
                informer: state.name.clone(),
                action: "add indexers",
            });
        }
        self.inner
            .indexer
            .add_indexers(indexers)
            .map_err(|source| Error::Store {
                informer: state.name.clone(),
                source,
            })
    }

    /// The cache. Its objects are shared: never mutate them.
    pub(crate) fn indexer(&self) -> &Arc<Indexer<S>> {
        &self.inner.indexer
    }

    /// Counters of the informer's snapshots (warm restart).
    pub(crate) fn snapshot_stats(&self) -> SnapshotStats {
        self.inner
            .resume
            .as_ref()
            .map(|source| source.stats())
            .unwrap_or_default()
    }

    /// Deltas waiting in the queue.
    pub(crate) fn queued(&self) -> usize {
        self.inner.fifo.len()
    }

    /// Registered handlers.
    pub(crate) fn handlers(&self) -> usize {
        self.inner.processor.len()
    }
}

/// The informer's own handler for `process_deltas`: turns each change into
/// a notification for the handlers. An update whose old and new objects
/// have the same resourceVersion is a resync and goes only to handlers due
/// for one. Each entry an update or a delete supersedes is told to
/// [`Superseded`], if anyone listens.
struct HandlerNotifier<'a, S>(&'a Processor<S>, Option<&'a dyn Superseded<S>>);

impl<S: Object + Send + Sync + 'static> ResourceEventHandler<S> for HandlerNotifier<'_, S> {
    fn on_add(&mut self, object: &Arc<S>, is_in_initial_list: bool) {
        self.0.distribute(
            Notification::Add {
                object: Arc::clone(object),
                is_in_initial_list,
            },
            false,
        );
    }

    fn on_update(&mut self, old: &Arc<S>, new: &Arc<S>) {
        let is_sync = old.resource_version() == new.resource_version();
        if !is_sync && let Some(superseded) = self.1 {
            superseded.superseded(old);
        }
        self.0.distribute(
            Notification::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            is_sync,
        );
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<S>) {
        if let (Some(superseded), Some(entry)) = (self.1, object.object()) {
            superseded.superseded(entry);
        }
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
