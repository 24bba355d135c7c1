//! The rate-limiting queue end to end, on tokio's paused clock: retries are
//! delayed by the limiter, `forget` resets them, and the metrics count them.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use clientgo_workqueue::{
    ItemExponentialFailureRateLimiter, PrometheusMetricsProvider, QueueOptions, RateLimitingQueue,
};

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn retries_wait_for_the_limiters_delay_and_forget_resets_it() {
    let queue: RateLimitingQueue<&str> = RateLimitingQueue::new(
        Arc::new(ItemExponentialFailureRateLimiter::new(
            ms(10),
            Duration::from_secs(1),
        )),
        QueueOptions::default(),
    );
    queue.add_rate_limited("key"); // 10 ms
    assert_eq!(queue.num_requeues(&"key"), 1);
    tokio::time::advance(ms(9)).await;
    settle().await;
    assert_eq!(queue.len(), 0);
    tokio::time::advance(ms(1)).await;
    settle().await;
    assert_eq!(queue.len(), 1);
    let key = queue.get().await.unwrap();
    queue.add_rate_limited(key); // 20 ms
    queue.done(&key);
    tokio::time::advance(ms(19)).await;
    settle().await;
    assert_eq!(queue.len(), 0, "the second retry waits twice as long");
    tokio::time::advance(ms(1)).await;
    settle().await;
    assert_eq!(queue.len(), 1);
    queue.forget(&"key");
    assert_eq!(queue.num_requeues(&"key"), 0);
    let key = queue.get().await.unwrap();
    queue.done(&key);
    queue.add_rate_limited(key); // back to 10 ms
    tokio::time::advance(ms(10)).await;
    settle().await;
    assert_eq!(queue.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn prometheus_provider_exports_the_queue_metrics() {
    let registry = prometheus::Registry::new();
    let provider = PrometheusMetricsProvider::new(&registry).unwrap();
    let queue: RateLimitingQueue<String> = RateLimitingQueue::new(
        Arc::new(ItemExponentialFailureRateLimiter::new(
            ms(5),
            Duration::from_secs(1),
        )),
        QueueOptions::default()
            .name("pods")
            .metrics_provider(Arc::new(provider)),
    );
    queue.add("default/a".to_string());
    queue.add("default/b".to_string());
    queue.add_rate_limited("default/c".to_string());
    let key = queue.get().await.unwrap();
    tokio::time::advance(ms(250)).await;
    queue.done(&key);

    let families = registry.gather();
    let value = |name: &str| -> f64 {
        let family = families
            .iter()
            .find(|f| f.name() == name)
            .unwrap_or_else(|| panic!("{name} not exported"));
        let metric = &family.get_metric()[0];
        assert_eq!(metric.get_label()[0].value(), "pods");
        match family.get_field_type() {
            prometheus::proto::MetricType::GAUGE => metric.get_gauge().get_value(),
            prometheus::proto::MetricType::COUNTER => metric.get_counter().get_value(),
            prometheus::proto::MetricType::HISTOGRAM => {
                metric.get_histogram().get_sample_count() as f64
            }
            other => panic!("unexpected type {other:?}"),
        }
    };
    // "default/c" became ready 5 ms after its rate-limited add, during the
    // 250 ms of work: three adds, and b and c wait.
    assert_eq!(value("workqueue_adds_total"), 3.0);
    assert_eq!(value("workqueue_depth"), 2.0);
    assert_eq!(value("workqueue_retries_total"), 1.0);
    assert_eq!(value("workqueue_queue_duration_seconds"), 1.0);
    assert_eq!(value("workqueue_work_duration_seconds"), 1.0);
    assert!(
        families
            .iter()
            .any(|f| f.name() == "workqueue_unfinished_work_seconds")
    );
    assert!(
        families
            .iter()
            .any(|f| f.name() == "workqueue_longest_running_processor_seconds")
    );
}
