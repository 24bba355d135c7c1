//! controller-runtime's controller metrics, by its names and labels, in a
//! manager's Prometheus registry ([`Manager::registry`](crate::Manager::registry)).
//! The registry also holds the workqueue families of every controller's
//! queue, labelled `name` (the controller's name) as client-go labels
//! them; controller-runtime adds a `controller` label with the same
//! value, which these lack.

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry,
};

/// controller-runtime's `controller_runtime_reconcile_time_seconds`
/// buckets.
fn reconcile_time_buckets() -> Vec<f64> {
    let mut buckets = vec![0.005, 0.01, 0.025, 0.05];
    buckets.extend((2..=10).map(|step| f64::from(step) * 0.05));
    buckets.extend((6..=10).map(|step| f64::from(step) * 0.1));
    buckets.extend([1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]);
    buckets.extend((6..=10).map(f64::from));
    buckets.extend([15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0]);
    buckets
}

/// The families, registered once per manager.
#[derive(Clone)]
pub(crate) struct ManagerMetrics {
    reconcile_total: IntCounterVec,
    reconcile_errors_total: IntCounterVec,
    reconcile_panics_total: IntCounterVec,
    reconcile_time_seconds: HistogramVec,
    max_concurrent_reconciles: IntGaugeVec,
    active_workers: IntGaugeVec,
}

impl ManagerMetrics {
    /// Creates the families and registers them in `registry`.
    pub(crate) fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let controller = &["controller"];
        let metrics = ManagerMetrics {
            reconcile_total: IntCounterVec::new(
                Opts::new(
                    "controller_runtime_reconcile_total",
                    "Total number of reconciliations per controller",
                ),
                &["controller", "result"],
            )?,
            reconcile_errors_total: IntCounterVec::new(
                Opts::new(
                    "controller_runtime_reconcile_errors_total",
                    "Total number of reconciliation errors per controller",
                ),
                controller,
            )?,
            reconcile_panics_total: IntCounterVec::new(
                Opts::new(
                    "controller_runtime_reconcile_panics_total",
                    "Total number of reconciliation panics per controller",
                ),
                controller,
            )?,
            reconcile_time_seconds: HistogramVec::new(
                HistogramOpts::new(
                    "controller_runtime_reconcile_time_seconds",
                    "Length of time per reconciliation per controller",
                )
                .buckets(reconcile_time_buckets()),
                controller,
            )?,
            max_concurrent_reconciles: IntGaugeVec::new(
                Opts::new(
                    "controller_runtime_max_concurrent_reconciles",
                    "Maximum number of concurrent reconciles per controller",
                ),
                controller,
            )?,
            active_workers: IntGaugeVec::new(
                Opts::new(
                    "controller_runtime_active_workers",
                    "Number of currently used workers per controller",
                ),
                controller,
            )?,
        };
        registry.register(Box::new(metrics.reconcile_total.clone()))?;
        registry.register(Box::new(metrics.reconcile_errors_total.clone()))?;
        registry.register(Box::new(metrics.reconcile_panics_total.clone()))?;
        registry.register(Box::new(metrics.reconcile_time_seconds.clone()))?;
        registry.register(Box::new(metrics.max_concurrent_reconciles.clone()))?;
        registry.register(Box::new(metrics.active_workers.clone()))?;
        Ok(metrics)
    }

    /// The series of the controller `name` with `workers` workers,
    /// resolved once (a reconcile hashes no label); every `result` series
    /// starts at zero, as controller-runtime's do.
    pub(crate) fn controller(&self, name: &str, workers: usize) -> ControllerMetrics {
        let total = |result: &str| self.reconcile_total.with_label_values(&[name, result]);
        self.max_concurrent_reconciles
            .with_label_values(&[name])
            .set(i64::try_from(workers).unwrap_or(i64::MAX));
        // controller-runtime's `requeue` result: a reconcile here has no
        // rate-limited requeue, so the series stays at zero.
        let _ = total("requeue");
        ControllerMetrics {
            success: total("success"),
            error: total("error"),
            requeue_after: total("requeue_after"),
            errors: self.reconcile_errors_total.with_label_values(&[name]),
            panics: self.reconcile_panics_total.with_label_values(&[name]),
            time: self.reconcile_time_seconds.with_label_values(&[name]),
            active: self.active_workers.with_label_values(&[name]),
        }
    }
}

/// One controller's series.
#[derive(Clone)]
pub(crate) struct ControllerMetrics {
    success: IntCounter,
    error: IntCounter,
    requeue_after: IntCounter,
    errors: IntCounter,
    panics: IntCounter,
    time: Histogram,
    active: IntGauge,
}

impl ControllerMetrics {
    /// A reconcile ended with `result` (a `result` label) after `seconds`.
    pub(crate) fn reconciled(&self, result: &str, seconds: f64) {
        match result {
            "success" => self.success.inc(),
            "requeue_after" => self.requeue_after.inc(),
            _ => {
                self.error.inc();
                self.errors.inc();
            }
        }
        self.time.observe(seconds);
    }

    /// A reconcile panicked.
    pub(crate) fn panicked(&self) {
        self.panics.inc();
    }

    /// A worker started (`1`) or finished (`-1`) a reconcile.
    pub(crate) fn active(&self, change: i64) {
        self.active.add(change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_controller_runtimes() {
        let buckets = reconcile_time_buckets();
        assert_eq!(buckets.len(), 4 + 9 + 5 + 10 + 5 + 7);
        assert!(buckets.windows(2).all(|w| w[0] < w[1]), "{buckets:?}");
        assert_eq!(buckets[4], 0.1);
        assert_eq!(buckets.last(), Some(&60.0));
    }

    #[test]
    fn every_result_series_starts_at_zero() {
        let registry = Registry::new();
        let metrics = ManagerMetrics::new(&registry).unwrap();
        let controller = metrics.controller("web", 3);
        controller.reconciled("error", 0.02);
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        for line in [
            "controller_runtime_reconcile_total{controller=\"web\",result=\"success\"} 0",
            "controller_runtime_reconcile_total{controller=\"web\",result=\"error\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"web\"} 1",
            "controller_runtime_max_concurrent_reconciles{controller=\"web\"} 3",
            "controller_runtime_reconcile_time_seconds_count{controller=\"web\"} 1",
        ] {
            assert!(text.contains(line), "no {line} in\n{text}");
        }
    }
}
