//! Webhooks called by a real kube-apiserver (envtest; each test skips
//! without its binaries) over TLS on 127.0.0.1: admission, defaulting,
//! failure policies, timeouts, certificate rotation and conversion; and
//! the server's own answers to bad requests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suites;
