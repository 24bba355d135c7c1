//! The builder's and the manager's extension points: options per watch,
//! external triggers, a user's runnables, and health and readiness checks.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use clientgo_controller::predicate::generation_changed;
use clientgo_controller::runnable::{self, BoxError};
use clientgo_controller::{
    Action, Controller, Error, ManagerOptions, Request, Trigger, WatchOptions,
};
use clientgo_rest::{Patch, PatchOptions};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;

use crate::support::{Cluster, Tally, eventually, on_each_cluster, start, tally};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watchs_own_predicates_filter_only_its_events() {
    let cluster = Cluster::start().await;
    let parent = cluster.create_deployment("web").await;
    cluster.create_owned_config_map(&parent, "web-config").await;
    let config_maps = cluster.config_maps();
    let manager = cluster.manager();
    let runs = Arc::new(Tally::default());
    // The common setup: spec changes of the parent, every child event.
    Controller::for_with::<Deployment>(
        &manager,
        WatchOptions::default().predicate(generation_changed()),
    )
    .owns::<ConfigMap>()
    .complete(tally, Arc::clone(&runs))
    .unwrap();
    let (stop, running) = start(&manager);
    eventually("the first reconcile", || async { runs.count("web") >= 1 }).await;
    let settled = runs.count("web");

    // A child's data change passes (the parent's predicate is its own).
    config_maps
        .patch(
            "web-config",
            &PatchOptions::default(),
            &Patch::Merge(serde_json::json!({"data": {"a": "1"}})),
        )
        .await
        .unwrap();
    eventually("the child's change to reconcile its owner", || async {
        runs.count("web") == settled + 1
    })
    .await;

    // The parent's annotation does not (no new generation). Once the
    // write is in the cache its event went through the predicate; a key
    // let through would be reconciled within the grace below.
    let deployments = cluster.deployments();
    let annotated = deployments
        .patch(
            "web",
            &PatchOptions::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"annotations": {"a": "1"}}})),
        )
        .await
        .unwrap();
    let lister = manager.factory().lister_for::<Deployment>();
    eventually("the annotation in the cache", || async {
        lister
            .get_metadata("team/web")
            .and_then(|meta| meta.resource_version().map(str::to_string))
            == annotated.metadata.resource_version
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        runs.count("web"),
        settled + 1,
        "the annotation was reconciled"
    );
    // Its spec change does.
    deployments
        .patch(
            "web",
            &PatchOptions::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 4}})),
        )
        .await
        .unwrap();
    eventually("the spec change", || async {
        runs.count("web") == settled + 2
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_triggers_reconcile_one_key_or_all() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("a").await;
    cluster.create_deployment("b").await;
    let manager = cluster.manager();
    let runs = Arc::new(Tally::default());
    let (send, mut receive) = tokio::sync::mpsc::unbounded_channel::<Trigger>();
    let triggers = futures_util::stream::poll_fn(move |context| receive.poll_recv(context));
    Controller::for_::<Deployment>(&manager)
        .reconcile_on(triggers)
        .complete(tally, Arc::clone(&runs))
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("the initial reconciles", || async {
        runs.count("a") == 1 && runs.count("b") == 1
    })
    .await;
    send.send(Request::namespaced("team", "a").into()).unwrap();
    eventually("a's trigger", || async { runs.count("a") == 2 }).await;
    send.send(Trigger::All).unwrap();
    eventually("the trigger of all", || async {
        runs.count("a") == 3 && runs.count("b") == 2
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runnable_starts_after_the_caches_sync_and_stops_with_the_manager() {
    let cluster = Cluster::start().await;
    let manager = cluster.manager();
    let _ = manager.factory().informer_for::<Deployment>();
    let started_synced = Arc::new(AtomicBool::new(false));
    let stopped = Arc::new(AtomicBool::new(false));
    let ticks = Arc::new(AtomicUsize::new(0));
    let (seen_synced, seen_stop, ticking) = (
        Arc::clone(&started_synced),
        Arc::clone(&stopped),
        Arc::clone(&ticks),
    );
    let observer = manager.clone();
    manager
        .add(runnable::from_fn("ticker", move |stop| async move {
            seen_synced.store(observer.is_ready(), Ordering::SeqCst);
            while !stop.is_cancelled() {
                ticking.fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = tokio::time::sleep(Duration::from_millis(10)) => {}
                }
            }
            seen_stop.store(true, Ordering::SeqCst);
            Ok::<_, BoxError>(())
        }))
        .unwrap();
    let duplicate = manager.add(runnable::from_fn("ticker", |_| async { Ok(()) }));
    assert!(matches!(duplicate, Err(Error::DuplicateName { .. })));
    let (stop, running) = start(&manager);
    eventually("the runnable to tick", || async {
        ticks.load(Ordering::SeqCst) >= 3
    })
    .await;
    assert!(started_synced.load(Ordering::SeqCst), "started before sync");
    assert!(!stopped.load(Ordering::SeqCst));
    stop.cancel();
    running.await.unwrap().unwrap();
    assert!(
        stopped.load(Ordering::SeqCst),
        "not stopped by the shutdown"
    );
    let late = manager.add(runnable::from_fn("late", |_| async { Ok(()) }));
    assert!(matches!(late, Err(Error::AlreadyRun)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_runnable_stops_the_manager_with_its_error() {
    let cluster = Cluster::start().await;
    let manager = cluster.manager();
    let workers_stopped = Arc::new(AtomicBool::new(false));
    cluster.create_deployment("web").await;
    let flag = Arc::clone(&workers_stopped);
    Controller::for_::<Deployment>(&manager)
        .complete(
            move |_: Arc<Deployment>, _: Arc<()>| {
                let flag = Arc::clone(&flag);
                async move {
                    let _stopped = crate::support::DropFlag(flag);
                    std::future::pending::<()>().await;
                    Ok::<_, String>(Action::done())
                }
            },
            Arc::new(()),
        )
        .unwrap();
    manager
        .add(runnable::from_fn("doomed", |_| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Err::<(), BoxError>("the sidecar broke".into())
        }))
        .unwrap();
    let (_stop, running) = start(&manager);
    let ended = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    match ended {
        Err(Error::Runnable { name, source }) => {
            assert_eq!(name, "doomed");
            assert_eq!(source.to_string(), "the sidecar broke");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        workers_stopped.load(Ordering::SeqCst),
        "the reconcile still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_ready_checks_answer_on_the_probes() {
    let cluster = Cluster::start().await;
    let local = "127.0.0.1:0".parse().unwrap();
    let manager = cluster.manager_with(ManagerOptions::default().health_probe_bind_address(local));
    let _ = manager.factory().informer_for::<Deployment>();
    let webhook_ready = Arc::new(AtomicBool::new(false));
    let ready = Arc::clone(&webhook_ready);
    manager.add_ready_check("webhook", move || {
        if ready.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("certificates not loaded".into())
        }
    });
    let healthy = Arc::new(AtomicBool::new(true));
    let health = Arc::clone(&healthy);
    manager.add_health_check("loop", move || {
        if health.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("stuck".into())
        }
    });
    let (stop, running) = start(&manager);
    eventually("the caches to sync", || async { manager.is_ready() }).await;
    let probes = manager.health_probe_address().unwrap();
    let get = |path: &'static str| async move {
        let response = clientgo_rest::reqwest::get(format!("http://{probes}{path}"))
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    };
    assert_eq!(
        get("/readyz").await,
        (503, "webhook: certificates not loaded".to_string())
    );
    webhook_ready.store(true, Ordering::SeqCst);
    assert_eq!(get("/readyz").await, (200, "ok".to_string()));
    assert_eq!(get("/healthz").await, (200, "ok".to_string()));
    healthy.store(false, Ordering::SeqCst);
    assert_eq!(get("/healthz").await, (500, "loop: stuck".to_string()));
    stop.cancel();
    running.await.unwrap().unwrap();
}

/// `ManagerOptions::install_crds`: the CRDs are served before the caches
/// start, on both servers; a CRD the structural check refuses stops `run`
/// before anything starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_installs_its_crds_before_it_starts() {
    on_each_cluster(|cluster| async move {
        let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "managed.manager.clientgo.test"},
                "spec": {
                    "group": "manager.clientgo.test", "scope": "Namespaced",
                    "names": {"plural": "managed", "singular": "managed", "kind": "Managed"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]
                }
            }))
            .unwrap();
        let manager = cluster.manager_with(ManagerOptions::default().install_crds([crd.clone()]));
        let client = cluster.client.clone();
        let namespace = cluster.namespace.clone();
        let listed = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&listed);
        manager
            .add(runnable::from_fn("lists", move |_| async move {
                let path = format!("/apis/manager.clientgo.test/v1/namespaces/{namespace}/managed");
                let answer = client.get().abs_path(&path).send::<serde_json::Value>().await;
                seen.store(answer.is_ok(), Ordering::SeqCst);
                Ok::<_, BoxError>(())
            }))
            .unwrap();
        let (stop, running) = start(&manager);
        eventually("the runnable to list the new kind", || async { listed.load(Ordering::SeqCst) }).await;
        stop.cancel();
        running.await.unwrap().unwrap();

        let mut bad = crd;
        bad.metadata.name = Some("bads.manager.clientgo.test".into());
        bad.spec.names.plural = "bads".into();
        bad.spec.versions[0].schema = None;
        let refused = cluster.manager_with(ManagerOptions::default().install_crds([bad]));
        let result = refused.run(tokio_util::sync::CancellationToken::new()).await;
        assert!(matches!(result, Err(Error::InstallCrds(_))), "{result:?}");
    })
    .await;
}
