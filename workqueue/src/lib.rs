//! client-go's util/workqueue in Rust: the queue between an informer's
//! event handlers and a controller's workers.
//!
//! | type | client-go | what it adds |
//! |---|---|---|
//! | [`Queue`] | `workqueue.Typed` | fair, stingy: an item waits once and is processed by one worker at a time |
//! | [`DelayingQueue`] | `DelayingQueue` | `add_after`: items that become ready later |
//! | [`RateLimitingQueue`] | `RateLimitingQueue` | `add_rate_limited`, `forget`, `num_requeues` |
//! | [`RateLimiter`] and its implementations | `default_rate_limiters.go` | per-item backoff, token bucket, max-of, capped |
//! | [`MetricsProvider`] | `MetricsProvider` | depth, adds, latency, work duration, unfinished work, retries |
//! | [`parallelize_until`] | `ParallelizeUntil` | N workers over M pieces |
//!
//! Event handlers add keys (`namespace/name`); workers take a key, reconcile
//! the object it names from a lister, and tell the queue how it went. The
//! queue guarantees that one key is never processed by two workers at once,
//! that a key added many times while it waits is processed once, and that a
//! key added while it is being processed is processed again afterwards. A
//! failing key is retried with per-key exponential backoff (reset by
//! `forget` on success), while an overall token bucket limits retries.
//!
//! This crate recommends [`recommended_controller_rate_limiter`] over
//! client-go's [`default_controller_rate_limiter`]: the same behaviour
//! under normal load, but a burst of failures can no longer make every
//! retry wait minutes (see their docs for the numbers).
//!
//! # The canonical controller loop
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use clientgo_workqueue::{QueueOptions, RateLimitingQueue, recommended_controller_rate_limiter};
//!
//! /// Reconciles one object; fails twice for "flaky".
//! fn reconcile(key: &str, attempts: usize) -> Result<(), String> {
//!     if key == "default/flaky" && attempts < 2 { Err("not ready".into()) } else { Ok(()) }
//! }
//!
//! /// Takes keys until the queue shuts down.
//! async fn worker(queue: RateLimitingQueue<String>) {
//!     const MAX_RETRIES: usize = 5;
//!     while let Some(key) = queue.get().await {
//!         match reconcile(&key, queue.num_requeues(&key)) {
//!             // Success: reset the key's backoff.
//!             Ok(()) => queue.forget(&key),
//!             // Failure: retry later, with backoff, up to a limit.
//!             Err(_) if queue.num_requeues(&key) < MAX_RETRIES => queue.add_rate_limited(key.clone()),
//!             Err(_) => queue.forget(&key),
//!         }
//!         // Always: let the queue hand the key out again.
//!         queue.done(&key);
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let queue: RateLimitingQueue<String> = RateLimitingQueue::new(
//!     Arc::new(recommended_controller_rate_limiter()),
//!     QueueOptions::default().name("deployments"),
//! );
//! // What event handlers do.
//! for key in ["default/web", "default/flaky", "default/web"] {
//!     queue.add(key.to_string());
//! }
//! let workers: Vec<_> = (0..2).map(|_| tokio::spawn(worker(queue.clone()))).collect();
//! tokio::time::sleep(Duration::from_secs(1)).await;
//! assert_eq!(queue.num_requeues(&"default/flaky".to_string()), 0, "forgotten after it succeeded");
//! // Stop taking new keys, and wait for the keys in progress.
//! queue.shut_down_with_drain().await;
//! for worker in workers {
//!     worker.await.unwrap();
//! }
//! # }
//! ```

mod delaying_queue;
mod metrics;
mod parallelize;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod rate_limiter;
mod rate_limiting_queue;

pub use delaying_queue::DelayingQueue;
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
    set_default_metrics_provider,
};
pub use parallelize::{ParallelizeOptions, parallelize_until};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusMetricsProvider;
pub use queue::{FifoOrder, Queue, QueueOptions, QueueOrder};
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RECOMMENDED_BUCKET_MAX_WAIT, RateLimiter, WithMaxWaitRateLimiter,
    default_controller_rate_limiter, default_item_based_rate_limiter,
    recommended_controller_rate_limiter,
};
pub use rate_limiting_queue::RateLimitingQueue;
pub use tokio_util::sync::CancellationToken;
