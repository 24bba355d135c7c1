//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

/// A plain reqwest client for talking to the test server.
///
/// In a workspace build, reqwest's features are unified with
/// clientgo-rest's `rustls-no-provider`, under which building any reqwest
/// client needs a process-wide rustls crypto provider; install ring's (a
/// no-op when one is installed already).
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
