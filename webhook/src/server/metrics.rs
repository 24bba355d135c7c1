//! The server's metrics, under controller-runtime's names.

use prometheus::{
    HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
};

/// `controller_runtime_webhook_*` and the panic counters.
#[derive(Debug, Clone)]
pub(crate) struct WebhookMetrics {
    pub(crate) requests: IntCounterVec,
    pub(crate) latency: HistogramVec,
    pub(crate) in_flight: IntGaugeVec,
    pub(crate) panics: IntCounter,
    pub(crate) conversion_panics: IntCounter,
}

impl WebhookMetrics {
    /// Registered in `registry`, with the 200 and 500 series of each path
    /// made at zero (as controller-runtime does).
    pub(crate) fn register(
        registry: &Registry,
        paths: &[String],
    ) -> Result<Self, prometheus::Error> {
        let requests = IntCounterVec::new(
            Opts::new(
                "controller_runtime_webhook_requests_total",
                "Total number of admission requests by HTTP status code.",
            ),
            &["webhook", "code"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "controller_runtime_webhook_latency_seconds",
                "Histogram of the latency of processing admission requests",
            ),
            &["webhook"],
        )?;
        let in_flight = IntGaugeVec::new(
            Opts::new(
                "controller_runtime_webhook_requests_in_flight",
                "Current number of admission requests being served.",
            ),
            &["webhook"],
        )?;
        let panics = IntCounter::new(
            "controller_runtime_webhook_panics_total",
            "Total number of webhook panics",
        )?;
        let conversion_panics = IntCounter::new(
            "controller_runtime_conversion_webhook_panics_total",
            "Total number of conversion webhook panics",
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(in_flight.clone()))?;
        registry.register(Box::new(panics.clone()))?;
        registry.register(Box::new(conversion_panics.clone()))?;
        for path in paths {
            for code in ["200", "500"] {
                requests.with_label_values(&[path.as_str(), code]);
            }
        }
        Ok(WebhookMetrics {
            requests,
            latency,
            in_flight,
            panics,
            conversion_panics,
        })
    }
}
