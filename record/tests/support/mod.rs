//! Helpers shared by the recorder tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use clientgo_apimachinery::GroupResource;
use clientgo_testing::{ReadAt, TestApiServer};
use serde::de::DeserializeOwned;

/// The events the server stores in `default`, of the API group `group`
/// ("" for core/v1, "events.k8s.io").
pub fn stored<E: DeserializeOwned>(server: &TestApiServer, group: &str) -> Vec<E> {
    let (objects, _) = server
        .storage()
        .list(
            &GroupResource::new(group, "events"),
            Some("default"),
            ReadAt::Latest,
        )
        .unwrap();
    objects
        .iter()
        .map(|stored| serde_json::from_slice(&stored.json).unwrap())
        .collect()
}

/// Polls `done` every 10 ms; panics naming `what` after 20 s.
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "timed out: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
