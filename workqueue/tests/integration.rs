//! The integration tests of clientgo-workqueue: one binary, a module per
//! concern (each file's own doc says what it covers).
//!
//! `default_metrics_provider.rs` builds a test binary of its own: it measures
//! or sets state of the whole process.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod rate_limiting_queue;
mod stress;
