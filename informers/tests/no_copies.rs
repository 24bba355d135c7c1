//! No object is deep-copied between decoding and the handler: decoded
//! objects are shared as `Arc`s from the watch or list through the
//! transform and the cache to every handler. A pod type whose `Clone`
//! counts proves it through a sync, updates, deletes and a forced relist,
//! for whole objects and for compact ones (whose copies
//! `compact_decodes()` counts, as it counts whole `ObjectMeta`s built for
//! an entry, of which the informer's path makes none either).
//!
//! (Its own test binary: it counts deep copies in process-wide counters.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clientgo_apimachinery::{Compact, GroupResource, LabelSelector, Object, compact_decodes};
use clientgo_informers::{
    ResourceEventHandlerFuncs, SharedIndexInformer, SharedIndexInformerOptions, Storage,
};
use clientgo_reflector::ReflectorOptions;
use clientgo_rest::ResourceClient;
use clientgo_testing::{ObjectKey, TestApiServer, realistic_pod};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;
use support::{client, eventually};
use tokio_util::sync::CancellationToken;

/// Deep copies of [`CountedPod`] made so far.
static CLONES: AtomicUsize = AtomicUsize::new(0);

/// A pod whose every deep copy is counted.
#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(transparent)]
struct CountedPod(Pod);

impl Clone for CountedPod {
    fn clone(&self) -> Self {
        CLONES.fetch_add(1, Ordering::SeqCst);
        CountedPod(self.0.clone())
    }
}

impl k8s_openapi::Resource for CountedPod {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for CountedPod {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.0.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

type Seen<K> = Arc<Mutex<HashMap<String, Arc<K>>>>;

fn key<K: Object>(pod: &K) -> String {
    format!(
        "{}/{}",
        pod.namespace().unwrap_or_default(),
        pod.name().unwrap_or_default()
    )
}

/// What the test runs with: `CountedPod` or `Compact<CountedPod>`.
trait TestPod: support::TestObject + Clone {}

impl<K: support::TestObject + Clone> TestPod for K {}

/// Every object the cache holds is the very `Arc` the handler was given
/// last for its key.
fn same_objects<K: TestPod>(informer: &SharedIndexInformer<K>, seen: &Seen<K>) {
    let seen = seen.lock().unwrap();
    // In decoded storage the lister hands out the cache's own objects.
    let cached = informer.lister().list(&LabelSelector::everything());
    assert_eq!(cached.len(), seen.len());
    for object in cached {
        let handed = &seen[&key::<K>(&object)];
        assert!(
            Arc::ptr_eq(handed, &object),
            "{} in the cache is not the object the handler got",
            key::<K>(&object)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_are_shared_from_decode_to_handler_never_copied() {
    // Watch-list (the default), then list and watch.
    for use_watch_list in [true, false] {
        through_sync_updates_deletes_and_relist::<CountedPod>(use_watch_list).await;
        assert_eq!(
            CLONES.load(Ordering::SeqCst),
            0,
            "objects were deep-copied (watch-list: {use_watch_list})"
        );
        through_sync_updates_deletes_and_relist::<Compact<CountedPod>>(use_watch_list).await;
        assert_eq!(
            compact_decodes().copies,
            0,
            "compact objects were deep-copied (watch-list: {use_watch_list})"
        );
        assert_eq!(
            compact_decodes().metadata_builds,
            0,
            "the informer built a whole ObjectMeta for an entry (watch-list: {use_watch_list})"
        );
        assert_eq!(CLONES.load(Ordering::SeqCst), 0);
    }
}

/// A test server holding 40 realistic pods, 10 in each of four
/// namespaces, and the pods' resource.
async fn seeded_with_pods() -> (TestApiServer, GroupResource) {
    let server = TestApiServer::builder().start().await.unwrap();
    let pods = GroupResource::new("", "pods");
    for index in 0..40 {
        let namespace = format!("namespace-{}", index % 4);
        server
            .storage()
            .create(&pods, &namespace, realistic_pod(index, &namespace))
            .unwrap();
    }
    (server, pods)
}

async fn through_sync_updates_deletes_and_relist<K: TestPod>(use_watch_list: bool) {
    let (server, pods) = seeded_with_pods().await;
    // Dropping managedFields (the default) changes each fresh object in
    // place.
    let informer = SharedIndexInformer::from_client(
        ResourceClient::<K>::all(client(&server)),
        SharedIndexInformerOptions::default()
            .storage(Storage::Decoded)
            .keep_managed_fields(false)
            .reflector(ReflectorOptions::default().use_watch_list(use_watch_list)),
    );
    let seen: Seen<K> = Arc::default();
    let deletes = Arc::new(AtomicUsize::new(0));
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add({
                    let seen = seen.clone();
                    move |pod, _| {
                        seen.lock().unwrap().insert(key::<K>(pod), pod.clone());
                    }
                })
                .on_update({
                    let seen = seen.clone();
                    move |_, pod| {
                        seen.lock().unwrap().insert(key::<K>(pod), pod.clone());
                    }
                })
                .on_delete({
                    let (seen, deletes) = (seen.clone(), deletes.clone());
                    move |deleted| {
                        if let Some(pod) = deleted.object() {
                            seen.lock().unwrap().remove(&key::<K>(pod));
                        }
                        deletes.fetch_add(1, Ordering::SeqCst);
                    }
                }),
        )
        .unwrap();
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    eventually("the handler has every pod", async || {
        seen.lock().unwrap().len() == 40
    })
    .await;
    same_objects(&informer, &seen);
    assert!(
        informer
            .lister()
            .list(&LabelSelector::everything())
            .iter()
            .all(|pod| pod.meta().managed_fields.is_none()),
        "the transform ran"
    );

    // Updates and deletes through the watch.
    let names: Vec<(String, String)> = informer
        .lister()
        .list(&LabelSelector::everything())
        .iter()
        .map(|pod| {
            (
                pod.namespace().unwrap().to_string(),
                pod.name().unwrap().to_string(),
            )
        })
        .collect();
    for (namespace, name) in &names[..10] {
        server
            .storage()
            .modify(&ObjectKey::new(pods.clone(), namespace, name), |pod| {
                pod["metadata"]["labels"]["touched"] = json!("yes")
            })
            .unwrap();
    }
    for (namespace, name) in &names[10..15] {
        server
            .storage()
            .delete(
                &ObjectKey::new(pods.clone(), namespace, name),
                &Default::default(),
            )
            .unwrap();
    }
    eventually("the handler saw the updates and deletes", async || {
        let seen = seen.lock().unwrap();
        deletes.load(Ordering::SeqCst) == 5
            && seen.len() == 35
            && seen
                .values()
                .filter(|pod| pod.labels().contains_key("touched"))
                .count()
                == 10
    })
    .await;
    same_objects(&informer, &seen);

    // A relist (the watch expired): unchanged objects are reused, changed
    // ones decoded afresh; none is copied.
    let syncs = |informer: &SharedIndexInformer<K>| {
        let stats = informer.stats().reflector;
        stats.lists + stats.watch_lists
    };
    let synced_before = syncs(&informer);
    server.faults().hold_watches();
    server.faults().drop_watches();
    // Two writes, so the compaction drops an event the watch needs.
    for (namespace, name) in &names[..2] {
        server
            .storage()
            .modify(&ObjectKey::new(pods.clone(), namespace, name), |pod| {
                pod["metadata"]["labels"]["touched"] = json!("twice")
            })
            .unwrap();
    }
    server.compact_history();
    server.faults().release_watches();
    eventually("the informer relisted", async || {
        syncs(&informer) > synced_before
    })
    .await;
    eventually("the handler saw the relist", async || {
        seen.lock().unwrap()[&format!("{}/{}", names[0].0, names[0].1)]
            .labels()
            .get("touched")
            == Some("twice")
    })
    .await;
    let stats = informer.stats().reflector;
    assert_eq!(stats.watch_lists > 0, use_watch_list, "{stats:?}");
    cancel.cancel();
    task.await.unwrap();
}

/// The default informer of pods (compact protobuf entries) with a
/// metadata handler, its namespace index and the lister's metadata reads
/// read every entry's packed metadata in place: none builds a whole
/// `ObjectMeta` for an entry (which would be kept with it, doubling the
/// metadata's memory).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_informer_reads_packed_metadata_in_place() {
    use clientgo_informers::{MetadataView, SharedInformerFactory};
    let (server, _) = seeded_with_pods().await;
    let factory = SharedInformerFactory::new(client(&server), std::time::Duration::ZERO);
    let informer = factory.core().v1().pods().informer();
    let seen = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    let record = {
        let seen = Arc::clone(&seen);
        move |view: &Arc<MetadataView>| {
            let labels = view.labels().len() + view.annotations().len();
            seen.lock().unwrap().insert(view.key(), labels);
        }
    };
    informer
        .add_metadata_event_handler(
            ResourceEventHandlerFuncs::<MetadataView>::new()
                .on_add({
                    let record = record.clone();
                    move |view, _| record(view)
                })
                .on_update(move |_, new| record(new)),
        )
        .unwrap();
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory
        .wait_for_cache_sync(std::time::Duration::from_secs(20))
        .await
        .unwrap();
    eventually("the handler saw every pod", async || {
        seen.lock().unwrap().len() == 40
    })
    .await;
    let lister = factory.lister_for::<Pod>();
    assert_eq!(
        lister
            .index_keys(clientgo_store::NAMESPACE_INDEX, "namespace-1")
            .unwrap()
            .len(),
        10
    );
    assert_eq!(lister.list_metadata(&LabelSelector::everything()).len(), 40);
    let key = seen
        .lock()
        .unwrap()
        .keys()
        .find(|key| key.starts_with("namespace-2/"))
        .cloned()
        .unwrap();
    let view = lister.get_metadata(&key).expect("cached");
    assert_eq!(view.namespace(), Some("namespace-2"));
    // Whole objects are decoded with the metadata built for them, not kept.
    let decoded = lister
        .namespace("namespace-3")
        .list(&LabelSelector::everything());
    assert_eq!(decoded.len(), 10);
    assert!(decoded.iter().all(|pod| pod.metadata.name.is_some()));
    assert_eq!(
        compact_decodes().metadata_builds,
        0,
        "a whole ObjectMeta was built for a cached entry"
    );
    stop.cancel();
}
