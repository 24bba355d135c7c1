//! clientgo-metrics: the metric vocabulary every crate of clientgo-rs
//! reports through: counters, gauges and histograms as traits, so a
//! library never depends on a metrics system. A crate of its own with no
//! dependencies, so the work queue (which needs nothing of Kubernetes) and
//! the REST client share it. The REST client, the informers and the work queues
//! each define a provider of their own metrics in these terms, and each has
//! a Prometheus implementation behind its `prometheus` feature.

/// A counter (requests, adds, retries).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A gauge that goes up and down by one (a queue's depth).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge set to a value (seconds of unfinished work, a resourceVersion,
/// notifications pending).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A distribution of durations, observed in seconds.
pub trait HistogramMetric: Send + Sync {
    /// Records one duration, in seconds.
    fn observe(&self, seconds: f64);
}

/// A metric that records nothing: every provider's default.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopMetric;

impl CounterMetric for NoopMetric {
    fn inc(&self) {}
}

impl GaugeMetric for NoopMetric {
    fn inc(&self) {}
    fn dec(&self) {}
}

impl SettableGaugeMetric for NoopMetric {
    fn set(&self, _value: f64) {}
}

impl HistogramMetric for NoopMetric {
    fn observe(&self, _seconds: f64) {}
}
