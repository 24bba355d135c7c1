//! [`PrometheusMetricsProvider`]: queue metrics in a `prometheus` registry
//! (enabled by the `prometheus` feature).

use std::sync::Arc;

use prometheus::{
    Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry,
};

use crate::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};

/// The workqueue metric families, labelled by queue name, registered in a
/// `prometheus::Registry` under client-go's conventional names
/// (`workqueue_depth`, `workqueue_adds_total`,
/// `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
/// `workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds`,
/// `workqueue_retries_total`).
#[derive(Clone, Debug)]
pub struct PrometheusMetricsProvider {
    depth: IntGaugeVec,
    adds: IntCounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished_work_seconds: GaugeVec,
    longest_running_processor: GaugeVec,
    retries: IntCounterVec,
}

/// Seconds from 1 µs to about 100 s, by factors of 10 (client-go's
/// buckets).
fn duration_buckets() -> Vec<f64> {
    (0..9).map(|exponent| 1e-6 * 10f64.powi(exponent)).collect()
}

impl PrometheusMetricsProvider {
    /// Creates the metric families and registers them in `registry`.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let label = &["name"];
        let provider = PrometheusMetricsProvider {
            depth: IntGaugeVec::new(
                Opts::new("workqueue_depth", "Current depth of the workqueue."),
                label,
            )?,
            adds: IntCounterVec::new(
                Opts::new(
                    "workqueue_adds_total",
                    "Total number of adds handled by the workqueue.",
                ),
                label,
            )?,
            latency: HistogramVec::new(
                HistogramOpts::new(
                    "workqueue_queue_duration_seconds",
                    "How long in seconds an item stays in the workqueue before being requested.",
                )
                .buckets(duration_buckets()),
                label,
            )?,
            work_duration: HistogramVec::new(
                HistogramOpts::new(
                    "workqueue_work_duration_seconds",
                    "How long in seconds processing an item from the workqueue takes.",
                )
                .buckets(duration_buckets()),
                label,
            )?,
            unfinished_work_seconds: GaugeVec::new(
                Opts::new(
                    "workqueue_unfinished_work_seconds",
                    "Seconds of work in progress not yet observed by work_duration; large values mean stuck workers.",
                ),
                label,
            )?,
            longest_running_processor: GaugeVec::new(
                Opts::new(
                    "workqueue_longest_running_processor_seconds",
                    "How many seconds the longest running worker has been processing its item.",
                ),
                label,
            )?,
            retries: IntCounterVec::new(
                Opts::new(
                    "workqueue_retries_total",
                    "Total number of retries handled by the workqueue.",
                ),
                label,
            )?,
        };
        registry.register(Box::new(provider.depth.clone()))?;
        registry.register(Box::new(provider.adds.clone()))?;
        registry.register(Box::new(provider.latency.clone()))?;
        registry.register(Box::new(provider.work_duration.clone()))?;
        registry.register(Box::new(provider.unfinished_work_seconds.clone()))?;
        registry.register(Box::new(provider.longest_running_processor.clone()))?;
        registry.register(Box::new(provider.retries.clone()))?;
        Ok(provider)
    }
}

struct IntGaugeMetric(IntGauge);
struct CounterHandle(IntCounter);
struct HistogramHandle(Histogram);
struct GaugeHandle(Gauge);

impl GaugeMetric for IntGaugeMetric {
    fn inc(&self) {
        self.0.inc();
    }
    fn dec(&self) {
        self.0.dec();
    }
}

impl CounterMetric for CounterHandle {
    fn inc(&self) {
        self.0.inc();
    }
}

impl HistogramMetric for HistogramHandle {
    fn observe(&self, seconds: f64) {
        self.0.observe(seconds);
    }
}

impl SettableGaugeMetric for GaugeHandle {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(IntGaugeMetric(self.depth.with_label_values(&[name])))
    }

    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(CounterHandle(self.adds.with_label_values(&[name])))
    }

    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(HistogramHandle(self.latency.with_label_values(&[name])))
    }

    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(HistogramHandle(
            self.work_duration.with_label_values(&[name]),
        ))
    }

    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(GaugeHandle(
            self.unfinished_work_seconds.with_label_values(&[name]),
        ))
    }

    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(GaugeHandle(
            self.longest_running_processor.with_label_values(&[name]),
        ))
    }

    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(CounterHandle(self.retries.with_label_values(&[name])))
    }
}
