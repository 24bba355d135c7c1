//! What the REST client reports about its requests (client-go's
//! `tools/metrics`): the [`RequestMetrics`] trait, a process-wide default,
//! and `PrometheusRequestMetrics` with the `prometheus` feature.

#[cfg(feature = "prometheus")]
pub(crate) mod prometheus;
pub(crate) mod request_metrics;

#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusRequestMetrics;
pub use request_metrics::{RequestMetrics, set_default_request_metrics};
