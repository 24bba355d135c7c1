//! Sharded managers split the keys: once both replicas hold their share,
//! every change is reconciled by exactly one of them, none lost.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use clientgo_controller::{Action, Controller, Manager, ManagerOptions, Replicas, Sharding};
use clientgo_leaderelection::{LeaderElectionConfig, ShardElectorOptions};
use clientgo_rest::{Patch, PatchOptions};
use k8s_openapi::api::apps::v1::Deployment;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::support::{Cluster, eventually, start};

/// Every reconcile: replica and deployment name.
#[derive(Default)]
struct Log(Mutex<Vec<(&'static str, String)>>);

/// Every reconcile since the start, with when it ran.
#[derive(Default)]
struct Intervals(Mutex<Vec<(&'static str, String, Instant, Instant)>>);

impl Intervals {
    /// Two replicas' reconciles of one key that overlapped in time.
    fn overlaps(&self) -> Vec<(String, &'static str, &'static str)> {
        let all = self.0.lock();
        let mut found = Vec::new();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if a.0 != b.0 && a.1 == b.1 && a.2 < b.3 && b.2 < a.3 {
                    found.push((a.1.clone(), a.0, b.0));
                }
            }
        }
        found
    }
}

impl Log {
    fn replicas_per_key(&self) -> BTreeMap<String, BTreeSet<&'static str>> {
        let mut per_key: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
        for (replica, key) in self.0.lock().iter() {
            per_key.entry(key.clone()).or_default().insert(replica);
        }
        per_key
    }
}

fn replica(
    cluster: &Cluster,
    identity: &'static str,
    log: &Arc<Log>,
    intervals: &Arc<Intervals>,
) -> Manager {
    let options = ShardElectorOptions::new("team", "operator")
        .shards(4)
        .election(
            LeaderElectionConfig::default()
                .lease_duration(Duration::from_secs(3))
                .renew_deadline(Duration::from_secs(2))
                .retry_period(Duration::from_millis(200)),
        );
    let manager = cluster.manager_with(
        ManagerOptions::default().replicas(Replicas::Sharded(Sharding::new(identity, options))),
    );
    Controller::for_::<Deployment>(&manager)
        .max_concurrent_reconciles(2)
        .complete(
            move |deployment: Arc<Deployment>, context: Arc<(Arc<Log>, Arc<Intervals>)>| async move {
                let name = deployment.metadata.name.clone().unwrap_or_default();
                let started = Instant::now();
                tokio::time::sleep(Duration::from_millis(5)).await;
                context.0 .0.lock().push((identity, name.clone()));
                context.1 .0.lock().push((identity, name, started, Instant::now()));
                Ok::<_, String>(Action::done())
            },
            Arc::new((Arc::clone(log), Arc::clone(intervals))),
        )
        .unwrap();
    manager
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_split_the_keys_with_none_lost_or_doubled() {
    let cluster = Cluster::start().await;
    let names: Vec<String> = (0..16).map(|i| format!("app-{i}")).collect();
    for name in &names {
        cluster.create_deployment(name).await;
    }
    let log = Arc::new(Log::default());
    let intervals = Arc::new(Intervals::default());
    let first = replica(&cluster, "first", &log, &intervals);
    let (stop_first, running_first) = start(&first);
    eventually("the first replica to reconcile every key", || async {
        log.replicas_per_key().len() == 16
    })
    .await;
    eventually("the first replica, alone, to hold every shard", || async {
        first.held_shards() == vec![0, 1, 2, 3]
    })
    .await;

    let second = replica(&cluster, "second", &log, &intervals);
    let (stop_second, running_second) = start(&second);
    eventually("each replica to hold two shards", || async {
        first.held_shards().len() == 2 && second.held_shards().len() == 2
    })
    .await;
    // Let the hand-over's reconciles finish, then watch a fresh change of
    // every key.
    tokio::time::sleep(Duration::from_millis(300)).await;
    log.0.lock().clear();
    let deployments = cluster.deployments();
    for name in &names {
        deployments
            .patch(
                name,
                &PatchOptions::default(),
                &Patch::Merge(serde_json::json!({"metadata": {"labels": {"round": "2"}}})),
            )
            .await
            .unwrap();
    }
    eventually("every change reconciled", || async {
        log.replicas_per_key().len() == 16
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let per_key = log.replicas_per_key();
    assert_eq!(per_key.len(), 16, "a key was lost: {per_key:?}");
    for (key, replicas) in &per_key {
        assert_eq!(replicas.len(), 1, "{key} reconciled by {replicas:?}");
    }
    // Through the hand-over too, no key ran on both replicas at once.
    assert_eq!(intervals.overlaps(), Vec::new());
    let by_first = per_key.values().filter(|r| r.contains("first")).count();
    assert!(
        by_first > 0 && by_first < 16,
        "first reconciled {by_first} of 16"
    );
    // The first replica stops and releases its shards: the second holds
    // all four well before the 3 s leases could have run out.
    let stopped = Instant::now();
    stop_first.cancel();
    running_first.await.unwrap().unwrap();
    assert!(first.held_shards().is_empty(), "{:?}", first.held_shards());
    eventually("the second replica to take every shard", || async {
        second.held_shards() == vec![0, 1, 2, 3]
    })
    .await;
    assert!(
        stopped.elapsed() < Duration::from_millis(2500),
        "taken over after {:?}: the shards were not released",
        stopped.elapsed()
    );
    stop_second.cancel();
    running_second.await.unwrap().unwrap();
}
