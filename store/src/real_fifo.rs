//! [`RealFifo`]: the queue informers use since client-go 1.36 (`RealFIFO`):
//! every delta delivered once, in global arrival order.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use parking_lot::MutexGuard;

use crate::delta::{Delta, Deltas};
use crate::error::{PopError, StoreError};
use crate::key::{DeletedFinalStateUnknown, KeyFunc, ObjectOrTombstone, meta_namespace_key_func};
use crate::queue::{Queue, trace_slow_pop};
use crate::queue_core::QueueCore;
use crate::store::{
    Arrival, KnownObjects, ReflectorStore, TransformFunc, missed_deletions, prepare_object,
};

/// The most deltas one [`RealFifo::pop_batch`] hands over (client-go's
/// `defaultBatchSize`).
pub const DEFAULT_BATCH_SIZE: usize = 1000;

/// How a [`RealFifo`] turns a relist and a resync into deltas.
pub enum RealFifoMode<K> {
    /// client-go 1.36 informers' mode: a relist is one `ReplacedAll`
    /// carrying the whole list, a resync one `SyncAll`, and the consumer
    /// applies each in one step; no known objects are needed.
    Atomic {
        /// Release the queue's lock while `process` runs, as long as fewer
        /// than two batches of deltas are queued.
        unlock_while_processing: bool,
        /// Queue `Bookmark` deltas.
        emit_bookmarks: bool,
    },
    /// The older mode: a relist queues tombstones for vanished objects,
    /// then one `Replaced` per object, and a resync one `Sync` per known
    /// object; `known_objects` is the cache the queue feeds, read to find
    /// what vanished. `process` runs under the queue's lock.
    NonAtomic {
        /// The cache the queue feeds.
        known_objects: Arc<dyn KnownObjects<K>>,
    },
}

impl<K> RealFifoMode<K> {
    /// Atomic mode as client-go 1.36 informers use it: the lock released
    /// while processing, bookmarks queued.
    pub const ATOMIC: RealFifoMode<K> = RealFifoMode::Atomic {
        unlock_while_processing: true,
        emit_bookmarks: true,
    };
}

/// How a [`RealFifo`] is built.
///
/// The default is the configuration client-go 1.36 informers use:
/// [`RealFifoMode::ATOMIC`], no transform, batches of
/// [`DEFAULT_BATCH_SIZE`]. [`RealFifoOptions::non_atomic`] gives the older
/// configuration. Every combination is valid.
pub struct RealFifoOptions<K> {
    name: String,
    key_func: KeyFunc<K>,
    transform: Option<TransformFunc<K>>,
    reuse_from: Option<Arc<dyn KnownObjects<K>>>,
    mode: RealFifoMode<K>,
    batch_size: usize,
}

impl<K: Object + Send + Sync + 'static> Default for RealFifoOptions<K> {
    fn default() -> Self {
        RealFifoOptions {
            name: "RealFifo".to_string(),
            key_func: meta_namespace_key_func(),
            transform: None,
            reuse_from: None,
            mode: RealFifoMode::ATOMIC,
            batch_size: DEFAULT_BATCH_SIZE,
        }
    }
}

impl<K: Object + Send + Sync + 'static> RealFifoOptions<K> {
    /// Non-atomic mode ([`RealFifoMode::NonAtomic`]) over `known_objects`.
    pub fn non_atomic(known_objects: Arc<dyn KnownObjects<K>>) -> Self {
        RealFifoOptions::default().mode(RealFifoMode::NonAtomic { known_objects })
    }

    /// Names the queue in logs and errors.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Uses another key function.
    pub fn key_func(mut self, key_func: KeyFunc<K>) -> Self {
        self.key_func = key_func;
        self
    }

    /// Transforms each object once, in [`prepare`](ReflectorStore::prepare)
    /// (tombstones and `Sync` deltas carry cached objects, already
    /// transformed).
    pub fn transform(mut self, transform: TransformFunc<K>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// The cache the queue feeds, read by
    /// [`prepare`](ReflectorStore::prepare): an object it holds at the same
    /// version is taken from it instead of kept twice. Non-atomic mode
    /// reads its known objects without this.
    pub fn reuse_from(mut self, cache: Arc<dyn KnownObjects<K>>) -> Self {
        self.reuse_from = Some(cache);
        self
    }

    /// How relists and resyncs become deltas.
    pub fn mode(mut self, mode: RealFifoMode<K>) -> Self {
        self.mode = mode;
        self
    }

    /// The most deltas one `pop_batch` delivers; 0 counts as 1.
    pub fn batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }
}

/// The pending part of a [`RealFifo`]'s state.
#[derive(Debug)]
struct State<K> {
    items: VecDeque<Delta<K>>,
}

/// A queue of individual deltas in arrival order.
///
/// **Ordering.** Every add, update and delete is queued as its own delta and
/// popped once, in the order it arrived, across all keys; nothing is
/// merged, so deletes are never lost and the store's resourceVersion
/// advances in order. [`pop`](Queue::pop) delivers one delta at a time;
/// [`pop_batch`](RealFifo::pop_batch) several.
///
/// **Atomic mode** (the default): a replace queues one `ReplacedAll` with
/// the whole list and its resourceVersion, a resync one `SyncAll`, and
/// bookmarks are queued; the consumer applies a relist to its cache in one
/// step. **Non-atomic mode** queues, on replace, a tombstone for every
/// queued or known key missing from the list (in that order) *before* one
/// `Replaced` per listed object; on resync, `Sync` for every known key with
/// nothing queued.
///
/// **Locking and blocking.** One mutex guards the queue. With
/// `unlock_while_processing`, `pop` releases it while `process` runs as
/// long as fewer than 2 × batch size deltas are queued, so producers are
/// not held up by slow consumers. Above that depth (a backlog: client-go's
/// rule, to let the consumer catch up), or without the option, `process`
/// runs under the lock: every producer call (`add`, `replace`, …) then
/// **blocks its thread** until `process` returns, and `process` must not
/// call back into the queue. Pops never block a thread while waiting: they
/// await a notification. `pop` is `pop_batch` with a batch of one. There
/// must be one consumer.
pub struct RealFifo<K> {
    name: String,
    key_func: KeyFunc<K>,
    transform: Option<TransformFunc<K>>,
    reuse_from: Option<Arc<dyn KnownObjects<K>>>,
    mode: RealFifoMode<K>,
    batch_size: usize,
    core: QueueCore<State<K>>,
}

impl<K> fmt::Debug for RealFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.core.lock();
        f.debug_struct("RealFifo")
            .field("name", &self.name)
            .field(
                "atomic_events",
                &matches!(self.mode, RealFifoMode::Atomic { .. }),
            )
            .field("queued", &state.items.len())
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> RealFifo<K> {
    /// A new, empty queue.
    pub fn new(options: RealFifoOptions<K>) -> Self {
        RealFifo {
            name: options.name,
            key_func: options.key_func,
            transform: options.transform,
            reuse_from: options.reuse_from,
            mode: options.mode,
            batch_size: options.batch_size,
            core: QueueCore::new(State {
                items: VecDeque::new(),
            }),
        }
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many deltas are queued.
    pub fn len(&self) -> usize {
        self.core.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.core.lock().items.is_empty()
    }

    fn push(&self, delta: Delta<K>) {
        self.core.change(|state| {
            state.initial.populate();
            state.items.push_back(delta);
        });
    }

    /// The key of a per-object delta.
    fn key_of(&self, delta: &Delta<K>) -> Option<Result<String, StoreError>> {
        match delta {
            Delta::Deleted(target) => Some(target.key(&self.key_func)),
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => {
                Some((self.key_func)(o))
            }
            Delta::ReplacedAll { .. } | Delta::SyncAll | Delta::Bookmark { .. } => None,
        }
    }

    /// Whether `process` may run without the lock at this depth.
    fn unlocks_at(&self, depth: usize) -> bool {
        matches!(
            self.mode,
            RealFifoMode::Atomic {
                unlock_while_processing: true,
                ..
            }
        ) && depth < 2 * self.batch_size
    }

    /// Waits for deltas and hands up to the batch size of them to
    /// `process_batch` (or a single one to `process_single`), with the
    /// initial-list flag.
    ///
    /// A batch holds only per-object deltas of distinct keys, in order: it
    /// ends before the first repeated key, before an atomic delta
    /// (`ReplacedAll`, `SyncAll`, `Bookmark`, which is delivered alone), and
    /// at the end of the initial list, so one batch never mixes initial and
    /// later items. A delta whose key cannot be computed ends the batch it
    /// is in. The same locking rule as `pop` applies.
    pub async fn pop_batch<E, B, S>(
        &self,
        process_batch: B,
        process_single: S,
    ) -> Result<(), PopError<E>>
    where
        B: FnOnce(Deltas<K>, bool) -> Result<(), E> + Send,
        S: FnOnce(Delta<K>, bool) -> Result<(), E> + Send,
        E: Send,
    {
        self.pop_up_to(self.batch_size, move |mut batch, is_in_initial_list| {
            if batch.len() == 1 {
                match batch.pop() {
                    Some(delta) => process_single(delta, is_in_initial_list),
                    None => Ok(()),
                }
            } else {
                process_batch(batch, is_in_initial_list)
            }
        })
        .await
    }

    /// Waits for deltas and hands up to `limit` of them to `process`: the
    /// one pop behind [`pop_batch`](Self::pop_batch) and
    /// [`pop`](Queue::pop) (a batch of one).
    async fn pop_up_to<E, F>(&self, limit: usize, process: F) -> Result<(), PopError<E>>
    where
        F: FnOnce(Deltas<K>, bool) -> Result<(), E> + Send,
        E: Send,
    {
        let mut process = Some(process);
        self.core
            .pop(|state| {
                if state.items.is_empty() {
                    return None;
                }
                let process = process.take()?;
                let is_in_initial_list = !state.initial.has_synced();
                let mut limit = limit;
                if is_in_initial_list && state.initial.remaining() > 0 {
                    limit = limit.min(state.initial.remaining());
                }
                let batch = self.take_batch(state, limit);
                let count = batch.len();
                let depth = state.items.len();
                let started = std::time::Instant::now();
                let result = if self.unlocks_at(depth) {
                    MutexGuard::unlocked(state, || process(batch, is_in_initial_list))
                } else {
                    process(batch, is_in_initial_list)
                };
                state.initial.delivered(count);
                trace_slow_pop(&self.name, depth, started);
                Some(result.map_err(PopError::Process))
            })
            .await
            .unwrap_or(Err(PopError::Closed))
    }

    /// Takes up to `limit` deltas off the front: per-object deltas of
    /// distinct keys, in order, ending before the first repeated key and
    /// after a delta whose key cannot be computed; an atomic delta alone.
    fn take_batch(&self, state: &mut State<K>, limit: usize) -> Deltas<K> {
        let mut batch: Deltas<K> = Vec::new();
        let mut keys: HashSet<String> = HashSet::new();
        while batch.len() < limit {
            let Some(next) = state.items.front() else {
                break;
            };
            if !next.is_batchable() {
                if batch.is_empty()
                    && let Some(delta) = state.items.pop_front()
                {
                    batch.push(delta);
                }
                break;
            }
            match self.key_of(next) {
                Some(Ok(key)) => {
                    if !keys.insert(key) {
                        break;
                    }
                    if let Some(delta) = state.items.pop_front() {
                        batch.push(delta);
                    }
                }
                Some(Err(_)) | None => {
                    if let Some(delta) = state.items.pop_front() {
                        batch.push(delta);
                    }
                    break;
                }
            }
        }
        batch
    }
}

impl<K: Object + Send + Sync + 'static> ReflectorStore<K> for RealFifo<K> {
    /// Reuses the cache's `Arc` of an unchanged object (the
    /// [`reuse_from`](RealFifoOptions::reuse_from) cache, else the known
    /// objects of non-atomic mode), else applies the transform.
    fn prepare(&self, object: Arc<K>, arrival: Arrival) -> Result<Arc<K>, StoreError> {
        let cache = match (&self.reuse_from, &self.mode) {
            (Some(cache), _)
            | (
                None,
                RealFifoMode::NonAtomic {
                    known_objects: cache,
                },
            ) => Some((&**cache, &self.key_func)),
            (None, RealFifoMode::Atomic { .. }) => None,
        };
        prepare_object(object, arrival, cache, self.transform.as_ref())
    }

    fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.push(Delta::Added(object));
        Ok(())
    }

    fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.push(Delta::Updated(object));
        Ok(())
    }

    /// Always queues the delete (a RealFifo never suppresses one).
    fn delete(&self, target: ObjectOrTombstone<K>) -> Result<(), StoreError> {
        self.push(Delta::Deleted(target));
        Ok(())
    }

    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError> {
        let known_objects = match &self.mode {
            RealFifoMode::NonAtomic { known_objects } => known_objects,
            RealFifoMode::Atomic { .. } => {
                self.core.change(|state| {
                    state.items.push_back(Delta::ReplacedAll {
                        resource_version: resource_version.to_string(),
                        objects,
                    });
                    let queued = state.items.len();
                    state.initial.replace(queued);
                });
                return Ok(());
            }
        };
        let mut listed: HashSet<String> = HashSet::with_capacity(objects.len());
        let mut keyed = Vec::with_capacity(objects.len());
        for object in objects {
            let key = (self.key_func)(&object)?;
            listed.insert(key);
            keyed.push(object);
        }
        let mut state = self.core.lock();
        // The last queued delta of every queued key, keys in order of first
        // appearance.
        let mut order: Vec<String> = Vec::new();
        let mut last: std::collections::HashMap<String, &Delta<K>> =
            std::collections::HashMap::new();
        for delta in &state.items {
            if let Some(Ok(key)) = self.key_of(delta) {
                if !last.contains_key(&key) {
                    order.push(key.clone());
                }
                last.insert(key, delta);
            }
        }
        let mut deletions: Vec<Delta<K>> = Vec::new();
        for key in &order {
            if listed.contains(key) {
                continue;
            }
            let Some(delta) = last.get(key) else { continue };
            if matches!(delta, Delta::Deleted(_)) {
                continue;
            }
            deletions.push(Delta::Deleted(
                DeletedFinalStateUnknown {
                    key: key.clone(),
                    object: delta.object().cloned(),
                }
                .into(),
            ));
        }
        let tombstones = missed_deletions(&**known_objects, |key| {
            listed.contains(key) || last.contains_key(key)
        });
        deletions.extend(
            tombstones
                .into_iter()
                .map(|tombstone| Delta::Deleted(tombstone.into())),
        );
        drop(last);
        state.items.extend(deletions);
        state.items.extend(keyed.into_iter().map(Delta::Replaced));
        let queued = state.items.len();
        state.initial.replace(queued);
        drop(state);
        self.core.wake();
        Ok(())
    }

    /// In atomic mode both replaces are queued at once, as the initial
    /// population: a consumer never sees the earlier state alone as synced.
    fn replace_after(
        &self,
        earlier: (Vec<Arc<K>>, &str),
        objects: Vec<Arc<K>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        if let RealFifoMode::NonAtomic { .. } = &self.mode {
            self.replace(earlier.0, earlier.1)?;
            return self.replace(objects, resource_version);
        }
        self.core.change(|state| {
            state.items.push_back(Delta::ReplacedAll {
                resource_version: earlier.1.to_string(),
                objects: earlier.0,
            });
            state.items.push_back(Delta::ReplacedAll {
                resource_version: resource_version.to_string(),
                objects,
            });
            let queued = state.items.len();
            state.initial.replace(queued);
        });
        Ok(())
    }

    fn resync(&self) -> Result<(), StoreError> {
        let known = match &self.mode {
            RealFifoMode::NonAtomic { known_objects } => known_objects,
            RealFifoMode::Atomic { .. } => {
                self.core
                    .change(|state| state.items.push_back(Delta::SyncAll));
                return Ok(());
            }
        };
        let mut state = self.core.lock();
        let queued: HashSet<String> = state
            .items
            .iter()
            .filter_map(|delta| self.key_of(delta).and_then(Result::ok))
            .collect();
        let mut known_keys = known.list_keys();
        known_keys.sort_unstable();
        for key in known_keys {
            if queued.contains(&key) {
                continue;
            }
            if let Some(object) = known.get_by_key(&key) {
                state.items.push_back(Delta::Sync(object));
            }
        }
        drop(state);
        self.core.wake();
        Ok(())
    }

    /// Queues a `Bookmark` delta when bookmarks are enabled; otherwise does
    /// nothing.
    fn bookmark(&self, resource_version: &str) -> Result<(), StoreError> {
        if let RealFifoMode::Atomic {
            emit_bookmarks: true,
            ..
        } = self.mode
        {
            self.core.change(|state| {
                state.items.push_back(Delta::Bookmark {
                    resource_version: resource_version.to_string(),
                })
            });
        }
        Ok(())
    }
}

impl<K: Object + Send + Sync + 'static> Queue<K> for RealFifo<K> {
    /// Pops one delta (delivered as a one-element list). RealFifo counts an
    /// item as delivered only after `process` returns, so `has_synced` turns
    /// true once the last initial item has been processed.
    async fn pop<E, F>(&self, process: F) -> Result<(), PopError<E>>
    where
        F: FnOnce(Deltas<K>, bool) -> Result<(), E> + Send,
        E: Send,
    {
        self.pop_up_to(1, process).await
    }

    fn has_synced(&self) -> bool {
        self.core.has_synced()
    }

    fn close(&self) {
        self.core.close();
    }

    fn is_closed(&self) -> bool {
        self.core.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::{Indexer, IndexerOptions};
    use k8s_openapi::api::core::v1::ConfigMap;

    use crate::test_support::config_map as object;

    fn atomic() -> RealFifo<ConfigMap> {
        RealFifo::new(RealFifoOptions::default())
    }

    fn known_with(names: &[&str]) -> Arc<Indexer<ConfigMap>> {
        let known = Arc::new(Indexer::new(IndexerOptions::default()));
        for name in names {
            known.add(object(name, "0")).unwrap();
        }
        known
    }

    async fn pop(fifo: &RealFifo<ConfigMap>) -> (Delta<ConfigMap>, bool) {
        let mut out = None;
        fifo.pop(|mut deltas, initial| {
            assert_eq!(deltas.len(), 1, "RealFifo pops one delta at a time");
            out = deltas.pop().map(|d| (d, initial));
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
        out.unwrap()
    }

    fn describe(delta: &Delta<ConfigMap>) -> String {
        match delta {
            Delta::Deleted(ObjectOrTombstone::Tombstone(t)) => format!("Tombstone({})", t.key),
            other => format!(
                "{}({})",
                other.delta_type(),
                other
                    .object()
                    .and_then(|o| o.metadata.name.clone())
                    .unwrap_or_default()
            ),
        }
    }

    async fn drain(fifo: &RealFifo<ConfigMap>) -> Vec<String> {
        let mut out = Vec::new();
        while !fifo.is_empty() {
            out.push(describe(&pop(fifo).await.0));
        }
        out
    }

    #[test]
    fn a_batch_size_of_zero_counts_as_one() {
        let fifo = RealFifo::<ConfigMap>::new(RealFifoOptions::default().batch_size(0));
        assert_eq!(fifo.batch_size, 1);
    }

    #[tokio::test]
    async fn every_event_is_delivered_in_global_order() {
        let fifo = atomic();
        fifo.add(object("a", "1")).unwrap();
        fifo.add(object("b", "2")).unwrap();
        fifo.update(object("a", "3")).unwrap();
        fifo.delete(object("b", "4").into()).unwrap();
        fifo.delete(object("b", "5").into()).unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "Added(a)",
                "Added(b)",
                "Updated(a)",
                "Deleted(b)",
                "Deleted(b)"
            ]
        );
    }

    #[tokio::test]
    async fn atomic_replace_is_one_delta_with_the_list_and_resource_version() {
        let fifo = atomic();
        fifo.replace(vec![object("a", "1"), object("b", "1")], "77")
            .unwrap();
        assert_eq!(fifo.len(), 1);
        let (delta, initial) = pop(&fifo).await;
        assert!(initial);
        let Delta::ReplacedAll {
            resource_version,
            objects,
        } = delta
        else {
            panic!("expected ReplacedAll");
        };
        assert_eq!(resource_version, "77");
        assert_eq!(objects.len(), 2);
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn atomic_resync_and_bookmarks() {
        let fifo = atomic();
        fifo.resync().unwrap();
        fifo.bookmark("9").unwrap();
        assert_eq!(drain(&fifo).await, ["SyncAll()", "Bookmark()"]);
        let quiet =
            RealFifo::<ConfigMap>::new(RealFifoOptions::default().mode(RealFifoMode::Atomic {
                unlock_while_processing: true,
                emit_bookmarks: false,
            }));
        quiet.bookmark("9").unwrap();
        assert!(quiet.is_empty());
    }

    #[tokio::test]
    async fn non_atomic_replace_queues_deletions_before_replaced() {
        let known = known_with(&["known-gone", "kept"]);
        let fifo = RealFifo::new(RealFifoOptions::non_atomic(known));
        fifo.add(object("queued-gone", "1")).unwrap();
        fifo.add(object("deleted-already", "1")).unwrap();
        fifo.delete(object("deleted-already", "2").into()).unwrap();
        fifo.replace(vec![object("kept", "3"), object("new", "3")], "3")
            .unwrap();
        assert_eq!(
            drain(&fifo).await,
            [
                "Added(queued-gone)",
                "Added(deleted-already)",
                "Deleted(deleted-already)",
                "Tombstone(queued-gone)",
                "Tombstone(known-gone)",
                "Replaced(kept)",
                "Replaced(new)",
            ]
        );
    }

    #[tokio::test]
    async fn non_atomic_tombstone_carries_the_last_queued_object() {
        let fifo = RealFifo::new(RealFifoOptions::non_atomic(known_with(&[])));
        fifo.add(object("x", "1")).unwrap();
        fifo.update(object("x", "2")).unwrap();
        fifo.replace(vec![], "3").unwrap();
        let _ = pop(&fifo).await;
        let _ = pop(&fifo).await;
        let (delta, _) = pop(&fifo).await;
        let Delta::Deleted(ObjectOrTombstone::Tombstone(tombstone)) = delta else {
            panic!("expected a tombstone");
        };
        assert_eq!(
            tombstone
                .object
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("2")
        );
    }

    #[tokio::test]
    async fn non_atomic_resync_skips_queued_keys() {
        let fifo = RealFifo::new(RealFifoOptions::non_atomic(known_with(&["a", "b"])));
        fifo.update(object("a", "5")).unwrap();
        fifo.resync().unwrap();
        assert_eq!(drain(&fifo).await, ["Updated(a)", "Sync(b)"]);
    }

    #[tokio::test]
    async fn initial_population_counts_items_and_decrements_after_processing() {
        let fifo = RealFifo::new(RealFifoOptions::non_atomic(known_with(&[])));
        fifo.replace(vec![object("a", "1"), object("b", "1")], "1")
            .unwrap();
        assert!(!fifo.has_synced());
        let (_, first_initial) = pop(&fifo).await;
        assert!(first_initial);
        assert!(!fifo.has_synced());
        let (_, second_initial) = pop(&fifo).await;
        assert!(second_initial);
        assert!(fifo.has_synced());

        // In atomic mode the lock is released while processing, so the
        // consumer can look: the ReplacedAll is not yet counted delivered.
        let fifo = atomic();
        fifo.replace(vec![object("a", "1")], "1").unwrap();
        let fifo_ref = &fifo;
        let mut synced_during = None;
        fifo.pop(|_, initial| {
            assert!(initial);
            synced_during = Some(fifo_ref.has_synced());
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
        assert_eq!(synced_during, Some(false));
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn unlocks_while_processing_so_producers_are_not_blocked() {
        let fifo = atomic();
        fifo.add(object("a", "1")).unwrap();
        let fifo_ref = &fifo;
        fifo.pop(|_, _| {
            // The lock is free: a producer can add while we process.
            fifo_ref.add(object("b", "2")).unwrap();
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
        assert_eq!(fifo.len(), 1);
    }

    #[tokio::test]
    async fn pop_batch_stops_at_duplicate_keys_and_unbatchable_deltas() {
        let fifo = atomic();
        fifo.add(object("a", "1")).unwrap();
        fifo.add(object("b", "1")).unwrap();
        fifo.update(object("a", "2")).unwrap();
        fifo.bookmark("5").unwrap();
        fifo.add(object("c", "1")).unwrap();

        let mut seen: Vec<Vec<String>> = Vec::new();
        for _ in 0..4 {
            let got = std::sync::Mutex::new(Vec::new());
            fifo.pop_batch(
                |batch, _| {
                    *got.lock().unwrap() = batch.iter().map(describe).collect();
                    Ok::<(), ()>(())
                },
                |single, _| {
                    *got.lock().unwrap() = vec![describe(&single)];
                    Ok(())
                },
            )
            .await
            .unwrap();
            seen.push(got.into_inner().unwrap());
        }
        assert_eq!(
            seen,
            vec![
                vec!["Added(a)".to_string(), "Added(b)".to_string()],
                vec!["Updated(a)".to_string()],
                vec!["Bookmark()".to_string()],
                vec!["Added(c)".to_string()],
            ]
        );
    }

    #[tokio::test]
    async fn pop_batch_respects_batch_size_and_the_initial_list_boundary() {
        let fifo = RealFifo::new(RealFifoOptions::non_atomic(known_with(&[])).batch_size(2));
        fifo.replace(
            vec![object("a", "1"), object("b", "1"), object("c", "1")],
            "1",
        )
        .unwrap();
        fifo.add(object("d", "1")).unwrap();
        let mut batches = Vec::new();
        while !fifo.is_empty() {
            let got = std::sync::Mutex::new((0, false));
            fifo.pop_batch(
                |batch, initial| {
                    *got.lock().unwrap() = (batch.len(), initial);
                    Ok::<(), ()>(())
                },
                |_, initial| {
                    *got.lock().unwrap() = (1, initial);
                    Ok(())
                },
            )
            .await
            .unwrap();
            batches.push(got.into_inner().unwrap());
        }
        // Three initial items in batches of at most 2; "d" never joins them.
        assert_eq!(batches, [(2, true), (1, true), (1, false)]);
    }

    #[tokio::test]
    async fn closed_queue_drains_first() {
        let fifo = atomic();
        fifo.add(object("a", "1")).unwrap();
        fifo.close();
        assert!(fifo.is_closed());
        let _ = pop(&fifo).await;
        assert!(matches!(
            fifo.pop(|_, _| Ok::<(), ()>(())).await,
            Err(PopError::Closed)
        ));
        assert!(matches!(
            fifo.pop_batch(|_, _| Ok::<(), ()>(()), |_, _| Ok(())).await,
            Err(PopError::Closed)
        ));
    }

    #[test]
    fn prepare_transforms_once_and_reuses_what_the_cache_holds() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let transform: TransformFunc<ConfigMap> = Arc::new(move |o| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(o)
        });
        let cache = known_with(&["a"]);
        let fifo = RealFifo::new(
            RealFifoOptions::default()
                .transform(transform)
                .reuse_from(cache.clone()),
        );
        let transforms = || calls.load(std::sync::atomic::Ordering::SeqCst);
        // The same version as cached: the cache's Arc, not transformed.
        let same = fifo.prepare(object("a", "0"), Arrival::Listed).unwrap();
        assert!(Arc::ptr_eq(&same, &cache.get_by_key("a").unwrap()));
        assert_eq!(transforms(), 0);
        // A new version, and an object the cache lacks: transformed once.
        let changed = fifo.prepare(object("a", "5"), Arrival::Listed).unwrap();
        let new = fifo.prepare(object("b", "5"), Arrival::Listed).unwrap();
        assert_eq!(transforms(), 2);
        // A watch event is a change: the cache is not looked up for it.
        let event = fifo.prepare(object("a", "0"), Arrival::Changed).unwrap();
        assert!(!Arc::ptr_eq(&event, &cache.get_by_key("a").unwrap()));
        assert_eq!(transforms(), 3);
        // Queueing prepared objects transforms nothing again.
        fifo.add(Arc::clone(&new)).unwrap();
        fifo.delete(
            DeletedFinalStateUnknown {
                key: "a".into(),
                object: None,
            }
            .into(),
        )
        .unwrap();
        fifo.replace(vec![changed, new], "5").unwrap();
        assert_eq!(transforms(), 3);
        assert_eq!(fifo.len(), 3);
    }
}
