//! Store and queue benchmarks: `cargo bench -p clientgo-store`.
//!
//! Objects are pods carrying realistic metadata (namespace, name, uid,
//! resourceVersion, four labels): what the store and its indexes touch.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use clientgo_store::{
    DeltaFifo, DeltaFifoOptions, Indexer, IndexerOptions, NAMESPACE_INDEX, Queue, RealFifo,
    RealFifoOptions, ReflectorStore, Store,
};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

const OBJECTS: usize = 100_000;
const NAMESPACES: usize = 100;
const REPLACE_OBJECTS: usize = 50_000;
const QUEUE_ITEMS: usize = 10_000;

fn pod(i: usize) -> Arc<Pod> {
    let namespace = format!("namespace-{}", i % NAMESPACES);
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(format!("pod-{i}")),
            namespace: Some(namespace),
            uid: Some(format!("00000000-0000-0000-0000-{i:012}")),
            resource_version: Some((1_000_000 + i).to_string()),
            labels: Some(
                [
                    ("app".to_string(), format!("app-{}", i % 500)),
                    ("tier".to_string(), "backend".to_string()),
                    ("pod-template-hash".to_string(), format!("{:x}", i % 7919)),
                    ("version".to_string(), "v1".to_string()),
                ]
                .into(),
            ),
            ..Default::default()
        },
        ..Default::default()
    })
}

fn pods(count: usize) -> Vec<Arc<Pod>> {
    (0..count).map(pod).collect()
}

fn filled_indexer(objects: &[Arc<Pod>]) -> Indexer<Pod> {
    let indexer = Indexer::new(IndexerOptions::default().namespace_index());
    for object in objects {
        indexer.add(Arc::clone(object)).unwrap_or_default();
    }
    indexer
}

fn thread_safe_store(c: &mut Criterion) {
    let objects = pods(OBJECTS);
    let mut group = c.benchmark_group("indexer_100k");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));

    group.throughput(Throughput::Elements(OBJECTS as u64));
    group.bench_function("add_100k_with_namespace_index", |b| {
        b.iter_batched(
            || objects.clone(),
            |objects| black_box(filled_indexer(&objects)),
            BatchSize::LargeInput,
        )
    });

    let indexer = filled_indexer(&objects);
    let keys: Vec<String> = objects
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p.metadata.namespace.as_deref().unwrap_or_default(),
                p.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    group.bench_function("get_by_key_100k", |b| {
        b.iter(|| {
            for key in &keys {
                black_box(indexer.get_by_key(key));
            }
        })
    });
    group.bench_function("update_100k_same_namespace", |b| {
        b.iter(|| {
            for object in &objects {
                indexer.update(Arc::clone(object)).unwrap_or_default();
            }
        })
    });

    group.throughput(Throughput::Elements(1));
    group.bench_function("list_100k", |b| b.iter(|| black_box(indexer.list())));
    group.bench_function("by_index_namespace_of_1000", |b| {
        b.iter(|| black_box(indexer.by_index(NAMESPACE_INDEX, "namespace-42")))
    });
    group.finish();

    let replacement = pods(REPLACE_OBJECTS);
    let mut group = c.benchmark_group("indexer_replace");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(REPLACE_OBJECTS as u64));
    group.bench_function("replace_50k_with_namespace_index", |b| {
        let indexer: Indexer<Pod> = Indexer::new(IndexerOptions::default().namespace_index());
        b.iter(|| {
            indexer
                .replace(replacement.clone(), "1")
                .unwrap_or_default()
        })
    });
    group.finish();
}

fn queues(c: &mut Criterion) {
    let objects = pods(QUEUE_ITEMS);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    let mut group = c.benchmark_group("queue_add_then_pop");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(QUEUE_ITEMS as u64));

    group.bench_function("real_fifo_10k", |b| {
        b.iter(|| {
            let fifo = RealFifo::<Pod>::new(RealFifoOptions::default());
            for object in &objects {
                fifo.add(Arc::clone(object)).unwrap_or_default();
            }
            runtime.block_on(async {
                for _ in 0..QUEUE_ITEMS {
                    let _ = fifo
                        .pop(|deltas, _| {
                            black_box(deltas);
                            Ok::<(), ()>(())
                        })
                        .await;
                }
            });
        })
    });

    group.bench_function("real_fifo_10k_pop_batch", |b| {
        b.iter(|| {
            let fifo = RealFifo::<Pod>::new(RealFifoOptions::default());
            for object in &objects {
                fifo.add(Arc::clone(object)).unwrap_or_default();
            }
            runtime.block_on(async {
                while !fifo.is_empty() {
                    let _ = fifo
                        .pop_batch(
                            |batch, _| {
                                black_box(batch);
                                Ok::<(), ()>(())
                            },
                            |single, _| {
                                black_box(single);
                                Ok(())
                            },
                        )
                        .await;
                }
            });
        })
    });

    group.bench_function("delta_fifo_10k", |b| {
        b.iter(|| {
            let fifo = DeltaFifo::<Pod>::new(DeltaFifoOptions::default());
            for object in &objects {
                fifo.add(Arc::clone(object)).unwrap_or_default();
            }
            runtime.block_on(async {
                for _ in 0..QUEUE_ITEMS {
                    let _ = fifo
                        .pop(|deltas, _| {
                            black_box(deltas);
                            Ok::<(), ()>(())
                        })
                        .await;
                }
            });
        })
    });
    group.finish();
}

criterion_group!(benches, thread_safe_store, queues);
criterion_main!(benches);
