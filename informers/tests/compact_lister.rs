//! `CompactLister`: typed reads over an informer of `Compact<K>`, decoding
//! on demand through a bounded cache checked against resourceVersions.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use clientgo_apimachinery::{Compact, LabelSelector};
use clientgo_informers::{
    CompactLister, DecodedCacheStats, Error, InformerFactoryOptions, SharedInformerFactory,
};
use k8s_openapi::api::core::v1::ConfigMap;
use support::*;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn reads_decode_once_until_the_object_changes_and_the_cache_stays_bounded() {
    let server = seeded(20).await;
    let factory = SharedInformerFactory::with_options(
        client(&server),
        InformerFactoryOptions::default().namespace("default"),
    );
    let informer = factory.informer_for::<Compact<ConfigMap>>();
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.wait_for_cache_sync(PATIENCE).await.unwrap();
    let lister = CompactLister::new(informer.lister(), 4);

    let first = lister.get_namespaced("default", "cm-00003").unwrap();
    let again = lister.get_namespaced("default", "cm-00003").unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "the second read is the same decode"
    );
    assert_eq!(
        lister.stats(),
        DecodedCacheStats {
            hits: 1,
            misses: 1,
            held: 1
        }
    );

    // A change makes the next read decode the new version.
    let version = update(&server, "cm-00003", "changed");
    informer.wait_for_resource_version(&version).await.unwrap();
    let changed = lister.get_namespaced("default", "cm-00003").unwrap();
    assert_eq!(changed.data.as_ref().unwrap()["v"], "changed");
    assert_eq!(lister.stats().misses, 2);

    // Listing decodes every object but keeps at most the capacity.
    assert_eq!(lister.list(&LabelSelector::everything()).unwrap().len(), 20);
    assert_eq!(lister.stats().held, 4);

    // Keys and membership never decode.
    let misses = lister.stats().misses;
    assert_eq!(lister.keys().len(), 20);
    assert!(lister.contains("default/cm-00019"));
    assert!(!lister.contains("default/nope"));
    assert_eq!(lister.list_metadata(&LabelSelector::everything()).len(), 20);
    assert_eq!(lister.stats().misses, misses);

    let missing = lister.get_namespaced("default", "nope").unwrap_err();
    assert!(matches!(missing, Error::NotFound { .. }), "{missing}");
    stop.cancel();
    factory.shutdown().await;
}
