//! Workqueue benchmarks: `cargo bench -p clientgo-workqueue`.
//!
//! Items are `namespace/name` strings, as a controller's keys are.

use std::hint::black_box;
use std::time::Duration;

use clientgo_workqueue::{DelayingQueue, Queue};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const ITEMS: usize = 10_000;
const PENDING: usize = 100_000;

fn keys(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("namespace-{}/object-{i}", i % 100))
        .collect()
}

fn runtime(threads: usize) -> tokio::runtime::Runtime {
    let built = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    };
    built.unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

fn queue_throughput(c: &mut Criterion) {
    let items = keys(ITEMS);
    let mut group = c.benchmark_group("queue");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Elements(ITEMS as u64));

    let single = runtime(1);
    group.bench_function("add_get_done_10k_single_task", |b| {
        b.iter_batched(
            || items.clone(),
            |items| {
                single.block_on(async {
                    let queue = Queue::<String>::default();
                    for item in items {
                        queue.add(item);
                    }
                    for _ in 0..ITEMS {
                        if let Some(item) = queue.get().await {
                            queue.done(black_box(&item));
                        }
                    }
                })
            },
            BatchSize::SmallInput,
        )
    });

    let parallel = runtime(2);
    group.bench_function("add_get_done_10k_two_producers_two_workers", |b| {
        b.iter_batched(
            || items.clone(),
            |items| {
                parallel.block_on(async {
                    let queue = Queue::<String>::default();
                    let (first, second) = items.split_at(ITEMS / 2);
                    let producers: Vec<_> = [first.to_vec(), second.to_vec()]
                        .into_iter()
                        .map(|half| {
                            let queue = queue.clone();
                            tokio::spawn(async move {
                                for item in half {
                                    queue.add(item);
                                }
                            })
                        })
                        .collect();
                    let workers: Vec<_> = (0..2)
                        .map(|_| {
                            let queue = queue.clone();
                            tokio::spawn(async move {
                                while let Some(item) = queue.get().await {
                                    queue.done(black_box(&item));
                                }
                            })
                        })
                        .collect();
                    for producer in producers {
                        let _ = producer.await;
                    }
                    queue.shut_down_with_drain().await;
                    for worker in workers {
                        let _ = worker.await;
                    }
                })
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn delaying(c: &mut Criterion) {
    let items = keys(PENDING);
    let mut group = c.benchmark_group("delaying_queue");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(PENDING as u64));
    let rt = runtime(1);
    group.bench_function("add_after_100k_pending", |b| {
        b.iter_batched(
            || items.clone(),
            |items| {
                rt.block_on(async {
                    let queue = DelayingQueue::<String>::default();
                    for (i, item) in items.into_iter().enumerate() {
                        // Delays spread over ten minutes, as client-go's benchmark.
                        let delay = Duration::from_millis(1 + (i as u64 * 7919) % 600_000);
                        queue.add_after(item, delay);
                    }
                    black_box(queue.waiting_len());
                    queue.shut_down();
                })
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, queue_throughput, delaying);
criterion_main!(benches);
