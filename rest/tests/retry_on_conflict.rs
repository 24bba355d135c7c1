//! client-go's `util/retry` on the test server and on the real
//! kube-apiserver (one body, two backends): a read-change-write that loses
//! a race to another writer is run again on the fresh object.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

use clientgo_rest::{
    CreateOptions, ResourceClient, UpdateOptions,
    util::retry::{Backoff, retry_on_conflict},
};
use clientgo_testing::envtest::{Backend, for_each_backend};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

async fn config_maps(backend: &Backend) -> ResourceClient<ConfigMap> {
    let namespace = backend.create_namespace("retry").await.unwrap();
    let config_maps =
        ResourceClient::<ConfigMap>::namespaced(backend.client().unwrap(), &namespace);
    let seed = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::new()),
        ..ConfigMap::default()
    };
    config_maps
        .create(&CreateOptions::default(), &seed)
        .await
        .unwrap();
    config_maps
}

/// Sets `key` on the stored object through `config_maps`.
async fn write(
    config_maps: &ResourceClient<ConfigMap>,
    mut object: ConfigMap,
    key: &str,
) -> Result<ConfigMap, clientgo_rest::Error> {
    object
        .data
        .get_or_insert_default()
        .insert(key.to_string(), "set".to_string());
    config_maps
        .replace("settings", &UpdateOptions::default(), &object)
        .await
}

#[tokio::test]
async fn a_write_that_loses_a_race_is_retried_on_the_fresh_object() {
    for_each_backend(Backend::both().await, |backend| async move {
        let config_maps = config_maps(&backend).await;
        let attempts = AtomicU32::new(0);
        let racer_writes = AtomicU32::new(0);
        let written = retry_on_conflict(Backoff::DEFAULT_RETRY, || async {
            let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
            let ours = config_maps.get("settings").await?;
            // Another writer gets in between our read and our write, twice.
            if attempt <= 2 {
                let theirs = config_maps.get("settings").await?;
                write(&config_maps, theirs, &format!("racer-{attempt}")).await?;
                racer_writes.fetch_add(1, Ordering::SeqCst);
            }
            write(&config_maps, ours, "ours").await
        })
        .await
        .unwrap();

        assert_eq!(
            attempts.load(Ordering::SeqCst),
            3,
            "two conflicts, then success"
        );
        let data = written.data.unwrap();
        assert!(data.contains_key("ours"));
        assert!(
            data.contains_key("racer-1") && data.contains_key("racer-2"),
            "no write lost: {data:?}"
        );
        let stored = config_maps.get("settings").await.unwrap();
        assert_eq!(stored.data.unwrap().len(), 3);
        assert_eq!(racer_writes.load(Ordering::SeqCst), 2);
    })
    .await;
}

#[tokio::test]
async fn a_writer_that_always_loses_gets_the_conflict_after_the_last_attempt() {
    for_each_backend(Backend::both().await, |backend| async move {
        let config_maps = config_maps(&backend).await;
        let attempts = AtomicU32::new(0);
        let error = retry_on_conflict(Backoff::DEFAULT_RETRY, || async {
            let attempt = attempts.fetch_add(1, Ordering::SeqCst);
            let ours = config_maps.get("settings").await?;
            let theirs = config_maps.get("settings").await?;
            // A change each time: a write that changes nothing is not
            // written, and would not make ours stale.
            write(&config_maps, theirs, &format!("racer-{attempt}")).await?;
            write(&config_maps, ours, "ours").await
        })
        .await
        .unwrap_err();
        assert!(error.is_conflict(), "{error}");
        assert_eq!(
            attempts.load(Ordering::SeqCst),
            5,
            "DefaultRetry's five attempts"
        );
    })
    .await;
}
