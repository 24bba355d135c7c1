//! Index functions over whole objects, in the default (compact) storage,
//! decode each object version once, at ingest: never again when the store
//! recomputes an old object's values on update and delete.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::support::*;
use clientgo_apimachinery::compact_decodes;
use clientgo_store::{IndexFunc, Indexers};
use k8s_openapi::api::core::v1::ConfigMap;

fn by_value() -> IndexFunc<ConfigMap> {
    Arc::new(|map: &ConfigMap| {
        Ok(map
            .data
            .as_ref()
            .and_then(|data| data.get("v"))
            .cloned()
            .into_iter()
            .collect())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_object_indexes_decode_each_version_once() {
    let server = seeded(20).await;
    let before = compact_decodes().decodes;
    let informer = informer::<ConfigMap>(
        &server,
        fast_options().indexers(Indexers::from([("by-v".to_string(), by_value())])),
    );
    let running = Running::start(informer.clone());
    running.synced().await;
    assert_eq!(
        compact_decodes().decodes - before,
        20,
        "one per object at ingest"
    );

    let mut last = String::new();
    for index in 0..10 {
        last = update(&server, &format!("cm-{index:05}"), "changed");
    }
    delete(&server, "cm-00019");
    informer.wait_for_resource_version(&last).await.unwrap();
    let cache = informer.lister();
    eventually("the delete", async move || cache.len() == 19).await;
    assert_eq!(
        compact_decodes().decodes - before,
        30,
        "one per new version; none for old versions or the delete"
    );

    let lister = informer.lister();
    let changed = lister.by_index("by-v", "changed").unwrap();
    assert_eq!(changed.len(), 10);
    assert!(
        changed
            .iter()
            .all(|map| map.data.as_ref().unwrap()["v"] == "changed")
    );
    assert_eq!(lister.by_index("by-v", "0").unwrap().len(), 9);
    assert!(lister.by_index("no-such-index", "x").is_err());
    running.stop().await;
}

/// The explicit compact route: an informer of `ConfigMap` over a source of
/// `Compact<ConfigMap, Json>` entries keeps them (compressed, as the
/// options ask), and its lister hands out decoded objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_over_a_source_of_compact_entries_keeps_them_and_decodes_for_reads() {
    use clientgo_apimachinery::{Compact, Json};
    use clientgo_informers::{SharedIndexInformer, Storage};
    use clientgo_listwatch::ResourceListerWatcher;
    use clientgo_rest::ResourceClient;

    let server = seeded(20).await;
    let source = ResourceListerWatcher::new(
        ResourceClient::<Compact<ConfigMap, Json>>::namespaced(client(&server), "default"),
    );
    let informer = SharedIndexInformer::<ConfigMap>::new(
        source,
        fast_options()
            .storage(Storage::CompactLz4)
            .indexers(Indexers::from([("by-v".to_string(), by_value())])),
    );
    assert_eq!(informer.storage(), Storage::CompactLz4);
    let running = Running::start(informer.clone());
    running.synced().await;
    let last = update(&server, "cm-00003", "changed");
    informer.wait_for_resource_version(&last).await.unwrap();
    let lister = informer.lister();
    let changed = lister.namespace("default").get("cm-00003").unwrap();
    assert_eq!(changed.data.as_ref().unwrap()["v"], "changed");
    assert_eq!(
        lister.index_keys("by-v", "changed").unwrap(),
        ["default/cm-00003"]
    );
    assert_eq!(lister.by_index("by-v", "0").unwrap().len(), 19);
    assert!(informer.stats().decodes.misses >= 1, "reads decode");
    assert!(informer.cache_bytes() > 0);
    running.stop().await;
}
