//! Queue metrics through a provider that does nothing by default
//! (client-go's `MetricsProvider`).
//!
//! Metrics exist only for queues with a name, and only when a provider is
//! given in the queue's options or installed once for the process with
//! [`set_default_metrics_provider`]. Library code therefore never depends on
//! a metrics system; the `prometheus` feature provides one.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};

use tokio::time::Instant;

pub use clientgo_metrics::{CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric};

/// Creates the metrics of a named queue. The conventional Prometheus names
/// are `workqueue_depth`, `workqueue_adds_total`,
/// `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
/// `workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds` and
/// `workqueue_retries_total`, each labelled with the queue's name.
pub trait MetricsProvider: Send + Sync {
    /// How many items wait in the queue.
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric>;
    /// How many items were added (repeated adds of a waiting item do not
    /// count).
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// How long items wait between their first add and `get`.
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// How long processing takes, `get` to `done`.
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// The summed age of all work in progress, refreshed every 500 ms: it
    /// grows when workers are stuck.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// The age of the oldest work in progress, refreshed every 500 ms.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// How many delayed (retry) adds happened.
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
}

static DEFAULT_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Installs the provider used by named queues that were given none. Only
/// the first call has an effect (as client-go's `SetProvider`); it returns
/// whether this call installed it.
pub fn set_default_metrics_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    DEFAULT_PROVIDER.set(provider).is_ok()
}

pub(crate) fn default_metrics_provider() -> Option<Arc<dyn MetricsProvider>> {
    DEFAULT_PROVIDER.get().cloned()
}

/// The metrics of one queue and the timestamps they are computed from.
/// Every method is called with the queue's lock held.
pub(crate) struct QueueMetrics<T> {
    depth: Arc<dyn GaugeMetric>,
    adds: Arc<dyn CounterMetric>,
    latency: Arc<dyn HistogramMetric>,
    work_duration: Arc<dyn HistogramMetric>,
    unfinished_work_seconds: Arc<dyn SettableGaugeMetric>,
    longest_running_processor: Arc<dyn SettableGaugeMetric>,
    retries: Arc<dyn CounterMetric>,
    added_at: HashMap<T, Instant>,
    processing_since: HashMap<T, Instant>,
}

impl<T: Eq + Hash + Clone> QueueMetrics<T> {
    pub(crate) fn new(name: &str, provider: &dyn MetricsProvider) -> Self {
        QueueMetrics {
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
            retries: provider.new_retries_metric(name),
            added_at: HashMap::new(),
            processing_since: HashMap::new(),
        }
    }

    /// A new item became dirty.
    pub(crate) fn add(&mut self, item: &T) {
        self.adds.inc();
        self.depth.inc();
        self.added_at
            .entry(item.clone())
            .or_insert_with(Instant::now);
    }

    /// An item was handed to a worker.
    pub(crate) fn get(&mut self, item: &T) {
        self.depth.dec();
        let now = Instant::now();
        self.processing_since.insert(item.clone(), now);
        if let Some(added) = self.added_at.remove(item) {
            self.latency
                .observe(now.saturating_duration_since(added).as_secs_f64());
        }
    }

    /// A worker finished an item.
    pub(crate) fn done(&mut self, item: &T) {
        if let Some(started) = self.processing_since.remove(item) {
            self.work_duration.observe(
                Instant::now()
                    .saturating_duration_since(started)
                    .as_secs_f64(),
            );
        }
    }

    /// A delayed add happened.
    pub(crate) fn retry(&self) {
        self.retries.inc();
    }

    /// Refreshes the unfinished-work gauges.
    pub(crate) fn update_unfinished_work(&self) {
        let now = Instant::now();
        let mut total = 0.0;
        let mut longest: f64 = 0.0;
        for started in self.processing_since.values() {
            let age = now.saturating_duration_since(*started).as_secs_f64();
            total += age;
            longest = longest.max(age);
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(longest);
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A provider that records every metric call, for assertions.

    use super::*;
    use parking_lot::Mutex;

    #[derive(Default)]
    pub(crate) struct Recorded {
        pub depth: i64,
        pub adds: u64,
        pub retries: u64,
        pub latency: Vec<f64>,
        pub work_duration: Vec<f64>,
        pub unfinished: f64,
        pub longest: f64,
    }

    #[derive(Default, Clone)]
    pub(crate) struct Recorder(pub Arc<Mutex<Recorded>>);

    struct Field(Arc<Mutex<Recorded>>, &'static str);

    impl GaugeMetric for Field {
        fn inc(&self) {
            self.0.lock().depth += 1;
        }
        fn dec(&self) {
            self.0.lock().depth -= 1;
        }
    }

    impl CounterMetric for Field {
        fn inc(&self) {
            let mut recorded = self.0.lock();
            match self.1 {
                "adds" => recorded.adds += 1,
                _ => recorded.retries += 1,
            }
        }
    }

    impl HistogramMetric for Field {
        fn observe(&self, seconds: f64) {
            let mut recorded = self.0.lock();
            match self.1 {
                "latency" => recorded.latency.push(seconds),
                _ => recorded.work_duration.push(seconds),
            }
        }
    }

    impl SettableGaugeMetric for Field {
        fn set(&self, value: f64) {
            let mut recorded = self.0.lock();
            match self.1 {
                "unfinished" => recorded.unfinished = value,
                _ => recorded.longest = value,
            }
        }
    }

    impl MetricsProvider for Recorder {
        fn new_depth_metric(&self, _: &str) -> Arc<dyn GaugeMetric> {
            Arc::new(Field(self.0.clone(), "depth"))
        }
        fn new_adds_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
            Arc::new(Field(self.0.clone(), "adds"))
        }
        fn new_latency_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
            Arc::new(Field(self.0.clone(), "latency"))
        }
        fn new_work_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
            Arc::new(Field(self.0.clone(), "work"))
        }
        fn new_unfinished_work_seconds_metric(&self, _: &str) -> Arc<dyn SettableGaugeMetric> {
            Arc::new(Field(self.0.clone(), "unfinished"))
        }
        fn new_longest_running_processor_seconds_metric(
            &self,
            _: &str,
        ) -> Arc<dyn SettableGaugeMetric> {
            Arc::new(Field(self.0.clone(), "longest"))
        }
        fn new_retries_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
            Arc::new(Field(self.0.clone(), "retries"))
        }
    }
}
