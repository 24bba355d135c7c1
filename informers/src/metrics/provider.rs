//! Informer metrics through a provider that does nothing by default
//! (client-go's `InformerMetricsProvider`, plus per-handler metrics).

use std::sync::Arc;

pub use clientgo_metrics::{HistogramMetric, NoopMetric, SettableGaugeMetric};

/// Creates the metrics of an informer and of its handlers. Every method
/// defaults to a metric that does nothing, so a provider implements only
/// what it exports. Metrics are created once, when the informer (or the
/// handler) is created, and updated from its tasks without locks of ours.
///
/// | metric | unit | updated |
/// |---|---|---|
/// | `queued_items` | deltas waiting in the informer's FIFO | after every pop |
/// | `processing_latency` | seconds to apply one pop to the cache and queue its notifications | after every pop |
/// | `store_resource_version` | the cache's resourceVersion, when it is an integer | after every pop |
/// | `handler_pending` | notifications waiting for one handler | on every push and delivery |
/// | `handler_latency` | seconds one handler call took | after every call |
pub trait InformerMetricsProvider: Send + Sync {
    /// The depth of the informer's FIFO.
    fn queued_items(&self, informer: &str) -> Arc<dyn SettableGaugeMetric> {
        let _ = informer;
        Arc::new(NoopMetric)
    }

    /// How long processing one pop took.
    fn processing_latency(&self, informer: &str) -> Arc<dyn HistogramMetric> {
        let _ = informer;
        Arc::new(NoopMetric)
    }

    /// The cache's resourceVersion.
    fn store_resource_version(&self, informer: &str) -> Arc<dyn SettableGaugeMetric> {
        let _ = informer;
        Arc::new(NoopMetric)
    }

    /// Notifications waiting for one handler.
    fn handler_pending(&self, informer: &str, handler: &str) -> Arc<dyn SettableGaugeMetric> {
        let _ = (informer, handler);
        Arc::new(NoopMetric)
    }

    /// How long one call of a handler took.
    fn handler_latency(&self, informer: &str, handler: &str) -> Arc<dyn HistogramMetric> {
        let _ = (informer, handler);
        Arc::new(NoopMetric)
    }
}

/// The default provider: every metric does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopMetricsProvider;

impl InformerMetricsProvider for NoopMetricsProvider {}

/// The metrics one informer updates.
pub(crate) struct InformerMetrics {
    pub(crate) queued_items: Arc<dyn SettableGaugeMetric>,
    pub(crate) processing_latency: Arc<dyn HistogramMetric>,
    pub(crate) store_resource_version: Arc<dyn SettableGaugeMetric>,
}

impl InformerMetrics {
    pub(crate) fn new(provider: &dyn InformerMetricsProvider, informer: &str) -> Self {
        InformerMetrics {
            queued_items: provider.queued_items(informer),
            processing_latency: provider.processing_latency(informer),
            store_resource_version: provider.store_resource_version(informer),
        }
    }
}
