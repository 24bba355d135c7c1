//! The integration tests of clientgo-informers: one binary, a module per
//! concern (each file's own doc says what it covers).
//!
//! `chaos_soak.rs` and `no_copies.rs` build test binaries of their own:
//! each measures or sets state of the whole process.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// `suites/cache.rs` and `suites/handlers.rs` are each compiled once per
// storage (`cache.rs`, `cache_decoded.rs`, `cache_lz4.rs`; `handlers.rs`,
// `handlers_decoded.rs`), their object type and storage given by the module
// that includes them.
#![allow(clippy::duplicate_mod)]

mod cache;
mod cache_decoded;
mod cache_lz4;
mod compact;
mod compact_index;
mod compact_lister;
mod conformance;
mod dropped_run;
mod factories;
mod generated;
mod handlers;
mod handlers_decoded;
mod heavy_work;
mod metrics;
mod protobuf;
mod real_server;
mod sharded;
mod support;
mod until_with_sync;
mod warm_restart;
mod watch_tools;

// The CRD types the generated informers name as `crate::CronTab` and
// `crate::ClusterWidget`.
use generated::{ClusterWidget, CronTab};
