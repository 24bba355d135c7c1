//! Informers of built-in types in protobuf mode (`ContentType::Protobuf`)
//! against the test server, which serves protobuf as kube-apiserver does:
//! they sync, follow changes and relist after compaction with the same
//! cache as a JSON informer on the same server, in list and watch-list
//! modes, and fall back to JSON when a server answers JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{Running, eventually, fast_options};
use clientgo_apimachinery::{GroupResource, LabelSelector, PROTOBUF_MEDIA_TYPE};
use clientgo_informers::SharedIndexInformer;
use clientgo_reflector::ReflectorOptions;
use clientgo_rest::{Config, ContentType, ResourceClient, RestClient};
use clientgo_testing::{ObjectKey, Preconditions, RequestRecord, TestApiServer, Verb};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

fn pod_informer(
    server: &TestApiServer,
    content_type: ContentType,
    watch_list: bool,
) -> SharedIndexInformer<Pod> {
    let client = RestClient::new(Config::new(server.url()).content_type(content_type)).unwrap();
    SharedIndexInformer::from_client(
        ResourceClient::<Pod>::namespaced(client, "default"),
        fast_options().reflector(
            ReflectorOptions::default()
                .use_watch_list(watch_list)
                .backoff(
                    clientgo_reflector::BackoffOptions::default()
                        .initial(std::time::Duration::from_millis(5))
                        .cap(std::time::Duration::from_millis(50)),
                ),
        ),
    )
}

/// The cache as JSON, sorted by name.
fn cache(informer: &SharedIndexInformer<Pod>) -> Vec<serde_json::Value> {
    let mut pods: Vec<serde_json::Value> = informer
        .lister()
        .list(&LabelSelector::everything())
        .iter()
        .map(|pod| serde_json::to_value(pod.as_ref()).unwrap())
        .collect();
    pods.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    pods
}

async fn seeded(count: usize, serve_protobuf: bool) -> TestApiServer {
    let server = TestApiServer::builder()
        .protobuf(serve_protobuf)
        .start()
        .await
        .unwrap();
    for index in 0..count {
        server
            .storage()
            .create(
                &pods(),
                "default",
                clientgo_testing::realistic_pod(index, "default"),
            )
            .unwrap();
    }
    server
}

/// Creates, updates and deletes a few pods.
fn churn(server: &TestApiServer, seeded: usize, round: usize) {
    for index in 0..3 {
        server
            .storage()
            .create(
                &pods(),
                "default",
                clientgo_testing::realistic_pod(1000 * (round + 1) + index, "default"),
            )
            .unwrap();
    }
    for index in 0..3 {
        let name =
            clientgo_testing::realistic_pod(index + 3 * round, "default")["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string();
        let key = ObjectKey::new(pods(), "default", &name);
        server
            .storage()
            .modify(&key, |pod| {
                pod["metadata"]["labels"]["round"] = json!(round.to_string());
                pod["status"]["phase"] = json!("Succeeded");
            })
            .unwrap();
    }
    let name = clientgo_testing::realistic_pod(seeded - 1 - round, "default")["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    server
        .storage()
        .delete(
            &ObjectKey::new(pods(), "default", &name),
            &Preconditions::default(),
        )
        .unwrap();
}

fn asked_for_protobuf(record: &RequestRecord) -> bool {
    record
        .header_values("accept")
        .iter()
        .any(|a| a.contains(PROTOBUF_MEDIA_TYPE))
}

/// Requests that listed pods (a list, or a watch-list) asking for
/// protobuf.
fn protobuf_listings(server: &TestApiServer) -> usize {
    let lists = server
        .requests()
        .of(Verb::List)
        .into_iter()
        .filter(asked_for_protobuf)
        .count();
    let watch_lists = server
        .requests()
        .of(Verb::Watch)
        .into_iter()
        .filter(|r| r.list_options().send_initial_events == Some(true) && asked_for_protobuf(r))
        .count();
    lists + watch_lists
}

async fn same_cache_through_sync_and_changes(watch_list: bool) {
    let server = seeded(40, true).await;
    let json = Running::start(pod_informer(&server, ContentType::Json, watch_list));
    let protobuf = Running::start(pod_informer(&server, ContentType::Protobuf, watch_list));
    json.synced().await;
    protobuf.synced().await;
    assert_eq!(cache(&protobuf.informer).len(), 40);
    assert_eq!(cache(&protobuf.informer), cache(&json.informer));
    assert!(
        protobuf_listings(&server) >= 1,
        "the protobuf informer listed in protobuf"
    );
    let protobuf_watches = server
        .requests()
        .of(Verb::Watch)
        .into_iter()
        .filter(|r| r.list_options().send_initial_events != Some(true) && asked_for_protobuf(r))
        .count();
    if !watch_list {
        assert!(
            protobuf_watches >= 1,
            "the protobuf informer watched in protobuf"
        );
    }

    churn(&server, 40, 0);
    churn(&server, 40, 1);
    eventually("both caches have the changes", async || {
        let pb = cache(&protobuf.informer);
        pb.len() == 44 && pb == cache(&json.informer)
    })
    .await;
    json.stop().await;
    protobuf.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_then_watch_in_protobuf_gives_the_json_cache() {
    same_cache_through_sync_and_changes(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_list_in_protobuf_gives_the_json_cache() {
    same_cache_through_sync_and_changes(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_after_compaction_in_protobuf_gives_the_json_cache() {
    let server = seeded(30, true).await;
    let json = Running::start(pod_informer(&server, ContentType::Json, false));
    let protobuf = Running::start(pod_informer(&server, ContentType::Protobuf, false));
    json.synced().await;
    protobuf.synced().await;
    let listed_before = protobuf_listings(&server);
    // Changes the watches never see: they are dropped, then the history
    // they would resume from is compacted away (410 on rewatch).
    server.faults().hold_watches();
    server.faults().drop_watches();
    churn(&server, 30, 0);
    server.compact_history();
    server.faults().release_watches();
    eventually("the protobuf informer relisted", async || {
        protobuf_listings(&server) > listed_before
    })
    .await;
    eventually("both caches have the changes", async || {
        let pb = cache(&protobuf.informer);
        pb.len() == 32 && pb == cache(&json.informer)
    })
    .await;
    json.stop().await;
    protobuf.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_json_turns_the_informer_to_json() {
    let server = seeded(20, false).await;
    let protobuf = Running::start(pod_informer(&server, ContentType::Protobuf, false));
    protobuf.synced().await;
    assert_eq!(cache(&protobuf.informer).len(), 20);
    churn(&server, 20, 0);
    eventually("the change arrives", async || {
        cache(&protobuf.informer).len() == 22
    })
    .await;
    let requests: Vec<RequestRecord> = server
        .requests()
        .records()
        .into_iter()
        .filter(|r| matches!(r.verb, Verb::List | Verb::Watch))
        .collect();
    assert!(
        asked_for_protobuf(&requests[0]),
        "the first request asks for protobuf"
    );
    assert!(
        requests[1..].iter().all(|r| !asked_for_protobuf(r)),
        "after a JSON answer, every request asks for JSON"
    );
    protobuf.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_entries_keep_the_message_and_decode_to_the_json_cache() {
    use clientgo_apimachinery::{Compact, Protobuf};
    let server = seeded(25, true).await;
    let json = Running::start(pod_informer(&server, ContentType::Json, false));
    let client =
        RestClient::new(Config::new(server.url()).content_type(ContentType::Protobuf)).unwrap();
    let compact = Running::start(SharedIndexInformer::from_client(
        ResourceClient::<Compact<Pod, Protobuf>>::namespaced(client, "default"),
        fast_options(),
    ));
    json.synced().await;
    compact.synced().await;
    let decoded = |informer: &SharedIndexInformer<Compact<Pod, Protobuf>>| {
        let entries = informer.lister().list(&LabelSelector::everything());
        assert!(
            entries
                .iter()
                .all(|e| matches!(e.body(), Protobuf::Message(_))),
            "every entry keeps its protobuf message"
        );
        let mut pods: Vec<serde_json::Value> = entries
            .iter()
            .map(|entry| serde_json::to_value(entry.decode().unwrap().as_ref()).unwrap())
            .collect();
        pods.sort_by(|a, b| {
            a["metadata"]["name"]
                .as_str()
                .cmp(&b["metadata"]["name"].as_str())
        });
        pods
    };
    assert_eq!(decoded(&compact.informer).len(), 25);
    assert_eq!(decoded(&compact.informer), cache(&json.informer));
    churn(&server, 25, 0);
    eventually("both caches have the changes", async || {
        let entries = compact.informer.lister().list(&LabelSelector::everything());
        entries.len() == 27 && cache(&json.informer).len() == 27
    })
    .await;
    eventually("the compact cache decodes to the JSON one", async || {
        decoded(&compact.informer) == cache(&json.informer)
    })
    .await;
    json.stop().await;
    compact.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protobuf_compact_cache_is_saved_and_resumed_without_a_list() {
    use clientgo_apimachinery::{Compact, Protobuf};
    use clientgo_informers::SnapshotOptions;
    let server = seeded(15, true).await;
    let dir =
        std::env::temp_dir().join(format!("clientgo-protobuf-snapshot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let informer = || {
        let client =
            RestClient::new(Config::new(server.url()).content_type(ContentType::Protobuf)).unwrap();
        SharedIndexInformer::from_client(
            ResourceClient::<Compact<Pod, Protobuf>>::namespaced(client, "default"),
            fast_options().snapshot(
                SnapshotOptions::new(&dir)
                    .interval(std::time::Duration::ZERO)
                    .entry_type::<Compact<Pod, Protobuf>>(),
            ),
        )
    };
    let first = Running::start(informer());
    first.synced().await;
    let first_informer = first.informer.clone();
    first.stop().await;
    assert_eq!(first_informer.snapshot_stats().written, 1);
    server.requests().clear();

    let second = Running::start(informer());
    second.synced().await;
    assert_eq!(second.informer.snapshot_stats().loaded, 1);
    assert_eq!(
        protobuf_listings(&server),
        0,
        "resumed with a watch, no list"
    );
    assert_eq!(server.requests().count(Verb::List), 0);
    let entries = second.informer.lister().list(&LabelSelector::everything());
    assert_eq!(entries.len(), 15);
    for entry in &entries {
        assert!(matches!(entry.body(), Protobuf::Message(_)));
        assert!(
            entry.decode().unwrap().spec.is_some(),
            "the saved message decodes"
        );
    }
    second.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the issue asks of the defaults: the informer a user writes first,
/// with no option set, asks for protobuf, keeps compact entries without
/// managedFields, and still hands `Pod`s to handlers and listers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_pod_informer_asks_protobuf_and_keeps_compact_entries() {
    use clientgo_informers::{
        InformerFactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory, Storage,
    };
    use std::sync::{Arc, Mutex};

    let server = seeded(20, true).await;
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let factory = SharedInformerFactory::with_options(client, InformerFactoryOptions::default());
    let informer = factory.core().v1().pods().informer();
    assert_eq!(informer.storage(), Storage::Compact);
    let seen: Arc<Mutex<Vec<Arc<Pod>>>> = Arc::default();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().on_add({
            let seen = Arc::clone(&seen);
            move |pod: &Arc<Pod>, _| seen.lock().unwrap().push(Arc::clone(pod))
        }))
        .unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    factory.start(&stop);
    factory
        .wait_for_cache_sync(std::time::Duration::from_secs(10))
        .await
        .unwrap();
    eventually("the handler has every pod", async || {
        seen.lock().unwrap().len() == 20
    })
    .await;

    assert!(
        [Verb::List, Verb::Watch]
            .into_iter()
            .flat_map(|verb| server.requests().of(verb))
            .all(|record| asked_for_protobuf(&record)),
        "every list and watch asked for protobuf"
    );
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|pod| pod.metadata.managed_fields.is_none() && pod.spec.is_some()),
        "whole pods, without managedFields"
    );
    let lister = informer.lister();
    let name = seen.lock().unwrap()[0].metadata.name.clone().unwrap();
    // Let the handler's decodes go: while one is held, a lister read shares
    // it instead of keeping a decode of its own.
    seen.lock().unwrap().clear();
    let first = lister.namespace("default").get(&name).unwrap();
    let again = lister.namespace("default").get(&name).unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "the second read is a cache hit"
    );
    let decodes = informer.stats().decodes;
    assert_eq!((decodes.misses, decodes.hits), (1, 1), "{decodes:?}");
    assert!(decodes.handler_decodes >= 20, "{decodes:?}");
    assert_eq!(decodes.errors, 0);
    stop.cancel();
    factory.shutdown().await;
}

/// A metadata handler, `keys`, `contains` and `list_metadata` read the
/// compact entries' parsed metadata: nothing is decoded for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_reads_of_the_default_storage_decode_nothing() {
    use clientgo_informers::{MetadataView, ResourceEventHandlerFuncs};
    use std::sync::{Arc, Mutex};

    let server = seeded(10, true).await;
    let informer = pod_informer(&server, ContentType::default(), true);
    let keys: Arc<Mutex<Vec<String>>> = Arc::default();
    informer
        .add_metadata_event_handler(ResourceEventHandlerFuncs::new().on_add({
            let keys = Arc::clone(&keys);
            move |view: &Arc<MetadataView>, _| keys.lock().unwrap().push(view.key())
        }))
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    eventually("the handler has every key", async || {
        keys.lock().unwrap().len() == 10
    })
    .await;
    let lister = informer.lister();
    let mut listed = lister.keys();
    listed.sort();
    let mut handled = keys.lock().unwrap().clone();
    handled.sort();
    assert_eq!(listed, handled);
    assert!(lister.contains(&listed[0]));
    let labelled = lister.list_metadata(&LabelSelector::everything());
    assert_eq!(labelled.len(), 10);
    assert!(labelled.iter().all(|view| view.name().is_some()));
    assert_eq!(
        informer.stats().decodes,
        Default::default(),
        "nothing decoded"
    );
    running.stop().await;
}

/// `Storage::CompactLz4` keeps the same pods in fewer bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lz4_storage_keeps_the_same_pods_in_fewer_bytes() {
    use clientgo_informers::Storage;

    let server = seeded(20, true).await;
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let informer = |storage| {
        SharedIndexInformer::from_client(
            ResourceClient::<Pod>::namespaced(client.clone(), "default"),
            fast_options().storage(storage),
        )
    };
    let plain = Running::start(informer(Storage::Compact));
    let packed = Running::start(informer(Storage::CompactLz4));
    plain.synced().await;
    packed.synced().await;
    assert_eq!(packed.informer.storage(), Storage::CompactLz4);
    assert_eq!(cache(&plain.informer), cache(&packed.informer));
    let (plain_bytes, packed_bytes) = (plain.informer.cache_bytes(), packed.informer.cache_bytes());
    assert!(packed_bytes < plain_bytes, "{packed_bytes} < {plain_bytes}");
    plain.stop().await;
    packed.stop().await;
}
