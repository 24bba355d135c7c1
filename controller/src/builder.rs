//! The controller builder (controller-runtime's `pkg/builder`): the
//! reconciled kind, the kinds it owns or watches, filters and options,
//! then the reconcile function.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use clientgo_apimachinery::{ApiResource, Object};
use clientgo_informers::TypedResource;
use clientgo_workqueue::{RateLimiter, default_controller_rate_limiter};

use crate::error::Error;
use crate::handler::EnqueueMapping;
use crate::manager::Manager;
use crate::predicate::Predicate;
use crate::reconcile::{Action, Request};
use crate::runner::{ControllerHandle, ErrorPolicy, OnGone, Parts, Runner};
use crate::watch::{Watch, watch_of};

/// Starts a controller's builder: `Controller::for_::<K>(&manager)`.
#[derive(Debug, Clone, Copy)]
pub struct Controller;

impl Controller {
    /// A controller reconciling objects of `K` (controller-runtime's
    /// `For`): every change of a `K` enqueues its key. Its informers come
    /// from `manager`'s shared factory, one per type however many
    /// controllers watch it. The controller's name defaults to `K`'s kind
    /// in lower case.
    pub fn for_<K>(manager: &Manager) -> Builder<K>
    where
        K: TypedResource + Send + Sync + 'static,
    {
        Builder {
            manager: manager.clone(),
            name: ApiResource::of::<K>().kind().to_lowercase(),
            watches: vec![watch_of::<K>(EnqueueMapping::Object)],
            filters: Vec::new(),
            for_filters: Vec::new(),
            namespace: None,
            max_concurrent_reconciles: 1,
            rate_limiter: None,
            on_gone: None,
            _kind: std::marker::PhantomData,
        }
    }
}

/// A controller being configured; [`run`](Builder::run) registers it with
/// its manager. Every method takes and returns the builder.
pub struct Builder<K> {
    pub(crate) manager: Manager,
    pub(crate) name: String,
    pub(crate) watches: Vec<Watch>,
    pub(crate) filters: Vec<Arc<dyn Predicate>>,
    pub(crate) for_filters: Vec<Arc<dyn Predicate>>,
    pub(crate) namespace: Option<String>,
    pub(crate) max_concurrent_reconciles: usize,
    pub(crate) rate_limiter: Option<Arc<dyn RateLimiter<String>>>,
    pub(crate) on_gone: Option<OnGone>,
    _kind: std::marker::PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for Builder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.name)
            .field("watches", &self.watches.len())
            .field("filters", &self.filters.len())
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .finish()
    }
}

impl<K> Builder<K>
where
    K: TypedResource + Send + Sync + 'static,
{
    /// Reconciles the controlling owner of every changed `C` (controller-
    /// runtime's `Owns`): the owner reference with `controller: true`
    /// whose group and kind are `K`'s, at any version. The child is read
    /// as metadata only: nothing of it is decoded.
    pub fn owns<C>(mut self) -> Self
    where
        C: TypedResource + Send + Sync + 'static,
    {
        let owner = ApiResource::of::<K>();
        self.watches.push(watch_of::<C>(EnqueueMapping::Owner {
            group: owner.group().to_string(),
            kind: owner.kind().to_string(),
            namespaced: owner.is_namespaced(),
        }));
        self
    }

    /// Reconciles the requests `map` returns for every changed `W`
    /// (controller-runtime's `Watches` with `EnqueueRequestsFromMapFunc`):
    /// asked of the object's metadata (of the old and the new object on an
    /// update), requests of one event enqueued once.
    pub fn watches<W>(
        mut self,
        map: impl Fn(&dyn Object) -> Vec<Request> + Send + Sync + 'static,
    ) -> Self
    where
        W: TypedResource + Send + Sync + 'static,
    {
        self.watches
            .push(watch_of::<W>(EnqueueMapping::Map(Arc::new(map))));
        self
    }

    /// Filters the events of every watch of this controller (controller-
    /// runtime's `WithEventFilter`); several filters must all pass.
    pub fn with_event_filter(mut self, predicate: impl Predicate) -> Self {
        self.filters.push(Arc::new(predicate));
        self
    }

    /// Reconciles only objects of `K` in `namespace`: requests for other
    /// namespaces, from any watch, are dropped (a cluster-scoped watched
    /// kind's map function may still ask for objects in it). The
    /// manager's informers are shared by every controller, so they still
    /// cache what the factory options let them (restrict those, with
    /// [`ManagerOptions::factory_options`](crate::ManagerOptions::factory_options),
    /// to keep other namespaces out of memory).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Drops the events of `K` whose object's labels do not match
    /// `selector` (controller-runtime's `LabelSelectorPredicate` on the
    /// `For` watch). Owned and watched kinds' events are not filtered by
    /// it (their labels are their own), so a child's change still
    /// reconciles a parent outside the selector, as in
    /// controller-runtime. The shared cache still holds every object, as
    /// [`namespace`](Self::namespace) says.
    pub fn label_selector(mut self, selector: clientgo_apimachinery::LabelSelector) -> Self {
        self.for_filters.push(Arc::new(crate::predicate::from_fn(
            move |meta: &dyn Object| selector.matches(meta.labels()),
        )));
        self
    }

    /// How many keys are reconciled at once (default 1, as
    /// controller-runtime's `MaxConcurrentReconciles`); never the same key
    /// twice at once. Zero is taken as one.
    pub fn max_concurrent_reconciles(mut self, workers: usize) -> Self {
        self.max_concurrent_reconciles = workers.max(1);
        self
    }

    /// The backoff of failed and [`Action::Requeue`]d keys (default:
    /// client-go's `DefaultControllerRateLimiter`, per key 5 ms doubling
    /// to 1000 s, and 10 per second with a burst of 100 overall).
    pub fn rate_limiter(mut self, limiter: Arc<dyn RateLimiter<String>>) -> Self {
        self.rate_limiter = Some(limiter);
        self
    }

    /// The controller's name, in its metrics, logs and handler threads
    /// (default: `K`'s kind in lower case). Unique within a manager.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Called (on a worker) for each key taken from the queue whose object
    /// is no longer in the cache: it is not reconciled, and its requeues
    /// and backoff are dropped. Cleanup that needs the object's last state
    /// belongs in a finalizer ([`crate::controllerutil::finalizer`]).
    pub fn on_gone(mut self, on_gone: impl Fn(&Request) + Send + Sync + 'static) -> Self {
        self.on_gone = Some(Arc::new(on_gone));
        self
    }

    /// Registers the controller with its manager, reconciling with
    /// `reconcile` and the shared context `context`; an error goes back
    /// to the queue through the rate limiter ([`Action::Requeue`]) and is
    /// logged. It starts when the manager runs. See
    /// [`run_with_error_policy`](Self::run_with_error_policy).
    pub fn run<C, F, Fut, E>(self, reconcile: F, context: Arc<C>) -> Result<ControllerHandle, Error>
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
    {
        self.run_with_error_policy(reconcile, |_, _, _| Action::Requeue, context)
    }

    /// [`run`](Self::run), with `error_policy` choosing what follows a
    /// failed reconcile: [`Action::Requeue`] backs off through the rate
    /// limiter, [`Action::RequeueAfter`] waits a fixed time (the key's
    /// backoff is kept), [`Action::Done`] gives up until the object
    /// changes (a terminal error).
    pub fn run_with_error_policy<C, F, Fut, E, P>(
        self,
        reconcile: F,
        error_policy: P,
        context: Arc<C>,
    ) -> Result<ControllerHandle, Error>
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
        P: Fn(&Arc<K>, &E, &Arc<C>) -> Action + Send + Sync + 'static,
    {
        self.manager.may_add(&self.name)?;
        let limiter = self
            .rate_limiter
            .clone()
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter()));
        let policy: ErrorPolicy<K, C, E> = Arc::new(error_policy);
        let manager = self.manager.clone();
        let parts = Parts {
            queue_metrics: manager.queue_metrics(),
            metrics: manager.controller_metrics(&self.name, self.max_concurrent_reconciles),
            name: self.name,
            watches: self.watches,
            filters: self.filters,
            for_filters: self.for_filters,
            namespace: self.namespace,
            workers: self.max_concurrent_reconciles,
            on_gone: self.on_gone,
        };
        let runner = Runner::new(parts, limiter, reconcile, policy, context);
        let handle = runner.handle();
        manager.add(runner)?;
        Ok(handle)
    }
}
