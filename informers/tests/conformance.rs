//! The default informer (compact storage, protobuf, watch-list) on the test
//! server and on the real kube-apiserver (one body, two backends): it
//! follows writes, comes through an API server restart, and, cut off while
//! objects are deleted and the history compacted, relists on 410 and
//! reports the deletes it missed as tombstones. Both servers run without a
//! watch cache, so the old resourceVersion is gone at once.

use std::time::{Duration, Instant};

use crate::support::*;
use clientgo_apimachinery::ListOptions;
use clientgo_informers::{InformerFactoryOptions, SharedInformerFactory};
use clientgo_rest::{CreateOptions, DeleteOptions, ResourceClient, RestClient};
use clientgo_testing::CuttableProxy;
use clientgo_testing::envtest::{Backend, for_each_backend};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn config_map(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"v": value}})).unwrap()
}

/// Waits until the informer's keys are the server's.
async fn converged(
    factory: &SharedInformerFactory,
    maps: &ResourceClient<ConfigMap>,
    namespace: &str,
) {
    let deadline = Instant::now() + PATIENCE * 2;
    loop {
        let mut server: Vec<String> = maps
            .list(&ListOptions::default())
            .await
            .unwrap()
            .items
            .iter()
            .map(|item| {
                format!(
                    "{namespace}/{}",
                    item.metadata.name.clone().unwrap_or_default()
                )
            })
            .collect();
        server.sort();
        let mut cached = factory.lister_for::<ConfigMap>().keys();
        cached.sort();
        if cached == server {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the cache {cached:?} never became the server's {server:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_default_informer_through_a_restart_and_a_compaction_while_cut_off() {
    for_each_backend(
        Backend::both_own(&["--watch-cache=false"]).await,
        |backend| async move {
            let namespace = backend.create_namespace("informer").await.unwrap();
            let maps =
                ResourceClient::<ConfigMap>::namespaced(backend.client().unwrap(), &namespace);
            for index in 0..5 {
                maps.create(
                    &CreateOptions::default(),
                    &config_map(&format!("cm-{index}"), "0"),
                )
                .await
                .unwrap();
            }
            let proxy = CuttableProxy::start(backend.address()).await.unwrap();
            let client = RestClient::new(backend.config_at(proxy.https_url())).unwrap();
            let factory = SharedInformerFactory::with_options(
                client,
                InformerFactoryOptions::default().namespace(&namespace),
            );
            let recorder = Recorder::<ConfigMap>::default();
            factory
                .informer_for::<ConfigMap>()
                .add_event_handler(recorder.clone())
                .unwrap();
            let stop = CancellationToken::new();
            factory.start(&stop);
            factory.wait_for_cache_sync(PATIENCE).await.unwrap();
            eventually("five initial adds", async || recorder.count() == 5).await;

            // Writes are followed.
            maps.create(&CreateOptions::default(), &config_map("cm-5", "0"))
                .await
                .unwrap();
            let mut changed = maps.get("cm-0").await.unwrap();
            changed.data = Some([("v".to_string(), "1".to_string())].into());
            maps.replace("cm-0", &Default::default(), &changed)
                .await
                .unwrap();
            eventually("the create and the update", async || {
                let seen = recorder.seen();
                seen.iter()
                    .any(|s| matches!(s, Seen::Add { name, initial: false, .. } if name == "cm-5"))
                    && seen
                        .iter()
                        .any(|s| matches!(s, Seen::Update { name, .. } if name == "cm-0"))
            })
            .await;

            // Through a restart of the API server.
            backend.restart().await.unwrap();
            // The writer's own connection ended with the restart too.
            let maps =
                ResourceClient::<ConfigMap>::namespaced(backend.client().unwrap(), &namespace);
            maps.create(&CreateOptions::default(), &config_map("cm-6", "0"))
                .await
                .unwrap();
            converged(&factory, &maps, &namespace).await;

            // Cut off while two objects go and one comes, and the history is
            // compacted: the watch's resourceVersion is gone (410), so the
            // informer lists again and reports the two deletes as tombstones.
            proxy.cut().await;
            for name in ["cm-1", "cm-2"] {
                maps.delete(name, &DeleteOptions::default()).await.unwrap();
            }
            maps.create(&CreateOptions::default(), &config_map("cm-7", "0"))
                .await
                .unwrap();
            backend.compact().await.unwrap();
            proxy.restore();
            converged(&factory, &maps, &namespace).await;
            eventually("two tombstones", async || {
                recorder
                    .seen()
                    .iter()
                    .filter(|s| {
                        matches!(
                            s,
                            Seen::Delete {
                                tombstone: true,
                                ..
                            }
                        )
                    })
                    .count()
                    == 2
            })
            .await;
            let tombstones: Vec<String> = recorder
                .seen()
                .iter()
                .filter(|s| matches!(s, Seen::Delete { .. }))
                .map(|s| s.name().to_string())
                .collect();
            assert_eq!(tombstones, ["cm-1", "cm-2"], "{:?}", recorder.seen());
            stop.cancel();
        },
    )
    .await;
}
