//! State-machine property tests for the delta queues.
//!
//! A producer plays the API server and the reflector: it keeps the server's
//! state, and turns each generated operation into what a reflector would
//! call on the queue (add, update, delete, a relist after changes it never
//! heard of, a resync). A consumer pops at arbitrary points, applying each
//! pop to a cache through client-go's processDeltas rules. After the queue
//! is drained, the cache must hold exactly the server's objects at exactly
//! their resourceVersions, whatever happened in between.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use clientgo_store::{
    DeltaFifo, DeltaFifoOptions, Indexer, IndexerOptions, ObjectOrTombstone, Queue, RealFifo,
    RealFifoOptions, ResourceEventHandler, Store, meta_namespace_key_func, process_deltas,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use proptest::prelude::*;

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

#[derive(Debug, Clone)]
enum Op {
    /// Create the object if it does not exist, with an ADDED event.
    Add(usize),
    /// Change the object if it exists, with a MODIFIED event.
    Update(usize),
    /// Delete the object if it exists, with a DELETED event.
    Delete(usize),
    /// Changes the watch missed (create/update/delete per name), then a
    /// relist of the whole server state.
    Relist(Vec<(usize, u8)>),
    /// Periodic resync.
    Resync,
    /// The consumer pops up to this many items.
    Pop(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..NAMES.len()).prop_map(Op::Add),
        3 => (0..NAMES.len()).prop_map(Op::Update),
        2 => (0..NAMES.len()).prop_map(Op::Delete),
        1 => prop::collection::vec((0..NAMES.len(), 0u8..3), 0..4).prop_map(Op::Relist),
        1 => Just(Op::Resync),
        2 => (1usize..4).prop_map(Op::Pop),
    ]
}

/// The server: objects by name, and a global revision counter.
#[derive(Default)]
struct Server {
    objects: BTreeMap<String, u64>,
    revision: u64,
}

impl Server {
    fn write(&mut self, name: &str) -> Arc<ConfigMap> {
        self.revision += 1;
        self.objects.insert(name.to_string(), self.revision);
        config_map(name, self.revision)
    }

    fn delete(&mut self, name: &str) -> Option<Arc<ConfigMap>> {
        self.objects.remove(name)?;
        self.revision += 1;
        Some(config_map(name, self.revision))
    }

    fn list(&self) -> Vec<Arc<ConfigMap>> {
        self.objects
            .iter()
            .map(|(name, rv)| config_map(name, *rv))
            .collect()
    }
}

fn config_map(name: &str, rv: u64) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            resource_version: Some(rv.to_string()),
            ..Default::default()
        },
        ..Default::default()
    })
}

/// Handlers are not under test here; the cache is.
struct Ignore;

impl ResourceEventHandler<ConfigMap> for Ignore {
    fn on_add(&mut self, _: &Arc<ConfigMap>, _: bool) {}
    fn on_update(&mut self, _: &Arc<ConfigMap>, _: &Arc<ConfigMap>) {}
    fn on_delete(&mut self, _: &ObjectOrTombstone<ConfigMap>) {}
}

fn cache_state(cache: &Indexer<ConfigMap>) -> BTreeMap<String, u64> {
    cache
        .list()
        .iter()
        .map(|o| {
            (
                o.metadata.name.clone().unwrap(),
                o.metadata
                    .resource_version
                    .as_deref()
                    .unwrap()
                    .parse()
                    .unwrap(),
            )
        })
        .collect()
}

async fn pop_into<Q: Queue<ConfigMap>>(queue: &Q, cache: &Indexer<ConfigMap>) {
    let key_func = meta_namespace_key_func();
    queue
        .pop(|deltas, initial| process_deltas(&mut Ignore, cache, &key_func, deltas, initial))
        .await
        .unwrap();
}

/// Runs the operations against a queue feeding `cache`, drains it, and
/// returns (server state, cache state).
async fn run<Q: Queue<ConfigMap>>(
    queue: &Q,
    cache: &Indexer<ConfigMap>,
    len: impl Fn(&Q) -> usize,
    ops: &[Op],
) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let mut server = Server::default();
    for op in ops {
        match op {
            Op::Add(i) => {
                if !server.objects.contains_key(NAMES[*i]) {
                    queue.add(server.write(NAMES[*i])).unwrap();
                }
            }
            Op::Update(i) => {
                if server.objects.contains_key(NAMES[*i]) {
                    queue.update(server.write(NAMES[*i])).unwrap();
                }
            }
            Op::Delete(i) => {
                if let Some(last) = server.delete(NAMES[*i]) {
                    queue.delete(last.into()).unwrap();
                }
            }
            Op::Relist(missed) => {
                for (i, change) in missed {
                    let name = NAMES[*i];
                    match change {
                        0 | 1 => {
                            server.write(name);
                        }
                        _ => {
                            server.delete(name);
                        }
                    }
                }
                let rv = server.revision.to_string();
                queue.replace(server.list(), &rv).unwrap();
            }
            Op::Resync => queue.resync().unwrap(),
            Op::Pop(n) => {
                for _ in 0..*n {
                    if len(queue) == 0 {
                        break;
                    }
                    pop_into(queue, cache).await;
                }
            }
        }
    }
    while len(queue) > 0 {
        pop_into(queue, cache).await;
    }
    (server.objects, cache_state(cache))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn delta_fifo_converges_to_the_server_state(ops in prop::collection::vec(op(), 0..40), replaced in any::<bool>()) {
        let (server, cache) = runtime().block_on(async {
            let cache = Arc::new(Indexer::<ConfigMap>::new(IndexerOptions::default()));
            let fifo = DeltaFifo::new(
                DeltaFifoOptions::default()
                    .known_objects(cache.clone())
                    .emit_delta_type_replaced(replaced),
            );
            run(&fifo, &cache, DeltaFifo::len, &ops).await
        });
        prop_assert_eq!(server, cache);
    }

    #[test]
    fn atomic_real_fifo_converges_to_the_server_state(ops in prop::collection::vec(op(), 0..40)) {
        let (server, cache) = runtime().block_on(async {
            let cache = Indexer::<ConfigMap>::new(IndexerOptions::default());
            let fifo = RealFifo::new(RealFifoOptions::default());
            run(&fifo, &cache, RealFifo::len, &ops).await
        });
        prop_assert_eq!(server, cache);
    }

    #[test]
    fn non_atomic_real_fifo_converges_to_the_server_state(ops in prop::collection::vec(op(), 0..40)) {
        let (server, cache) = runtime().block_on(async {
            let cache = Arc::new(Indexer::<ConfigMap>::new(IndexerOptions::default()));
            let fifo = RealFifo::new(RealFifoOptions::non_atomic(cache.clone()));
            run(&fifo, &cache, RealFifo::len, &ops).await
        });
        prop_assert_eq!(server, cache);
    }
}
