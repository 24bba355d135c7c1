//! Informers in the default (compact) storage: objects kept as the bytes
//! they arrived in plus parsed metadata. Handlers and reads of keys and
//! metadata cause no full decode at all, through a sync and a burst of
//! updates; a handler of whole objects decodes on delivery. The decode
//! counters are process-wide: this test counts the decodes of its own
//! informer's objects only while no other test's can run in between
//! (differences, from one informer of its own).
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::support::*;
use clientgo_apimachinery::{LabelSelector, compact_decodes};
use clientgo_informers::{
    InformerFactoryOptions, MetadataView, ResourceEventHandlerFuncs, SharedInformerFactory,
};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn metadata_handlers_decode_nothing_and_whole_object_handlers_decode_on_delivery() {
    let server = seeded(300).await;
    let factory = SharedInformerFactory::with_options(
        client(&server),
        InformerFactoryOptions::default()
            .namespace("default")
            .keep_managed_fields(false),
    );
    let informer = factory.informer_for::<ConfigMap>();
    // Key → resourceVersion, from metadata alone.
    let seen: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    let record = {
        let seen = Arc::clone(&seen);
        move |object: &Arc<MetadataView>| {
            seen.lock().insert(
                object.name().unwrap_or_default().to_string(),
                object.resource_version().unwrap_or_default().to_string(),
            );
        }
    };
    informer
        .add_metadata_event_handler(
            ResourceEventHandlerFuncs::<MetadataView>::new()
                .on_add({
                    let record = record.clone();
                    move |object, _| record(object)
                })
                .on_update(move |_, new| record(new)),
        )
        .unwrap();
    let before = compact_decodes();
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.wait_for_cache_sync(PATIENCE).await.unwrap();
    eventually("the handler saw the list", async || {
        seen.lock().len() == 300
    })
    .await;
    let mut last = String::new();
    for round in 0..100 {
        last = update(
            &server,
            &format!("cm-{:05}", round % 300),
            &round.to_string(),
        );
    }
    eventually("the handler saw the burst", async || {
        seen.lock().get("cm-00099") == Some(&last)
    })
    .await;
    let lister = factory.lister_for::<ConfigMap>();
    assert_eq!(
        lister.list_metadata(&LabelSelector::everything()).len(),
        300
    );
    assert_eq!(lister.keys().len(), 300);
    assert_eq!(
        compact_decodes().decodes,
        before.decodes,
        "metadata-only handlers and metadata listing decode nothing"
    );

    // A whole-object handler added late: the cache is replayed to it,
    // decoded on delivery.
    let values: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::<ConfigMap>::new().on_add({
            let values = Arc::clone(&values);
            move |object, _| {
                let value = object
                    .data
                    .as_ref()
                    .and_then(|data| data.get("v").cloned())
                    .unwrap_or_default();
                values
                    .lock()
                    .insert(object.metadata.name.clone().unwrap_or_default(), value);
            }
        }))
        .unwrap();
    eventually("the typed handler got the cache", async || {
        values.lock().len() == 300
    })
    .await;
    assert_eq!(
        values.lock().get("cm-00099").map(String::as_str),
        Some("99")
    );
    let decoded = compact_decodes().decodes - before.decodes;
    assert!(decoded >= 300, "one decode per object delivered: {decoded}");

    // Reading one object from the lister decodes it on demand.
    let metadata = lister
        .list_metadata(&LabelSelector::everything())
        .into_iter()
        .find(|view| view.name() == Some("cm-00007"))
        .unwrap();
    let object = lister.namespace("default").get("cm-00007").unwrap();
    assert_eq!(
        object.metadata.resource_version.as_deref(),
        metadata.resource_version()
    );
    assert!(object.metadata.managed_fields.is_none());
    stop.cancel();
    factory.shutdown().await;
    tokio::time::sleep(Duration::from_millis(10)).await;
}
