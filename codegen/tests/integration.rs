//! The integration tests of clientgo-codegen: one binary, a module per
//! concern (each file's own doc says what it covers).

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compile;
mod from_cluster;
mod read;
mod regenerate;
mod support;
