//! Sharded informers with the `ShardedListAndWatch` gate on (the server
//! filters) and off (the informer filters), by watch-list and by list, on
//! the test server and on the real kube-apiserver (one body, two backends;
//! the gate on the real one is a control plane of the test's own, started
//! with `--feature-gates=ShardedListAndWatch=true`): four shards hold each
//! pod exactly once (10,000 on the test server, seeded into its storage;
//! 400 on the real one, created through the API), together they hold what
//! an unsharded informer holds, and a pod keeps its shard across updates.

use std::collections::BTreeMap;

use clientgo_apimachinery::GroupResource;
use clientgo_apimachinery::{ShardField, ShardSelector};
use clientgo_informers::{SharedIndexInformer, SharedIndexInformerOptions};
use clientgo_listwatch::ShardFiltering;
use clientgo_reflector::ReflectorOptions;
use clientgo_rest::{CreateOptions, Patch, PatchOptions, ResourceClient, RestClient};
use clientgo_testing::ObjectKey;
use clientgo_testing::envtest::{Backend, for_each_backend};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use crate::support::{Running, eventually};

/// Pods seeded into the test server's storage.
const TEST_SERVER_OBJECTS: usize = 10_000;
/// Pods created through the real server's API.
const REAL_SERVER_OBJECTS: usize = 400;

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

/// Creates `count` pods in `namespace`: into the test server's storage,
/// or through the real server's API, eight requests at a time.
async fn seed(backend: &Backend, namespace: &str, count: usize) {
    let pod = |index: usize| json!({"metadata": {"name": format!("pod-{index:05}")}, "spec": {"containers": [{"name": "app", "image": "app"}]}});
    if let Some(server) = backend.test_server() {
        for index in 0..count {
            server
                .storage()
                .create(&pods(), namespace, pod(index))
                .unwrap();
        }
        return;
    }
    let api = ResourceClient::<Pod>::namespaced(backend.client().unwrap(), namespace);
    let indices: Vec<usize> = (0..count).collect();
    for chunk in indices.chunks(8) {
        let creates = chunk.iter().map(|index| {
            let object: Pod = serde_json::from_value(pod(*index)).unwrap();
            let api = api.clone();
            async move {
                api.create(&CreateOptions::default(), &object)
                    .await
                    .unwrap()
            }
        });
        futures_util::future::join_all(creates).await;
    }
}

/// Labels a pod; returns its new resourceVersion.
async fn relabel(backend: &Backend, namespace: &str, name: &str) -> String {
    if let Some(server) = backend.test_server() {
        return server
            .storage()
            .modify(&ObjectKey::new(pods(), namespace, name), |pod| {
                pod["metadata"]["labels"]["round"] = json!("2");
            })
            .unwrap()
            .resource_version
            .to_string();
    }
    ResourceClient::<Pod>::namespaced(backend.client().unwrap(), namespace)
        .patch(
            name,
            &PatchOptions::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"round": "2"}}})),
        )
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap_or_default()
}

const SHARDS: u32 = 4;

fn informer(
    client: &RestClient,
    namespace: &str,
    shard: Option<u32>,
    watch_list: bool,
) -> Running<Pod> {
    let mut options = SharedIndexInformerOptions::default()
        .reflector(ReflectorOptions::default().use_watch_list(watch_list));
    if let Some(index) = shard {
        options =
            options.shard_selector(ShardSelector::shard(ShardField::Uid, index, SHARDS).unwrap());
    }
    Running::start(SharedIndexInformer::from_client(
        ResourceClient::<Pod>::namespaced(client.clone(), namespace),
        options,
    ))
}

async fn four_shards(gate: bool, watch_list: bool) {
    let backends = if gate {
        let mut backends = Backend::both_own(&["--feature-gates=ShardedListAndWatch=true"]).await;
        // The test server's gate is its builder's.
        backends[0] = Backend::from_test_server(
            clientgo_testing::TestApiServer::builder()
                .sharded_list_and_watch(true)
                .start()
                .await
                .unwrap(),
        );
        backends
    } else {
        Backend::both().await
    };
    for_each_backend(backends, |backend| async move {
        four_shards_on(&backend, gate, watch_list).await;
    })
    .await;
}

async fn four_shards_on(backend: &Backend, gate: bool, watch_list: bool) {
    let namespace = backend.create_namespace("shards").await.unwrap();
    let objects = if backend.is_real() {
        REAL_SERVER_OBJECTS
    } else {
        TEST_SERVER_OBJECTS
    };
    seed(backend, &namespace, objects).await;
    let client = backend.client().unwrap();
    let whole = informer(&client, &namespace, None, watch_list);
    let shards: Vec<Running<Pod>> = (0..SHARDS)
        .map(|i| informer(&client, &namespace, Some(i), watch_list))
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
            keys.len() > objects / 6 && keys.len() < objects / 2,
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
    let changed: Vec<String> = (0..objects)
        .step_by(objects / 100)
        .map(|i| format!("pod-{i:05}"))
        .collect();
    let mut versions: Vec<(String, String)> = Vec::new();
    for name in &changed {
        versions.push((
            format!("{namespace}/{name}"),
            relabel(backend, &namespace, name).await,
        ));
    }
    eventually("every shard sees its updates", async || {
        versions.iter().all(|(key, version)| {
            let shard = &shards[owner[key]];
            shard
                .informer
                .lister()
                .get_by_key(key)
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
