//! Helpers shared by the recorder tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

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

pub use clientgo_testing::eventually;
