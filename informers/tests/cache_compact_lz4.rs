//! The informer's cache suite (`suites/cache.rs`) over compact objects
//! whose JSON is LZ4-compressed (`Compact<ConfigMap, Lz4>`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "suites/cache.rs"]
mod suite;
mod support;

use clientgo_apimachinery::{Compact, Lz4};
use k8s_openapi::api::core::v1::ConfigMap;

/// The object type the suite runs with.
type Cm = Compact<ConfigMap, Lz4>;

/// The storage the suite's informers keep.
const STORAGE: clientgo_informers::Storage = clientgo_informers::Storage::Compact;
