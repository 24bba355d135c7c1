//! Reads through a `Lister<Pod>` over compact entries (pods kept as JSON
//! plus metadata, decoded on demand) next to one over decoded pods:
//! `cargo bench -p clientgo-informers --bench compact_lister`.
//!
//! 10,000 realistic pods (about 5 KB of JSON each, managedFields left out
//! as with `keep_managed_fields(false)`) in 10 namespaces of 1,000, and in
//! 100 groups of 100 by a `group` label (each group in one namespace), as
//! the pods of 100 ReplicaSets: the `replicaset_*` rows are a ReplicaSet
//! controller's reconcile, which lists its group by namespace and label
//! selector on every call (client-go's `rsc.podLister.Pods(ns).List(sel)`).

use std::hint::black_box;
use std::sync::Arc;

use clientgo_apimachinery::{Compact, GroupResource, LabelSelector};
use clientgo_informers::Lister;
use clientgo_store::{Indexer, IndexerOptions, ReflectorStore};
use clientgo_testing::realistic_pod;
use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;

const NAMESPACES: usize = 10;
const PER_NAMESPACE: usize = 1000;
/// Selector groups (ReplicaSets), of 100 pods each.
const GROUPS: usize = 100;

fn json(index: usize) -> String {
    let mut pod = realistic_pod(index, &format!("namespace-{}", index % NAMESPACES));
    if let Some(metadata) = pod.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        metadata.remove("managedFields");
        // As an informer's objects have one (the decode cache checks each
        // hit against it, and never keeps an object without one).
        metadata.insert("resourceVersion".into(), (index + 1).to_string().into());
        if let Some(labels) = metadata.get_mut("labels").and_then(|l| l.as_object_mut()) {
            labels.insert("group".into(), format!("group-{}", index % GROUPS).into());
        }
    }
    pod.to_string()
}

fn compact_indexer() -> Arc<Indexer<Compact<Pod>>> {
    let indexer = Arc::new(Indexer::new(IndexerOptions::default().namespace_index()));
    for index in 0..NAMESPACES * PER_NAMESPACE {
        if let Ok(compact) = Compact::<Pod>::from_json(&json(index)) {
            let _stored = indexer.add(Arc::new(compact));
        }
    }
    indexer
}

fn typed_indexer() -> Arc<Indexer<Pod>> {
    let indexer = Arc::new(Indexer::new(IndexerOptions::default().namespace_index()));
    for index in 0..NAMESPACES * PER_NAMESPACE {
        if let Ok(pod) = serde_json::from_str::<Pod>(&json(index)) {
            let _stored = indexer.add(Arc::new(pod));
        }
    }
    indexer
}

fn name_of(index: usize) -> (String, String) {
    let pod = realistic_pod(index, &format!("namespace-{}", index % NAMESPACES));
    let name = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (format!("namespace-{}", index % NAMESPACES), name)
}

fn lister_reads(c: &mut Criterion) {
    let pods = GroupResource::new("", "pods");
    let compact = compact_indexer();
    let cached: Lister<Pod> = Lister::over_entries(
        Arc::clone(&compact),
        pods.clone(),
        clientgo_informers::DEFAULT_DECODE_CACHE_BYTES,
    );
    let uncached: Lister<Pod> = Lister::over_entries(Arc::clone(&compact), pods.clone(), 0);
    let typed = Lister::new(typed_indexer(), pods);
    let (namespace, name) = name_of(7);
    let keys: Vec<(String, String)> = (0..NAMESPACES * PER_NAMESPACE).map(name_of).collect();

    let mut group = c.benchmark_group("compact_lister");
    group.bench_function("get_hit", |b| {
        b.iter(|| black_box(cached.namespace(namespace.as_str()).get(&name)))
    });
    let mut next = 0;
    group.bench_function("get_miss", |b| {
        b.iter(|| {
            next = (next + 1) % keys.len();
            let (namespace, name) = &keys[next];
            black_box(uncached.namespace(namespace.as_str()).get(name))
        })
    });
    group.bench_function("list_namespace_1000_cached", |b| {
        b.iter(|| {
            black_box(
                cached
                    .namespace("namespace-3")
                    .list(&LabelSelector::everything()),
            )
        })
    });
    // Another namespace than the cached lister's: a decode still held
    // anywhere (that lister's cache) would be shared, not measured.
    group.bench_function("list_namespace_1000_uncached", |b| {
        b.iter(|| {
            black_box(
                uncached
                    .namespace("namespace-5")
                    .list(&LabelSelector::everything()),
            )
        })
    });
    // A ReplicaSet-style reconcile: its namespace through the index, its
    // pods by label selector, decoded only when they match.
    let selectors: Vec<(String, LabelSelector)> = (0..GROUPS)
        .map(|group| {
            let selector = LabelSelector::parse(&format!("group=group-{group}"));
            let namespace = format!("namespace-{}", group % NAMESPACES);
            (
                namespace,
                selector.unwrap_or_else(|_| LabelSelector::everything()),
            )
        })
        .collect();
    let reconcile = |lister: &Lister<Pod>, group: usize| {
        let (namespace, selector) = &selectors[group % GROUPS];
        let pods = lister.namespace(namespace.as_str()).list(selector);
        assert_eq!(pods.len(), NAMESPACES * PER_NAMESPACE / GROUPS);
        black_box(pods)
    };
    group.bench_function("replicaset_same_group_compact", |b| {
        b.iter(|| reconcile(&cached, 3))
    });
    let mut next_group = 0;
    group.bench_function("replicaset_every_group_compact", |b| {
        b.iter(|| {
            next_group += 1;
            reconcile(&cached, next_group)
        })
    });
    group.bench_function("replicaset_every_group_decoded", |b| {
        b.iter(|| {
            next_group += 1;
            reconcile(&typed, next_group)
        })
    });
    group.bench_function("replicaset_every_group_metadata", |b| {
        b.iter(|| {
            next_group += 1;
            let (namespace, selector) = &selectors[next_group % GROUPS];
            let matching = cached
                .list_metadata(selector)
                .into_iter()
                .filter(|view| view.namespace() == Some(namespace.as_str()))
                .count();
            black_box(matching)
        })
    });
    group.bench_function("typed_lister_get", |b| {
        b.iter(|| black_box(typed.namespace(namespace.as_str()).get(&name)))
    });
    group.finish();
}

criterion_group!(benches, lister_reads);
criterion_main!(benches);
