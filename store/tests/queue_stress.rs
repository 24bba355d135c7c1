//! Several producer threads, one consumer task, for each queue. Bounded in
//! count (4 producers × 2,000 objects) and time (each test gives up after 60
//! seconds). Each test proves that nothing is lost and nothing is delivered
//! twice beyond the queue's documented merging.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use clientgo_store::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaType, Fifo, Heap, Queue, RealFifo, RealFifoOptions,
    ReflectorStore,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

const PRODUCERS: usize = 4;
const PER_PRODUCER: usize = 2_000;
const LIMIT: Duration = Duration::from_secs(60);

fn config_map(name: &str, rv: u64) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            resource_version: Some(rv.to_string()),
            generation: Some(rv as i64),
            ..Default::default()
        },
        ..Default::default()
    })
}

fn name_of(object: &ConfigMap) -> String {
    object.metadata.name.clone().unwrap()
}

fn rv_of(object: &ConfigMap) -> u64 {
    object
        .metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs `produce(producer_index)` on one thread per producer.
fn spawn_producers(
    produce: impl Fn(usize) + Send + Sync + 'static,
) -> Vec<std::thread::JoinHandle<()>> {
    let produce = Arc::new(produce);
    (0..PRODUCERS)
        .map(|p| {
            let produce = Arc::clone(&produce);
            std::thread::spawn(move || produce(p))
        })
        .collect()
}

fn join(producers: Vec<std::thread::JoinHandle<()>>) {
    for producer in producers {
        producer.join().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_fifo_delivers_every_delta_once_in_each_producers_order() {
    let fifo = Arc::new(RealFifo::<ConfigMap>::new(RealFifoOptions::default()));
    let producers = {
        let fifo = Arc::clone(&fifo);
        spawn_producers(move |p| {
            for i in 0..PER_PRODUCER {
                fifo.add(config_map(&format!("p{p}-{i}"), i as u64))
                    .unwrap();
            }
        })
    };
    let total = PRODUCERS * PER_PRODUCER;
    let consumed = tokio::time::timeout(LIMIT, async {
        let mut seen: HashSet<String> = HashSet::new();
        let mut last_per_producer: HashMap<usize, i64> = HashMap::new();
        while seen.len() < total {
            fifo.pop(|deltas, _| {
                for delta in deltas {
                    let Delta::Added(object) = delta else {
                        panic!("unexpected {}", delta.delta_type());
                    };
                    let name = name_of(&object);
                    assert!(seen.insert(name.clone()), "{name} delivered twice");
                    let producer: usize = name[1..name.find('-').unwrap()].parse().unwrap();
                    let sequence = rv_of(&object) as i64;
                    let last = last_per_producer.insert(producer, sequence).unwrap_or(-1);
                    assert!(sequence > last, "producer {producer} out of order");
                }
                Ok::<(), ()>(())
            })
            .await
            .unwrap();
        }
        seen.len()
    })
    .await
    .expect("the consumer finished in time");
    join(producers);
    assert_eq!(consumed, total);
    assert!(fifo.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_fifo_delivers_each_keys_deltas_in_order_without_loss() {
    let fifo = Arc::new(DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default()));
    let producers = {
        let fifo = Arc::clone(&fifo);
        spawn_producers(move |p| {
            for i in 0..PER_PRODUCER {
                let name = format!("p{p}-{i}");
                fifo.add(config_map(&name, 1)).unwrap();
                fifo.update(config_map(&name, 2)).unwrap();
            }
        })
    };
    let total = PRODUCERS * PER_PRODUCER;
    let history = tokio::time::timeout(LIMIT, async {
        let mut history: HashMap<String, Vec<(DeltaType, u64)>> = HashMap::new();
        let mut complete = 0;
        while complete < total {
            fifo.pop(|deltas, _| {
                for delta in deltas {
                    let object = delta.object().unwrap();
                    let entry = history.entry(name_of(object)).or_default();
                    entry.push((delta.delta_type(), rv_of(object)));
                    if entry.len() == 2 {
                        complete += 1;
                    }
                }
                Ok::<(), ()>(())
            })
            .await
            .unwrap();
        }
        history
    })
    .await
    .expect("the consumer finished in time");
    join(producers);
    assert_eq!(history.len(), total);
    for (name, deltas) in history {
        assert_eq!(
            deltas,
            [(DeltaType::Added, 1), (DeltaType::Updated, 2)],
            "{name}"
        );
    }
    assert!(fifo.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_never_goes_back_in_time_and_ends_with_the_latest_state() {
    const KEYS: usize = 50;
    let fifo = Arc::new(Fifo::<ConfigMap>::default());
    let producers = {
        let fifo = Arc::clone(&fifo);
        spawn_producers(move |p| {
            for i in 1..=PER_PRODUCER {
                // Each producer owns its keys; versions only grow.
                let key = format!("p{p}-{}", i % KEYS);
                fifo.update(config_map(&key, i as u64)).unwrap();
            }
        })
    };
    let consumer = {
        let fifo = Arc::clone(&fifo);
        tokio::spawn(async move {
            let mut latest: HashMap<String, u64> = HashMap::new();
            loop {
                let result = fifo
                    .pop(|object, _| {
                        let rv = rv_of(&object);
                        let previous = latest.insert(name_of(&object), rv).unwrap_or(0);
                        assert!(rv > previous, "{} went back in time", name_of(&object));
                        Ok::<(), ()>(())
                    })
                    .await;
                if result.is_err() {
                    return latest;
                }
            }
        })
    };
    let producers_done = tokio::task::spawn_blocking(move || join(producers));
    tokio::time::timeout(LIMIT, producers_done)
        .await
        .unwrap()
        .unwrap();
    fifo.close();
    let latest = tokio::time::timeout(LIMIT, consumer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.len(), PRODUCERS * KEYS);
    for p in 0..PRODUCERS {
        for k in 0..KEYS {
            let key = format!("p{p}-{k}");
            // The last version written for key k is the largest i ≤ PER_PRODUCER with i % KEYS == k.
            let last = (1..=PER_PRODUCER).filter(|i| i % KEYS == k).max().unwrap() as u64;
            assert_eq!(latest[&key], last, "{key}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_pops_every_object_exactly_once() {
    let heap = Arc::new(Heap::<ConfigMap>::new(Arc::new(
        |a: &ConfigMap, b: &ConfigMap| a.metadata.generation < b.metadata.generation,
    )));
    let producers = {
        let heap = Arc::clone(&heap);
        spawn_producers(move |p| {
            for i in 0..PER_PRODUCER {
                // Interleaved priorities across producers.
                let priority = ((i * 7919 + p * 104_729) % 10_000) as u64;
                heap.add(config_map(&format!("p{p}-{i}"), priority))
                    .unwrap();
            }
        })
    };
    let total = PRODUCERS * PER_PRODUCER;
    let seen = tokio::time::timeout(LIMIT, async {
        let mut seen = HashSet::new();
        while seen.len() < total {
            let object = heap.pop().await.unwrap();
            assert!(seen.insert(name_of(&object)), "popped twice");
        }
        seen
    })
    .await
    .expect("the consumer finished in time");
    join(producers);
    assert_eq!(seen.len(), total);
    assert!(heap.is_empty());
}
