//! The manager (controller-runtime's `pkg/manager`): one shared informer
//! factory for every controller, started once, waited for, then the
//! controllers' workers, until shutdown.
//!
//! **Order.** [`run`](Manager::run) registers every controller's handlers
//! (creating the informers they need), starts the factory's informers,
//! waits for each handler to have seen its informer's initial list, and
//! only then starts the workers. A cache that cannot sync is reported with
//! its reason: a 401 or 403, or a 404 for a resource the server does not
//! serve (a CRD not installed), ends the wait at once
//! ([`LastingErrors::GiveUp`](clientgo_informers::LastingErrors)); any
//! other reason after
//! [`cache_sync_timeout`](ManagerOptions::cache_sync_timeout).
//!
//! **Replicas.** [`ManagerOptions::replicas`] chooses how replicas of one
//! manager share the work: each runs everything
//! ([`Replicas::Independent`], the default), one leader runs the
//! controllers ([`Replicas::LeaderElection`]), or each runs the keys of
//! the shards it holds ([`Replicas::Sharded`], see [`crate::sharding`]).
//!
//! **Leader election.** With [`Replicas::LeaderElection`], every replica
//! syncs its caches, then campaigns for the Lease; only the leader starts
//! workers. A leader that fails to renew stops its reconciles at once and
//! `run` returns [`Error::LeaderElectionLost`] (the process should exit,
//! as controller-runtime's documentation asks); a leader that shuts down
//! releases the lease after its workers stopped, so the standby takes over
//! without waiting for the lease to expire, and two replicas never
//! reconcile at once.
//!
//! **Your own tasks and checks.** [`Manager::add`] runs a
//! [`Runnable`] with the controllers (see [`crate::runnable`]);
//! [`Manager::add_health_check`] and [`Manager::add_ready_check`] add to
//! what `/healthz` and `/readyz` answer.
//!
//! **Shutdown.** When the token given to `run` fires (see
//! [`crate::signals`] for SIGTERM and SIGINT), every controller's queue
//! shuts down and every runnable's stop token fires; the workers finish
//! the reconciles they are in and take no more keys (for up to
//! [`graceful_shutdown_timeout`](ManagerOptions::graceful_shutdown_timeout),
//! after which the reconciles still running are stopped and `run` says
//! so), then the lease or the shards are released, and the informers
//! stop. Reconciles are not told of the shutdown (controller-runtime
//! cancels their context); keep them short, or watch for the token
//! yourself.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clientgo_informers::{
    InformerFactoryOptions, InformerSynced, SharedInformerFactory, SyncFailure, SyncWaitOptions,
    wait_for_cache_sync,
};
use clientgo_rest::RestClient;
use clientgo_rest::api::{CrdInstallOptions, install_crds};
use clientgo_rest::metrics::PrometheusRequestMetrics;
use clientgo_webhook::BoundWebhookServer;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use tokio_util::sync::CancellationToken;

use clientgo_leaderelection::{
    Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock, ShardElector,
};
use clientgo_record::{BroadcasterOptions, EventBroadcaster, EventRecorder};
use clientgo_workqueue::{MetricsProvider, PrometheusMetricsProvider};
use prometheus::Registry;

use crate::error::Error;
use crate::metrics::{ControllerMetrics, ManagerMetrics};
use crate::probes::{self, Check, Checks, Endpoints};
use crate::runnable::{BoxError, Runnable};
use crate::runner::AnyController;
use crate::sharding::{HeldShards, Sharding};

/// How the replicas of one manager share its work
/// ([`ManagerOptions::replicas`]): one choice of three.
#[derive(Debug, Clone, Default)]
pub enum Replicas {
    /// Every replica runs every controller (one replica, or controllers
    /// that tolerate running twice): the default.
    #[default]
    Independent,
    /// Only the replica holding a Lease runs the controllers and the
    /// runnables that need leadership.
    LeaderElection(LeaderElection),
    /// Every replica runs the controllers on the keys of the shards it
    /// holds.
    Sharded(Sharding),
}

/// How a [`Manager`] runs its controllers.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    factory: InformerFactoryOptions,
    cache_sync_timeout: Duration,
    graceful_shutdown_timeout: Duration,
    replicas: Replicas,
    metrics_bind_address: Option<SocketAddr>,
    health_probe_bind_address: Option<SocketAddr>,
    crds: Vec<CustomResourceDefinition>,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            factory: InformerFactoryOptions::default(),
            cache_sync_timeout: Duration::from_secs(120),
            graceful_shutdown_timeout: Duration::from_secs(30),
            replicas: Replicas::Independent,
            metrics_bind_address: None,
            health_probe_bind_address: None,
            crds: Vec::new(),
        }
    }
}

impl ManagerOptions {
    /// The options of the shared informer factory (storage, namespaces,
    /// selectors, transforms, and
    /// [`snapshot`](InformerFactoryOptions::snapshot) for warm restarts:
    /// the caches saved every minute and when the manager stops, resumed
    /// with a watch instead of a list at the next start); the project's
    /// defaults when not set.
    pub fn factory_options(mut self, options: InformerFactoryOptions) -> Self {
        self.factory = options;
        self
    }

    /// CustomResourceDefinitions `run` installs before it starts the
    /// caches (server-side apply, then waits until they are served:
    /// [`install_crds`]), as an
    /// operator that owns its API does at start-up (default: none). A
    /// CRD refused, or not served in time, fails `run` with
    /// [`Error::InstallCrds`].
    pub fn install_crds(
        mut self,
        crds: impl IntoIterator<Item = CustomResourceDefinition>,
    ) -> Self {
        self.crds = crds.into_iter().collect();
        self
    }

    /// How long the caches may take to sync before `run` fails (default
    /// 2 minutes, controller-runtime's `CacheSyncTimeout`).
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = timeout;
        self
    }

    /// How long reconciles in flight may take to finish at shutdown
    /// (default 30 s, controller-runtime's `GracefulShutdownTimeout`);
    /// those still running then are stopped.
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// Serves `/metrics` on `address` while the manager runs (default: not
    /// served): controller-runtime's `controller_runtime_*` families, the
    /// controllers' workqueue families, the REST client's `rest_client_*`
    /// families (unless its requests already report elsewhere, another
    /// manager of the same client included: see
    /// [`RestClient::report_requests_to`]), and whatever else is registered in
    /// [`Manager::registry`]. Port 0 picks a free port
    /// ([`Manager::metrics_address`] says which).
    pub fn metrics_bind_address(mut self, address: SocketAddr) -> Self {
        self.metrics_bind_address = Some(address);
        self
    }

    /// Serves `/healthz` (200 while the manager runs and every
    /// [health check](Manager::add_health_check) passes) and `/readyz`
    /// (200 once its caches synced and every
    /// [ready check](Manager::add_ready_check) passes, 503 before) on
    /// `address` (default: not served). Port 0 picks a free port
    /// ([`Manager::health_probe_address`] says which).
    pub fn health_probe_bind_address(mut self, address: SocketAddr) -> Self {
        self.health_probe_bind_address = Some(address);
        self
    }

    /// How replicas share the work (default [`Replicas::Independent`]).
    pub fn replicas(mut self, replicas: Replicas) -> Self {
        self.replicas = replicas;
        self
    }
}

struct Inner {
    client: RestClient,
    factory: SharedInformerFactory,
    options: ManagerOptions,
    controllers: parking_lot::Mutex<Vec<Arc<dyn AnyController>>>,
    runnables: parking_lot::Mutex<Vec<Box<dyn Runnable>>>,
    checks: Arc<Checks>,
    started: AtomicBool,
    ready: AtomicBool,
    leading: AtomicBool,
    registry: Registry,
    metrics: Option<ManagerMetrics>,
    queue_metrics: Option<Arc<dyn MetricsProvider>>,
    addresses: parking_lot::Mutex<Addresses>,
    shards: parking_lot::Mutex<Option<Arc<HeldShards>>>,
    events: parking_lot::Mutex<Option<EventBroadcaster>>,
    webhooks: parking_lot::Mutex<Option<BoundWebhookServer>>,
}

/// Where the endpoints listen, once bound.
#[derive(Debug, Clone, Copy, Default)]
struct Addresses {
    metrics: Option<SocketAddr>,
    health_probes: Option<SocketAddr>,
}

/// Runs controllers over one shared informer factory. Cloning is cheap
/// and shares the manager.
#[derive(Clone)]
pub struct Manager {
    inner: Arc<Inner>,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .inner
            .controllers
            .lock()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        f.debug_struct("Manager")
            .field("controllers", &names)
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl Manager {
    /// A manager of controllers that reach the API server through
    /// `client`.
    pub fn new(client: RestClient, options: ManagerOptions) -> Self {
        let factory = SharedInformerFactory::with_options(client.clone(), options.factory.clone());
        let registry = Registry::new();
        // Registering fresh families in a fresh registry fails only on a
        // name clash, which these names do not have; metrics are then off.
        let metrics = ManagerMetrics::new(&registry)
            .inspect_err(|error| tracing::warn!(%error, "controller metrics are off"))
            .ok();
        // The REST client's families, when the client reports nowhere yet
        // (controller-runtime registers client-go's in its one registry);
        // a client built with its own request metrics keeps reporting
        // there.
        // Registered only once attached, so a client that reports
        // elsewhere (another manager's registry, say) leaves no empty
        // families here.
        if !client.reports_requests() {
            let registered = PrometheusRequestMetrics::new().and_then(|rest| {
                if client.report_requests_to(Arc::new(rest.clone())) {
                    rest.register_in(&registry)?;
                }
                Ok(())
            });
            if let Err(error) = registered {
                tracing::warn!(%error, "REST client metrics are off");
            }
        }
        let queue_metrics = PrometheusMetricsProvider::new(&registry)
            .inspect_err(|error| tracing::warn!(%error, "workqueue metrics are off"))
            .ok()
            .map(|provider| Arc::new(provider) as Arc<dyn MetricsProvider>);
        Manager {
            inner: Arc::new(Inner {
                client,
                factory,
                options,
                controllers: parking_lot::Mutex::new(Vec::new()),
                runnables: parking_lot::Mutex::new(Vec::new()),
                checks: Arc::default(),
                started: AtomicBool::new(false),
                ready: AtomicBool::new(false),
                leading: AtomicBool::new(false),
                registry,
                metrics,
                queue_metrics,
                addresses: parking_lot::Mutex::default(),
                shards: parking_lot::Mutex::default(),
                events: parking_lot::Mutex::default(),
                webhooks: parking_lot::Mutex::default(),
            }),
        }
    }

    /// The REST client, for a reconcile's writes.
    pub fn client(&self) -> &RestClient {
        &self.inner.client
    }

    /// The shared informer factory: a reconcile reads other kinds through
    /// its listers. Ask for those informers before `run`: they are started
    /// and waited for with the controllers'; one first asked for after is
    /// not started.
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.inner.factory
    }

    /// Whether every cache has synced (a readiness probe's answer; a
    /// standby replica is ready too).
    pub fn is_ready(&self) -> bool {
        self.inner.ready.load(Ordering::Acquire)
    }

    /// Whether the controllers' workers are running: synced, and the
    /// leader when leader election is on.
    pub fn is_leading(&self) -> bool {
        self.inner.leading.load(Ordering::Acquire)
    }

    /// The Prometheus registry `/metrics` serves: register a controller's
    /// own metrics here.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// A recorder of Events about objects, as `component` (controller-
    /// runtime's `GetEventRecorderFor`): client-go's broadcaster, created
    /// on first use and writing through the manager's client, with its
    /// correlator (identical events counted on one Event, bursts rate
    /// limited). Stopped when the manager's run ends (events still queued
    /// then are dropped, as client-go's `Shutdown` does). Call it within a
    /// Tokio runtime.
    pub fn event_recorder(&self, component: impl Into<String>) -> EventRecorder {
        let mut events = self.inner.events.lock();
        let broadcaster = events.get_or_insert_with(|| {
            let broadcaster = EventBroadcaster::new(BroadcasterOptions::default());
            broadcaster.start_recording_to_sink(self.inner.client.clone());
            broadcaster
        });
        broadcaster.recorder(component)
    }

    /// The shards this replica holds now (always empty unless sharded).
    pub fn held_shards(&self) -> Vec<u32> {
        self.inner
            .shards
            .lock()
            .as_ref()
            .map_or_else(Vec::new, |shards| shards.held())
    }

    /// Where `/metrics` listens, once the manager runs.
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.inner.addresses.lock().metrics
    }

    /// Where `/healthz` and `/readyz` listen, once the manager runs.
    pub fn health_probe_address(&self) -> Option<SocketAddr> {
        self.inner.addresses.lock().health_probes
    }

    /// The series of a new controller named `name`.
    pub(crate) fn controller_metrics(
        &self,
        name: &str,
        workers: usize,
    ) -> Option<ControllerMetrics> {
        self.inner
            .metrics
            .as_ref()
            .map(|metrics| metrics.controller(name, workers))
    }

    /// The metrics provider of the controllers' queues.
    pub(crate) fn queue_metrics(&self) -> Option<Arc<dyn MetricsProvider>> {
        self.inner.queue_metrics.clone()
    }

    /// Adds a controller; refused once the manager has started or when
    /// its name is taken.
    pub(crate) fn add_controller(&self, controller: Arc<dyn AnyController>) -> Result<(), Error> {
        let mut controllers = self.inner.controllers.lock();
        self.check_addable(&controllers, controller.name())?;
        controllers.push(controller);
        Ok(())
    }

    /// Whether a controller named `name` may be added now (checked again
    /// by [`add_controller`](Self::add_controller)): before it builds
    /// anything, so a refused controller leaves no metric behind.
    pub(crate) fn may_add(&self, name: &str) -> Result<(), Error> {
        self.check_addable(&self.inner.controllers.lock(), name)
    }

    fn check_addable(
        &self,
        controllers: &[Arc<dyn AnyController>],
        name: &str,
    ) -> Result<(), Error> {
        if self.inner.started.load(Ordering::Acquire) {
            return Err(Error::AlreadyRun);
        }
        if controllers.iter().any(|c| c.name() == name) {
            return Err(Error::DuplicateName {
                name: name.to_string(),
            });
        }
        Ok(())
    }

    /// Runs `runnable` with the manager (controller-runtime's
    /// `Manager.Add`; see [`crate::runnable`] for when it starts and
    /// stops). Refused once the manager has started, or when a runnable of
    /// the same name was added.
    pub fn add(&self, runnable: impl Runnable) -> Result<(), Error> {
        let mut runnables = self.inner.runnables.lock();
        if self.inner.started.load(Ordering::Acquire) {
            return Err(Error::AlreadyRun);
        }
        if runnables.iter().any(|r| r.name() == runnable.name()) {
            return Err(Error::DuplicateName {
                name: runnable.name().to_string(),
            });
        }
        runnables.push(Box::new(runnable));
        Ok(())
    }

    /// Adds `check` to what `/healthz` answers (controller-runtime's
    /// `AddHealthzCheck`): while it returns an error, `/healthz` answers
    /// 500 naming the check and the error. Checks run on each probe, on
    /// the probe server's task: keep them quick and non-blocking.
    pub fn add_health_check(
        &self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.inner
            .checks
            .add_health(name.into(), Arc::new(check) as Check);
    }

    /// Adds `check` to what `/readyz` answers (controller-runtime's
    /// `AddReadyzCheck`), besides the caches having synced: while it
    /// returns an error, `/readyz` answers 503 naming it.
    pub fn add_ready_check(
        &self,
        name: impl Into<String>,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.inner
            .checks
            .add_ready(name.into(), Arc::new(check) as Check);
    }

    /// Serves `server`'s webhooks while the manager runs, as
    /// controller-runtime's manager runs its webhook server: started
    /// first (before the caches, which may need its conversions), on
    /// every replica (no leader election), ready (`/readyz` and
    /// [`is_ready`](Self::is_ready)) once it accepts connections, and
    /// stopped last, letting requests in flight finish. Give its options
    /// this manager's [`registry`](Self::registry) to serve its metrics on
    /// `/metrics`. One server per manager; after `run`,
    /// [`Error::AlreadyRun`].
    pub fn add_webhook_server(&self, server: BoundWebhookServer) -> Result<(), Error> {
        let mut webhooks = self.inner.webhooks.lock();
        if self.inner.started.load(Ordering::Acquire) {
            return Err(Error::AlreadyRun);
        }
        if webhooks.is_some() {
            return Err(Error::DuplicateName {
                name: "webhook server".into(),
            });
        }
        let ready = server.ready_flag();
        *webhooks = Some(server);
        self.add_ready_check("webhook-server", move || {
            if ready.load(Ordering::Acquire) {
                Ok(())
            } else {
                Err("the webhook server is not serving".into())
            }
        });
        Ok(())
    }

    /// Runs every controller and runnable until `shutdown` fires (see the
    /// module documentation for the order), then shuts down gracefully.
    /// Runs once.
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), Error> {
        let (controllers, runnables) = {
            // Under the locks `add_controller` and `add` take: each is
            // either in these lists or refused.
            let controllers = self.inner.controllers.lock();
            let mut runnables = self.inner.runnables.lock();
            if self.inner.started.swap(true, Ordering::AcqRel) {
                return Err(Error::AlreadyRun);
            }
            (controllers.clone(), std::mem::take(&mut *runnables))
        };
        // Taken now: a failure below drops it, closing its listener.
        let webhook_server = self.inner.webhooks.lock().take();
        // The endpoints first, as controller-runtime starts its servers:
        // probes answer while the caches sync.
        let endpoints_stop = CancellationToken::new();
        let _stop_endpoints = endpoints_stop.clone().drop_guard();
        self.serve_endpoints(&endpoints_stop).await?;
        let webhooks_stop = CancellationToken::new();
        let _stop_webhooks = webhooks_stop.clone().drop_guard();
        let webhooks = webhook_server.map(|server| {
            let stop = webhooks_stop.clone();
            tokio::spawn(async move {
                if let Err(error) = server.serve(stop).await {
                    tracing::error!(%error, "the webhook server stopped");
                }
            })
        });
        let result = self
            .run_with_webhooks(controllers, runnables, &shutdown)
            .await;
        // The webhooks last: conversions may be needed until the caches
        // stop; and `run` returns only once their server has.
        webhooks_stop.cancel();
        if let Some(serving) = webhooks {
            let _ = serving.await;
        }
        result
    }

    /// The part of [`run`](Self::run) while the webhooks serve: CRDs,
    /// registrations, informers, then [`run_started`](Self::run_started).
    async fn run_with_webhooks(
        &self,
        controllers: Vec<Arc<dyn AnyController>>,
        runnables: Vec<Box<dyn Runnable>>,
        shutdown: &CancellationToken,
    ) -> Result<(), Error> {
        if !self.inner.options.crds.is_empty() {
            install_crds(
                &self.inner.client,
                &self.inner.options.crds,
                &CrdInstallOptions::default(),
            )
            .await
            .map_err(|error| Error::InstallCrds(Box::new(error)))?;
        }
        let mut syncs: Vec<Arc<dyn InformerSynced>> = Vec::new();
        for controller in &controllers {
            syncs.extend(controller.register(&self.inner.factory)?);
        }
        let informers = CancellationToken::new();
        self.inner.factory.start(&informers);
        let mut tasks = Tasks::new(runnables);
        let result = self
            .run_started(&controllers, &mut tasks, &syncs, shutdown)
            .await;
        self.inner.ready.store(false, Ordering::Release);
        self.inner.leading.store(false, Ordering::Release);
        informers.cancel();
        self.inner.factory.shutdown().await;
        if let Some(events) = self.inner.events.lock().take() {
            events.shutdown();
        }
        result
    }

    /// Starts the endpoint servers the options ask for.
    async fn serve_endpoints(&self, stop: &CancellationToken) -> Result<(), Error> {
        let manager = self.clone();
        let endpoints = Endpoints {
            registry: self.inner.registry.clone(),
            ready: Arc::new(move || manager.is_ready()),
            checks: Arc::clone(&self.inner.checks),
        };
        let options = &self.inner.options;
        for (what, address) in [
            ("metrics", options.metrics_bind_address),
            ("health probes", options.health_probe_bind_address),
        ] {
            let Some(address) = address else { continue };
            let bound = probes::serve(address, endpoints.clone(), stop.clone())
                .await
                .map_err(|source| Error::Bind {
                    what,
                    address,
                    source,
                })?;
            let mut addresses = self.inner.addresses.lock();
            match what {
                "metrics" => addresses.metrics = Some(bound),
                _ => addresses.health_probes = Some(bound),
            }
        }
        Ok(())
    }

    /// The part of [`run`](Self::run) after the informers started: sync,
    /// runnables, leadership, workers, shutdown.
    async fn run_started(
        &self,
        controllers: &[Arc<dyn AnyController>],
        tasks: &mut Tasks,
        syncs: &[Arc<dyn InformerSynced>],
        shutdown: &CancellationToken,
    ) -> Result<(), Error> {
        let started = tokio::time::Instant::now();
        let waited: Vec<&dyn InformerSynced> = syncs.iter().map(|s| s.as_ref()).collect();
        let synced = wait_for_cache_sync(
            &waited,
            SyncWaitOptions::default()
                .timeout(self.inner.options.cache_sync_timeout)
                .cancel(shutdown.clone()),
        )
        .await;
        match synced {
            Ok(()) => {}
            Err(error) if error.failure == SyncFailure::Cancelled => return Ok(()),
            Err(error) => return Err(Error::CacheSync(Box::new(error))),
        }
        // Informers a reconcile reads that no controller watches (asked for
        // from the factory before `run`) are waited for too.
        let left = self
            .inner
            .options
            .cache_sync_timeout
            .saturating_sub(started.elapsed());
        tokio::select! {
            synced = self.inner.factory.wait_for_cache_sync(left) => {
                synced.map_err(|error| Error::CacheSync(Box::new(error)))?;
            }
            () = shutdown.cancelled() => return Ok(()),
        }
        self.inner.ready.store(true, Ordering::Release);
        let elected = matches!(self.inner.options.replicas, Replicas::LeaderElection(_));
        tasks.start(|runnable| !(elected && runnable.needs_leader_election()));
        let sharded = match &self.inner.options.replicas {
            Replicas::Sharded(sharding) => Some(self.start_sharding(controllers, sharding)?),
            _ => None,
        };
        // A replica that is not the leader stays here with warm caches.
        let election = match &self.inner.options.replicas {
            Replicas::LeaderElection(election) => {
                let campaign = Campaign::start(self.inner.client.clone(), election)?;
                let leading = tokio::select! {
                    leading = campaign.leading(shutdown) => leading,
                    (name, source) = tasks.first_failure() => {
                        campaign.end().await;
                        tasks.stop(self.inner.options.graceful_shutdown_timeout).await;
                        return Err(Error::Runnable { name, source });
                    }
                };
                match leading {
                    Some(leading) => Some((campaign, leading)),
                    None => {
                        campaign.end().await;
                        tasks
                            .stop(self.inner.options.graceful_shutdown_timeout)
                            .await;
                        return Ok(());
                    }
                }
            }
            _ => None,
        };
        self.inner.leading.store(true, Ordering::Release);
        tasks.start(|_| true);
        tracing::info!(
            controllers = controllers.len(),
            "caches synced; starting workers"
        );
        let mut works = tokio::task::JoinSet::new();
        for controller in controllers {
            works.spawn(Arc::clone(controller).work());
        }
        let lost = match &election {
            Some((_, leading)) => leading.clone(),
            None => CancellationToken::new(),
        };
        let stopped = tokio::select! {
            () = async {
                // No controllers: the runnables alone run until shutdown.
                if works.is_empty() {
                    std::future::pending::<()>().await;
                }
                while works.join_next().await.is_some() {}
            } => Stop::WorkEnded,
            () = shutdown.cancelled() => Stop::Shutdown,
            () = lost.cancelled() => Stop::LostLease,
            (name, source) = tasks.first_failure() => Stop::Failed(name, source),
        };
        self.inner.leading.store(false, Ordering::Release);
        for controller in controllers {
            controller.shut_down();
        }
        tasks.cancel();
        let timeout = self.inner.options.graceful_shutdown_timeout;
        let result = match stopped {
            Stop::WorkEnded => Ok(()),
            // Another replica may lead already: reconciles in flight are
            // stopped at once.
            Stop::LostLease => Err(Error::LeaderElectionLost),
            Stop::Failed(name, source) => Err(Error::Runnable { name, source }),
            Stop::Shutdown => {
                let drain = async {
                    while works.join_next().await.is_some() {}
                    tasks.drain().await;
                };
                // A lease lost while draining stops the reconciles at once,
                // as a lost lease does while running.
                tokio::select! {
                    drained = tokio::time::timeout(timeout, drain) => match drained {
                        Ok(()) => Ok(()),
                        Err(_) => Err(Error::ShutdownTimeout(timeout)),
                    },
                    () = lost.cancelled() => Err(Error::LeaderElectionLost),
                }
            }
        };
        // Whatever still runs is stopped, and waited for: only then is a
        // lease or a shard released, so two replicas never reconcile at
        // once.
        works.abort_all();
        while works.join_next().await.is_some() {}
        tasks.abort().await;
        if let Some((campaign, _)) = election {
            campaign.end().await;
        }
        if let Some(sharded) = sharded {
            sharded.stop().await;
        }
        result
    }

    /// Starts this replica's campaign for shards: each shard it takes is
    /// held for the controllers' workers, and every cached key enqueued.
    fn start_sharding(
        &self,
        controllers: &[Arc<dyn AnyController>],
        sharding: &Sharding,
    ) -> Result<ShardElector, Error> {
        let held = Arc::new(HeldShards::default());
        *self.inner.shards.lock() = Some(Arc::clone(&held));
        for controller in controllers {
            controller.shard(Arc::clone(&held));
        }
        let controllers = controllers.to_vec();
        ShardElector::start(
            self.inner.client.clone(),
            sharding.identity.clone(),
            sharding.options.clone(),
            move |shard, token| {
                let held = Arc::clone(&held);
                let controllers = controllers.clone();
                async move {
                    held.hold(shard.index, shard.selector);
                    for controller in &controllers {
                        controller.enqueue_all();
                    }
                    token.cancelled().await;
                    held.release(shard.index).await;
                }
            },
        )
        .map_err(Error::LeaderElection)
    }
}

/// Why the workers stopped.
#[derive(Debug)]
enum Stop {
    WorkEnded,
    Shutdown,
    LostLease,
    /// A runnable ended with this error.
    Failed(String, BoxError),
}

/// The manager's runnables: those not started yet, and those running on
/// tasks of their own with one stop token.
struct Tasks {
    waiting: Vec<Box<dyn Runnable>>,
    running: tokio::task::JoinSet<(String, Result<(), BoxError>)>,
    stop: CancellationToken,
}

impl Tasks {
    fn new(runnables: Vec<Box<dyn Runnable>>) -> Self {
        Tasks {
            waiting: runnables,
            running: tokio::task::JoinSet::new(),
            stop: CancellationToken::new(),
        }
    }

    /// Starts the waiting runnables `now` chooses. A panic is caught and
    /// taken as the runnable's error.
    fn start(&mut self, now: impl Fn(&dyn Runnable) -> bool) {
        let (start, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|r| now(r.as_ref()));
        self.waiting = wait;
        for runnable in start {
            let name = runnable.name().to_string();
            let run = runnable.start(self.stop.clone());
            self.running.spawn(async move {
                use futures_util::FutureExt;
                let ended = std::panic::AssertUnwindSafe(run).catch_unwind().await;
                let ended = ended.unwrap_or_else(|_| Err("the runnable panicked".into()));
                (name, ended)
            });
        }
    }

    /// The first runnable to end with an error (those ending `Ok` are
    /// let go); pending while none does.
    async fn first_failure(&mut self) -> (String, BoxError) {
        loop {
            match self.running.join_next().await {
                Some(Ok((name, Err(source)))) => return (name, source),
                Some(_) => {}
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// Fires the runnables' stop token.
    fn cancel(&self) {
        self.stop.cancel();
    }

    /// Waits for every running runnable to end, logging errors.
    async fn drain(&mut self) {
        while let Some(ended) = self.running.join_next().await {
            if let Ok((name, Err(error))) = ended {
                tracing::warn!(runnable = %name, %error, "runnable failed while stopping");
            }
        }
    }

    /// Stops the runnables: the token, then up to `timeout` to end, then
    /// aborted.
    async fn stop(&mut self, timeout: Duration) {
        self.cancel();
        let _ = tokio::time::timeout(timeout, self.drain()).await;
        self.abort().await;
    }

    /// Aborts whatever still runs and waits for it.
    async fn abort(&mut self) {
        self.stop.cancel();
        self.running.abort_all();
        while self.running.join_next().await.is_some() {}
    }
}

/// A manager's campaign for its Lease: an elector on a task of its own,
/// and the token it hands over when this replica starts leading.
struct Campaign {
    leading: tokio::sync::watch::Receiver<Option<CancellationToken>>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Campaign {
    fn start(client: RestClient, election: &LeaderElection) -> Result<Campaign, Error> {
        let (sender, leading) = tokio::sync::watch::channel(None);
        let lock = LeaseLock::new(
            client,
            &election.namespace,
            &election.name,
            &election.identity,
        );
        let callbacks = Callbacks::new().on_started_leading(move |token| {
            sender.send_replace(Some(token));
        });
        let elector = LeaderElector::new(lock, election.config.clone(), callbacks)
            .map_err(Error::LeaderElection)?;
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let stop = stop.clone();
            async move { elector.run(stop).await }
        });
        Ok(Campaign {
            leading,
            stop,
            task,
        })
    }

    /// Waits until this replica leads (its leading token) or `shutdown`
    /// fires (`None`).
    async fn leading(&self, shutdown: &CancellationToken) -> Option<CancellationToken> {
        let mut leading = self.leading.clone();
        tokio::select! {
            changed = leading.wait_for(Option::is_some) => {
                changed.ok().and_then(|token| token.clone())
            }
            () = shutdown.cancelled() => None,
        }
    }

    /// Stops campaigning (releasing the lease when the configuration says
    /// so) and waits for the elector to end.
    async fn end(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// How a manager's replicas elect the one that runs its controllers
/// (controller-runtime's `LeaderElection` options). Every replica syncs
/// its caches first, so a standby that takes over starts its workers at
/// once (controller-runtime's warm-up, always on here).
#[derive(Debug, Clone)]
pub struct LeaderElection {
    namespace: String,
    name: String,
    identity: String,
    config: LeaderElectionConfig,
}

impl LeaderElection {
    /// Elects through the Lease `namespace/name`, this replica as
    /// `identity` (unique per replica: a pod name). Timing: client-go's
    /// 15/10/2 s, with the lease released when the manager stops.
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaderElection {
            namespace: namespace.into(),
            name: name.into(),
            identity: identity.into(),
            config: LeaderElectionConfig::default().release_on_cancel(true),
        }
    }

    /// The lease's timing and release (validated when the manager runs).
    pub fn config(mut self, config: LeaderElectionConfig) -> Self {
        self.config = config;
        self
    }
}
