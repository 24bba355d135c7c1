//! The integration tests of clientgo-leaderelection: one binary, a module
//! per concern (each file's own doc says what it covers).

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod election;
mod shard_elector;
