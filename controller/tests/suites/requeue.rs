//! `requeue_after` is honoured; errors back off through the rate limiter
//! or wait the error policy's delay; a deleted object's requeues stop.

use std::sync::Arc;
use std::time::Duration;

use clientgo_controller::{Action, Controller, Retry};
use clientgo_rest::DeleteOptions;
use clientgo_workqueue::ItemExponentialFailureRateLimiter;
use k8s_openapi::api::apps::v1::Deployment;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::support::{Cluster, eventually, start};
use clientgo_testing::never_within;

#[derive(Default)]
struct Calls(Mutex<Vec<Instant>>);

impl Calls {
    fn record(&self) {
        self.0.lock().push(Instant::now());
    }

    fn len(&self) -> usize {
        self.0.lock().len()
    }

    fn gaps(&self) -> Vec<Duration> {
        let calls = self.0.lock();
        calls.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_after_runs_again_after_the_delay_until_the_object_is_deleted() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;
    let manager = cluster.manager();
    let calls = Arc::new(Calls::default());
    let gone = Arc::new(Mutex::new(Vec::new()));
    let seen_gone = Arc::clone(&gone);
    let handle = Controller::for_::<Deployment>(&manager)
        .on_gone(move |request| seen_gone.lock().push(request.key()))
        .complete(
            |_: Arc<Deployment>, calls: Arc<Calls>| async move {
                calls.record();
                Ok::<_, String>(Action::requeue_after(Duration::from_millis(150)))
            },
            Arc::clone(&calls),
        )
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("four runs", || async { calls.len() >= 4 }).await;
    for gap in calls.gaps() {
        assert!(
            gap >= Duration::from_millis(140) && gap < Duration::from_secs(2),
            "runs {gap:?} apart, asked 150 ms: {:?}",
            calls.gaps()
        );
    }
    cluster
        .deployments()
        .delete("web", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the gone key to be reported", || async {
        !gone.lock().is_empty()
    })
    .await;
    let after_delete = calls.len();
    // The delay pending at the delete may still bring the key back once;
    // after that it is gone for good, not retried.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let gone_then = handle.stats().gone;
    never_within(
        "a deleted object reconciled or its key retried",
        Duration::from_millis(500),
        async || calls.len() != after_delete || handle.stats().gone != gone_then,
    )
    .await;
    assert!(gone_then <= 2, "{:?}", handle.stats());
    assert_eq!(gone.lock()[0], "team/web");
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_objects_pending_requeue_is_dropped() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;
    let manager = cluster.manager();
    let calls = Arc::new(Calls::default());
    let handle = Controller::for_::<Deployment>(&manager)
        .complete(
            |_: Arc<Deployment>, calls: Arc<Calls>| async move {
                calls.record();
                Ok::<_, String>(Action::requeue_after(Duration::from_millis(1500)))
            },
            Arc::clone(&calls),
        )
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("the first run", || async { calls.len() == 1 }).await;
    cluster
        .deployments()
        .delete("web", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the deletion to be seen", || async {
        handle.stats().gone == 1
    })
    .await;
    // Past the requeue asked before the deletion: it was dropped with the
    // object, so the key came back neither as a reconcile nor as gone.
    never_within(
        "the requeue pending at the deletion coming back",
        Duration::from_millis(2000),
        async || calls.len() != 1 || handle.stats().gone != 1,
    )
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_back_off_per_key_and_the_policy_can_give_up() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("failing").await;
    cluster.create_deployment("terminal").await;
    let manager = cluster.manager();
    let failing = Arc::new(Calls::default());
    let terminal = Arc::new(Calls::default());
    let context = Arc::new((Arc::clone(&failing), Arc::clone(&terminal)));
    let handle = Controller::for_::<Deployment>(&manager)
        .rate_limiter(Arc::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(20),
            Duration::from_secs(60),
        )))
        .error_policy(
            |deployment: &Arc<Deployment>, _: &String, _: &Arc<(Arc<Calls>, Arc<Calls>)>| {
                match deployment.metadata.name.as_deref() {
                    Some("terminal") => Retry::Never,
                    _ => Retry::Backoff,
                }
            },
        )
        .complete(
            |deployment: Arc<Deployment>, context: Arc<(Arc<Calls>, Arc<Calls>)>| async move {
                match deployment.metadata.name.as_deref() {
                    Some("failing") => context.0.record(),
                    _ => context.1.record(),
                }
                Err::<Action, _>("always fails".to_string())
            },
            context,
        )
        .unwrap();
    let (stop, running) = start(&manager);
    // 20, 40, 80, 160, 320 ms: five retries in about 0.6 s.
    eventually("six attempts", || async { failing.len() >= 6 }).await;
    let gaps = failing.gaps();
    for (index, gap) in gaps.iter().take(5).enumerate() {
        let asked = Duration::from_millis(20 << index);
        assert!(
            *gap >= asked.mul_f64(0.9) && *gap < asked * 5 + Duration::from_millis(500),
            "retry {index} after {gap:?}, the limiter asks {asked:?}: {gaps:?}"
        );
    }
    // The policy gave up on the other key after its first failure.
    assert_eq!(terminal.len(), 1);
    assert!(handle.stats().errors >= 7, "{:?}", handle.stats());
    assert_eq!(handle.stats().success, 0);
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_retry_after_a_failure_waits_its_delay() {
    let cluster = Cluster::start().await;
    cluster.create_deployment("web").await;
    let manager = cluster.manager();
    let calls = Arc::new(Calls::default());
    let handle = Controller::for_::<Deployment>(&manager)
        .error_policy(|_, _: &String, _: &Arc<Calls>| Retry::After(Duration::from_millis(200)))
        .complete(
            |_: Arc<Deployment>, calls: Arc<Calls>| async move {
                calls.record();
                // Three failures, then done.
                if calls.len() <= 3 {
                    Err("not yet".to_string())
                } else {
                    Ok(Action::done())
                }
            },
            Arc::clone(&calls),
        )
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("four runs", || async { calls.len() >= 4 }).await;
    let gaps = calls.gaps();
    for gap in &gaps {
        assert!(
            *gap >= Duration::from_millis(180) && *gap < Duration::from_secs(2),
            "retried {gap:?} apart, asked 200 ms: {gaps:?}"
        );
    }
    eventually("the last run counted", || async {
        handle.stats().success == 1
    })
    .await;
    let stats = handle.stats();
    assert_eq!((stats.errors, stats.success), (3, 1), "{stats:?}");
    assert_eq!(calls.len(), 4);
    stop.cancel();
    running.await.unwrap().unwrap();
}
