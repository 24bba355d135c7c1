//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use clientgo_apimachinery::{DynamicObject, WatchEvent};

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

/// Reads watch events from a streaming response.
pub struct Events {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Events {
    pub async fn open(client: &reqwest::Client, url: String) -> Self {
        let response = client.get(url).send().await.unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::OK);
        Events {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event, or None when the stream ends.
    pub async fn next(&mut self) -> Option<WatchEvent<DynamicObject>> {
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event within 10 s")
                .unwrap()?;
            self.buffer.extend_from_slice(&chunk);
        }
    }

    /// The next event that is not a bookmark.
    pub async fn next_change(&mut self) -> Option<WatchEvent<DynamicObject>> {
        loop {
            match self.next().await? {
                WatchEvent::Bookmark(_) => continue,
                other => return Some(other),
            }
        }
    }
}
