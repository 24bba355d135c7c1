//! The cache suite (`suites/cache.rs`) over `ConfigMap` in the default storage: compact entries, decoded on demand.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "suites/cache.rs"]
mod suite;

use k8s_openapi::api::core::v1::ConfigMap;

/// The object type the suite runs with.
pub(crate) type Cm = ConfigMap;

/// The storage the suite's informers keep.
pub(crate) const STORAGE: clientgo_informers::Storage = clientgo_informers::Storage::Compact;
