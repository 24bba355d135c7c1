//! A user's own task run by the manager ([`Manager::add`](crate::Manager::add);
//! controller-runtime's `manager.Runnable` and `LeaderElectionRunnable`).
//!
//! **When it runs.** A runnable starts once the manager's caches have
//! synced: at once when it does not need leadership, and with the
//! controllers' workers when it does (only on the leader, with leader
//! election; on every replica otherwise, sharded ones included). Its stop
//! token fires when the manager shuts down (or loses its lease), and the
//! manager waits for it within the graceful shutdown timeout, as for the
//! reconciles in flight.
//!
//! **Its result.** A runnable that ends with an error stops the manager,
//! whose `run` returns [`Error::Runnable`](crate::Error::Runnable); one
//! that ends with `Ok` before the shutdown simply ends.

use std::fmt;
use std::future::Future;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// The error a runnable ends with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A task that starts with the manager and stops with it.
pub trait Runnable: Send + 'static {
    /// Its name, in logs and errors; unique among a manager's runnables.
    fn name(&self) -> &str;

    /// Whether it runs only where the controllers' workers run (on the
    /// leader, with leader election): controller-runtime's
    /// `NeedLeaderElection`, `true` unless overridden.
    fn needs_leader_election(&self) -> bool {
        true
    }

    /// Runs until `stop` fires (or the work is done).
    fn start(self: Box<Self>, stop: CancellationToken) -> BoxFuture<'static, Result<(), BoxError>>;
}

/// A runnable made of a name and an async function of the stop token
/// ([`from_fn`]).
pub struct FnRunnable<F> {
    name: String,
    needs_leader_election: bool,
    run: F,
}

impl<F> fmt::Debug for FnRunnable<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnRunnable")
            .field("name", &self.name)
            .field("needs_leader_election", &self.needs_leader_election)
            .finish()
    }
}

/// The runnable `name` that runs `run(stop)` (controller-runtime's
/// `RunnableFunc`); it needs leadership unless
/// [`needs_leader_election(false)`](FnRunnable::needs_leader_election) says
/// otherwise.
pub fn from_fn<F, Fut>(name: impl Into<String>, run: F) -> FnRunnable<F>
where
    F: FnOnce(CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    FnRunnable {
        name: name.into(),
        needs_leader_election: true,
        run,
    }
}

impl<F> FnRunnable<F> {
    /// Whether it runs only where the controllers' workers run.
    pub fn needs_leader_election(mut self, needs: bool) -> Self {
        self.needs_leader_election = needs;
        self
    }
}

impl<F, Fut> Runnable for FnRunnable<F>
where
    F: FnOnce(CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn needs_leader_election(&self) -> bool {
        self.needs_leader_election
    }

    fn start(self: Box<Self>, stop: CancellationToken) -> BoxFuture<'static, Result<(), BoxError>> {
        (self.run)(stop).boxed()
    }
}
