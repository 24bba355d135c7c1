//! The metrics provider receives the FIFO depth, processing latency, the
//! cache's resourceVersion and each handler's pending count and latency.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::support::*;
use clientgo_informers::{
    HandlerOptions, HistogramMetric, InformerMetricsProvider, SettableGaugeMetric,
};

#[derive(Default)]
struct Recorded {
    gauges: BTreeMap<String, f64>,
    observations: BTreeMap<String, usize>,
}

#[derive(Clone, Default)]
struct RecordingProvider(Arc<Mutex<Recorded>>);

struct Metric {
    name: String,
    recorded: Arc<Mutex<Recorded>>,
}

impl SettableGaugeMetric for Metric {
    fn set(&self, value: f64) {
        self.recorded
            .lock()
            .unwrap()
            .gauges
            .insert(self.name.clone(), value);
    }
}

impl HistogramMetric for Metric {
    fn observe(&self, _seconds: f64) {
        *self
            .recorded
            .lock()
            .unwrap()
            .observations
            .entry(self.name.clone())
            .or_default() += 1;
    }
}

impl RecordingProvider {
    fn metric(&self, name: String) -> Arc<Metric> {
        Arc::new(Metric {
            name,
            recorded: Arc::clone(&self.0),
        })
    }
}

impl InformerMetricsProvider for RecordingProvider {
    fn queued_items(&self, informer: &str) -> Arc<dyn SettableGaugeMetric> {
        self.metric(format!("{informer} queued"))
    }
    fn processing_latency(&self, informer: &str) -> Arc<dyn HistogramMetric> {
        self.metric(format!("{informer} latency"))
    }
    fn store_resource_version(&self, informer: &str) -> Arc<dyn SettableGaugeMetric> {
        self.metric(format!("{informer} rv"))
    }
    fn handler_pending(&self, informer: &str, handler: &str) -> Arc<dyn SettableGaugeMetric> {
        self.metric(format!("{informer} {handler} pending"))
    }
    fn handler_latency(&self, informer: &str, handler: &str) -> Arc<dyn HistogramMetric> {
        self.metric(format!("{informer} {handler} latency"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_sees_queue_cache_and_handler_metrics() {
    let server = seeded(5).await;
    let provider = RecordingProvider::default();
    let informer = informer::<k8s_openapi::api::core::v1::ConfigMap>(
        &server,
        fast_options()
            .name("cms")
            .metrics(Arc::new(provider.clone())),
    );
    let recorder = Recorder::default();
    informer
        .add_event_handler_with_options(
            recorder.clone(),
            HandlerOptions::default().name("recorder"),
        )
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    let last = update(&server, "cm-00001", "changed");
    informer.wait_for_resource_version(&last).await.unwrap();
    let done = recorder.clone();
    eventually("the handler gets 6 notifications", async move || {
        done.count() == 6
    })
    .await;
    let check = provider.clone();
    eventually("the pending gauge drops to zero", async move || {
        check.0.lock().unwrap().gauges.get("cms recorder pending") == Some(&0.0)
    })
    .await;

    {
        let recorded = provider.0.lock().unwrap();
        assert_eq!(recorded.gauges["cms rv"], last.parse::<f64>().unwrap());
        assert_eq!(recorded.gauges["cms queued"], 0.0);
        assert!(recorded.observations["cms latency"] >= 2, "one per pop");
        assert_eq!(
            recorded.observations["cms recorder latency"], 6,
            "one per handler call"
        );
    }
    running.stop().await;
}

#[cfg(feature = "prometheus")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prometheus_provider_exports_the_informer_families() {
    let server = seeded(3).await;
    let registry = prometheus::Registry::new();
    let provider = clientgo_informers::PrometheusInformerMetrics::register(&registry).unwrap();
    let informer = informer::<k8s_openapi::api::core::v1::ConfigMap>(
        &server,
        fast_options().name("cms").metrics(Arc::new(provider)),
    );
    informer
        .add_event_handler_with_options(
            Recorder::default(),
            HandlerOptions::default().name("recorder"),
        )
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    let last = update(&server, "cm-00001", "changed");
    informer.wait_for_resource_version(&last).await.unwrap();
    let families = registry.gather();
    let family = |name: &str| {
        families
            .iter()
            .find(|f| f.name() == name)
            .unwrap_or_else(|| panic!("{name} is exported"))
    };
    let rv = family("informer_store_resource_version");
    assert_eq!(rv.get_metric()[0].get_label()[0].value(), "cms");
    assert_eq!(
        rv.get_metric()[0].get_gauge().get_value(),
        last.parse::<f64>().unwrap()
    );
    assert!(
        family("informer_processing_latency_seconds").get_metric()[0]
            .get_histogram()
            .get_sample_count()
            >= 2
    );
    let handler = family("informer_handler_duration_seconds");
    let labels: Vec<&str> = handler.get_metric()[0]
        .get_label()
        .iter()
        .map(|l| l.value())
        .collect();
    // Prometheus sorts labels by name: handler, then informer.
    assert_eq!(labels, ["recorder", "cms"]);
    family("informer_queued_items");
    family("informer_handler_pending_notifications");
    running.stop().await;
}
