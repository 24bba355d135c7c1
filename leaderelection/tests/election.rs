//! Two electors over one Lease (real HTTP, the server's resourceVersion
//! preconditions): one leader at a time and takeover after expiry or at
//! once after a release, on the test server and on the real kube-apiserver
//! (one body, two backends); leadership lost when the server stops
//! answering past the renew deadline, on the test server (a fault the real
//! one cannot make).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_leaderelection::{Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use clientgo_rest::{Config, RestClient};
use clientgo_testing::TestApiServer;
use clientgo_testing::envtest::{Backend, for_each_backend};
use tokio_util::sync::CancellationToken;

type Elector = LeaderElector<LeaseLock>;

fn config(lease_ms: u64, renew_ms: u64, retry_ms: u64) -> LeaderElectionConfig {
    LeaderElectionConfig::default()
        .lease_duration(Duration::from_millis(lease_ms))
        .renew_deadline(Duration::from_millis(renew_ms))
        .retry_period(Duration::from_millis(retry_ms))
}

/// What one candidate's callbacks saw.
#[derive(Default)]
struct Seen {
    started: AtomicU64,
    stopped: AtomicU64,
    /// Set when the leading token is cancelled.
    token_cancelled: AtomicU64,
    /// Every holder `on_new_leader` reported, in order.
    leaders: std::sync::Mutex<Vec<String>>,
}

fn candidate(
    client: RestClient,
    namespace: &str,
    identity: &str,
    config: LeaderElectionConfig,
) -> (Arc<Elector>, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let callbacks = Callbacks::new()
        .on_started_leading({
            let seen = Arc::clone(&seen);
            move |leading: CancellationToken| {
                seen.started.fetch_add(1, Ordering::SeqCst);
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    leading.cancelled().await;
                    seen.token_cancelled.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
        .on_stopped_leading({
            let seen = Arc::clone(&seen);
            move || {
                seen.stopped.fetch_add(1, Ordering::SeqCst);
            }
        })
        .on_new_leader({
            let seen = Arc::clone(&seen);
            move |holder: &str| seen.leaders.lock().unwrap().push(holder.to_string())
        });
    let lock = LeaseLock::new(client, namespace, "the-lock", identity);
    (
        Arc::new(LeaderElector::new(lock, config, callbacks).unwrap()),
        seen,
    )
}

fn run(elector: &Arc<Elector>) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (elector, cancel) = (Arc::clone(elector), cancel.clone());
        async move { elector.run(cancel).await }
    });
    (cancel, task)
}

/// Waits until `condition`, checking meanwhile that never both lead;
/// returns how long it took.
async fn until_one_leads(
    a: &Elector,
    b: &Elector,
    mut condition: impl FnMut() -> bool,
) -> Duration {
    let started = Instant::now();
    loop {
        assert!(!(a.is_leader() && b.is_leader()), "two leaders at once");
        if condition() {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "timed out");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leads_and_the_other_takes_over_after_the_lease_expires() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("election").await.unwrap();
        let timing = config(1_000, 600, 100);
        let (a, a_seen) = candidate(backend.client().unwrap(), &namespace, "a", timing.clone());
        let (b, b_seen) = candidate(backend.client().unwrap(), &namespace, "b", timing);
        let (a_cancel, a_task) = run(&a);
        until_one_leads(&a, &b, || a.is_leader()).await;
        let (b_cancel, b_task) = run(&b);
        // For a while, only a leads; b keeps trying.
        let watched = Instant::now();
        while watched.elapsed() < Duration::from_millis(1_500) {
            assert!(
                a.is_leader() && !b.is_leader(),
                "a keeps the lease it renews"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(b.leader().as_deref(), Some("a"));

        // a stops without releasing: b must wait for the lease to expire.
        a_cancel.cancel();
        a_task.await.unwrap();
        assert_eq!(a_seen.stopped.load(Ordering::SeqCst), 1);
        let took = until_one_leads(&a, &b, || b.is_leader()).await;
        assert!(
            took >= Duration::from_millis(600),
            "b took over after {took:?}, before a's lease could have expired"
        );
        // Lease duration plus a jittered retry period (at most 2.2 x), plus
        // slack for the requests (more for the real server's, on two busy
        // cores).
        let slack = if backend.is_real() { 1_000 } else { 500 };
        assert!(
            took <= Duration::from_millis(1_000 + 220 + slack),
            "b took over after {took:?}"
        );
        assert_eq!(b_seen.started.load(Ordering::SeqCst), 1);
        assert_eq!(b.stats().acquired, 1);
        assert_eq!(
            *b_seen.leaders.lock().unwrap(),
            ["a", "b"],
            "b saw a lead, then itself"
        );
        b_cancel.cancel();
        b_task.await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_lease_is_taken_over_at_once() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("release").await.unwrap();
        let timing = config(5_000, 3_000, 100).release_on_cancel(true);
        let (a, _) = candidate(backend.client().unwrap(), &namespace, "a", timing.clone());
        let (b, _) = candidate(backend.client().unwrap(), &namespace, "b", timing);
        let (a_cancel, a_task) = run(&a);
        until_one_leads(&a, &b, || a.is_leader()).await;
        let (b_cancel, b_task) = run(&b);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!b.is_leader());

        a_cancel.cancel();
        a_task.await.unwrap();
        let took = until_one_leads(&a, &b, || b.is_leader()).await;
        assert!(
            took < Duration::from_millis(1_500),
            "after a release b should not wait for the 5 s lease: {took:?}"
        );
        b_cancel.cancel();
        b_task.await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leadership_is_lost_when_renewing_fails_past_the_renew_deadline() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let (a, a_seen) = candidate(client, "default", "a", config(2_000, 1_000, 200));
    let (a_cancel, a_task) = run(&a);
    let started = Instant::now();
    while !a.is_leader() {
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(a.check(Duration::ZERO).is_ok());
    // The server stops answering in time: every request now takes 5 s.
    server.faults().set_latency(Duration::from_secs(5));
    let stalled = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), a_task)
        .await
        .expect("run returns once leadership is lost")
        .unwrap();
    let lost_after = stalled.elapsed();
    // The next renewal starts within a retry period and gives up at its
    // deadline; never later.
    assert!(
        lost_after <= Duration::from_millis(200 + 1_000 + 300),
        "leadership kept {lost_after:?} after the server stalled"
    );
    assert!(!a.is_leader());
    let waited = Instant::now();
    while a_seen.token_cancelled.load(Ordering::SeqCst) == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(5),
            "the leading token fired"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(a_seen.stopped.load(Ordering::SeqCst), 1);
    assert_eq!(a.stats().lost, 1);
    drop(a_cancel);
}

#[test]
fn bad_timings_are_refused_as_client_go_refuses_them() {
    let client = RestClient::new(Config::new("http://127.0.0.1:1")).unwrap();
    let lock = LeaseLock::new(client.clone(), "default", "x", "a");
    assert!(LeaderElector::new(lock, config(1_000, 1_000, 100), Callbacks::new()).is_err());
    let lock = LeaseLock::new(client, "default", "x", "");
    assert!(LeaderElector::new(lock, config(1_000, 600, 100), Callbacks::new()).is_err());
}
