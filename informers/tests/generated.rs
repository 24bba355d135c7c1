//! The informers and listers clientgo-codegen generates, used for real:
//! the built-in ones committed in `clientgo_informers::builtin`
//! (`factory.core().v1().pods()`), and the ones generated from
//! `codegen/tests/fixtures/crontab.yaml` into `tests/crontab_informers/`
//! (`factory.stable().v1().crontabs()`), and the ones generated from a
//! cluster's spec with no Rust type for its CRD, in
//! `tests/dynamic_crontab_informers/`, against the test API server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
// The CRD types below are `pub` as a library would have them.
#![allow(unreachable_pub)]

// In a binary crate (a test is one) the generated items nobody calls are
// dead code; a library would export them instead.
#[rustfmt::skip]
#[allow(dead_code, unreachable_pub)]
#[path = "crontab_informers/mod.rs"]
mod crontab_informers;

// Generated from `codegen/tests/fixtures/crd-spec.json` (a cluster's
// `/openapi/v2` serving CronTabs) with no `--type`: DynamicObjects.
#[rustfmt::skip]
#[allow(dead_code, unreachable_pub)]
#[path = "dynamic_crontab_informers/mod.rs"]
mod dynamic_crontab_informers;

use std::time::Duration;

use crate::support::*;
use clientgo_apimachinery::{ApiResource, GroupResource, GroupVersionResource, LabelSelector};
use clientgo_informers::SharedInformerFactory;
use clientgo_rest::{CreateOptions, ResourceClient};
use clientgo_testing::{TestApiServer, custom_resource_definition, realistic_pod};
use crontab_informers::CronTabInformers;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_pod_informer_and_lister_serve_the_cache() {
    let server = TestApiServer::builder().start().await.unwrap();
    let pods = GroupResource::new("", "pods");
    for index in 0..6 {
        let namespace = if index < 4 { "shop" } else { "blog" };
        server
            .storage()
            .create(&pods, namespace, realistic_pod(index, namespace))
            .unwrap();
    }
    let factory = SharedInformerFactory::new(client(&server), Duration::ZERO);
    let typed = factory.core().v1().pods();
    assert!(
        typed
            .informer()
            .same_informer(&factory.informer_for::<Pod>()),
        "the accessor hands out the factory's one pod informer"
    );
    start_and_sync(&factory).await;

    let lister = typed.lister();
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 6);
    let shop = lister.pods("shop").list(&LabelSelector::everything());
    assert_eq!(shop.len(), 4);
    let name = shop[0].metadata.name.clone().unwrap();
    let pod = lister.pods("shop").get(&name).unwrap();
    assert_eq!(pod.metadata.namespace.as_deref(), Some("shop"));
    assert!(
        lister.pods("blog").get(&name).is_none(),
        "{name} is in shop, not blog"
    );
    assert!(lister.pods("shop").try_get(&name).unwrap().is_some());
    assert!(lister.pods("blog").try_get(&name).unwrap().is_none());

    // A pod created after sync reaches the generated lister.
    let created = server
        .storage()
        .create(&pods, "blog", realistic_pod(99, "blog"))
        .unwrap();
    typed
        .informer()
        .wait_for_resource_version(&created.resource_version.to_string())
        .await
        .unwrap();
    assert_eq!(
        lister.pods("blog").list(&LabelSelector::everything()).len(),
        3
    );
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn for_resource_knows_every_built_in_resource_without_asking_first() {
    let server = TestApiServer::builder().start().await.unwrap();
    server
        .storage()
        .create(
            &GroupResource::new("apps", "deployments"),
            "default",
            json!({"metadata": {"name": "web"}, "spec": {"selector": {}, "template": {}}}),
        )
        .unwrap();
    let factory = SharedInformerFactory::new(client(&server), Duration::ZERO);
    let deployments = factory
        .for_resource(&ApiResource::of::<Deployment>())
        .unwrap();
    assert!(
        deployments
            .downcast::<Deployment>()
            .unwrap()
            .same_informer(&factory.apps().v1().deployments().informer()),
        "for_resource and the typed accessor share one informer"
    );
    let unknown = GroupVersionResource::new("example.com", "v1", "widgets");
    assert!(clientgo_informers::builtin::for_resource(&factory, &unknown).is_none());

    start_and_sync(&factory).await;
    assert_eq!(
        deployments
            .lister()
            .list(&LabelSelector::everything())
            .len(),
        1
    );
    let cluster_scoped = factory.core().v1().nodes().lister();
    assert!(cluster_scoped.get("node-1").is_none());
    factory.shutdown().await;
}

// CronTab and ClusterWidget, the types the CRD fixture's informers were
// generated for (`--type CronTab=crate::CronTab`).
include!("../../codegen/tests/fixtures/crontab_types.rs");

/// Creates CRDs through the API, as `kubectl apply` would:
/// (group, version, kind, plural, namespaced) each.
async fn create_crds(client: &clientgo_rest::RestClient, crds: &[(&str, &str, &str, &str, bool)]) {
    let api = ResourceClient::<CustomResourceDefinition>::all(client.clone());
    for (group, version, kind, plural, namespaced) in crds {
        let crd: CustomResourceDefinition = serde_json::from_value(custom_resource_definition(
            group,
            version,
            kind,
            plural,
            *namespaced,
        ))
        .unwrap();
        api.create(&CreateOptions::default(), &crd).await.unwrap();
    }
}

/// Stores a CronTab named `name` in `default`; gives its resourceVersion.
fn create_crontab(server: &TestApiServer, name: &str, schedule: &str) -> String {
    server
        .storage()
        .create(
            &GroupResource::new("stable.example.com", "crontabs"),
            "default",
            json!({"metadata": {"name": name}, "spec": {"cronSpec": schedule}}),
        )
        .unwrap()
        .resource_version
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_generated_from_crds_watch_custom_resources() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = client(&server);
    create_crds(
        &client,
        &[
            ("stable.example.com", "v1", "CronTab", "crontabs", true),
            (
                "example.com",
                "v1alpha1",
                "ClusterWidget",
                "clusterwidgets",
                false,
            ),
        ],
    )
    .await;
    create_crontab(&server, "nightly", "0 3 * * *");

    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    crontab_informers::register_all(&factory);
    let widgets = factory
        .for_resource(&ApiResource::of::<ClusterWidget>())
        .unwrap();
    let typed = factory.stable().v1().crontabs();
    // As in client-go, an informer runs only if asked for before start.
    let lister = typed.lister();
    start_and_sync(&factory).await;

    let nightly = lister.crontabs("default").get("nightly").unwrap();
    assert_eq!(nightly.spec.cron_spec, "0 3 * * *");

    let created = server
        .storage()
        .create(
            &GroupResource::new("example.com", "clusterwidgets"),
            "",
            json!({"metadata": {"name": "gear"}}),
        )
        .unwrap();
    widgets
        .downcast::<ClusterWidget>()
        .unwrap()
        .wait_for_resource_version(&created.resource_version.to_string())
        .await
        .unwrap();
    let gear = factory
        .example()
        .v1alpha1()
        .clusterwidgets()
        .lister()
        .get("gear")
        .unwrap();
    assert_eq!(gear.metadata.name.as_deref(), Some("gear"));

    let by_lookup = crontab_informers::for_resource(
        &factory,
        &GroupVersionResource::new("stable.example.com", "v1", "crontabs"),
    )
    .unwrap();
    assert_eq!(
        by_lookup.lister().list(&LabelSelector::everything()).len(),
        1
    );
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_generated_without_a_type_cache_dynamic_objects() {
    use dynamic_crontab_informers::DynamicCronTabInformers;

    let server = TestApiServer::builder().start().await.unwrap();
    let client = client(&server);
    create_crds(
        &client,
        &[("stable.example.com", "v1", "CronTab", "crontabs", true)],
    )
    .await;
    create_crontab(&server, "nightly", "0 3 * * *");

    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let accessor = DynamicCronTabInformers::stable(&factory).v1().crontabs();
    let lister = accessor.lister();
    start_and_sync(&factory).await;

    let nightly = lister.crontabs("default").get("nightly").unwrap();
    assert_eq!(nightly.data["spec"]["cronSpec"], "0 3 * * *");
    assert_eq!(nightly.metadata.name.as_deref(), Some("nightly"));

    // Created later: the dynamic informer watches, like a typed one.
    let created = create_crontab(&server, "hourly", "0 * * * *");
    accessor
        .informer()
        .wait_for_resource_version(&created)
        .await
        .unwrap();
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 2);

    // The same informer through the generated `for_resource`.
    let by_lookup = dynamic_crontab_informers::for_resource(
        &factory,
        &GroupVersionResource::new("stable.example.com", "v1", "crontabs"),
    )
    .unwrap();
    assert_eq!(
        by_lookup.lister().list(&LabelSelector::everything()).len(),
        2
    );
    factory.shutdown().await;
}
