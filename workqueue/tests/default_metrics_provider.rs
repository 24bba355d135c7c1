//! The process-wide default metrics provider: set once, used by named
//! queues that were given none, never by unnamed ones. (A test binary of
//! its own, since the default can be set only once per process.)

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use clientgo_workqueue::{
    PrometheusMetricsProvider, Queue, QueueOptions, set_default_metrics_provider,
};

#[tokio::test]
async fn named_queues_use_the_default_provider_set_once() {
    let registry = prometheus::Registry::new();
    let provider = PrometheusMetricsProvider::new(&registry).unwrap();
    assert!(set_default_metrics_provider(Arc::new(provider.clone())));
    assert!(
        !set_default_metrics_provider(Arc::new(provider)),
        "a second call has no effect"
    );

    let named = Queue::<u32>::new(QueueOptions::default().name("named"));
    named.add(1);
    named.add(2);
    let unnamed = Queue::<u32>::default();
    unnamed.add(1);

    let families = registry.gather();
    let adds = families
        .iter()
        .find(|f| f.name() == "workqueue_adds_total")
        .expect("adds exported");
    assert_eq!(adds.get_metric().len(), 1, "only the named queue reports");
    assert_eq!(adds.get_metric()[0].get_label()[0].value(), "named");
    assert_eq!(adds.get_metric()[0].get_counter().get_value(), 2.0);
}
