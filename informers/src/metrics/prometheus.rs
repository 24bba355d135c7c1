//! [`PrometheusInformerMetrics`]: informer and handler metrics in a
//! `prometheus` registry (the `prometheus` feature).

use std::sync::Arc;

use prometheus::{Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, Opts, Registry};

use crate::metrics::provider::{HistogramMetric, InformerMetricsProvider, SettableGaugeMetric};

/// The informer families, labelled by informer (and handler), registered
/// in a `prometheus::Registry`: `informer_queued_items`,
/// `informer_processing_latency_seconds` and
/// `informer_store_resource_version` (client-go's `InformerMetricsProvider`
/// set), plus `informer_handler_pending_notifications` and
/// `informer_handler_duration_seconds` per handler (this project's). Give
/// it to the factory's or the informer's `metrics` option.
#[derive(Clone, Debug)]
pub struct PrometheusInformerMetrics {
    queued_items: GaugeVec,
    processing_latency: HistogramVec,
    store_resource_version: GaugeVec,
    handler_pending: GaugeVec,
    handler_latency: HistogramVec,
}

/// Seconds from 1 µs to about 100 s, by factors of 10.
fn duration_buckets() -> Vec<f64> {
    (0..9).map(|exponent| 1e-6 * 10f64.powi(exponent)).collect()
}

impl PrometheusInformerMetrics {
    /// Creates the families and registers them in `registry`; an error when
    /// the registry already holds families of these names.
    pub fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let gauge =
            |name: &str, help: &str, labels: &[&str]| GaugeVec::new(Opts::new(name, help), labels);
        let histogram = |name: &str, help: &str, labels: &[&str]| {
            HistogramVec::new(
                HistogramOpts::new(name, help).buckets(duration_buckets()),
                labels,
            )
        };
        let metrics = PrometheusInformerMetrics {
            queued_items: gauge(
                "informer_queued_items",
                "Deltas waiting in the informer's queue.",
                &["informer"],
            )?,
            processing_latency: histogram(
                "informer_processing_latency_seconds",
                "Time to apply one pop of the informer's queue to the cache and queue its notifications.",
                &["informer"],
            )?,
            store_resource_version: gauge(
                "informer_store_resource_version",
                "The resourceVersion of the informer's cache, when it is an integer.",
                &["informer"],
            )?,
            handler_pending: gauge(
                "informer_handler_pending_notifications",
                "Notifications waiting for one handler.",
                &["informer", "handler"],
            )?,
            handler_latency: histogram(
                "informer_handler_duration_seconds",
                "Time one call of a handler took.",
                &["informer", "handler"],
            )?,
        };
        registry.register(Box::new(metrics.queued_items.clone()))?;
        registry.register(Box::new(metrics.processing_latency.clone()))?;
        registry.register(Box::new(metrics.store_resource_version.clone()))?;
        registry.register(Box::new(metrics.handler_pending.clone()))?;
        registry.register(Box::new(metrics.handler_latency.clone()))?;
        Ok(metrics)
    }
}

struct GaugeHandle(Gauge);

impl SettableGaugeMetric for GaugeHandle {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

struct HistogramHandle(Histogram);

impl HistogramMetric for HistogramHandle {
    fn observe(&self, seconds: f64) {
        self.0.observe(seconds);
    }
}

impl InformerMetricsProvider for PrometheusInformerMetrics {
    fn queued_items(&self, informer: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(GaugeHandle(
            self.queued_items.with_label_values(&[informer]),
        ))
    }

    fn processing_latency(&self, informer: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(HistogramHandle(
            self.processing_latency.with_label_values(&[informer]),
        ))
    }

    fn store_resource_version(&self, informer: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(GaugeHandle(
            self.store_resource_version.with_label_values(&[informer]),
        ))
    }

    fn handler_pending(&self, informer: &str, handler: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(GaugeHandle(
            self.handler_pending.with_label_values(&[informer, handler]),
        ))
    }

    fn handler_latency(&self, informer: &str, handler: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(HistogramHandle(
            self.handler_latency.with_label_values(&[informer, handler]),
        ))
    }
}
