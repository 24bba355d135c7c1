//! Sharded informers against the test server, with the
//! `ShardedListAndWatch` gate on (the server filters) and off (the
//! informer filters), by watch-list and by list: four shards of 10,000
//! pods hold each pod exactly once, together they hold what an unsharded
//! informer holds, and a pod keeps its shard across updates.

use std::collections::BTreeMap;

use clientgo_apimachinery::GroupResource;
use clientgo_apimachinery::{ShardField, ShardSelector};
use clientgo_informers::{SharedIndexInformer, SharedIndexInformerOptions};
use clientgo_listwatch::ShardFiltering;
use clientgo_reflector::ReflectorOptions;
use clientgo_rest::ResourceClient;
use clientgo_testing::ObjectKey;
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use crate::support::{Running, client, wait_until};

const OBJECTS: usize = 10_000;

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

/// Labels a pod; returns its new resourceVersion.
fn relabel(server: &TestApiServer, name: &str) -> String {
    server
        .storage()
        .modify(&ObjectKey::new(pods(), "default", name), |pod| {
            pod["metadata"]["labels"]["round"] = json!("2");
        })
        .unwrap()
        .resource_version
        .to_string()
}
const SHARDS: u32 = 4;

fn informer(server: &TestApiServer, shard: Option<u32>, watch_list: bool) -> Running<Pod> {
    let mut options = SharedIndexInformerOptions::default()
        .reflector(ReflectorOptions::default().use_watch_list(watch_list));
    if let Some(index) = shard {
        options =
            options.shard_selector(ShardSelector::shard(ShardField::Uid, index, SHARDS).unwrap());
    }
    Running::start(SharedIndexInformer::from_client(
        ResourceClient::<Pod>::namespaced(client(server), "default"),
        options,
    ))
}

async fn four_shards(gate: bool, watch_list: bool) {
    let server = TestApiServer::builder()
        .sharded_list_and_watch(gate)
        .start()
        .await
        .unwrap();
    for index in 0..OBJECTS {
        server
            .storage()
            .create(
                &pods(),
                "default",
                json!({"metadata": {"name": format!("pod-{index:05}")}, "spec": {"containers": [{"name": "app", "image": "app"}]}}),
            )
            .unwrap();
    }
    let whole = informer(&server, None, watch_list);
    let shards: Vec<Running<Pod>> = (0..SHARDS)
        .map(|i| informer(&server, Some(i), watch_list))
        .collect();
    whole.synced().await;
    for shard in &shards {
        shard.synced().await;
    }
    // Each object in exactly one shard; together, the whole collection.
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    for (index, shard) in shards.iter().enumerate() {
        let keys = shard.informer.lister().keys();
        // Four equal ranges of a good hash: none is far from a quarter.
        assert!(
            keys.len() > OBJECTS / 5 && keys.len() < OBJECTS / 3,
            "shard {index}: {}",
            keys.len()
        );
        for key in keys {
            assert!(
                owner.insert(key.clone(), index).is_none(),
                "{key} in two shards"
            );
        }
    }
    let mut all = whole.informer.lister().keys();
    all.sort();
    assert_eq!(owner.keys().cloned().collect::<Vec<_>>(), all);
    // Who filtered, as each informer's stats say.
    for shard in &shards {
        let stats = shard.informer.stats().shard.unwrap();
        if gate {
            assert_eq!(stats.filtering, ShardFiltering::Server);
            assert_eq!(stats.filtered_out, 0);
        } else {
            assert_eq!(stats.filtering, ShardFiltering::Client);
            assert!(stats.filtered_out > 0);
        }
    }
    assert_eq!(whole.informer.stats().shard, None);
    // Updates reach only the shard that holds the object.
    let changed: Vec<String> = (0..OBJECTS)
        .step_by(97)
        .map(|i| format!("pod-{i:05}"))
        .collect();
    let versions: Vec<(String, String)> = changed
        .iter()
        .map(|name| (format!("default/{name}"), relabel(&server, name)))
        .collect();
    wait_until("every shard sees its updates", || {
        versions.iter().all(|(key, version)| {
            let shard = &shards[owner[key]];
            shard
                .informer
                .lister()
                .get(key)
                .is_some_and(|object| object.metadata.resource_version.as_deref() == Some(version))
        })
    })
    .await;
    for (index, shard) in shards.iter().enumerate() {
        let keys = shard.informer.lister().keys();
        assert!(
            keys.iter().all(|key| owner[key] == index),
            "shard {index} gained an object"
        );
        assert_eq!(
            keys.len(),
            owner.values().filter(|owner| **owner == index).count()
        );
    }
    for shard in shards {
        shard.stop().await;
    }
    whole.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_shards_split_the_collection_where_the_server_filters() {
    four_shards(true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_shards_split_a_listed_collection_where_the_server_filters() {
    four_shards(true, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_shards_split_a_listed_collection_where_the_informer_filters() {
    four_shards(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_shards_split_the_collection_where_the_informer_filters() {
    four_shards(false, true).await;
}
