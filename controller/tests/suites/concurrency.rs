//! `max_concurrent_reconciles` is honoured, one key never runs twice at
//! once, and a key changed during its reconcile runs once more after it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_controller::{Action, Controller};
use clientgo_rest::{Patch, PatchOptions};
use k8s_openapi::api::apps::v1::Deployment;
use parking_lot::Mutex;

use crate::support::{Cluster, eventually, start};

#[derive(Default)]
struct Overlap {
    /// Reconciles running per key now.
    running: Mutex<BTreeMap<String, usize>>,
    /// The most reconciles of one key ever running at once.
    most_per_key: Mutex<usize>,
    /// The most reconciles ever running at once.
    most: Mutex<usize>,
    /// Reconciles per key, and the last replica count each one saw.
    runs: Mutex<BTreeMap<String, (usize, i32)>>,
}

async fn slow_reconcile(
    deployment: Arc<Deployment>,
    overlap: Arc<Overlap>,
) -> Result<Action, String> {
    let key = deployment.metadata.name.clone().unwrap_or_default();
    {
        let mut running = overlap.running.lock();
        let mine = running.entry(key.clone()).or_default();
        *mine += 1;
        let per_key = *mine;
        let total: usize = running.values().sum();
        let mut most_per_key = overlap.most_per_key.lock();
        *most_per_key = (*most_per_key).max(per_key);
        let mut most = overlap.most.lock();
        *most = (*most).max(total);
    }
    tokio::time::sleep(Duration::from_millis(60)).await;
    let replicas = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or_default();
    {
        let mut runs = overlap.runs.lock();
        let entry = runs.entry(key.clone()).or_default();
        entry.0 += 1;
        entry.1 = replicas;
    }
    *overlap.running.lock().entry(key).or_default() -= 1;
    Ok(Action::done())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_at_most_and_never_one_key_twice() {
    let cluster = Cluster::start().await;
    for index in 0..12 {
        cluster.create_deployment(&format!("app-{index}")).await;
    }
    let manager = cluster.manager();
    let overlap = Arc::new(Overlap::default());
    let handle = Controller::for_::<Deployment>(&manager)
        .max_concurrent_reconciles(3)
        .complete(slow_reconcile, Arc::clone(&overlap))
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("every object reconciled", || async {
        overlap.runs.lock().len() == 12
    })
    .await;
    // Write app-0 over and over while it is being reconciled.
    let deployments = cluster.deployments();
    for replicas in 2..=8 {
        deployments
            .patch(
                "app-0",
                &PatchOptions::default(),
                &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})),
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    eventually("the last write reconciled", || async {
        overlap
            .runs
            .lock()
            .get("app-0")
            .is_some_and(|run| run.1 == 8)
    })
    .await;
    eventually("the queue to settle", || async {
        handle.stats().active_workers == 0 && handle.queue_len() == 0
    })
    .await;
    assert_eq!(*overlap.most.lock(), 3, "three workers, all used");
    assert_eq!(
        *overlap.most_per_key.lock(),
        1,
        "never one key twice at once"
    );
    let app_0 = overlap.runs.lock()["app-0"].0;
    // Seven writes: at most one run each (plus the first run), at least
    // one after the last (checked above by the replicas it saw).
    assert!((2..=8).contains(&app_0), "app-0 reconciled {app_0} times");
    assert_eq!(handle.stats().most_active_workers, 3);
    assert_eq!(handle.stats().max_concurrent_reconciles, 3);
    stop.cancel();
    running.await.unwrap().unwrap();
}
