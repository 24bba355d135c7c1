//! Two managers on one Lease: one reconciles at a time, never both; the
//! standby, its caches already synced, takes over when the leader stops
//! (on the test server and on the real kube-apiserver: one body, two
//! backends).

use std::sync::Arc;
use std::time::Duration;

use clientgo_controller::{Action, Controller, LeaderElection, Manager, ManagerOptions, Replicas};
use clientgo_leaderelection::LeaderElectionConfig;
use k8s_openapi::api::apps::v1::Deployment;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::support::{Cluster, DropFlag, eventually, on_each_cluster, start};
use clientgo_testing::never_within;

/// Every reconcile: which replica, from when to when.
#[derive(Default)]
struct Log(Mutex<Vec<(&'static str, Instant, Instant)>>);

impl Log {
    fn count(&self, replica: &str) -> usize {
        self.0
            .lock()
            .iter()
            .filter(|(r, _, _)| *r == replica)
            .count()
    }
}

/// A reconcile of `replica` that started at `started`, logged when
/// dropped.
struct Entry {
    log: Arc<Log>,
    replica: &'static str,
    started: Instant,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.log
            .0
            .lock()
            .push((self.replica, self.started, Instant::now()));
    }
}

fn replica(cluster: &Cluster, identity: &'static str, log: &Arc<Log>) -> Manager {
    let election = LeaderElection::new(&cluster.namespace, "operator", identity).config(
        LeaderElectionConfig::default()
            .lease_duration(Duration::from_secs(3))
            .renew_deadline(Duration::from_secs(2))
            .retry_period(Duration::from_millis(200))
            .release_on_cancel(true),
    );
    let manager = cluster
        .manager_with(ManagerOptions::default().replicas(Replicas::LeaderElection(election)));
    Controller::for_::<Deployment>(&manager)
        .complete(
            move |_: Arc<Deployment>, log: Arc<Log>| async move {
                // Logged when the reconcile ends, however it ends (a
                // stopped one too).
                let _entry = Entry {
                    log: Arc::clone(&log),
                    replica: identity,
                    started: Instant::now(),
                };
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, String>(Action::requeue_after(Duration::from_millis(30)))
            },
            Arc::clone(log),
        )
        .unwrap();
    manager
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_reconciles_at_a_time_and_the_standby_takes_over() {
    on_each_cluster(|cluster| async move {
        cluster.create_deployment("web").await;
        let log = Arc::new(Log::default());
        let first = replica(&cluster, "first", &log);
        let (stop_first, running_first) = start(&first);
        eventually("the first replica to lead and reconcile", || async {
            first.is_leading() && log.count("first") >= 3
        })
        .await;

        let second = replica(&cluster, "second", &log);
        let (stop_second, running_second) = start(&second);
        eventually("the standby's caches to sync", || async {
            second.is_ready()
        })
        .await;
        never_within(
            "the standby leading or reconciling",
            Duration::from_millis(600),
            async || second.is_leading() || log.count("second") > 0,
        )
        .await;

        let handed_over = Instant::now();
        stop_first.cancel();
        running_first.await.unwrap().unwrap();
        eventually("the standby to take over", || async {
            log.count("second") >= 3
        })
        .await;
        // Released, not expired: the standby led within a few retry periods.
        let first_second = log
            .0
            .lock()
            .iter()
            .filter(|(r, _, _)| *r == "second")
            .map(|(_, started, _)| *started)
            .min()
            .unwrap();
        assert!(
            first_second - handed_over < Duration::from_millis(2_500),
            "took over after {:?}",
            first_second - handed_over
        );
        let last_first = log
            .0
            .lock()
            .iter()
            .filter(|(r, _, _)| *r == "first")
            .map(|(_, _, ended)| *ended)
            .max()
            .unwrap();
        assert!(
            last_first <= first_second,
            "both replicas reconciled at once"
        );
        stop_second.cancel();
        running_second.await.unwrap().unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_renew_stops_its_reconciles_and_says_so() {
    use clientgo_apimachinery::GroupResource;
    use clientgo_testing::Verb;
    use std::sync::atomic::{AtomicBool, Ordering};

    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;
    let election = LeaderElection::new("team", "operator", "only").config(
        LeaderElectionConfig::default()
            .lease_duration(Duration::from_secs(3))
            .renew_deadline(Duration::from_secs(2))
            .retry_period(Duration::from_millis(200)),
    );
    let manager = cluster
        .manager_with(ManagerOptions::default().replicas(Replicas::LeaderElection(election)));
    let started = Arc::new(AtomicBool::new(false));
    let stopped = Arc::new(AtomicBool::new(false));
    let context = Arc::new((Arc::clone(&started), Arc::clone(&stopped)));
    Controller::for_::<Deployment>(&manager)
        .complete(
            |_: Arc<Deployment>, context: Arc<(Arc<AtomicBool>, Arc<AtomicBool>)>| async move {
                let _stopped = DropFlag(Arc::clone(&context.1));
                context.0.store(true, Ordering::SeqCst);
                // Far longer than the lease: only a stop ends it.
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok::<_, String>(Action::done())
            },
            context,
        )
        .unwrap();
    let (_stop, running) = start(&manager);
    eventually("the reconcile to start", || async {
        started.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;
    // Renewals are refused from now on.
    cluster.server().deny(
        Verb::Update,
        GroupResource::new("coordination.k8s.io", "leases"),
    );
    let result = tokio::time::timeout(Duration::from_secs(15), running)
        .await
        .expect("run returns once the renew deadline passed")
        .unwrap();
    assert!(
        matches!(result, Err(clientgo_controller::Error::LeaderElectionLost)),
        "{result:?}"
    );
    assert!(
        stopped.load(Ordering::SeqCst),
        "the reconcile went on after the lease was lost"
    );
    assert!(!manager.is_leading());
}
