//! Handlers suite (`suites/handlers.rs`) over whole objects.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "suites/handlers.rs"]
mod suite;
mod support;

use k8s_openapi::api::core::v1::ConfigMap;

/// The object type the suite runs with.
type Cm = ConfigMap;
