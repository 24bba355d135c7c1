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
//! **Shutdown.** When the token given to `run` fires, every controller's
//! queue shuts down, the workers finish the reconciles they are in (for up
//! to [`graceful_shutdown_timeout`](ManagerOptions::graceful_shutdown_timeout),
//! after which they are abandoned and `run` says so), and the informers
//! stop.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clientgo_informers::{
    InformerFactoryOptions, InformerSynced, SharedInformerFactory, SyncFailure, SyncWaitOptions,
    wait_for_cache_sync,
};
use clientgo_rest::RestClient;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::runner::{Runnable, Work, drain};

/// How a [`Manager`] runs its controllers.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    factory: InformerFactoryOptions,
    cache_sync_timeout: Duration,
    graceful_shutdown_timeout: Duration,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            factory: InformerFactoryOptions::default(),
            cache_sync_timeout: Duration::from_secs(120),
            graceful_shutdown_timeout: Duration::from_secs(30),
        }
    }
}

impl ManagerOptions {
    /// The options of the shared informer factory (storage, namespaces,
    /// selectors, transforms, snapshots for warm restarts); the project's
    /// defaults when not set.
    pub fn factory_options(mut self, options: InformerFactoryOptions) -> Self {
        self.factory = options;
        self
    }

    /// How long the caches may take to sync before `run` fails (default
    /// 2 minutes, controller-runtime's `CacheSyncTimeout`).
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = timeout;
        self
    }

    /// How long reconciles in flight may take to finish at shutdown
    /// (default 30 s, controller-runtime's `GracefulShutdownTimeout`).
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }
}

struct Inner {
    client: RestClient,
    factory: SharedInformerFactory,
    options: ManagerOptions,
    controllers: parking_lot::Mutex<Vec<Arc<dyn Runnable>>>,
    started: AtomicBool,
    ready: AtomicBool,
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
        Manager {
            inner: Arc::new(Inner {
                client,
                factory,
                options,
                controllers: parking_lot::Mutex::new(Vec::new()),
                started: AtomicBool::new(false),
                ready: AtomicBool::new(false),
            }),
        }
    }

    /// The REST client, for a reconcile's writes.
    pub fn client(&self) -> &RestClient {
        &self.inner.client
    }

    /// The shared informer factory: a reconcile reads other kinds through
    /// its listers (an informer asked for before `run` is started and
    /// waited for with the controllers').
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.inner.factory
    }

    /// Whether every cache has synced and the controllers are running (a
    /// readiness probe's answer).
    pub fn is_ready(&self) -> bool {
        self.inner.ready.load(Ordering::Acquire)
    }

    /// Adds a controller; refused once the manager has started or when
    /// its name is taken.
    pub(crate) fn add(&self, controller: Arc<dyn Runnable>) -> Result<(), Error> {
        if self.inner.started.load(Ordering::Acquire) {
            return Err(Error::AlreadyRun);
        }
        let mut controllers = self.inner.controllers.lock();
        if controllers.iter().any(|c| c.name() == controller.name()) {
            return Err(Error::DuplicateName {
                name: controller.name().to_string(),
            });
        }
        controllers.push(controller);
        Ok(())
    }

    /// Runs every controller until `shutdown` fires (see the module
    /// documentation for the order), then shuts down gracefully. Runs
    /// once.
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), Error> {
        if self.inner.started.swap(true, Ordering::AcqRel) {
            return Err(Error::AlreadyRun);
        }
        let controllers: Vec<Arc<dyn Runnable>> = self.inner.controllers.lock().clone();
        let mut syncs: Vec<Arc<dyn InformerSynced>> = Vec::new();
        for controller in &controllers {
            syncs.extend(controller.register(&self.inner.factory)?);
        }
        let informers = CancellationToken::new();
        self.inner.factory.start(&informers);
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
            Err(error) if error.failure == SyncFailure::Cancelled => {
                self.stop_informers(&informers).await;
                return Ok(());
            }
            Err(error) => {
                self.stop_informers(&informers).await;
                return Err(Error::CacheSync(Box::new(error)));
            }
        }
        tracing::info!(
            controllers = controllers.len(),
            "caches synced; starting workers"
        );
        let works: Vec<Work> = controllers.iter().map(|c| Arc::clone(c).work()).collect();
        let mut running = tokio::spawn(async move {
            for work in futures_join(works) {
                work.await;
            }
        });
        self.inner.ready.store(true, Ordering::Release);
        let ended = tokio::select! {
            _ = &mut running => true,
            () = shutdown.cancelled() => false,
        };
        self.inner.ready.store(false, Ordering::Release);
        for controller in &controllers {
            controller.shut_down();
        }
        let mut result = Ok(());
        if !ended {
            let timeout = self.inner.options.graceful_shutdown_timeout;
            let finished = drain(
                Box::pin(async move {
                    let _ = (&mut running).await;
                }),
                timeout,
            )
            .await;
            if !finished {
                result = Err(Error::ShutdownTimeout(timeout));
            }
        }
        self.stop_informers(&informers).await;
        result
    }

    async fn stop_informers(&self, informers: &CancellationToken) {
        informers.cancel();
        self.inner.factory.shutdown().await;
    }
}

/// Every work future spawned on its own task, returned as futures that
/// wait for them (so controllers run in parallel).
fn futures_join(works: Vec<Work>) -> Vec<Work> {
    works
        .into_iter()
        .map(|work| {
            let task = tokio::spawn(work);
            Box::pin(async move {
                let _ = task.await;
            }) as Work
        })
        .collect()
}
