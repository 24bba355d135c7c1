//! A controller runtime on this project's informers and work queues, laid
//! out as controller-runtime's packages: [`builder`] (a controller's
//! watches and options), [`reconcile`] (the contract), [`handler`] (events
//! to requests), [`predicate`] (event filters), [`manager`] (one shared
//! cache, sync, leader election, workers, shutdown, metrics and probes),
//! [`sharding`] (replicas splitting the keys) and [`controllerutil`]
//! (owner references, finalizers, writes), plus [`runnable`] (your own
//! tasks in the manager) and [`signals`] (SIGTERM and SIGINT).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use clientgo_controller::{Action, Controller, Manager, ManagerOptions, signals};
//! use clientgo_rest::{Config, RestClient};
//! use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
//!
//! async fn reconcile(deployment: Arc<Deployment>, _: Arc<()>) -> Result<Action, String> {
//!     println!("{:?}", deployment.metadata.name);
//!     Ok(Action::requeue_after(Duration::from_secs(300)))
//! }
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = RestClient::new(Config::new("https://127.0.0.1:6443"))?;
//! let manager = Manager::new(client, ManagerOptions::default());
//! Controller::for_::<Deployment>(&manager)
//!     .owns::<ReplicaSet>()
//!     .complete(reconcile, Arc::new(()))?;
//! manager.run(signals::setup_signal_handler()?).await?;
//! # Ok(())
//! # }
//! ```
//!
//! **What it reads.** Every watch is a metadata handler on the manager's
//! shared informer of its type (one informer per type, however many
//! controllers watch it, in the factory's default compact storage), so
//! enqueueing decodes nothing; a worker decodes the reconciled object from
//! the cache when it takes its key.
//!
//! **Check again now and then.** Informers report changes, not states: a
//! child created by a reconcile and deleted by someone else while the
//! child kind's watch was down, the gap then closed by a relist, makes no
//! event at all (in client-go and controller-runtime too). A controller
//! that must repair such a loss returns
//! [`Action::requeue_after`] with a period (kube-rs advises an hour;
//! controller-runtime relies on its 10-hour resync).
//!
//! **Where it differs from controller-runtime.** A key whose object has
//! left the cache is not reconciled (controller-runtime runs the
//! reconciler, whose read returns NotFound); it is reported to
//! [`Builder::on_gone`]. The default rate limiter is client-go's
//! `DefaultControllerRateLimiter` (controller-runtime's default with its
//! classic queue). The REST client has no client-side rate limit unless
//! one is set, as controller-runtime's configuration loaders give
//! ([`Config::qps`](clientgo_rest::Config::qps)).

pub mod builder;
pub mod controllerutil;
mod error;
pub mod handler;
pub mod manager;
mod metrics;
pub mod predicate;
mod probes;
pub mod reconcile;
pub mod runnable;
mod runner;
pub mod sharding;
pub mod signals;
mod stats;
mod trigger;
mod watch;

pub use builder::{Builder, Controller, WatchOptions};
pub use error::Error;
pub use handler::EnqueueMapping;
pub use manager::{LeaderElection, Manager, ManagerOptions, Replicas};
pub use predicate::{Predicate, PredicateExt};
pub use reconcile::{Action, BackoffOnError, ErrorPolicy, Request, Retry};
pub use runnable::Runnable;
pub use runner::ControllerHandle;
pub use sharding::Sharding;
pub use stats::ControllerStats;
pub use trigger::Trigger;
