//! The crate's errors.

use std::time::Duration;

use clientgo_informers::SyncError;

/// What can go wrong building or running controllers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two controllers (or two runnables) of one manager were given the
    /// same name (it labels their metrics and logs, so it must be unique).
    #[error("{name:?} is already registered")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A watch could not register its handler with its informer (the
    /// informer had stopped).
    #[error("controller {controller:?} could not watch {resource}: {source}")]
    Watch {
        /// The controller's name.
        controller: String,
        /// The watched resource.
        resource: String,
        /// The informer's error.
        #[source]
        source: Box<clientgo_informers::Error>,
    },
    /// The caches the controllers read did not sync: which ones and why
    /// (a 403 from RBAC, a 404 for a CRD not installed, a timeout).
    #[error("caches did not sync: {0}")]
    CacheSync(#[source] Box<SyncError>),
    /// An endpoint could not listen on its address.
    #[error("cannot serve {what} on {address}: {source}")]
    Bind {
        /// `metrics` or `health probes`.
        what: &'static str,
        /// The address asked for.
        address: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The manager was run twice.
    #[error("the manager is already running or has run")]
    AlreadyRun,
    /// The leader election's configuration is refused (timings, or an
    /// empty identity).
    #[error("leader election: {0}")]
    LeaderElection(#[source] clientgo_leaderelection::ConfigError),
    /// A runnable added with [`Manager::add`](crate::Manager::add) ended
    /// with an error (or panicked); the manager stopped.
    #[error("runnable {name:?} failed: {source}")]
    Runnable {
        /// The runnable's name.
        name: String,
        /// Its error.
        #[source]
        source: crate::runnable::BoxError,
    },
    /// This replica was the leader and could not renew its lease: its
    /// reconciles were stopped; the process should exit.
    #[error("leader election lost")]
    LeaderElectionLost,
    /// In-flight reconciles did not finish within the graceful shutdown
    /// timeout; they were stopped.
    #[error("reconciles still running after the graceful shutdown timeout of {0:?}")]
    ShutdownTimeout(Duration),
    /// The CRDs of [`ManagerOptions::install_crds`](crate::ManagerOptions::install_crds)
    /// could not be installed: refused (the structural check's or the
    /// server's reason), or not served in time. Nothing was started.
    #[error("installing CRDs: {0}")]
    InstallCrds(#[source] Box<clientgo_rest::api::CrdInstallError>),
}
