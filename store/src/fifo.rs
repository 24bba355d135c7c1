//! [`Fifo`]: a queue holding the latest object per key (client-go's `FIFO`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::error::{PopError, StoreError};
use crate::key::{KeyFunc, ObjectOrTombstone, meta_namespace_key_func};
use crate::queue::trace_slow_pop;
use crate::queue_core::QueueCore;
use crate::store::ReflectorStore;

/// The pending part of a [`Fifo`]'s state.
#[derive(Debug)]
struct State<K> {
    items: HashMap<String, Arc<K>>,
    queue: VecDeque<String>,
}

/// A queue that keeps only the latest object of each key: adding an object
/// whose key is already queued replaces it in place, keeping its position.
/// A delete drops the object (the key's place in the queue is skipped when
/// reached), so unlike a [`DeltaFifo`](crate::DeltaFifo) the consumer never
/// learns about deletions.
///
/// client-go keeps this type for a few tests only; it is here for
/// completeness and for consumers that want "process the latest state of
/// each key once".
///
/// **Locking.** `pop` runs `process` under the queue's lock; it must not
/// call back into the queue.
pub struct Fifo<K> {
    name: String,
    key_func: KeyFunc<K>,
    core: QueueCore<State<K>>,
}

impl<K> fmt::Debug for Fifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.core.lock();
        f.debug_struct("Fifo")
            .field("name", &self.name)
            .field("items", &state.items.len())
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> Default for Fifo<K> {
    fn default() -> Self {
        Fifo::new(meta_namespace_key_func())
    }
}

impl<K: Object + Send + Sync + 'static> Fifo<K> {
    /// An empty queue keyed by `key_func`.
    pub fn new(key_func: KeyFunc<K>) -> Self {
        Fifo {
            name: "Fifo".to_string(),
            key_func,
            core: QueueCore::new(State {
                items: HashMap::new(),
                queue: VecDeque::new(),
            }),
        }
    }

    /// The number of objects held.
    pub fn len(&self) -> usize {
        self.core.lock().items.len()
    }

    /// Whether no object is held.
    pub fn is_empty(&self) -> bool {
        self.core.lock().items.is_empty()
    }

    /// Whether the first replace has been fully popped (or the first add,
    /// update or delete happened before any replace).
    pub fn has_synced(&self) -> bool {
        self.core.has_synced()
    }

    /// Closes the queue: pops drain it, then report closed.
    pub fn close(&self) {
        self.core.close();
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// Waits for the next object and hands it to `process` with the
    /// initial-list flag; returns [`PopError::Closed`] once closed and
    /// empty.
    pub async fn pop<E, F>(&self, process: F) -> Result<(), PopError<E>>
    where
        F: FnOnce(Arc<K>, bool) -> Result<(), E> + Send,
        E: Send,
    {
        let mut process = Some(process);
        self.core
            .pop(|state| {
                loop {
                    let key = state.queue.pop_front()?;
                    let is_in_initial_list = !state.initial.has_synced();
                    let Some(object) = state.items.remove(&key) else {
                        // Deleted after it was queued; it still counted
                        // toward the initial population.
                        state.initial.delivered(1);
                        continue;
                    };
                    let process = process.take()?;
                    let depth = state.queue.len();
                    let started = std::time::Instant::now();
                    let result = process(object, is_in_initial_list).map_err(PopError::Process);
                    state.initial.delivered(1);
                    trace_slow_pop(&self.name, depth, started);
                    return Some(result);
                }
            })
            .await
            .unwrap_or(Err(PopError::Closed))
    }

    fn upsert(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = (self.key_func)(&object)?;
        self.core.change(|state| {
            state.initial.populate();
            if state.items.insert(key.clone(), object).is_none() {
                state.queue.push_back(key);
            }
        });
        Ok(())
    }
}

impl<K: Object + Send + Sync + 'static> ReflectorStore<K> for Fifo<K> {
    fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.upsert(object)
    }

    fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.upsert(object)
    }

    fn delete(&self, object: ObjectOrTombstone<K>) -> Result<(), StoreError> {
        let key = object.key(&self.key_func)?;
        let mut state = self.core.lock();
        state.initial.populate();
        state.items.remove(&key);
        Ok(())
    }

    fn replace(&self, objects: Vec<Arc<K>>, _resource_version: &str) -> Result<(), StoreError> {
        let mut items = HashMap::with_capacity(objects.len());
        let mut queue = VecDeque::with_capacity(objects.len());
        for object in objects {
            let key = (self.key_func)(&object)?;
            if items.insert(key.clone(), object).is_none() {
                queue.push_back(key);
            }
        }
        self.core.change(|state| {
            let queued = queue.len();
            state.items = items;
            state.queue = queue;
            state.initial.replace(queued);
        });
        Ok(())
    }

    /// Re-queues every held key that is not queued.
    fn resync(&self) -> Result<(), StoreError> {
        let mut state = self.core.lock();
        let queued: HashSet<String> = state.queue.iter().cloned().collect();
        let mut missing: Vec<String> = state
            .items
            .keys()
            .filter(|key| !queued.contains(*key))
            .cloned()
            .collect();
        missing.sort_unstable();
        let added = !missing.is_empty();
        state.queue.extend(missing);
        drop(state);
        if added {
            self.core.wake();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    use crate::test_support::config_map as object;

    async fn pop(fifo: &Fifo<ConfigMap>) -> (String, String, bool) {
        let mut out = None;
        fifo.pop(|o, initial| {
            out = Some((
                o.metadata.name.clone().unwrap_or_default(),
                o.metadata.resource_version.clone().unwrap_or_default(),
                initial,
            ));
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
        out.unwrap()
    }

    #[tokio::test]
    async fn keeps_the_latest_object_in_its_first_position() {
        let fifo = Fifo::<ConfigMap>::default();
        fifo.add(object("a", "1")).unwrap();
        fifo.add(object("b", "1")).unwrap();
        fifo.update(object("a", "2")).unwrap();
        assert_eq!(fifo.len(), 2);
        assert_eq!(pop(&fifo).await, ("a".into(), "2".into(), false));
        assert_eq!(pop(&fifo).await.0, "b");
    }

    #[tokio::test]
    async fn deleted_objects_are_skipped() {
        let fifo = Fifo::<ConfigMap>::default();
        fifo.add(object("a", "1")).unwrap();
        fifo.add(object("b", "1")).unwrap();
        fifo.delete(object("a", "2").into()).unwrap();
        assert_eq!(pop(&fifo).await.0, "b");
        assert!(fifo.is_empty());
    }

    #[tokio::test]
    async fn replace_swaps_everything_and_counts_the_initial_list() {
        let fifo = Fifo::<ConfigMap>::default();
        fifo.replace(vec![object("x", "1"), object("y", "1")], "1")
            .unwrap();
        assert!(!fifo.has_synced());
        assert_eq!(pop(&fifo).await, ("x".into(), "1".into(), true));
        assert!(!fifo.has_synced());
        assert_eq!(pop(&fifo).await, ("y".into(), "1".into(), true));
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn deleted_initial_items_still_count_toward_sync() {
        let fifo = Fifo::<ConfigMap>::default();
        fifo.replace(vec![object("x", "1"), object("y", "1")], "1")
            .unwrap();
        fifo.delete(object("x", "2").into()).unwrap();
        assert_eq!(pop(&fifo).await.0, "y");
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn resync_requeues_held_keys_that_are_not_queued() {
        let fifo = Fifo::<ConfigMap>::default();
        fifo.add(object("a", "1")).unwrap();
        fifo.resync().unwrap();
        assert_eq!(fifo.core.lock().queue.len(), 1, "already queued: unchanged");
        // Take "a" out of the queue but keep it held, as a replace after a pop can.
        fifo.core.lock().queue.clear();
        fifo.resync().unwrap();
        assert_eq!(pop(&fifo).await.0, "a");
    }

    #[tokio::test]
    async fn close_drains_then_reports_closed() {
        let fifo = Fifo::<ConfigMap>::default();
        fifo.add(object("a", "1")).unwrap();
        fifo.close();
        assert!(fifo.is_closed());
        assert_eq!(pop(&fifo).await.0, "a");
        assert!(matches!(
            fifo.pop(|_, _| Ok::<(), ()>(())).await,
            Err(PopError::Closed)
        ));
    }
}
