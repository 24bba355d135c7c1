//! The informer's cache suite (`suites/cache.rs`) over compact objects: every promise holds when the cache keeps JSON and metadata.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "suites/cache.rs"]
mod suite;
mod support;

use clientgo_apimachinery::Compact;
use k8s_openapi::api::core::v1::ConfigMap;

/// The object type the suite runs with.
type Cm = Compact<ConfigMap>;
