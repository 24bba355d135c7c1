//! A registered controller: its queue, its workers and the reconcile loop
//! (controller-runtime's `internal/controller`).
//!
//! **One key at a time.** Workers take keys from a client-go work queue,
//! which hands a key to one worker at a time and, when the key is added
//! while it is being reconciled, hands it out once more after: one run per
//! key in flight, and one more run for changes during it.
//!
//! **Reading the object.** A worker reads the key's object from the
//! informer's lister when it takes the key, so nothing is decoded before a
//! reconcile needs it, and the reconcile sees the latest cached state. A
//! key whose object has left the cache is not reconciled: its backoff is
//! reset and nothing is scheduled (see
//! [`Builder::on_gone`](crate::Builder::on_gone)).
//!
//! **Panics.** Each reconcile runs as a task of its own; a panic is
//! counted, logged and handled as an error (controller-runtime's
//! `RecoverPanic`, on by default).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use clientgo_informers::{InformerSynced, Lister, SharedInformerFactory, TypedResource};
use clientgo_workqueue::{QueueOptions, RateLimiter, RateLimitingQueue};
use tokio::time::Instant;
use tracing::Instrument;

use crate::builder::{Builder, OnGone, Watch, WatchContext};
use crate::error::Error;
use crate::metrics::ControllerMetrics;
use crate::predicate::Predicate;
use crate::reconcile::{Action, Outcome, QueueStep, Request, queue_step, result_label};
use crate::sharding::{HeldShards, ShardGuard};
use crate::stats::{ControllerStats, Counters};

/// What follows a failed reconcile, given the object, the error and the
/// context.
pub(crate) type ErrorPolicy<K, C, E> = Arc<dyn Fn(&Arc<K>, &E, &Arc<C>) -> Action + Send + Sync>;

/// A boxed future that runs to the end of a controller's work.
pub(crate) type Work = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A controller as its manager sees it, whatever its types.
pub(crate) trait Runnable: Send + Sync {
    /// The controller's name.
    fn name(&self) -> &str;
    /// Registers the controller's handlers with the factory's informers
    /// (creating them if needed); returns what to wait for before its
    /// workers start.
    fn register(
        &self,
        factory: &SharedInformerFactory,
    ) -> Result<Vec<Arc<dyn InformerSynced>>, Error>;
    /// The workers, until the queue is shut down and drained.
    fn work(self: Arc<Self>) -> Work;
    /// Shuts the queue down: workers finish the reconcile they are in and
    /// stop.
    fn shut_down(&self);
    /// Reconciles only keys of the shards `shards` holds (before `work`).
    fn shard(&self, shards: Arc<HeldShards>);
    /// Enqueues every cached key of the reconciled kind.
    fn enqueue_all(&self);
}

/// A controller's cheap status handle: its name and counters. Dropping it
/// changes nothing (the manager owns the controller).
#[derive(Clone)]
pub struct ControllerHandle {
    name: Arc<str>,
    counters: Arc<Counters>,
    queue: RateLimitingQueue<String>,
    workers: usize,
}

impl fmt::Debug for ControllerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControllerHandle")
            .field("name", &self.name)
            .field("stats", &self.stats())
            .finish()
    }
}

impl ControllerHandle {
    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The controller's counters now.
    pub fn stats(&self) -> ControllerStats {
        self.counters.snapshot(self.workers)
    }

    /// Keys waiting in the queue (not counting delayed ones).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
}

/// The parts of a controller its workers share.
pub(crate) struct Runner<K, C, F, E> {
    name: Arc<str>,
    queue: RateLimitingQueue<String>,
    watches: parking_lot::Mutex<Vec<Watch>>,
    predicates: Arc<[Arc<dyn Predicate>]>,
    for_predicates: Arc<[Arc<dyn Predicate>]>,
    lister: parking_lot::Mutex<Option<Lister<K>>>,
    reconcile: F,
    error_policy: ErrorPolicy<K, C, E>,
    context: Arc<C>,
    on_gone: Option<OnGone>,
    workers: usize,
    counters: Arc<Counters>,
    metrics: Option<ControllerMetrics>,
    shards: std::sync::OnceLock<Arc<HeldShards>>,
}

impl<K, C, F, Fut, E> Runner<K, C, F, E>
where
    K: TypedResource + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: fmt::Display + Send + 'static,
{
    /// The controller `builder` describes, not registered yet.
    pub(crate) fn new(
        builder: Builder<K>,
        limiter: Arc<dyn RateLimiter<String>>,
        reconcile: F,
        error_policy: ErrorPolicy<K, C, E>,
        context: Arc<C>,
    ) -> Arc<Self> {
        let mut queue_options = QueueOptions::default().name(&builder.name);
        if let Some(provider) = builder.manager.queue_metrics() {
            queue_options = queue_options.metrics_provider(provider);
        }
        let queue = RateLimitingQueue::new(limiter, queue_options);
        let metrics = builder
            .manager
            .controller_metrics(&builder.name, builder.max_concurrent_reconciles);
        Arc::new(Runner {
            name: builder.name.into(),
            queue,
            watches: parking_lot::Mutex::new(builder.watches),
            predicates: builder.filters.into(),
            for_predicates: builder.for_filters.into(),
            lister: parking_lot::Mutex::new(None),
            reconcile,
            error_policy,
            context,
            on_gone: builder.on_gone,
            workers: builder.max_concurrent_reconciles,
            counters: Arc::default(),
            metrics,
            shards: std::sync::OnceLock::new(),
        })
    }

    /// The status handle of this controller.
    pub(crate) fn handle(&self) -> ControllerHandle {
        ControllerHandle {
            name: Arc::clone(&self.name),
            counters: Arc::clone(&self.counters),
            queue: self.queue.clone(),
            workers: self.workers,
        }
    }

    /// Reads `key`'s object and reconciles it; how it ended.
    async fn reconcile_key(&self, lister: &Lister<K>, key: &str) -> Outcome {
        let request = Request::from_key(key);
        // Read once per change: not kept in the lister's cache of decodes,
        // and given back whole when the reconcile is done.
        let object = match lister.try_get_uncached(key) {
            Ok(Some(object)) => object,
            Ok(None) => {
                self.counters
                    .gone
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Some(on_gone) = &self.on_gone {
                    on_gone(&request);
                }
                return Outcome::Gone;
            }
            // The cached object no longer decodes (a CRD's schema
            // changed): an error to retry, not a deletion.
            Err(error) => {
                tracing::warn!(%key, %error, "cached object does not decode");
                return Outcome::Failed(Action::Requeue);
            }
        };
        let mut running = AbortOnDrop(tokio::spawn((self.reconcile)(
            Arc::clone(&object),
            Arc::clone(&self.context),
        )));
        let ended = (&mut running.0).await;
        let outcome = self.outcome(key, &object, ended);
        lister.release(key, object);
        outcome
    }

    /// How a reconcile of `object` that ended as `ended` went.
    fn outcome(
        &self,
        key: &str,
        object: &Arc<K>,
        ended: Result<Result<Action, E>, tokio::task::JoinError>,
    ) -> Outcome {
        match ended {
            Ok(Ok(action)) => Outcome::Reconciled(action),
            Ok(Err(error)) => {
                let action = (self.error_policy)(object, &error, &self.context);
                tracing::warn!(%key, %error, ?action, "reconcile failed");
                Outcome::Failed(action)
            }
            Err(joined) => {
                self.counters
                    .panics
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Some(metrics) = &self.metrics {
                    metrics.panicked();
                }
                tracing::error!(%key, error = %joined, "reconcile panicked");
                Outcome::Failed(Action::Requeue)
            }
        }
    }

    /// Whether this replica reconciles `key` now: always, unless sharded;
    /// sharded, when its object's shard is held here (the guard counts the
    /// reconcile in that shard) or it has left the cache (a gone key is
    /// dropped by whoever takes it).
    fn claim(&self, lister: &Lister<K>, key: &str) -> Option<Option<ShardGuard>> {
        let Some(shards) = self.shards.get() else {
            return Some(None);
        };
        match lister.get_metadata(key) {
            None => Some(None),
            Some(meta) => shards.enter(&meta).map(Some),
        }
    }

    /// One worker: takes keys until the queue shuts down.
    async fn worker(self: Arc<Self>, lister: Lister<K>) {
        while let Some(key) = self.queue.get().await {
            let Some(_shard) = self.claim(&lister, &key) else {
                // Another replica's shard: it reconciles the key.
                self.queue.forget(&key);
                self.queue.done(&key);
                continue;
            };
            self.counters.started();
            if let Some(metrics) = &self.metrics {
                metrics.active(1);
            }
            let started = Instant::now();
            let outcome = self.reconcile_key(&lister, &key).await;
            if let Some(label) = result_label(outcome) {
                let took = started.elapsed();
                self.counters.record(label, took);
                if let Some(metrics) = &self.metrics {
                    metrics.reconciled(label, took.as_secs_f64());
                }
            }
            match queue_step(outcome) {
                QueueStep::Forget => self.queue.forget(&key),
                QueueStep::ForgetThenAddAfter(delay) => {
                    self.queue.forget(&key);
                    self.queue.add_after(key.clone(), delay);
                }
                QueueStep::AddAfter(delay) => self.queue.add_after(key.clone(), delay),
                QueueStep::AddRateLimited => self.queue.add_rate_limited(key.clone()),
            }
            self.counters.finished();
            if let Some(metrics) = &self.metrics {
                metrics.active(-1);
            }
            self.queue.done(&key);
        }
    }
}

impl<K, C, F, Fut, E> Runnable for Runner<K, C, F, E>
where
    K: TypedResource + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: fmt::Display + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn register(
        &self,
        factory: &SharedInformerFactory,
    ) -> Result<Vec<Arc<dyn InformerSynced>>, Error> {
        *self.lister.lock() = Some(factory.lister_for::<K>());
        let context = WatchContext {
            factory,
            controller: &self.name,
            predicates: Arc::clone(&self.predicates),
            for_predicates: Arc::clone(&self.for_predicates),
            queue: self.queue.clone(),
        };
        let watches = std::mem::take(&mut *self.watches.lock());
        watches.into_iter().map(|watch| watch(&context)).collect()
    }

    fn work(self: Arc<Self>) -> Work {
        let span = tracing::info_span!("controller", controller = %self.name);
        Box::pin(
            async move {
                let Some(lister) = self.lister.lock().clone() else {
                    tracing::error!("controller started before it was registered");
                    return;
                };
                let mut workers = tokio::task::JoinSet::new();
                for _ in 0..self.workers {
                    workers.spawn(Arc::clone(&self).worker(lister.clone()));
                }
                while workers.join_next().await.is_some() {}
            }
            .instrument(span),
        )
    }

    fn shut_down(&self) {
        self.queue.shut_down();
    }

    fn shard(&self, shards: Arc<HeldShards>) {
        let _ = self.shards.set(shards);
    }

    fn enqueue_all(&self) {
        if let Some(lister) = self.lister.lock().as_ref() {
            for key in lister.keys() {
                self.queue.add(key);
            }
        }
    }
}

/// A task aborted when its handle is dropped: a reconcile stops when its
/// worker is stopped (leadership lost, shutdown past its deadline).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
