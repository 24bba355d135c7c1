//! The controller builder (controller-runtime's `pkg/builder`): the
//! reconciled kind, the kinds it owns or watches (each with options of its
//! own), filters and options, then [`complete`](Builder::complete), which
//! hands the controller to its manager.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use clientgo_controller::{Action, Controller, Manager, Retry};
//! # use clientgo_controller::builder::WatchOptions;
//! # use clientgo_controller::predicate::generation_changed;
//! # use k8s_openapi::api::apps::v1::Deployment;
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # async fn reconcile(_: Arc<Deployment>, _: Arc<()>) -> Result<Action, String> { Ok(Action::done()) }
//! # fn example(manager: &Manager) -> Result<(), clientgo_controller::Error> {
//! // Spec changes of the parent, every event of its children.
//! Controller::for_with::<Deployment>(manager, WatchOptions::default().predicate(generation_changed()))
//!     .owns::<ConfigMap>()
//!     .error_policy(|_, _: &String, _: &Arc<()>| Retry::Backoff)
//!     .complete(reconcile, Arc::new(()))?;
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use clientgo_apimachinery::{ApiResource, LabelSelector, Object};
use clientgo_informers::TypedResource;
use clientgo_workqueue::{RateLimiter, default_controller_rate_limiter};
use futures_util::Stream;
use futures_util::stream::BoxStream;

use crate::error::Error;
use crate::handler::EnqueueMapping;
use crate::manager::Manager;
use crate::predicate::Predicate;
use crate::reconcile::{Action, BackoffOnError, ErrorPolicy, Request, Retry};
use crate::runner::{ControllerHandle, OnGone, Parts, Runner};
use crate::trigger::Trigger;
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
        Controller::for_with::<K>(manager, WatchOptions::default())
    }

    /// [`for_`](Self::for_), with options for the events of `K` alone
    /// (controller-runtime's `For(obj, WithPredicates(..))`).
    pub fn for_with<K>(manager: &Manager, options: WatchOptions) -> Builder<K>
    where
        K: TypedResource + Send + Sync + 'static,
    {
        Builder {
            manager: manager.clone(),
            name: ApiResource::of::<K>().kind().to_lowercase(),
            watches: vec![watch_of::<K>(
                EnqueueMapping::Object,
                options.into_predicates(),
            )],
            filters: Vec::new(),
            namespace: None,
            max_concurrent_reconciles: 1,
            rate_limiter: None,
            on_gone: None,
            triggers: Vec::new(),
            error_policy: BackoffOnError,
            _kind: std::marker::PhantomData,
        }
    }
}

/// The options of one watch: which of its events pass
/// ([`Builder::owns_with`], [`Builder::watches_with`],
/// [`Controller::for_with`]). Events pass these and every
/// [`Builder::with_event_filter`].
#[derive(Clone, Default)]
pub struct WatchOptions {
    predicates: Vec<Arc<dyn Predicate>>,
}

impl fmt::Debug for WatchOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchOptions")
            .field("predicates", &self.predicates.len())
            .finish()
    }
}

impl WatchOptions {
    /// Passes only the events `predicate` passes; several must all pass
    /// (controller-runtime's `WithPredicates`).
    pub fn predicate(mut self, predicate: impl Predicate) -> Self {
        self.predicates.push(Arc::new(predicate));
        self
    }

    /// Passes only the events of objects whose labels match `selector`
    /// (controller-runtime's `LabelSelectorPredicate`). The manager's
    /// shared cache still holds every object; restrict it with
    /// [`ManagerOptions::factory_options`](crate::ManagerOptions::factory_options)
    /// to keep the others out of memory.
    pub fn label_selector(self, selector: LabelSelector) -> Self {
        self.predicate(crate::predicate::from_fn(move |meta: &dyn Object| {
            selector.matches(meta.labels())
        }))
    }

    fn into_predicates(self) -> Vec<Arc<dyn Predicate>> {
        self.predicates
    }
}

/// A controller being configured; [`complete`](Builder::complete) hands
/// it to its manager. Every other method takes and returns the builder.
/// `P` is its error policy.
pub struct Builder<K, P = BackoffOnError> {
    manager: Manager,
    name: String,
    watches: Vec<Watch>,
    filters: Vec<Arc<dyn Predicate>>,
    namespace: Option<String>,
    max_concurrent_reconciles: usize,
    rate_limiter: Option<Arc<dyn RateLimiter<String>>>,
    on_gone: Option<OnGone>,
    triggers: Vec<BoxStream<'static, Trigger>>,
    error_policy: P,
    _kind: std::marker::PhantomData<fn() -> K>,
}

impl<K, P> fmt::Debug for Builder<K, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.name)
            .field("watches", &self.watches.len())
            .field("filters", &self.filters.len())
            .field("triggers", &self.triggers.len())
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .finish()
    }
}

impl<K, P> Builder<K, P>
where
    K: TypedResource + Send + Sync + 'static,
{
    /// Reconciles the controlling owner of every changed `C` (controller-
    /// runtime's `Owns`): the owner reference with `controller: true`
    /// whose group and kind are `K`'s, at any version. The child is read
    /// as metadata only: nothing of it is decoded.
    pub fn owns<C>(self) -> Self
    where
        C: TypedResource + Send + Sync + 'static,
    {
        self.owns_with::<C>(WatchOptions::default())
    }

    /// [`owns`](Self::owns), with options for the events of `C`.
    pub fn owns_with<C>(mut self, options: WatchOptions) -> Self
    where
        C: TypedResource + Send + Sync + 'static,
    {
        self.watches.push(watch_of::<C>(
            EnqueueMapping::owner::<K>(),
            options.into_predicates(),
        ));
        self
    }

    /// Reconciles the requests `mapping` gives for every changed `W`
    /// (controller-runtime's `Watches`), e.g.
    /// [`EnqueueMapping::map`] for `EnqueueRequestsFromMapFunc`.
    pub fn watches<W>(self, mapping: EnqueueMapping) -> Self
    where
        W: TypedResource + Send + Sync + 'static,
    {
        self.watches_with::<W>(mapping, WatchOptions::default())
    }

    /// [`watches`](Self::watches), with options for the events of `W`.
    pub fn watches_with<W>(mut self, mapping: EnqueueMapping, options: WatchOptions) -> Self
    where
        W: TypedResource + Send + Sync + 'static,
    {
        self.watches
            .push(watch_of::<W>(mapping, options.into_predicates()));
        self
    }

    /// Filters the events of every watch of this controller (controller-
    /// runtime's `WithEventFilter`), before each watch's own options;
    /// several filters must all pass.
    pub fn with_event_filter(mut self, predicate: impl Predicate) -> Self {
        self.filters.push(Arc::new(predicate));
        self
    }

    /// Reconciles what `triggers` asks for, besides the watches' events
    /// (kube-rs's `reconcile_on`): a [`Request`] enqueues that key, and
    /// [`Trigger::All`] every cached key of `K` (an external system
    /// changed, a timer fired). Read while the workers run; a trigger
    /// before then waits in the stream.
    pub fn reconcile_on<S>(mut self, triggers: S) -> Self
    where
        S: Stream + Send + 'static,
        S::Item: Into<Trigger>,
    {
        use futures_util::StreamExt;
        self.triggers.push(triggers.map(Into::into).boxed());
        self
    }

    /// Reconciles only objects of `K` in `namespace`: requests for other
    /// namespaces, from any watch, are dropped (a cluster-scoped watched
    /// kind's mapping may still ask for objects in it). The manager's
    /// informers are shared by every controller, so they still cache what
    /// the factory options let them (restrict those, with
    /// [`ManagerOptions::factory_options`](crate::ManagerOptions::factory_options),
    /// to keep other namespaces out of memory).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// How many keys are reconciled at once (default 1, as
    /// controller-runtime's `MaxConcurrentReconciles`); never the same key
    /// twice at once. Zero is taken as one.
    pub fn max_concurrent_reconciles(mut self, workers: usize) -> Self {
        self.max_concurrent_reconciles = workers.max(1);
        self
    }

    /// The backoff of failed keys ([`Retry::Backoff`]; default: client-go's
    /// `DefaultControllerRateLimiter`, per key 5 ms doubling to 1000 s,
    /// and 10 per second with a burst of 100 overall).
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

    /// What follows a failed reconcile (default [`BackoffOnError`]):
    /// [`Retry::Backoff`] through the rate limiter, [`Retry::After`] a
    /// fixed delay (the key's backoff is kept), [`Retry::Never`] until
    /// the object changes (a terminal error). Name the error's type in the
    /// closure (`|object, error: &MyError, context| ..`) when the body
    /// reads it.
    pub fn error_policy<C, E, Q>(self, policy: Q) -> Builder<K, Q>
    where
        Q: Fn(&Arc<K>, &E, &Arc<C>) -> Retry + Send + Sync + 'static,
    {
        Builder {
            manager: self.manager,
            name: self.name,
            watches: self.watches,
            filters: self.filters,
            namespace: self.namespace,
            max_concurrent_reconciles: self.max_concurrent_reconciles,
            rate_limiter: self.rate_limiter,
            on_gone: self.on_gone,
            triggers: self.triggers,
            error_policy: policy,
            _kind: std::marker::PhantomData,
        }
    }

    /// Hands the controller to its manager (controller-runtime's
    /// `Complete`), reconciling with `reconcile` and the shared `context`;
    /// a failure goes to the error policy and is logged. It starts when
    /// the manager runs; the handle reads its counters. Refused once the
    /// manager has started, or when the name is taken.
    pub fn complete<C, F, Fut, E>(
        self,
        reconcile: F,
        context: Arc<C>,
    ) -> Result<ControllerHandle, Error>
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
        P: ErrorPolicy<K, C, E>,
    {
        self.manager.may_add(&self.name)?;
        let limiter = self
            .rate_limiter
            .clone()
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter()));
        let manager = self.manager.clone();
        let parts = Parts {
            queue_metrics: manager.queue_metrics(),
            metrics: manager.controller_metrics(&self.name, self.max_concurrent_reconciles),
            name: self.name,
            watches: self.watches,
            filters: self.filters,
            namespace: self.namespace,
            workers: self.max_concurrent_reconciles,
            on_gone: self.on_gone,
            triggers: self.triggers,
        };
        let runner = Runner::new(parts, limiter, reconcile, self.error_policy, context);
        let handle = runner.handle();
        manager.add_controller(runner)?;
        Ok(handle)
    }
}
