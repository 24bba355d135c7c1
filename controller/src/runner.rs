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
use std::time::Duration;

use clientgo_informers::{InformerSynced, Lister, SharedInformerFactory, TypedResource};
use clientgo_workqueue::{QueueOptions, RateLimiter, RateLimitingQueue};
use tokio::time::Instant;
use tracing::Instrument;

use crate::builder::{Builder, OnGone, Watch, WatchContext};
use crate::error::Error;
use crate::predicate::Predicate;
use crate::reconcile::{Action, Outcome, QueueStep, Request, queue_step, result_label};
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
    lister: parking_lot::Mutex<Option<Lister<K>>>,
    reconcile: F,
    error_policy: ErrorPolicy<K, C, E>,
    context: Arc<C>,
    on_gone: Option<OnGone>,
    workers: usize,
    counters: Arc<Counters>,
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
        let queue = RateLimitingQueue::new(limiter, QueueOptions::default().name(&builder.name));
        Arc::new(Runner {
            name: builder.name.into(),
            queue,
            watches: parking_lot::Mutex::new(builder.watches),
            predicates: builder.filters.into(),
            lister: parking_lot::Mutex::new(None),
            reconcile,
            error_policy,
            context,
            on_gone: builder.on_gone,
            workers: builder.max_concurrent_reconciles,
            counters: Arc::default(),
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
        let cached = match &request.namespace {
            Some(namespace) => lister.namespace(namespace.clone()).try_get(&request.name),
            None => lister.try_get(&request.name),
        };
        let object = match cached {
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
        let running = tokio::spawn((self.reconcile)(
            Arc::clone(&object),
            Arc::clone(&self.context),
        ));
        match running.await {
            Ok(Ok(action)) => Outcome::Reconciled(action),
            Ok(Err(error)) => {
                let action = (self.error_policy)(&object, &error, &self.context);
                tracing::warn!(%key, %error, ?action, "reconcile failed");
                Outcome::Failed(action)
            }
            Err(joined) => {
                self.counters
                    .panics
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::error!(%key, error = %joined, "reconcile panicked");
                Outcome::Failed(Action::Requeue)
            }
        }
    }

    /// One worker: takes keys until the queue shuts down.
    async fn worker(self: Arc<Self>, lister: Lister<K>) {
        while let Some(key) = self.queue.get().await {
            self.counters.started();
            let started = Instant::now();
            let outcome = self.reconcile_key(&lister, &key).await;
            if let Some(label) = result_label(outcome) {
                self.counters.record(label, started.elapsed());
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
}

/// How long to let `work` finish after its queue was shut down.
pub(crate) async fn drain(work: Work, deadline: Duration) -> bool {
    tokio::time::timeout(deadline, work).await.is_ok()
}
