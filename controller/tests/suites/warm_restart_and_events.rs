//! A manager with a snapshot directory restarts warm (a watch, no list);
//! a controller's event recorder writes Events about its objects.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use clientgo_controller::{Action, Controller, Manager, ManagerOptions};
use clientgo_informers::{InformerFactoryOptions, SnapshotOptions};
use clientgo_record::{EventRecorder, EventType, object_reference};
use clientgo_rest::ResourceClient;
use clientgo_testing::Verb;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;

use crate::support::{Cluster, eventually, start};

struct Context {
    runs: AtomicUsize,
    recorder: EventRecorder,
}

fn manager(cluster: &Cluster, dir: &std::path::Path) -> (Manager, Arc<Context>) {
    let manager = cluster
        .manager_with(ManagerOptions::default().factory_options(
            InformerFactoryOptions::default().snapshot(SnapshotOptions::new(dir)),
        ));
    let context = Arc::new(Context {
        runs: AtomicUsize::new(0),
        recorder: manager.event_recorder("deployment-controller"),
    });
    Controller::for_::<Deployment>(&manager)
        .complete(
            |deployment: Arc<Deployment>, context: Arc<Context>| async move {
                context.runs.fetch_add(1, Ordering::SeqCst);
                context.recorder.event(
                    &object_reference(deployment.as_ref()),
                    EventType::Normal,
                    "Reconciled",
                    "all good",
                );
                Ok::<_, String>(Action::done())
            },
            Arc::clone(&context),
        )
        .unwrap();
    (manager, context)
}

/// Runs `manager` until `done`, then stops it.
async fn run_until(manager: &Manager, done: impl AsyncFnMut() -> bool) {
    let (stop, running) = start(manager);
    eventually("the reconciles", done).await;
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_resumes_from_the_snapshot_and_events_are_recorded() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;
    cluster.create_deployment("api").await;
    let dir = tempfile::tempdir().unwrap();

    let (first, context) = manager(&cluster, dir.path());
    let events = ResourceClient::<Event>::namespaced(cluster.client.clone(), "team");
    // Stopping the manager drops the events still queued: wait for them
    // while it runs.
    run_until(&first, || async {
        context.runs.load(Ordering::SeqCst) >= 2
            && events
                .list(&Default::default())
                .await
                .unwrap()
                .items
                .iter()
                .any(|event| event.reason.as_deref() == Some("Reconciled"))
    })
    .await;
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() >= 1,
        "the stop saved a snapshot"
    );

    cluster.server().requests().clear();
    let (second, context) = manager(&cluster, dir.path());
    run_until(&second, || async {
        context.runs.load(Ordering::SeqCst) >= 2
    })
    .await;
    let deployment_reads: Vec<_> = cluster
        .server()
        .requests()
        .records()
        .into_iter()
        .filter(|r| r.path.contains("deployments"))
        .collect();
    assert!(
        deployment_reads
            .iter()
            .all(|r| r.verb == Verb::Watch && !r.query.contains("sendInitialEvents=true")),
        "the restart listed: {:?}",
        deployment_reads
            .iter()
            .map(|r| (r.verb, r.query.clone()))
            .collect::<Vec<_>>()
    );
    assert!(!deployment_reads.is_empty());
}
