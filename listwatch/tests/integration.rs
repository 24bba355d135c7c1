//! The integration tests of clientgo-listwatch: one binary, a module per
//! concern (each file's own doc says what it covers).

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conformance;
mod list_and_watch;
mod protobuf_decoders;
mod real_apiserver_answers;
