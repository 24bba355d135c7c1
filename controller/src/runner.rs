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
//! **Panics.** A reconcile's panic is caught, counted, logged and
//! handled as an error (controller-runtime's `RecoverPanic`, on by
//! default); so are panics of the error policy and the `on_gone` hook.
//!
//! **Stopping.** At shutdown workers finish the reconcile they are in and
//! take no more keys (those still queued are left, as controller-runtime's
//! queue drops them). A reconcile runs inside its worker's future, so a
//! worker that is stopped (a lost lease, a shutdown past its deadline)
//! stops its reconcile at its next await.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clientgo_informers::{InformerSynced, Lister, SharedInformerFactory, TypedResource};
use clientgo_workqueue::{QueueOptions, RateLimiter, RateLimitingQueue};
use futures_util::FutureExt;
use tokio::time::Instant;
use tracing::Instrument;

use crate::error::Error;
use crate::handler::enqueue_in;
use crate::metrics::ControllerMetrics;
use crate::predicate::Predicate;
use crate::reconcile::{
    Action, ErrorPolicy, Outcome, QueueStep, Request, Retry, queue_step, result_label,
};
use crate::sharding::HeldShards;
use crate::stats::{ControllerStats, Counters};
use crate::trigger::Trigger;
use crate::watch::{Watch, WatchContext};

/// Called with the request of a key whose object has left the cache.
pub(crate) type OnGone = Arc<dyn Fn(&Request) + Send + Sync>;

/// What a controller is made of, as its builder says.
pub(crate) struct Parts {
    pub(crate) name: String,
    pub(crate) watches: Vec<Watch>,
    pub(crate) filters: Vec<Arc<dyn Predicate>>,
    pub(crate) namespace: Option<String>,
    pub(crate) workers: usize,
    pub(crate) on_gone: Option<OnGone>,
    pub(crate) triggers: Vec<futures_util::stream::BoxStream<'static, Trigger>>,
    pub(crate) queue_metrics: Option<Arc<dyn clientgo_workqueue::MetricsProvider>>,
    pub(crate) metrics: Option<ControllerMetrics>,
}

/// A boxed future that runs to the end of a controller's work.
pub(crate) type Work = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A controller as its manager sees it, whatever its types.
pub(crate) trait AnyController: Send + Sync {
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
    namespace: Option<Arc<str>>,
    lister: parking_lot::Mutex<Option<Lister<K>>>,
    triggers: parking_lot::Mutex<Vec<futures_util::stream::BoxStream<'static, Trigger>>>,
    reconcile: F,
    error_policy: Box<dyn ErrorPolicy<K, C, E>>,
    context: Arc<C>,
    on_gone: Option<OnGone>,
    workers: usize,
    counters: Arc<Counters>,
    metrics: Option<ControllerMetrics>,
    shards: std::sync::OnceLock<Arc<HeldShards>>,
    /// Set at shutdown: workers take no new key.
    stopping: AtomicBool,
}

impl<K, C, F, Fut, E> Runner<K, C, F, E>
where
    K: TypedResource + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: fmt::Display + Send + 'static,
{
    /// The controller `parts` describe, not registered yet.
    pub(crate) fn new(
        parts: Parts,
        limiter: Arc<dyn RateLimiter<String>>,
        reconcile: F,
        error_policy: impl ErrorPolicy<K, C, E>,
        context: Arc<C>,
    ) -> Arc<Self> {
        let mut queue_options = QueueOptions::default().name(&parts.name);
        if let Some(provider) = parts.queue_metrics {
            queue_options = queue_options.metrics_provider(provider);
        }
        Arc::new(Runner {
            name: parts.name.into(),
            queue: RateLimitingQueue::new(limiter, queue_options),
            watches: parking_lot::Mutex::new(parts.watches),
            predicates: parts.filters.into(),
            namespace: parts.namespace.map(Arc::from),
            lister: parking_lot::Mutex::new(None),
            triggers: parking_lot::Mutex::new(parts.triggers),
            reconcile,
            error_policy: Box::new(error_policy),
            context,
            on_gone: parts.on_gone,
            workers: parts.workers,
            counters: Arc::default(),
            metrics: parts.metrics,
            shards: std::sync::OnceLock::new(),
            stopping: AtomicBool::new(false),
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

    /// Reads `key`'s object and reconciles it; how it ended. Sharded, the
    /// object's shard is checked on the object read, and its reconcile is
    /// counted in that shard while it runs.
    async fn reconcile_key(&self, lister: &Lister<K>, key: &str) -> Outcome {
        // Read once per change: not kept in the lister's cache of decodes,
        // and given back whole when the guard drops, after the reconcile.
        let object = match lister.read_uncached(key) {
            Ok(Some(object)) => object,
            Ok(None) => {
                self.counters.gone.fetch_add(1, Ordering::Relaxed);
                if let Some(on_gone) = &self.on_gone {
                    let request = Request::from_key(key);
                    let called = catch_unwind(AssertUnwindSafe(|| on_gone(&request)));
                    if called.is_err() {
                        tracing::error!(%key, "the on_gone hook panicked");
                    }
                }
                return Outcome::Gone;
            }
            // The cached object no longer decodes (a CRD's schema
            // changed): an error to retry, not a deletion.
            Err(error) => {
                tracing::warn!(%key, %error, "cached object does not decode");
                return Outcome::Failed(Retry::Backoff);
            }
        };
        let _shard = match self.shards.get() {
            None => None,
            Some(shards) => match shards.enter(&*object) {
                Some(guard) => Some(guard),
                None => return Outcome::Elsewhere,
            },
        };
        // The reconcile runs inside this worker's future, so stopping the
        // worker (a lost lease, a shutdown past its deadline) stops it.
        let ended = AssertUnwindSafe((self.reconcile)(
            Arc::clone(object.object()),
            Arc::clone(&self.context),
        ))
        .catch_unwind()
        .await;
        // `object` gives its decode back when dropped, after this.
        self.outcome(key, object.object(), ended)
    }

    /// How a reconcile of `object` that ended as `ended` went.
    fn outcome(
        &self,
        key: &str,
        object: &Arc<K>,
        ended: Result<Result<Action, E>, Box<dyn std::any::Any + Send>>,
    ) -> Outcome {
        match ended {
            Ok(Ok(action)) => Outcome::Reconciled(action),
            Ok(Err(error)) => {
                let policy = catch_unwind(AssertUnwindSafe(|| {
                    self.error_policy.retry(object, &error, &self.context)
                }));
                let retry = policy.unwrap_or_else(|_| {
                    tracing::error!(%key, "the error policy panicked; backing off");
                    Retry::Backoff
                });
                tracing::warn!(%key, %error, ?retry, "reconcile failed");
                Outcome::Failed(retry)
            }
            Err(_) => {
                self.counters.panics.fetch_add(1, Ordering::Relaxed);
                if let Some(metrics) = &self.metrics {
                    metrics.panicked();
                }
                tracing::error!(%key, "reconcile panicked");
                Outcome::Failed(Retry::Backoff)
            }
        }
    }

    /// Whether `key` may be reconciled here: always, unless sharded;
    /// sharded, unless its cached metadata says its shard is held
    /// elsewhere (a cheap first look, decoding nothing; the object read
    /// is checked again).
    fn maybe_mine(&self, lister: &Lister<K>, key: &str) -> bool {
        match (self.shards.get(), lister.get_metadata(key)) {
            (Some(shards), Some(meta)) => shards.holds(&*meta),
            _ => true,
        }
    }

    /// One worker: takes keys until the queue shuts down; at shutdown the
    /// keys still queued are left (controller-runtime's queue drops them
    /// too).
    async fn worker(self: Arc<Self>, lister: Lister<K>) {
        while let Some(key) = self.queue.get().await {
            let _done = Done {
                queue: &self.queue,
                key: &key,
            };
            if self.stopping.load(Ordering::Acquire) {
                break;
            }
            if !self.maybe_mine(&lister, &key) {
                // Another replica's shard: it reconciles the key.
                self.queue.forget(&key);
                continue;
            }
            let _active = Active::start(&self.counters, self.metrics.as_ref());
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
                QueueStep::ForgetAndCancel => {
                    self.queue.forget(&key);
                    self.queue.cancel_delayed(&key);
                }
                QueueStep::ForgetThenAddAfter(delay) => {
                    self.queue.forget(&key);
                    self.queue.add_after(key.clone(), delay);
                }
                QueueStep::AddAfter(delay) => self.queue.add_after(key.clone(), delay),
                QueueStep::AddRateLimited => self.queue.add_rate_limited(key.clone()),
            }
        }
    }

    /// Enqueues every cached key of the reconciled kind.
    fn enqueue_all_of(&self, lister: &Lister<K>) {
        for key in lister.keys() {
            self.queue.add(key);
        }
    }

    /// Enqueues what `stream` asks for until it ends.
    async fn follow(
        self: Arc<Self>,
        mut stream: futures_util::stream::BoxStream<'static, Trigger>,
        lister: Lister<K>,
    ) {
        use futures_util::StreamExt;
        while let Some(trigger) = stream.next().await {
            match trigger {
                Trigger::All => self.enqueue_all_of(&lister),
                Trigger::Request(request) => {
                    enqueue_in(self.namespace.as_deref(), &self.queue, &request);
                }
            }
        }
    }
}

/// Marks a key done in its queue however its turn ends (a panic, a
/// stopped worker), so it is never stuck as being processed.
struct Done<'a> {
    queue: &'a RateLimitingQueue<String>,
    key: &'a String,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.queue.done(self.key);
    }
}

/// A reconcile counted as running (the counters and the
/// `active_workers` gauge) until dropped, however it ends.
struct Active<'a> {
    counters: &'a Counters,
    metrics: Option<&'a ControllerMetrics>,
}

impl<'a> Active<'a> {
    fn start(counters: &'a Counters, metrics: Option<&'a ControllerMetrics>) -> Self {
        counters.started();
        if let Some(metrics) = metrics {
            metrics.active(1);
        }
        Active { counters, metrics }
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.counters.finished();
        if let Some(metrics) = self.metrics {
            metrics.active(-1);
        }
    }
}

impl<K, C, F, Fut, E> AnyController for Runner<K, C, F, E>
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
            namespace: self.namespace.clone(),
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
                // The external triggers are read while the workers run,
                // and dropped with them.
                let mut triggers = tokio::task::JoinSet::new();
                for stream in std::mem::take(&mut *self.triggers.lock()) {
                    triggers.spawn(Arc::clone(&self).follow(stream, lister.clone()));
                }
                while workers.join_next().await.is_some() {}
                triggers.abort_all();
            }
            .instrument(span),
        )
    }

    fn shut_down(&self) {
        self.stopping.store(true, Ordering::Release);
        self.queue.shut_down();
    }

    fn shard(&self, shards: Arc<HeldShards>) {
        let _ = self.shards.set(shards);
    }

    fn enqueue_all(&self) {
        if let Some(lister) = self.lister.lock().as_ref() {
            self.enqueue_all_of(lister);
        }
    }
}
