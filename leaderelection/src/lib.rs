//! client-go's `tools/leaderelection` in Rust: of several replicas of a
//! controller, one leads at a time, through a coordination.k8s.io/v1
//! Lease.
//!
//! ```no_run
//! # async fn example(client: clientgo_rest::RestClient) -> Result<(), Box<dyn std::error::Error>> {
//! use clientgo_leaderelection::{Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
//! use tokio_util::sync::CancellationToken;
//!
//! let lock = LeaseLock::new(client, "kube-system", "my-controller", "replica-a");
//! let callbacks = Callbacks::new()
//!     .on_started_leading(|leading: CancellationToken| {
//!         tokio::spawn(async move {
//!             // Do the work until `leading` is cancelled.
//!             leading.cancelled().await;
//!         });
//!     })
//!     .on_stopped_leading(|| println!("no longer leading"))
//!     .on_new_leader(|identity: &str| println!("{identity} leads"));
//! let elector = LeaderElector::new(lock, LeaderElectionConfig::default(), callbacks)?;
//! elector.run(CancellationToken::new()).await;
//! # Ok(())
//! # }
//! ```
//!
//! | type | client-go | what it is |
//! |---|---|---|
//! | [`LeaderElector`] | `leaderelection.LeaderElector` (`RunOrDie`, `IsLeader`, `GetLeader`) | the election loop: acquire, renew, release |
//! | [`LeaderElectionConfig`] | `LeaderElectionConfig` | timings (15/10/2 s), `ReleaseOnCancel`, name, validation |
//! | [`Callbacks`] | `LeaderCallbacks` | started leading (with a token), stopped leading, new leader |
//! | [`LeaseLock`], [`ResourceLock`] | `resourcelock.LeaseLock`, `resourcelock.Interface` | the Lease with resourceVersion preconditions |
//! | [`LeaderElectionRecord`] | `resourcelock.LeaderElectionRecord` | holder, duration, acquire and renew times, transitions |
//! | [`LeaderElector::check`] | `HealthzAdaptor` | fails when renewing is overdue |
//! | [`ElectorStats`] | `leader_election_master_status` metric | is leader, acquisitions, losses, transitions seen |
//! | [`ShardElector`] | none (controller-runtime has none either) | the key space in shards, a Lease and an elector per shard, each replica its fair share |
//!
//! **The rules are client-go's.**
//! - A candidate tries to acquire the lease every `retry_period`
//!   (jittered by up to 1.2 ×): it creates the Lease when there is none,
//!   and takes it over when its holder is empty or the lease has not been
//!   renewed for `lease_duration`.
//! - The leader renews every `retry_period`. A renewal that has not
//!   succeeded `renew_deadline` after it started loses leadership: the
//!   leading token is cancelled and `run` returns. Every request is cut off
//!   at that deadline, so leadership is never kept longer.
//! - Updates carry the Lease's resourceVersion: of two candidates racing,
//!   the server answers one with 409 Conflict.
//! - `release_on_cancel` writes an empty holder when `run`'s token is
//!   cancelled, so a successor takes over at once instead of after
//!   `lease_duration`.
//!
//! **Clock skew.** As in client-go, a lease's validity is judged by the
//! *local* time at which this process last saw its record change, plus
//! `lease_duration`; the times written in the record are informational.
//! Clocks may therefore disagree between machines. What is assumed is that
//! they advance at about the same *rate*: `lease_duration` must be long
//! enough to cover rate differences and the delay of a renewal.
//!
//! The sharded controller judges other replicas' liveness (their
//! membership leases) by the renew times written in the records, so
//! clocks skewed by more than a lease duration distort its shares; which
//! replica holds a shard is still decided by the electors, by the rule
//! above.
//!
//! Not yet here: client-go's coordinated leader election (LeaseCandidate)
//! and the multi-lock.
#![warn(missing_docs)]

mod callbacks;
mod config;
mod elector;
mod error;
mod lease_lock;
mod record;
mod shard_elector;
mod shard_plan;

pub use callbacks::Callbacks;
pub use config::{JITTER_FACTOR, LeaderElectionConfig};
pub use elector::{ElectorStats, LeaderElector};
pub use error::{ConfigError, HealthError, LockError};
pub use lease_lock::{LeaseLock, ResourceLock};
pub use record::LeaderElectionRecord;
pub use shard_elector::{DEFAULT_SHARDS, Shard, ShardElector, ShardElectorOptions, ShardedStats};
