//! `#[derive(CustomResource)]` and `#[derive(Schema)]` against a real
//! kube-apiserver (envtest; each test skips without its binaries): every
//! serde shape and every attribute, installed, written, read back, and
//! refused where it must be.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suites;
