//! Work that grows with the cache (a relist's processing) runs off the
//! async workers: on a runtime with one worker, other tasks keep running
//! while an informer applies a large list. Without the hand-over the
//! worker would be held for the whole list.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::support::*;
use clientgo_store::{IndexFunc, Indexers};
use k8s_openapi::api::core::v1::ConfigMap;

/// Objects listed, and the index function's cost for each: the list takes
/// at least 1.5 s to apply.
const OBJECTS: usize = 1500;
const PER_OBJECT: Duration = Duration::from_millis(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_large_relist_does_not_hold_the_async_worker() {
    let server = seeded(OBJECTS).await;
    let slow: IndexFunc<ConfigMap> = Arc::new(|object: &ConfigMap| {
        std::thread::sleep(PER_OBJECT);
        Ok(vec![object.metadata.name.clone().unwrap_or_default()])
    });
    let indexers = Indexers::from([("slow".to_string(), slow)]);
    let running = Running::start(informer(&server, fast_options().indexers(indexers)));

    // A task on the same worker, measuring its longest wait for a 5 ms
    // timer.
    let done = Arc::new(AtomicBool::new(false));
    let longest_ms = Arc::new(AtomicU64::new(0));
    let ticker = tokio::spawn({
        let (done, longest_ms) = (Arc::clone(&done), Arc::clone(&longest_ms));
        async move {
            while !done.load(Ordering::Relaxed) {
                let before = Instant::now();
                tokio::time::sleep(Duration::from_millis(5)).await;
                let waited = before.elapsed().as_millis() as u64;
                longest_ms.fetch_max(waited, Ordering::Relaxed);
            }
        }
    });
    let started = Instant::now();
    running.synced().await;
    let sync = started.elapsed();
    done.store(true, Ordering::Relaxed);
    ticker.await.unwrap();
    assert_eq!(running.informer.lister().len(), OBJECTS);
    let longest = Duration::from_millis(longest_ms.load(Ordering::Relaxed));
    assert!(
        sync >= PER_OBJECT * OBJECTS as u32,
        "the list took {sync:?} to apply"
    );
    assert!(
        longest < sync / 3,
        "another task waited {longest:?} during a {sync:?} sync: the worker was held"
    );
    running.stop().await;
}
