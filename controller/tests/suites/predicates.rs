//! `with_event_filter`: events the predicates refuse never reach the
//! queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clientgo_controller::predicate::{generation_changed, labels_changed};
use clientgo_controller::{Action, Controller, PredicateExt, WatchOptions};
use clientgo_rest::{Patch, PatchOptions};
use k8s_openapi::api::apps::v1::Deployment;

use crate::support::{Cluster, eventually, start};
use clientgo_testing::never_within;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_spec_and_label_changes_reach_the_reconcile() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;
    let manager = cluster.manager();
    let runs = Arc::new(AtomicUsize::new(0));
    let replicas_seen = Arc::new(std::sync::atomic::AtomicI32::new(0));
    Controller::for_::<Deployment>(&manager)
        .with_event_filter(generation_changed().or(labels_changed()))
        .complete(
            |deployment: Arc<Deployment>,
             context: Arc<(Arc<AtomicUsize>, Arc<std::sync::atomic::AtomicI32>)>| async move {
                context.0.fetch_add(1, Ordering::SeqCst);
                let replicas = deployment.spec.as_ref().and_then(|s| s.replicas);
                context.1.store(replicas.unwrap_or(-1), Ordering::SeqCst);
                Ok::<_, String>(Action::done())
            },
            Arc::new((Arc::clone(&runs), Arc::clone(&replicas_seen))),
        )
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("the create", || async { runs.load(Ordering::SeqCst) == 1 }).await;
    let deployments = cluster.deployments();
    let patch = |body: serde_json::Value| {
        let deployments = deployments.clone();
        async move {
            deployments
                .patch("web", &PatchOptions::default(), &Patch::Merge(body))
                .await
                .unwrap()
        }
    };
    // An annotation: neither generation nor labels change.
    let annotated = patch(serde_json::json!({"metadata": {"annotations": {"a": "1"}}})).await;
    // A status write.
    let status = deployments
        .patch_status(
            "web",
            &PatchOptions::default(),
            &Patch::Merge(serde_json::json!({"status": {"observedGeneration": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(annotated.metadata.generation, status.metadata.generation);
    // Both writes are in the cache, so their events went through the
    // filter; a key the filter let through would be reconciled within
    // the grace below, before the spec change could merge with it in
    // the queue.
    let lister = manager.factory().lister_for::<Deployment>();
    eventually("the status write in the cache", || async {
        lister
            .get_metadata("team/web")
            .and_then(|meta| meta.resource_version().map(str::to_string))
            == status.metadata.resource_version
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "an annotation or status write was reconciled"
    );
    // A spec change bumps the generation. Events reach the queue in
    // order, so once its reconcile ran, the filtered writes before it
    // had their chance.
    patch(serde_json::json!({"spec": {"replicas": 3}})).await;
    eventually("the spec change", || async {
        replicas_seen.load(Ordering::SeqCst) == 3
    })
    .await;
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "filtered writes reconciled (one run for the create, one for the spec)"
    );
    patch(serde_json::json!({"metadata": {"labels": {"tier": "front"}}})).await;
    eventually("the label change", || async {
        runs.load(Ordering::SeqCst) == 3
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_and_label_selector_narrow_what_is_reconciled() {
    use clientgo_apimachinery::LabelSelector;
    use clientgo_rest::{CreateOptions, ResourceClient};
    use k8s_openapi::api::core::v1::ConfigMap;
    use parking_lot::Mutex;

    let cluster = Cluster::start().await;
    let mut front = crate::support::deployment("front");
    front.metadata.labels = Some([("tier".to_string(), "front".to_string())].into());
    let front = cluster
        .deployments()
        .create(&CreateOptions::default(), &front)
        .await
        .unwrap();
    cluster.create_deployment("back").await;
    let mut elsewhere = crate::support::deployment("front");
    elsewhere.metadata.namespace = Some("other".into());
    elsewhere.metadata.labels = front.metadata.labels.clone();
    ResourceClient::<Deployment>::namespaced(cluster.client.clone(), "other")
        .create(&CreateOptions::default(), &elsewhere)
        .await
        .unwrap();

    let manager = cluster.manager();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    Controller::for_with::<Deployment>(
        &manager,
        WatchOptions::default().label_selector(LabelSelector::parse("tier=front").unwrap()),
    )
    .owns::<ConfigMap>()
    .namespace("team")
    .complete(
        |deployment: Arc<Deployment>, seen: Arc<Mutex<Vec<String>>>| async move {
            let key = format!(
                "{}/{}",
                deployment.metadata.namespace.as_deref().unwrap_or_default(),
                deployment.metadata.name.as_deref().unwrap_or_default()
            );
            seen.lock().push(key);
            Ok::<_, String>(Action::done())
        },
        Arc::clone(&seen),
    )
    .unwrap();
    let (stop, running) = start(&manager);
    eventually("front reconciled", || async { seen.lock().len() == 1 }).await;
    // A child without the label still reconciles its owner.
    cluster
        .create_owned_config_map(&front, "front-config")
        .await;
    eventually("the child's owner reconciled", || async {
        seen.lock().len() == 2
    })
    .await;
    never_within(
        "a reconcile outside the namespace or the selector",
        Duration::from_millis(300),
        async || seen.lock().len() != 2,
    )
    .await;
    assert_eq!(
        *seen.lock(),
        vec!["team/front".to_string(), "team/front".to_string()]
    );
    stop.cancel();
    running.await.unwrap().unwrap();
}
