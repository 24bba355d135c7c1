//! The integration tests of clientgo-rest: one binary, a module per
//! concern (each file's own doc says what it covers).
//!
//! `logging.rs` and `no_secrets_shown.rs` build test binaries of their own:
//! each measures or sets state of the whole process.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_answers;
mod compression_and_proxies;
mod conformance;
mod discovery_and_mapping;
mod kubeconfig;
mod protobuf;
mod remote_commands;
mod requests;
mod retry_on_conflict;
mod subresources;
mod support;
mod tls_file_rotation;
mod transport;
