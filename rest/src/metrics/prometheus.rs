//! [`PrometheusRequestMetrics`]: the REST client's request metrics in a
//! `prometheus` registry, under client-go's names (the `prometheus`
//! feature).

use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

use crate::metrics::request_metrics::RequestMetrics;

/// client-go's `rest_client_requests_total{code,method,host}`,
/// `rest_client_request_duration_seconds{verb,host}` and
/// `rest_client_rate_limiter_duration_seconds{verb,host}`, registered in a
/// `prometheus::Registry`. Give it to
/// [`Config::request_metrics`](crate::Config::request_metrics) or
/// [`set_default_request_metrics`](crate::metrics::set_default_request_metrics).
#[derive(Clone, Debug)]
pub struct PrometheusRequestMetrics {
    results: IntCounterVec,
    latency: HistogramVec,
    rate_limiter: HistogramVec,
}

/// client-go's buckets for both durations, 5 ms to 60 s.
const BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

impl PrometheusRequestMetrics {
    /// Creates the three metric families and registers them in `registry`;
    /// an error when the registry already holds families of these names.
    pub fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let metrics = PrometheusRequestMetrics::new()?;
        metrics.register_in(registry)?;
        Ok(metrics)
    }

    /// Registers these families in `registry` (for metrics made with
    /// [`new`](Self::new)); an error when it already holds families of
    /// these names.
    pub fn register_in(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.results.clone()))?;
        registry.register(Box::new(self.latency.clone()))?;
        registry.register(Box::new(self.rate_limiter.clone()))?;
        Ok(())
    }

    /// Creates the three metric families without registering them
    /// anywhere yet.
    pub fn new() -> Result<Self, prometheus::Error> {
        let results = IntCounterVec::new(
            Opts::new(
                "rest_client_requests_total",
                "Number of HTTP requests, partitioned by status code, method, and host.",
            ),
            &["code", "method", "host"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "rest_client_request_duration_seconds",
                "Request latency in seconds. Broken down by verb, and host.",
            )
            .buckets(BUCKETS.to_vec()),
            &["verb", "host"],
        )?;
        let rate_limiter = HistogramVec::new(
            HistogramOpts::new(
                "rest_client_rate_limiter_duration_seconds",
                "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            )
            .buckets(BUCKETS.to_vec()),
            &["verb", "host"],
        )?;
        Ok(PrometheusRequestMetrics {
            results,
            latency,
            rate_limiter,
        })
    }
}

impl RequestMetrics for PrometheusRequestMetrics {
    fn request_result(&self, code: &str, method: &str, host: &str) {
        self.results.with_label_values(&[code, method, host]).inc();
    }

    fn request_latency(&self, verb: &str, host: &str, latency: Duration) {
        self.latency
            .with_label_values(&[verb, host])
            .observe(latency.as_secs_f64());
    }

    fn rate_limiter_latency(&self, verb: &str, host: &str, latency: Duration) {
        self.rate_limiter
            .with_label_values(&[verb, host])
            .observe(latency.as_secs_f64());
    }
}
