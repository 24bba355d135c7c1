//! client-go's tools/cache stores, in Rust: the caches informers keep, the
//! queues between a reflector and an informer, and their key functions.
//!
//! | type | client-go | what it is |
//! |---|---|---|
//! | [`Indexer`] | `NewIndexer` / `NewStore` (`cache`) | the indexed cache informers keep and listers read |
//! | [`ThreadSafeStore`] | `ThreadSafeStore` | the key → object map with indexes under it |
//! | [`RealFifo`] | `RealFIFO` | the queue informers use since 1.36: every delta, in order |
//! | [`DeltaFifo`] | `DeltaFIFO` | per-key delta lists, popped a key at a time |
//! | [`Fifo`] | `FIFO` | the latest object per key |
//! | [`Heap`] | `Heap` | a keyed priority queue |
//! | [`ExpirationCache`] | `ExpirationCache`, `NewTTLStore` | entries that expire lazily |
//! | [`UndeltaStore`] | `UndeltaStore` | pushes the whole state after every change |
//! | [`MutationCache`] | `MutationCache` | read-your-own-writes over an informer's cache |
//! | [`LruCache`] | apimachinery's `util/cache` LRU (what `MutationCache` uses) | a map bounded by total weight, least recently used out first |
//! | [`FrequencySketch`] | none (Caffeine's, for TinyLFU) | about how often keys were seen lately, to decide what a full cache takes in |
//! | [`process_deltas`] | `processDeltas` (controller.go) | applies popped deltas to a cache, then notifies |
//! | [`DeletedFinalStateUnknown`] | the same | a deletion inferred from a relist |
//!
//! # Contracts
//!
//! - **Sharing.** Objects are `Arc<K>` from the decoder to the handler.
//!   Stores and queues hand out the `Arc` they hold; nothing copies an
//!   object, and nothing may mutate one that a store holds.
//! - **Traits.** A reflector writes to a [`ReflectorStore`] (add, update,
//!   delete, replace, resync, bookmark); a [`Store`] adds reads; a queue is
//!   a [`Queue`]. Deletes take an [`ObjectOrTombstone`], keyed by the
//!   tombstone's own key when it is one.
//! - **Locking.** Each type documents its lock. No lock is ever held across
//!   an `.await`: blocking pops wait on a `tokio::sync::Notify` and run their
//!   (synchronous) processing callback under the lock only where client-go
//!   does, and [`RealFifo`] releases it while processing in its default
//!   configuration unless a backlog of two batches has built up. A
//!   producer may therefore wait for a consumer's callback (see
//!   [`ReflectorStore`]). The four queues share one core (`queue_core.rs`):
//!   the lock over pending items, closed flag and initial-population count,
//!   and the wake-up of waiting pops.
//! - **Errors, never panics.** Where client-go panics (an index function
//!   failing during an update, a non-integer resourceVersion in the
//!   mutation cache, invalid RealFIFO options) these types return a
//!   [`StoreError`] and leave their state unchanged.
//! - **No requeue.** client-go removed `ErrRequeue` in 1.33: requeueing at
//!   the tail moves an informer back in time, and at the head wedges the
//!   queue. A failed `process` is reported to the caller and the item is
//!   gone; the next resync or relist delivers the object again.
//!
//! # Examples
//!
//! An informer's cache: objects keyed `namespace/name`, indexed by
//! namespace.
//!
//! ```
//! use std::sync::Arc;
//! use clientgo_store::{Indexer, IndexerOptions, NAMESPACE_INDEX, ReflectorStore, Store};
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! fn pod(namespace: &str, name: &str) -> Arc<Pod> {
//!     Arc::new(Pod {
//!         metadata: ObjectMeta { namespace: Some(namespace.into()), name: Some(name.into()), ..Default::default() },
//!         ..Default::default()
//!     })
//! }
//!
//! let cache: Indexer<Pod> = Indexer::new(IndexerOptions::default().namespace_index());
//! cache.replace(vec![pod("default", "web-0"), pod("default", "web-1"), pod("kube-system", "dns")], "100")?;
//! assert_eq!(cache.by_index(NAMESPACE_INDEX, "default")?.len(), 2);
//! assert_eq!(cache.index_keys(NAMESPACE_INDEX, "kube-system")?, ["kube-system/dns"]);
//! assert_eq!(cache.last_store_sync_resource_version(), "100");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The informer pipeline: a reflector writes to a [`RealFifo`], the
//! informer pops and applies each delta to its cache with
//! [`process_deltas`] before telling its handlers.
//!
//! ```
//! use std::sync::Arc;
//! use clientgo_store::*;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! fn config_map(name: &str, rv: &str) -> Arc<ConfigMap> {
//!     Arc::new(ConfigMap {
//!         metadata: ObjectMeta { name: Some(name.into()), resource_version: Some(rv.into()), ..Default::default() },
//!         ..Default::default()
//!     })
//! }
//!
//! /// Prints what happened; a real handler would enqueue keys.
//! struct Print;
//! impl ResourceEventHandler<ConfigMap> for Print {
//!     fn on_add(&mut self, o: &Arc<ConfigMap>, initial: bool) { println!("add {:?} initial={initial}", o.metadata.name) }
//!     fn on_update(&mut self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) { println!("update {:?}", new.metadata.name) }
//!     fn on_delete(&mut self, o: &ObjectOrTombstone<ConfigMap>) { println!("delete {:?}", o.object().map(|o| &o.metadata.name)) }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let fifo = RealFifo::<ConfigMap>::new(RealFifoOptions::default());
//! let cache = Indexer::<ConfigMap>::new(IndexerOptions::default());
//! let key_func = meta_namespace_key_func();
//!
//! // The reflector's side: a list, then watch events.
//! fifo.replace(vec![config_map("a", "1"), config_map("b", "1")], "1")?;
//! fifo.update(config_map("a", "2"))?;
//! fifo.delete(config_map("b", "3").into())?;
//!
//! // The informer's side.
//! while !fifo.is_empty() {
//!     fifo.pop(|deltas, initial| process_deltas(&mut Print, &cache, &key_func, deltas, initial)).await?;
//! }
//! assert!(fifo.has_synced());
//! assert_eq!(Store::list_keys(&cache), ["a"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A [`DeltaFifo`] groups a key's pending changes, and turns deletions
//! missed while the watch was down into tombstones on relist:
//!
//! ```
//! use std::sync::Arc;
//! use clientgo_store::*;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! let named = |name: &str| Arc::new(ConfigMap {
//!     metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
//!     ..Default::default()
//! });
//! let cache: Arc<Indexer<ConfigMap>> = Arc::new(Indexer::new(IndexerOptions::default()));
//! cache.add(named("vanished"))?;
//! let fifo = DeltaFifo::new(DeltaFifoOptions::default().known_objects(cache.clone()).emit_delta_type_replaced(true));
//! fifo.replace(vec![named("still-here")], "7")?;
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let mut kinds = Vec::new();
//! while !fifo.is_empty() {
//!     fifo.pop(|deltas, _| { kinds.extend(deltas.iter().map(|d| d.delta_type())); Ok::<(), ()>(()) }).await.ok();
//! }
//! assert_eq!(kinds, [DeltaType::Replaced, DeltaType::Deleted]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A [`Heap`] pops the object its order puts first; a [`Fifo`] keeps only
//! the latest object of each key:
//!
//! ```
//! use std::sync::Arc;
//! use clientgo_store::*;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! let object = |name: &str, generation: i64| Arc::new(ConfigMap {
//!     metadata: ObjectMeta { name: Some(name.into()), generation: Some(generation), ..Default::default() },
//!     ..Default::default()
//! });
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let heap = Heap::new(Arc::new(|a: &ConfigMap, b: &ConfigMap| a.metadata.generation < b.metadata.generation));
//! heap.bulk_add(vec![object("later", 9), object("first", 1)])?;
//! assert_eq!(heap.pop().await?.metadata.name.as_deref(), Some("first"));
//!
//! let fifo = Fifo::<ConfigMap>::default();
//! fifo.add(object("a", 1))?;
//! fifo.update(object("a", 2))?;
//! fifo.pop(|latest, _| { assert_eq!(latest.metadata.generation, Some(2)); Ok::<(), ()>(()) }).await.ok();
//! assert!(fifo.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! An [`ExpirationCache`] forgets entries older than its TTL; an
//! [`UndeltaStore`] pushes the whole state after each change; a
//! [`MutationCache`] lets a controller read its own writes:
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//! use clientgo_apimachinery::clock::FakeClock;
//! use clientgo_store::*;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! let object = |name: &str, rv: &str| Arc::new(ConfigMap {
//!     metadata: ObjectMeta { name: Some(name.into()), resource_version: Some(rv.into()), ..Default::default() },
//!     ..Default::default()
//! });
//!
//! let clock = Arc::new(FakeClock::new());
//! let ttl = ExpirationCache::new(
//!     meta_namespace_key_func(),
//!     Box::new(TtlPolicy::with_clock(Duration::from_secs(30), clock.clone())),
//!     clock.clone(),
//! );
//! ttl.add(object("token", "1"))?;
//! clock.step(Duration::from_secs(31));
//! assert!(ttl.get_by_key("token").is_none());
//!
//! let pushed = Arc::new(Mutex::new(0));
//! let counter = pushed.clone();
//! let undelta = UndeltaStore::new(
//!     Indexer::<ConfigMap>::new(IndexerOptions::default()),
//!     Arc::new(move |state: Vec<Arc<ConfigMap>>| *counter.lock().unwrap() = state.len()),
//! );
//! undelta.add(object("a", "1"))?;
//! undelta.add(object("b", "1"))?;
//! assert_eq!(*pushed.lock().unwrap(), 2);
//!
//! let informer_cache = Arc::new(Indexer::<ConfigMap>::new(IndexerOptions::default()));
//! informer_cache.add(object("settings", "10"))?;
//! let writes = MutationCache::new(informer_cache.clone(), MutationCacheOptions::default());
//! writes.mutation(object("settings", "11"))?; // the API server's answer to our update
//! let read = writes.get_by_key("settings")?.unwrap();
//! assert_eq!(read.metadata.resource_version.as_deref(), Some("11"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arrival_order;
mod delta;
mod delta_fifo;
mod error;
mod expiration_cache;
mod fifo;
mod frequency_sketch;
mod heap;
mod index;
mod indexer;
mod key;
mod keyed_items;
mod lru_cache;
mod mutation_cache;
mod process_deltas;
mod queue;
mod queue_core;
mod real_fifo;
mod resource_event_handler;
mod store;
#[cfg(test)]
mod test_support;
mod thread_safe_store;
mod undelta_store;

pub use arrival_order::ArrivalOrder;
pub use delta::{Delta, DeltaType, Deltas};
pub use delta_fifo::{DeltaFifo, DeltaFifoOptions};
pub use error::{PopError, StoreError};
pub use expiration_cache::{ExpirationCache, ExpirationPolicy, TimestampedEntry, TtlPolicy};
pub use fifo::Fifo;
pub use frequency_sketch::FrequencySketch;
pub use heap::{Heap, LessFunc};
pub use index::{
    IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX, index_func_to_key_func,
    namespace_index_func, namespace_indexers,
};
pub use indexer::{Indexer, IndexerOptions, Transaction, TransactionError};
pub use key::{
    DeletedFinalStateUnknown, KeyFunc, ObjectName, ObjectOrTombstone, meta_namespace_key,
    meta_namespace_key_func, split_meta_namespace_key,
};
pub use lru_cache::LruCache;
pub use mutation_cache::{MutationCache, MutationCacheOptions};
pub use process_deltas::{ProcessError, process_deltas, process_deltas_in_batch};
pub use queue::Queue;
pub use real_fifo::{DEFAULT_BATCH_SIZE, RealFifo, RealFifoMode, RealFifoOptions};
pub use resource_event_handler::ResourceEventHandler;
pub use store::{Arrival, KnownObjects, ReflectorStore, Store, TransformFunc};
pub use thread_safe_store::{Change, ThreadSafeStore};
pub use undelta_store::{PushFunc, UndeltaStore};

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    /// Every store and queue can be shared between the reflector's task,
    /// the informer's task and readers.
    #[test]
    fn every_type_is_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<Indexer<Pod>>();
        shared::<ThreadSafeStore<Pod>>();
        shared::<DeltaFifo<Pod>>();
        shared::<RealFifo<Pod>>();
        shared::<Fifo<Pod>>();
        shared::<Heap<Pod>>();
        shared::<ExpirationCache<Pod>>();
        shared::<UndeltaStore<Pod, Indexer<Pod>>>();
        shared::<MutationCache<Pod>>();
        shared::<Delta<Pod>>();
        shared::<DeletedFinalStateUnknown<Pod>>();
    }
}
