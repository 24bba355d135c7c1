//! A derived kind used as a built-in one: `ResourceClient`, the
//! factory's informer and lister (compact storage by default), the
//! decoded storage, and a warm restart from a snapshot. No codegen.

use std::sync::Arc;
use std::time::Duration;

use clientgo::crd::{CustomResource, Schema};
use clientgo::informers::{
    InformerFactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory, SnapshotOptions,
    Storage,
};
use clientgo::prelude::CancellationToken;
use clientgo::rest::{CreateOptions, DeleteOptions};
use clientgo_testing::eventually;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::{Deserialize, Serialize};

use super::support::server;

pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![Widget::crd()]
}

/// A widget.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "typed.derive.test",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
#[resource(derive = "PartialEq")]
#[serde(rename_all = "camelCase")]
pub(crate) struct WidgetSpec {
    size: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner_name: Option<String>,
}

#[derive(Schema, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct WidgetStatus {
    ready: bool,
}

#[tokio::test]
async fn informers_listers_and_clients_take_a_derived_kind() {
    let Some(server) = server().await else { return };
    let api = server.api::<Widget>();
    for (name, size) in [("a", 1), ("b", 2)] {
        let widget = Widget::new(
            name,
            WidgetSpec {
                size,
                owner_name: None,
            },
        )
        .in_namespace(&server.namespace);
        api.create(&CreateOptions::default(), &widget)
            .await
            .unwrap();
    }
    for storage in [Storage::default(), Storage::Decoded] {
        let options = InformerFactoryOptions::default()
            .namespace(server.namespace.clone())
            .storage(storage);
        let factory = SharedInformerFactory::with_options(server.client.clone(), options);
        let informer = factory.informer_for::<Widget>();
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let record = seen.clone();
        informer
            .add_event_handler(ResourceEventHandlerFuncs::<Widget>::new().on_add(
                move |widget: &Arc<Widget>, _| {
                    record.lock().push(widget.spec.size);
                },
            ))
            .unwrap();
        let stop = CancellationToken::new();
        factory.start(&stop);
        factory
            .wait_for_cache_sync(Duration::from_secs(30))
            .await
            .unwrap();
        let lister = factory.lister_for::<Widget>();
        let a = lister.namespace(&server.namespace).get("a").unwrap();
        assert_eq!(
            a.spec,
            WidgetSpec {
                size: 1,
                owner_name: None
            }
        );
        assert_eq!(
            a.metadata.namespace.as_deref(),
            Some(server.namespace.as_str())
        );
        let c = Widget::new(
            "c",
            WidgetSpec {
                size: 3,
                owner_name: Some("o".into()),
            },
        )
        .in_namespace(&server.namespace);
        api.create(&CreateOptions::default(), &c).await.unwrap();
        eventually("the informer sees c", async || {
            lister.namespace(&server.namespace).get("c").is_some()
        })
        .await;
        // The handler hears of it after the cache has it.
        eventually("the handler hears of a, b and c", async || {
            let mut sizes = seen.lock().clone();
            sizes.sort();
            sizes == [1, 2, 3]
        })
        .await;
        api.delete("c", &DeleteOptions::default()).await.unwrap();
        eventually("the informer sees c deleted", async || {
            lister.namespace(&server.namespace).get("c").is_none()
        })
        .await;
        stop.cancel();
        factory.shutdown().await;
    }
}

#[tokio::test]
async fn a_derived_kind_restarts_warm_from_its_snapshot() {
    let Some(server) = server().await else { return };
    let api = server.api::<Widget>();
    let widget = Widget::new(
        "kept",
        WidgetSpec {
            size: 7,
            owner_name: None,
        },
    )
    .in_namespace(&server.namespace);
    api.create(&CreateOptions::default(), &widget)
        .await
        .unwrap();
    let dir = std::env::temp_dir().join(format!("clientgo-derive-snapshot-{}", std::process::id()));
    let options = InformerFactoryOptions::default()
        .namespace(server.namespace.clone())
        .snapshot(SnapshotOptions::new(&dir).interval(Duration::ZERO));
    for run in 0..2 {
        let factory = SharedInformerFactory::with_options(server.client.clone(), options.clone());
        let informer = factory.informer_for::<Widget>();
        let stop = CancellationToken::new();
        factory.start(&stop);
        factory
            .wait_for_cache_sync(Duration::from_secs(30))
            .await
            .unwrap();
        let kept = informer
            .lister()
            .namespace(&server.namespace)
            .get("kept")
            .unwrap();
        assert_eq!(kept.spec.size, 7);
        stop.cancel();
        factory.shutdown().await;
        let snapshots = informer.snapshot_stats();
        if run == 0 {
            assert_eq!(snapshots.loaded, 0);
            assert!(snapshots.written >= 1, "{snapshots:?}");
        } else {
            assert_eq!(snapshots.loaded, 1, "{snapshots:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
