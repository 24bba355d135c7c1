//! The default storage's `Lister`: typed reads over compact entries,
//! decoding on demand through a cache bounded in bytes and checked
//! against resourceVersions.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::support::*;
use clientgo_apimachinery::LabelSelector;
use clientgo_informers::{DECODED_EXPANSION, Storage};
use k8s_openapi::api::core::v1::ConfigMap;

/// A test server seeded with `count` config maps, and a compact informer
/// over them, synced.
async fn synced_over(count: usize) -> (clientgo_testing::TestApiServer, Running) {
    let server = seeded(count).await;
    let running = Running::start(informer::<ConfigMap>(&server, fast_options()));
    running.synced().await;
    (server, running)
}

#[tokio::test]
async fn reads_decode_once_until_the_object_changes_and_the_cache_stays_bounded() {
    let server = seeded(20).await;
    // A first informer tells the entries' size, to give the second a
    // budget of about four decoded objects.
    let sizing = Running::start(informer::<ConfigMap>(&server, fast_options()));
    sizing.synced().await;
    let entry_bytes = sizing.informer.cache_bytes() / 20;
    sizing.stop().await;
    let budget = entry_bytes * DECODED_EXPANSION * 4;

    let running = Running::start(informer::<ConfigMap>(
        &server,
        fast_options().decode_cache_bytes(budget),
    ));
    running.synced().await;
    let informer = running.informer.clone();
    assert_eq!(informer.storage(), Storage::Compact);
    let lister = informer.lister();
    let pods = lister.namespace("default");

    let first = pods.get("cm-00003").unwrap();
    let again = pods.get("cm-00003").unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "the second read is the same decode"
    );
    let stats = lister.decode_stats();
    assert_eq!((stats.hits, stats.misses, stats.held), (1, 1, 1));

    // A change makes the next read decode the new version.
    let version = update(&server, "cm-00003", "changed");
    informer.wait_for_resource_version(&version).await.unwrap();
    let changed = pods.get("cm-00003").unwrap();
    assert_eq!(changed.data.as_ref().unwrap()["v"], "changed");
    assert_eq!(lister.decode_stats().misses, 2);

    // Listing decodes every object but keeps at most the budget.
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 20);
    let stats = lister.decode_stats();
    assert!(stats.held_bytes <= budget, "{stats:?}");
    assert!((2..=5).contains(&stats.held), "{stats:?}");

    // Keys, membership and metadata never decode.
    let misses = lister.decode_stats().misses;
    assert_eq!(lister.keys().len(), 20);
    assert!(lister.contains("default/cm-00019"));
    assert!(!lister.contains("default/nope"));
    assert_eq!(lister.list_metadata(&LabelSelector::everything()).len(), 20);
    assert_eq!(lister.decode_stats().misses, misses);

    assert!(pods.get("nope").is_none());
    assert!(pods.try_get("nope").unwrap().is_none());
    running.stop().await;
}

#[tokio::test]
async fn the_decodes_kept_for_reads_go_with_their_objects() {
    let (server, running) = synced_over(20).await;
    let informer = running.informer.clone();
    let lister = informer.lister();
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 20);
    assert_eq!(lister.decode_stats().held, 20);

    // An update drops the old version's decode; a delete the object's.
    let version = update(&server, "cm-00003", "changed");
    informer.wait_for_resource_version(&version).await.unwrap();
    eventually("the update's decode to go", async || {
        lister.decode_stats().held == 19
    })
    .await;
    for index in 0..10 {
        delete(&server, &format!("cm-{index:05}"));
    }
    eventually("the deleted objects' decodes to go", async || {
        informer.stats().cached == 10 && lister.decode_stats().held == 10
    })
    .await;
    // Reads fill it again with what exists.
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 10);
    assert_eq!(lister.decode_stats().held, 10);
    running.stop().await;
}

#[tokio::test]
async fn a_workers_read_adds_nothing_to_the_cache() {
    let (_server, running) = synced_over(20).await;
    let informer = running.informer.clone();
    let lister = informer.lister();
    let before = informer.cache_bytes();
    let read = lister.read_uncached("default/cm-00003").unwrap().unwrap();
    assert_eq!(read.metadata.name.as_deref(), Some("cm-00003"));
    assert_eq!(
        informer.cache_bytes(),
        before,
        "the entry keeps nothing of a read it hands out"
    );
    assert_eq!(lister.decode_stats().held, 0, "nor does the lister");
    drop(read);
    assert_eq!(informer.cache_bytes(), before);
    assert!(lister.read_uncached("default/nope").unwrap().is_none());
    running.stop().await;
}

#[tokio::test]
async fn a_lister_read_leaves_nothing_on_its_entry() {
    let (_server, running) = synced_over(20).await;
    let informer = running.informer.clone();
    let lister = informer.lister();
    let before = informer.cache_bytes();

    let read = lister.namespace("default").get("cm-00003").unwrap();
    // Held by the reader and the lister's cache only: once both let go,
    // all of it is freed. A `Weak` kept by the entry would keep the
    // decode's allocation for as long as the entry lives.
    assert_eq!(Arc::weak_count(&read), 0, "the entry remembers no decode");
    assert_eq!(Arc::strong_count(&read), 2, "the reader's and the cache's");
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 20);
    assert_eq!(
        informer.cache_bytes(),
        before,
        "reads add nothing to the entries"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_handlers_decode_read_through_the_lister_is_shared_but_not_kept() {
    let server = seeded(3).await;
    let informer = informer::<ConfigMap>(&server, fast_options());
    let lister = informer.lister();
    let shared: Arc<std::sync::Mutex<Vec<bool>>> = Arc::default();
    let record = Arc::clone(&shared);
    informer
        .add_event_handler(
            clientgo_informers::ResourceEventHandlerFuncs::<ConfigMap>::new().on_add(
                move |object, _| {
                    let name = object.metadata.name.clone().unwrap_or_default();
                    let read = lister.namespace("default").get(&name).unwrap();
                    record.lock().unwrap().push(Arc::ptr_eq(&read, object));
                },
            ),
        )
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    eventually("the three adds", async || shared.lock().unwrap().len() == 3).await;
    assert!(
        shared.lock().unwrap().iter().all(|same| *same),
        "a read during the handler gets the handler's decode"
    );
    // Kept by the lister's cache, the entry's `Weak` would stay on it after
    // the handler let go.
    assert_eq!(informer.lister().decode_stats().held, 0);
    running.stop().await;
}
