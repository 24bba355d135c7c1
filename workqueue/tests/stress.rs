//! Several producers and workers on one queue, bounded in count (4
//! producers × 5,000 adds over 500 keys) and time (60 s): no key is lost,
//! none is processed by two workers at once, and every key added after its
//! last processing started is processed again.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_workqueue::Queue;
use parking_lot::Mutex;

const PRODUCERS: usize = 4;
const WORKERS: usize = 4;
const ADDS_PER_PRODUCER: usize = 5_000;
const KEYS: usize = 500;

#[derive(Default)]
struct Ledger {
    /// Keys being processed right now.
    in_flight: HashMap<usize, usize>,
    /// Per key: the number of the last add, and of the last add seen as
    /// processed (an add counts as processed when processing started after
    /// it).
    last_added: HashMap<usize, u64>,
    last_processed: HashMap<usize, u64>,
    add_sequence: u64,
    overlaps: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_is_lost_and_none_is_processed_concurrently() {
    let queue = Queue::<usize>::default();
    let ledger = Arc::new(Mutex::new(Ledger::default()));

    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let queue = queue.clone();
            let ledger = Arc::clone(&ledger);
            tokio::spawn(async move {
                for i in 0..ADDS_PER_PRODUCER {
                    let key = (i * 7 + p * 13) % KEYS;
                    {
                        let mut ledger = ledger.lock();
                        ledger.add_sequence += 1;
                        let sequence = ledger.add_sequence;
                        ledger.last_added.insert(key, sequence);
                        // Recorded before the add, so a worker that takes
                        // the key sees this add as covered.
                        queue.add(key);
                    }
                    if i % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let queue = queue.clone();
            let ledger = Arc::clone(&ledger);
            tokio::spawn(async move {
                let mut processed = 0usize;
                while let Some(key) = queue.get().await {
                    {
                        let mut ledger = ledger.lock();
                        let running = ledger.in_flight.entry(key).or_insert(0);
                        *running += 1;
                        if *running > 1 {
                            ledger.overlaps += 1;
                        }
                        let covered = ledger.add_sequence;
                        ledger.last_processed.insert(key, covered);
                    }
                    tokio::task::yield_now().await;
                    {
                        let mut ledger = ledger.lock();
                        if let Some(running) = ledger.in_flight.get_mut(&key) {
                            *running -= 1;
                        }
                    }
                    queue.done(&key);
                    processed += 1;
                }
                processed
            })
        })
        .collect();

    tokio::time::timeout(Duration::from_secs(60), async {
        for producer in producers {
            producer.await.unwrap();
        }
    })
    .await
    .expect("producers finished in time");
    tokio::time::timeout(Duration::from_secs(60), queue.shut_down_with_drain())
        .await
        .expect("drained in time");
    let mut total = 0;
    for worker in workers {
        total += tokio::time::timeout(Duration::from_secs(60), worker)
            .await
            .unwrap()
            .unwrap();
    }

    let ledger = ledger.lock();
    assert_eq!(
        ledger.overlaps, 0,
        "a key was processed by two workers at once"
    );
    assert_eq!(ledger.last_added.len(), KEYS);
    for (key, added) in &ledger.last_added {
        let processed = ledger.last_processed.get(key).copied().unwrap_or(0);
        assert!(
            processed >= *added,
            "key {key}: last add #{added} never processed (last processing covered #{processed})"
        );
    }
    assert!(total >= KEYS, "processed {total}");
    assert!(
        total <= PRODUCERS * ADDS_PER_PRODUCER,
        "more processings ({total}) than adds"
    );
}
