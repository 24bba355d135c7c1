//! The controller runtime against clientgo-testing's API server over real
//! HTTP on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suites;
mod support;
