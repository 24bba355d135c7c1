//! [`RequestMetrics`]: what the REST client reports about its requests,
//! as client-go's `rest_client_*` metrics (`k8s.io/client-go/tools/metrics`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Receives the REST client's request metrics. Implemented by
/// `PrometheusRequestMetrics` (the
/// `prometheus` feature) under client-go's names; any other backend
/// implements it directly. Called on the request's task, so
/// implementations must be cheap and must not block.
pub trait RequestMetrics: Send + Sync {
    /// One request's outcome (client-go's `RequestResult`,
    /// `rest_client_requests_total{code,method,host}`): the HTTP status
    /// code, or `<error>` when no answer came. Every attempt counts,
    /// retries included.
    fn request_result(&self, code: &str, method: &str, host: &str);

    /// The time from sending a request to its answer's headers (client-go's
    /// `RequestLatency`, `rest_client_request_duration_seconds{verb,host}`).
    fn request_latency(&self, verb: &str, host: &str, latency: Duration);

    /// The time a request waited in the client-side rate limiter
    /// (`rest_client_rate_limiter_duration_seconds{verb,host}`); zero when
    /// it did not wait. Watches are not throttled and not counted.
    fn rate_limiter_latency(&self, verb: &str, host: &str, latency: Duration);
}

static DEFAULT: OnceLock<Arc<dyn RequestMetrics>> = OnceLock::new();

/// Sets the metrics every client built afterwards reports to, unless its
/// [`Config::request_metrics`](crate::Config::request_metrics) names
/// others (client-go's `metrics.Register`, once per process). Returns
/// `false` when a default was already set; the first one stays.
pub fn set_default_request_metrics(metrics: Arc<dyn RequestMetrics>) -> bool {
    DEFAULT.set(metrics).is_ok()
}

/// The process-wide default, when one was set.
pub(crate) fn default_request_metrics() -> Option<Arc<dyn RequestMetrics>> {
    DEFAULT.get().cloned()
}

/// The `host` label of a URL: its host and port, as client-go reports it.
pub(crate) fn host_label(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            _ => String::new(),
        },
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_label_keeps_the_port() {
        assert_eq!(
            host_label("https://10.0.0.1:6443/api/v1/pods"),
            "10.0.0.1:6443"
        );
        assert_eq!(host_label("https://example.com/api"), "example.com");
        assert_eq!(host_label("not a url"), "");
    }
}
