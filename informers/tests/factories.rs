//! The typed, dynamic and metadata factories against a real server:
//! sharing, late starts, sync errors that name their cause, metadata-only
//! caches and custom resources found through discovery.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::Duration;

use crate::support::*;
use clientgo_apimachinery::{
    ApiResource, DynamicObject, GroupResource, GroupVersionKind, GroupVersionResource,
    LabelSelector, PartialObjectMetadata,
};
use clientgo_informers::ReflectorOptions;
use clientgo_informers::{
    DynamicSharedInformerFactory, Error, InformerFactoryOptions, MetadataSharedInformerFactory,
    ResourceEventHandlerFuncs, SharedInformerFactory, Storage, SyncFailure, SyncWaitOptions,
    wait_for_cache_sync,
};
use clientgo_rest::{CreateOptions, ResourceClient};
use clientgo_testing::{TestApiServer, Verb, custom_resource_definition, realistic_pod};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_informer_per_type_and_late_informers_start_on_the_next_start() {
    let server = seeded(4).await;
    let factory = SharedInformerFactory::new(client(&server), Duration::ZERO);
    let first = factory.informer_for::<ConfigMap>();
    let second = factory.informer_for::<ConfigMap>();
    assert!(first.same_informer(&second));

    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.start(&stop); // idempotent
    let result = factory.wait_for_cache_sync(PATIENCE).await;
    assert_eq!(result.clone().unwrap().len(), 1, "{result:?}");
    assert_eq!(
        factory
            .lister_for::<ConfigMap>()
            .list(&LabelSelector::everything())
            .len(),
        4
    );

    let secrets = factory.informer_for::<Secret>();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !secrets.is_started(),
        "requested after start: waits for the next start"
    );
    factory.start(&stop);
    let result = factory.wait_for_cache_sync(PATIENCE).await;
    let synced = result.unwrap();
    assert_eq!(
        synced.keys().cloned().collect::<Vec<_>>(),
        ["configmaps", "secrets"]
    );
    assert!(synced.values().all(|synced| *synced));

    // for_resource finds the informers of known types (asked for, or
    // built in) only.
    let generic = factory
        .for_resource(&ApiResource::of::<ConfigMap>())
        .unwrap();
    assert!(
        generic
            .downcast::<ConfigMap>()
            .unwrap()
            .same_informer(&first)
    );
    assert_eq!(
        generic
            .lister()
            .namespace("default")
            .list(&LabelSelector::everything())
            .len(),
        4
    );
    let object = generic
        .lister()
        .namespace("default")
        .get("cm-00001")
        .unwrap();
    assert_eq!(object.name(), Some("cm-00001"));
    assert!(object.as_any().downcast_ref::<ConfigMap>().is_some());
    let widgets = ApiResource::namespaced(
        GroupVersionKind::new("example.com", "v1", "Widget"),
        "widgets",
    );
    assert!(matches!(
        factory.for_resource(&widgets),
        Err(Error::NoInformerFound { .. })
    ));

    factory.shutdown().await;
    assert!(
        first.is_stopped() && secrets.is_stopped(),
        "shutdown stops and waits"
    );
    factory.start(&stop);
    assert!(
        !factory.informer_for::<Pod>().is_started(),
        "start does nothing after shutdown"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_options_apply_to_every_informer() {
    let server = seeded(6).await;
    server
        .storage()
        .create(
            &config_maps(),
            "other",
            json!({"metadata": {"name": "elsewhere", "labels": {"app": "web"}}}),
        )
        .unwrap();
    let factory = SharedInformerFactory::with_options(
        client(&server),
        InformerFactoryOptions::default()
            .namespace("default")
            .tweak_list_options(|options| options.label_selector = Some("app=web".into()))
            .custom_resync::<ConfigMap>(Duration::from_secs(120))
            .keep_managed_fields(false),
    );
    let config_maps = factory.informer_for::<ConfigMap>();
    let registration = config_maps
        .add_event_handler(ResourceEventHandlerFuncs::new())
        .unwrap();
    assert_eq!(registration.resync_period(), Duration::from_secs(120));
    let _stop = start_and_sync(&factory).await;
    let mut names: Vec<String> = config_maps
        .lister()
        .list(&LabelSelector::everything())
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["cm-00000", "cm-00002", "cm-00004"],
        "namespace and selector applied"
    );
    assert_eq!(config_maps.name(), "configmaps in default");
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_cache_sync_names_the_forbidden_informer_and_its_403() {
    let server = TestApiServer::builder()
        .deny(Verb::List, GroupResource::new("", "pods"))
        .deny(Verb::Watch, GroupResource::new("", "pods"))
        .start()
        .await
        .unwrap();
    let factory = SharedInformerFactory::new(client(&server), Duration::ZERO);
    let config_maps = factory.informer_for::<ConfigMap>();
    let pods = factory.informer_for::<Pod>();
    let stop = CancellationToken::new();
    factory.start(&stop);

    // The wait ends as soon as config maps synced and the pods' 403,
    // which will not heal by itself, is known.
    let result = factory.wait_for_cache_sync(Duration::from_secs(20)).await;
    let error = result.unwrap_err();
    assert!(config_maps.has_synced());
    assert!(!pods.has_synced());
    assert_eq!(error.failure, SyncFailure::LastingErrors);
    assert_eq!(error.unsynced.len(), 1);
    assert_eq!(error.unsynced[0].name, "pods");
    assert_eq!(error.first_status_code(), Some(403));
    let message = error.to_string();
    println!("{message}");
    assert!(
        message.contains("pods") && message.contains("forbidden"),
        "{message}"
    );

    // The free function does the same over any informers.
    let error = wait_for_cache_sync(
        &[&config_maps, &pods],
        SyncWaitOptions::default().timeout(Duration::from_millis(300)),
    )
    .await
    .unwrap_err();
    assert_eq!(error.first_status_code(), Some(403));
    factory.shutdown().await;
}

/// A server holding `count` realistic pods in `default`.
async fn server_with_pods(count: usize) -> TestApiServer {
    let server = TestApiServer::builder().start().await.unwrap();
    for index in 0..count {
        server
            .storage()
            .create(
                &GroupResource::new("", "pods"),
                "default",
                realistic_pod(index, "default"),
            )
            .unwrap();
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_informer_caches_only_metadata() {
    let server = server_with_pods(5).await;
    let factory = MetadataSharedInformerFactory::new(client(&server), Duration::ZERO);
    let pods = factory.for_resource(&ApiResource::of::<Pod>());
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.wait_for_cache_sync(PATIENCE).await.unwrap();
    let cached: Vec<Arc<PartialObjectMetadata>> = pods.lister().list(&LabelSelector::everything());
    assert_eq!(cached.len(), 5);
    for object in &cached {
        assert_eq!(
            object.kind.as_deref(),
            Some("PartialObjectMetadata"),
            "the server's metadata form"
        );
        assert!(object.metadata.name.is_some() && object.metadata.labels.is_some());
    }
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dynamic_informer_decodes_compact_built_in_objects_with_their_type() {
    let server = server_with_pods(5).await;
    // Watch-list items carry their type; list items of a built-in type do
    // not (the real server's form), so the list's type must reach the
    // decode.
    for use_watch_list in [false, true] {
        let factory = DynamicSharedInformerFactory::with_options(
            client(&server),
            InformerFactoryOptions::default()
                .storage(Storage::Compact)
                .reflector(ReflectorOptions::default().use_watch_list(use_watch_list)),
        );
        let pods = factory.for_resource(&ApiResource::of::<Pod>());
        assert_eq!(pods.storage(), Storage::Compact);
        let stop = CancellationToken::new();
        factory.start(&stop);
        factory.wait_for_cache_sync(PATIENCE).await.unwrap();
        let cached = pods.lister().list(&LabelSelector::everything());
        assert_eq!(cached.len(), 5);
        for object in &cached {
            assert_eq!(
                object.kind.as_deref(),
                Some("Pod"),
                "watch-list {use_watch_list}"
            );
            assert_eq!(object.api_version.as_deref(), Some("v1"));
            assert!(object.data["spec"]["containers"].is_array());
        }
        factory.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dynamic_informer_watches_a_custom_resource_created_through_a_crd() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = client(&server);
    let crd: CustomResourceDefinition = serde_json::from_value(custom_resource_definition(
        "stable.example.com",
        "v1",
        "CronTab",
        "crontabs",
        true,
    ))
    .unwrap();
    ResourceClient::<CustomResourceDefinition>::all(client.clone())
        .create(&CreateOptions::default(), &crd)
        .await
        .unwrap();

    let factory = DynamicSharedInformerFactory::new(client.clone(), Duration::ZERO);
    let missing = factory
        .for_group_version_resource(&GroupVersionResource::new(
            "stable.example.com",
            "v1",
            "nothings",
        ))
        .await;
    assert!(
        matches!(missing, Err(Error::NotServed { .. })),
        "{missing:?}"
    );
    let crontabs = factory
        .for_group_version_resource(&GroupVersionResource::new(
            "stable.example.com",
            "v1",
            "crontabs",
        ))
        .await
        .unwrap();
    let stop = CancellationToken::new();
    factory.start(&stop);
    factory.wait_for_cache_sync(PATIENCE).await.unwrap();

    let resource = ApiResource::namespaced(
        GroupVersionKind::new("stable.example.com", "v1", "CronTab"),
        "crontabs",
    );
    let api = ResourceClient::dynamic(client, resource, Some("default"));
    let object = DynamicObject::new("nightly", &api.resource().clone())
        .within("default")
        .with_field("spec", json!({"cronSpec": "0 3 * * *"}));
    let created = api
        .create(&CreateOptions::default(), &object)
        .await
        .unwrap();
    crontabs
        .wait_for_resource_version(created.metadata.resource_version.as_deref().unwrap())
        .await
        .unwrap();
    let cached = crontabs
        .lister()
        .namespace("default")
        .get("nightly")
        .unwrap();
    assert_eq!(cached.data["spec"]["cronSpec"], "0 3 * * *");
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_custom_resource_reports_404_while_waiting() {
    let server = TestApiServer::builder().start().await.unwrap();
    let factory = DynamicSharedInformerFactory::new(client(&server), Duration::ZERO);
    let resource = ApiResource::namespaced(
        GroupVersionKind::new("example.com", "v1", "Widget"),
        "widgets",
    );
    factory.for_resource(&resource);
    let stop = CancellationToken::new();
    factory.start(&stop);
    let error = factory
        .wait_for_cache_sync(Duration::from_millis(800))
        .await
        .unwrap_err();
    assert_eq!(error.first_status_code(), Some(404), "{error}");
    factory.shutdown().await;
}

/// "Synced" is one fact: once `wait_for_cache_sync` returns, the
/// informer's resourceVersion and mode are those of the sync. (The
/// reflector used to record them only after handing the list to the
/// queue, so a waiter woken by the informer's pop could read `""` and
/// `NotSynced`: about 1 run in 10 of this loop failed.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_informer_shows_its_resource_version_and_mode_at_once() {
    let server = TestApiServer::builder().start().await.unwrap();
    let stop = CancellationToken::new();
    for round in 0..60 {
        let namespace = format!("empty-{round}");
        let mut informers = Vec::new();
        for use_watch_list in [true, false] {
            let factory = SharedInformerFactory::with_options(
                client(&server),
                InformerFactoryOptions::default()
                    .namespace(namespace.clone())
                    .reflector(ReflectorOptions::default().use_watch_list(use_watch_list)),
            );
            let informer = factory.informer_for::<ConfigMap>();
            factory.start(&stop);
            informers.push((use_watch_list, factory, informer));
        }
        for (use_watch_list, factory, informer) in &informers {
            factory.wait_for_cache_sync(PATIENCE).await.unwrap();
            let resource_version = informer.last_sync_resource_version();
            let mode = informer.stats().mode;
            assert!(
                !resource_version.is_empty(),
                "round {round}, watch-list {use_watch_list}: synced without a resourceVersion"
            );
            let expected = if *use_watch_list {
                clientgo_reflector::ReflectorMode::WatchList
            } else {
                clientgo_reflector::ReflectorMode::ListWatch
            };
            assert_eq!(mode, expected, "round {round}");
        }
    }
    stop.cancel();
}
