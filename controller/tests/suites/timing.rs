//! The controller's requeue and backoff timing on a paused clock: once the
//! caches have synced over real HTTP the clock is paused, and every delay
//! after that is exact (Tokio advances the paused clock to the next timer
//! whenever the runtime is idle; its timers round a deadline up to the
//! next millisecond), so the test asserts the delays themselves, not a
//! range wide enough for a loaded machine.

use std::sync::Arc;
use std::time::Duration;

use clientgo_controller::{Action, Controller, Retry};
use clientgo_testing::eventually;
use clientgo_workqueue::ItemExponentialFailureRateLimiter;
use k8s_openapi::api::apps::v1::Deployment;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::support::{Cluster, start};

/// When each object's reconciles ran, by name.
#[derive(Default)]
struct Runs(Mutex<Vec<(String, Instant)>>);

impl Runs {
    fn record(&self, name: &str) -> usize {
        let mut runs = self.0.lock();
        runs.push((name.to_string(), Instant::now()));
        runs.iter().filter(|(n, _)| n == name).count()
    }

    /// The gaps between `name`'s runs that started after `since`.
    fn gaps_after(&self, name: &str, since: Instant) -> Vec<Duration> {
        let times: Vec<Instant> = self
            .0
            .lock()
            .iter()
            .filter(|(n, at)| n == name && *at >= since)
            .map(|(_, at)| *at)
            .collect();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    fn count(&self, name: &str) -> usize {
        self.0.lock().iter().filter(|(n, _)| n == name).count()
    }
}

/// Whether `gap` is the delay `asked`, as Tokio's millisecond timer
/// wheel fires it (at most 1 ms late, never early).
fn is_delay(gap: Duration, asked: Duration) -> bool {
    gap >= asked && gap <= asked + Duration::from_millis(1)
}

async fn reconcile(deployment: Arc<Deployment>, runs: Arc<Runs>) -> Result<Action, String> {
    let name = deployment.metadata.name.clone().unwrap_or_default();
    let run = runs.record(&name);
    match name.as_str() {
        // Asks to run again every 150 ms, nine times.
        "periodic" if run < 10 => Ok(Action::requeue_after(Duration::from_millis(150))),
        // Fails eight times, backing off, then succeeds.
        "failing" if run < 9 => Err("not yet".to_string()),
        // Fails six times, retried after a fixed 70 ms, then succeeds.
        "fixed" if run < 7 => Err("not yet".to_string()),
        _ => Ok(Action::done()),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = false)]
async fn requeues_and_backoffs_wait_exactly_their_delays() {
    let cluster = Cluster::start().await;
    for name in ["periodic", "failing", "fixed"] {
        cluster.create_deployment(name).await;
    }
    let manager = cluster.manager();
    let runs = Arc::new(Runs::default());
    Controller::for_::<Deployment>(&manager)
        .max_concurrent_reconciles(3)
        .rate_limiter(Arc::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(20),
            Duration::from_secs(60),
        )))
        .error_policy(|deployment: &Arc<Deployment>, _: &String, _: &Arc<Runs>| {
            match deployment.metadata.name.as_deref() {
                Some("fixed") => Retry::After(Duration::from_millis(70)),
                _ => Retry::Backoff,
            }
        })
        .complete(reconcile, Arc::clone(&runs))
        .unwrap();
    let (stop, running) = start(&manager);
    eventually("the first reconciles", async || {
        ["periodic", "failing", "fixed"]
            .iter()
            .all(|name| runs.count(name) >= 1)
    })
    .await;
    // From here on no request is made: only the controller's timers run.
    tokio::time::pause();
    let paused = Instant::now();
    eventually("every key settled", async || {
        runs.count("periodic") == 10 && runs.count("failing") == 9 && runs.count("fixed") == 7
    })
    .await;

    let periodic = runs.gaps_after("periodic", paused);
    assert!(periodic.len() >= 6, "{periodic:?}");
    assert!(
        periodic
            .iter()
            .all(|gap| is_delay(*gap, Duration::from_millis(150))),
        "requeue_after(150 ms): {periodic:?}"
    );
    let fixed = runs.gaps_after("fixed", paused);
    assert!(fixed.len() >= 4, "{fixed:?}");
    assert!(
        fixed
            .iter()
            .all(|gap| is_delay(*gap, Duration::from_millis(70))),
        "Retry::After(70 ms): {fixed:?}"
    );
    // 20 ms doubling per failure: each gap 20 ms times a power of two,
    // twice the one before.
    let failing = runs.gaps_after("failing", paused);
    assert!(failing.len() >= 5, "{failing:?}");
    let first = (0..12)
        .map(|k| Duration::from_millis(20 << k))
        .find(|asked| is_delay(failing[0], *asked));
    let Some(mut asked) = first else {
        panic!("not a 20 ms backoff step: {failing:?}")
    };
    for gap in &failing {
        assert!(is_delay(*gap, asked), "asked {asked:?}: {failing:?}");
        asked *= 2;
    }
    // Nothing runs once each key is done.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        (
            runs.count("periodic"),
            runs.count("failing"),
            runs.count("fixed")
        ),
        (10, 9, 7)
    );
    tokio::time::resume();
    stop.cancel();
    running.await.unwrap().unwrap();
}
