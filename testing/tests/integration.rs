//! The integration tests of clientgo-testing: one binary, a module per
//! concern (each file's own doc says what it covers).
//!
//! `scale.rs` builds a test binary of its own: it measures
//! or sets state of the whole process.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binary;
mod faults;
mod http_api;
mod matches_recordings;
mod patch_and_metadata;
mod protobuf;
mod real_server_behaviour;
mod storage;
mod support;
mod tls_and_auth;
