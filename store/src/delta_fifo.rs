//! [`DeltaFifo`]: a queue of per-key delta lists (client-go's `DeltaFIFO`).
//!
//! Informers use [`RealFifo`](crate::RealFifo) since client-go 1.36; the
//! DeltaFifo remains for code that wants all pending changes of one object
//! delivered together.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::delta::{Delta, Deltas};
use crate::error::{PopError, StoreError};
use crate::key::{DeletedFinalStateUnknown, KeyFunc, ObjectOrTombstone, meta_namespace_key_func};
use crate::queue::{Queue, trace_slow_pop};
use crate::queue_core::QueueCore;
use crate::store::{
    Arrival, KnownObjects, ReflectorStore, TransformFunc, missed_deletions, prepare_object,
};

/// How a [`DeltaFifo`] is built.
pub struct DeltaFifoOptions<K> {
    name: String,
    key_func: KeyFunc<K>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    emit_delta_type_replaced: bool,
    transform: Option<TransformFunc<K>>,
}

impl<K: Object + Send + Sync + 'static> Default for DeltaFifoOptions<K> {
    /// Named "DeltaFifo", `namespace/name` keys, no known objects, `Sync`
    /// deltas on replace, no transform.
    fn default() -> Self {
        DeltaFifoOptions {
            name: "DeltaFifo".to_string(),
            key_func: meta_namespace_key_func(),
            known_objects: None,
            emit_delta_type_replaced: false,
            transform: None,
        }
    }
}

impl<K: Object + Send + Sync + 'static> DeltaFifoOptions<K> {
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

    /// The cache this queue feeds: used to detect deletions on replace, to
    /// resync, and by [`prepare`](ReflectorStore::prepare) to reuse the
    /// cached `Arc` of an unchanged object.
    pub fn known_objects(mut self, known_objects: Arc<dyn KnownObjects<K>>) -> Self {
        self.known_objects = Some(known_objects);
        self
    }

    /// Queue `Replaced` rather than `Sync` deltas on replace. Without it
    /// (the deprecated default kept for compatibility) a relist looks like
    /// a resync to the consumer.
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }

    /// Transforms each object once, in [`prepare`](ReflectorStore::prepare)
    /// (tombstones and `Sync` deltas carry cached objects, already
    /// transformed).
    pub fn transform(mut self, transform: TransformFunc<K>) -> Self {
        self.transform = Some(transform);
        self
    }
}

/// The pending part of a [`DeltaFifo`]'s state.
#[derive(Debug)]
struct State<K> {
    /// Pending deltas per key; never empty.
    items: HashMap<String, Deltas<K>>,
    /// Keys in arrival order; a key is in `queue` exactly when it is in
    /// `items`.
    queue: VecDeque<String>,
}

/// A producer/consumer queue of deltas grouped by object key.
///
/// **Ordering.** Keys are popped in the order they were first queued; a key
/// already queued keeps its place when more deltas arrive (no line
/// jumping). One pop delivers every pending delta of one key, oldest first.
///
/// **Merging.** Only two consecutive `Deleted` deltas of a key collapse into
/// one: the older is kept, unless it is a tombstone, in which case the newer
/// is. So a real delete wins over a tombstone.
///
/// **Locking.** One mutex guards the queue. `pop` calls `process` *while
/// holding it* (as client-go does), so producers wait for the consumer's
/// callback; keep it short and never call back into the queue from it.
/// The known-objects cache is read under the queue's lock, so its own lock
/// must never be held while calling into the queue.
pub struct DeltaFifo<K> {
    name: String,
    key_func: KeyFunc<K>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    emit_delta_type_replaced: bool,
    transform: Option<TransformFunc<K>>,
    core: QueueCore<State<K>>,
}

impl<K> fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.core.lock();
        f.debug_struct("DeltaFifo")
            .field("name", &self.name)
            .field("queued_keys", &state.queue.len())
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> DeltaFifo<K> {
    /// A new, empty queue.
    pub fn new(options: DeltaFifoOptions<K>) -> Self {
        DeltaFifo {
            name: options.name,
            key_func: options.key_func,
            known_objects: options.known_objects,
            emit_delta_type_replaced: options.emit_delta_type_replaced,
            transform: options.transform,
            core: QueueCore::new(State {
                items: HashMap::new(),
                queue: VecDeque::new(),
            }),
        }
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many keys are queued.
    pub fn len(&self) -> usize {
        self.core.lock().queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.core.lock().queue.is_empty()
    }

    /// Appends a delta to a key's list, merges duplicate deletes, queues the
    /// key if it is new, and wakes consumers.
    fn queue_locked(&self, state: &mut State<K>, key: String, delta: Delta<K>) {
        match state.items.get_mut(&key) {
            Some(deltas) => {
                deltas.push(delta);
                merge_duplicate_deletes(deltas);
            }
            None => {
                state.queue.push_back(key.clone());
                state.items.insert(key, vec![delta]);
            }
        }
        self.core.wake();
    }
}

/// client-go's `dedupDeltas`: only two consecutive `Deleted` deltas are
/// duplicates. The older is kept unless it is a tombstone.
fn merge_duplicate_deletes<K>(deltas: &mut Deltas<K>) {
    let length = deltas.len();
    if length < 2 {
        return;
    }
    if let (Delta::Deleted(older), Delta::Deleted(_)) = (&deltas[length - 2], &deltas[length - 1]) {
        if older.is_tombstone() {
            deltas.remove(length - 2);
        } else {
            deltas.pop();
        }
    }
}

impl<K: Object + Send + Sync + 'static> ReflectorStore<K> for DeltaFifo<K> {
    /// Reuses the known objects' `Arc` of an unchanged object, else applies
    /// the transform.
    fn prepare(&self, object: Arc<K>, arrival: Arrival) -> Result<Arc<K>, StoreError> {
        let cache = self
            .known_objects
            .as_ref()
            .map(|known| (&**known, &self.key_func));
        prepare_object(object, arrival, cache, self.transform.as_ref())
    }

    fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = (self.key_func)(&object)?;
        let mut state = self.core.lock();
        state.initial.populate();
        self.queue_locked(&mut state, key, Delta::Added(object));
        Ok(())
    }

    fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = (self.key_func)(&object)?;
        let mut state = self.core.lock();
        state.initial.populate();
        self.queue_locked(&mut state, key, Delta::Updated(object));
        Ok(())
    }

    /// Queues a `Deleted` delta, unless the key is unknown: without known
    /// objects, a key not queued is ignored; with them, a key neither
    /// known nor queued is.
    fn delete(&self, target: ObjectOrTombstone<K>) -> Result<(), StoreError> {
        let key = target.key(&self.key_func)?;
        let mut state = self.core.lock();
        state.initial.populate();
        let queued = state.items.contains_key(&key);
        let known = match &self.known_objects {
            Some(known) => known.get_by_key(&key).is_some(),
            None => false,
        };
        if !queued && !known {
            return Ok(());
        }
        self.queue_locked(&mut state, key, Delta::Deleted(target));
        Ok(())
    }

    /// Queues `Replaced` (or `Sync`) for every listed object, then a
    /// tombstone for every queued key and every known key missing from the
    /// list. The first replace sets the count `has_synced` waits for.
    fn replace(&self, objects: Vec<Arc<K>>, _resource_version: &str) -> Result<(), StoreError> {
        let mut keyed = Vec::with_capacity(objects.len());
        for object in objects {
            let key = (self.key_func)(&object)?;
            keyed.push((key, object));
        }
        let mut state = self.core.lock();
        let mut listed: HashSet<String> = HashSet::with_capacity(keyed.len());
        for (key, object) in keyed {
            listed.insert(key.clone());
            let delta = if self.emit_delta_type_replaced {
                Delta::Replaced(object)
            } else {
                Delta::Sync(object)
            };
            self.queue_locked(&mut state, key, delta);
        }

        // Deletions of queued keys the list no longer has (a delete missed
        // while the watch was down). Walk the queue so the order is stable.
        let vanished: Vec<(String, Option<Arc<K>>)> = state
            .queue
            .iter()
            .filter(|key| !listed.contains(*key))
            .map(|key| {
                let last = state
                    .items
                    .get(key)
                    .and_then(|deltas| deltas.last())
                    .and_then(|delta| delta.object().cloned());
                (key.clone(), last)
            })
            .collect();
        let mut queued_deletions = vanished.len();
        for (key, object) in vanished {
            let tombstone = DeletedFinalStateUnknown {
                key: key.clone(),
                object,
            };
            self.queue_locked(&mut state, key, Delta::Deleted(tombstone.into()));
        }

        // Deletions of known keys that are neither listed nor queued.
        if let Some(known) = &self.known_objects {
            let tombstones = missed_deletions(&**known, |key| {
                listed.contains(key) || state.items.contains_key(key)
            });
            queued_deletions += tombstones.len();
            for tombstone in tombstones {
                let key = tombstone.key.clone();
                self.queue_locked(&mut state, key, Delta::Deleted(tombstone.into()));
            }
        }

        let queued = listed.len() + queued_deletions;
        state.initial.replace(queued);
        self.core.wake();
        Ok(())
    }

    /// Queues `Sync` for every known object that has no queued deltas, so
    /// a resync never redelivers a state older than one already queued.
    fn resync(&self) -> Result<(), StoreError> {
        let Some(known) = &self.known_objects else {
            return Ok(());
        };
        let mut state = self.core.lock();
        for key in known.list_keys() {
            let Some(object) = known.get_by_key(&key) else {
                continue;
            };
            let key = (self.key_func)(&object)?;
            if state.items.contains_key(&key) {
                continue;
            }
            self.queue_locked(&mut state, key, Delta::Sync(object));
        }
        Ok(())
    }
}

impl<K: Object + Send + Sync + 'static> Queue<K> for DeltaFifo<K> {
    async fn pop<E, F>(&self, process: F) -> Result<(), PopError<E>>
    where
        F: FnOnce(Deltas<K>, bool) -> Result<(), E> + Send,
        E: Send,
    {
        let mut process = Some(process);
        self.core
            .pop(|state| {
                loop {
                    let key = state.queue.pop_front()?;
                    let is_in_initial_list = !state.initial.has_synced();
                    // DeltaFifo counts an item as delivered before
                    // processing it.
                    state.initial.delivered(1);
                    let Some(deltas) = state.items.remove(&key) else {
                        continue;
                    };
                    let process = process.take()?;
                    let depth = state.queue.len();
                    let started = std::time::Instant::now();
                    let result = process(deltas, is_in_initial_list).map_err(PopError::Process);
                    trace_slow_pop(&self.name, depth, started);
                    return Some(result);
                }
            })
            .await
            .unwrap_or(Err(PopError::Closed))
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
    use crate::delta::DeltaType;
    use crate::indexer::{Indexer, IndexerOptions};
    use k8s_openapi::api::core::v1::ConfigMap;

    use crate::test_support::config_map as object;

    fn rv(delta: &Delta<ConfigMap>) -> Option<String> {
        delta
            .object()
            .and_then(|o| o.metadata.resource_version.clone())
    }

    /// Pops one item, returning its deltas and the initial-list flag.
    async fn pop(fifo: &DeltaFifo<ConfigMap>) -> (Deltas<ConfigMap>, bool) {
        let mut out = None;
        fifo.pop(|deltas, initial| {
            out = Some((deltas, initial));
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
        out.unwrap()
    }

    fn types(deltas: &Deltas<ConfigMap>) -> Vec<DeltaType> {
        deltas.iter().map(Delta::delta_type).collect()
    }

    #[tokio::test]
    async fn pops_keys_in_first_arrival_order_with_all_their_deltas() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        fifo.add(object("b", "2")).unwrap();
        fifo.update(object("a", "3")).unwrap();
        assert_eq!(fifo.len(), 2);
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(types(&deltas), [DeltaType::Added, DeltaType::Updated]);
        assert_eq!(rv(&deltas[1]).as_deref(), Some("3"));
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(
            deltas[0].object().unwrap().metadata.name.as_deref(),
            Some("b")
        );
        assert!(fifo.is_empty());
    }

    #[tokio::test]
    async fn no_line_jumping() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        fifo.add(object("b", "1")).unwrap();
        fifo.update(object("b", "2")).unwrap();
        fifo.update(object("a", "2")).unwrap();
        let (first, _) = pop(&fifo).await;
        assert_eq!(
            first[0].object().unwrap().metadata.name.as_deref(),
            Some("a")
        );
    }

    #[tokio::test]
    async fn two_real_deletes_collapse_to_the_older() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        fifo.delete(object("a", "2").into()).unwrap();
        fifo.delete(object("a", "3").into()).unwrap();
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(types(&deltas), [DeltaType::Added, DeltaType::Deleted]);
        assert_eq!(rv(&deltas[1]).as_deref(), Some("2"));
    }

    #[tokio::test]
    async fn a_real_delete_wins_over_a_tombstone_and_a_later_tombstone_replaces_an_earlier() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        fifo.delete(
            DeletedFinalStateUnknown {
                key: "a".into(),
                object: Some(object("a", "t1")),
            }
            .into(),
        )
        .unwrap();
        fifo.delete(object("a", "real").into()).unwrap();
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(deltas.len(), 2);
        assert!(matches!(
            &deltas[1],
            Delta::Deleted(ObjectOrTombstone::Object(_))
        ));
        assert_eq!(rv(&deltas[1]).as_deref(), Some("real"));

        fifo.add(object("b", "1")).unwrap();
        for name in ["t1", "t2"] {
            fifo.delete(
                DeletedFinalStateUnknown {
                    key: "b".into(),
                    object: Some(object("b", name)),
                }
                .into(),
            )
            .unwrap();
        }
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(deltas.len(), 2);
        assert_eq!(rv(&deltas[1]).as_deref(), Some("t2"));
        // Real then tombstone: the real (older) one stays.
        fifo.add(object("c", "1")).unwrap();
        fifo.delete(object("c", "real").into()).unwrap();
        fifo.delete(
            DeletedFinalStateUnknown {
                key: "c".into(),
                object: None,
            }
            .into(),
        )
        .unwrap();
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(rv(&deltas[1]).as_deref(), Some("real"));
    }

    #[tokio::test]
    async fn delete_of_an_unknown_unqueued_key_is_ignored() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.delete(object("ghost", "1").into()).unwrap();
        assert!(fifo.is_empty());

        let known: Arc<Indexer<ConfigMap>> = Arc::new(Indexer::new(IndexerOptions::default()));
        known.add(object("cached", "1")).unwrap();
        let fifo = DeltaFifo::new(DeltaFifoOptions::default().known_objects(known));
        fifo.delete(object("ghost", "1").into()).unwrap();
        assert!(fifo.is_empty());
        fifo.delete(object("cached", "2").into()).unwrap();
        assert_eq!(fifo.len(), 1);
    }

    #[tokio::test]
    async fn replace_emits_sync_or_replaced_and_tombstones_for_vanished_queued_keys() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("gone", "1")).unwrap();
        fifo.replace(vec![object("kept", "2")], "2").unwrap();
        // "gone" was queued first; its Added is followed by a tombstone.
        let (gone, _) = pop(&fifo).await;
        assert_eq!(types(&gone), [DeltaType::Added, DeltaType::Deleted]);
        let Delta::Deleted(ObjectOrTombstone::Tombstone(tombstone)) = &gone[1] else {
            panic!("expected a tombstone");
        };
        assert_eq!(tombstone.key, "gone");
        assert_eq!(
            tombstone
                .object
                .as_ref()
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("1")
        );
        let (kept, _) = pop(&fifo).await;
        assert_eq!(types(&kept), [DeltaType::Sync]);

        let fifo = DeltaFifo::new(DeltaFifoOptions::default().emit_delta_type_replaced(true));
        fifo.replace(vec![object("x", "1")], "1").unwrap();
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(types(&deltas), [DeltaType::Replaced]);
    }

    #[tokio::test]
    async fn replace_tombstones_known_keys_missing_from_the_list() {
        let known: Arc<Indexer<ConfigMap>> = Arc::new(Indexer::new(IndexerOptions::default()));
        known.add(object("stale", "4")).unwrap();
        known.add(object("fresh", "4")).unwrap();
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::default()
                .known_objects(known)
                .emit_delta_type_replaced(true),
        );
        fifo.replace(vec![object("fresh", "5")], "5").unwrap();
        let (fresh, _) = pop(&fifo).await;
        assert_eq!(types(&fresh), [DeltaType::Replaced]);
        let (stale, _) = pop(&fifo).await;
        let Delta::Deleted(ObjectOrTombstone::Tombstone(tombstone)) = &stale[0] else {
            panic!("expected a tombstone");
        };
        assert_eq!(tombstone.key, "stale");
        assert_eq!(
            tombstone
                .object
                .as_ref()
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("4")
        );
    }

    #[tokio::test]
    async fn has_synced_counts_the_first_replace_and_decrements_before_processing() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        assert!(!fifo.has_synced());
        fifo.replace(vec![object("a", "1"), object("b", "1")], "1")
            .unwrap();
        assert!(!fifo.has_synced());
        let mut synced_inside = None;
        fifo.pop(|_, initial| {
            assert!(initial);
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
        assert!(!fifo.has_synced());
        // The last item: still in the initial list, but DeltaFifo already
        // counts it delivered.
        let state_synced = {
            fifo.pop(|_, initial| {
                synced_inside = Some(initial);
                Ok::<(), ()>(())
            })
            .await
            .unwrap();
            fifo.has_synced()
        };
        assert_eq!(synced_inside, Some(true));
        assert!(state_synced);
        // Later replaces do not reset it.
        fifo.replace(vec![object("c", "2")], "2").unwrap();
        assert!(fifo.has_synced());
        let (_, initial) = pop(&fifo).await;
        assert!(!initial);
    }

    #[tokio::test]
    async fn first_add_or_empty_replace_syncs_at_once() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.replace(vec![], "1").unwrap();
        assert!(fifo.has_synced());
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn resync_skips_keys_with_queued_deltas() {
        let known: Arc<Indexer<ConfigMap>> = Arc::new(Indexer::new(IndexerOptions::default()));
        known.add(object("a", "1")).unwrap();
        known.add(object("b", "1")).unwrap();
        let fifo = DeltaFifo::new(DeltaFifoOptions::default().known_objects(known));
        fifo.update(object("a", "2")).unwrap();
        fifo.resync().unwrap();
        let (a, _) = pop(&fifo).await;
        assert_eq!(
            types(&a),
            [DeltaType::Updated],
            "no stale Sync queued after the update"
        );
        let (b, _) = pop(&fifo).await;
        assert_eq!(types(&b), [DeltaType::Sync]);
        // Without known objects resync does nothing.
        let bare = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        bare.resync().unwrap();
        assert!(bare.is_empty());
    }

    #[test]
    fn prepare_transforms_once_and_reuses_known_objects() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let transform: TransformFunc<ConfigMap> = Arc::new(move |o| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(o)
        });
        let known: Arc<Indexer<ConfigMap>> = Arc::new(Indexer::new(IndexerOptions::default()));
        known.add(object("k", "1")).unwrap();
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::default()
                .known_objects(known.clone())
                .transform(transform),
        );
        let transforms = || calls.load(std::sync::atomic::Ordering::SeqCst);
        let same = fifo.prepare(object("k", "1"), Arrival::Listed).unwrap();
        assert!(Arc::ptr_eq(&same, &known.get_by_key("k").unwrap()));
        assert_eq!(transforms(), 0);
        let added = fifo.prepare(object("a", "1"), Arrival::Listed).unwrap();
        assert_eq!(transforms(), 1);
        fifo.add(added).unwrap();
        fifo.delete(object("a", "3").into()).unwrap();
        fifo.delete(
            DeletedFinalStateUnknown {
                key: "k".into(),
                object: None,
            }
            .into(),
        )
        .unwrap();
        fifo.replace(vec![same], "4").unwrap();
        assert_eq!(
            transforms(),
            1,
            "queueing prepared objects transforms nothing"
        );
    }

    #[tokio::test]
    async fn closed_queue_drains_before_reporting_closed() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        fifo.close();
        assert!(fifo.is_closed());
        let (deltas, _) = pop(&fifo).await;
        assert_eq!(deltas.len(), 1);
        let result = fifo.pop(|_, _| Ok::<(), ()>(())).await;
        assert!(matches!(result, Err(PopError::Closed)));
    }

    #[tokio::test]
    async fn pop_waits_for_an_add_and_for_close() {
        let fifo = Arc::new(DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default()));
        let consumer = {
            let fifo = Arc::clone(&fifo);
            tokio::spawn(async move {
                let mut name = None;
                fifo.pop(|deltas, _| {
                    name = deltas[0].object().and_then(|o| o.metadata.name.clone());
                    Ok::<(), ()>(())
                })
                .await
                .unwrap();
                let closed = fifo.pop(|_, _| Ok::<(), ()>(())).await;
                (name, matches!(closed, Err(PopError::Closed)))
            })
        };
        tokio::task::yield_now().await;
        fifo.add(object("late", "1")).unwrap();
        tokio::task::yield_now().await;
        fifo.close();
        let (name, closed) = tokio::time::timeout(std::time::Duration::from_secs(5), consumer)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(name.as_deref(), Some("late"));
        assert!(closed);
    }

    #[tokio::test]
    async fn process_errors_are_returned_and_the_item_is_not_requeued() {
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        fifo.add(object("a", "1")).unwrap();
        let result = fifo.pop(|_, _| Err("boom")).await;
        assert!(matches!(result, Err(PopError::Process("boom"))));
        assert!(fifo.is_empty());
    }
}
