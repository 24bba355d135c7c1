//! [`Heap`]: a thread-safe priority queue of objects keyed by a key
//! function (client-go's `Heap`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::error::StoreError;
use crate::key::{KeyFunc, meta_namespace_key_func};
use crate::queue_core::QueueCore;

/// Orders a [`Heap`]: `less(a, b)` is true when `a` must be popped before
/// `b`.
pub type LessFunc<K> = Arc<dyn Fn(&K, &K) -> bool + Send + Sync>;

struct Entry<K> {
    key: String,
    object: Arc<K>,
}

/// The pending part of a [`Heap`]'s state.
struct State<K> {
    /// A binary heap ordered by `less`.
    entries: Vec<Entry<K>>,
    /// Key → position in `entries`.
    positions: HashMap<String, usize>,
}

/// A priority queue: each key is held once, and `pop` returns the object
/// that `less` puts first.
///
/// Adding a key already held replaces its object and moves it to its new
/// place. Adds fail once the heap is closed; `pop` drains what is left and
/// then reports closed.
pub struct Heap<K> {
    key_func: KeyFunc<K>,
    less: LessFunc<K>,
    core: QueueCore<State<K>>,
}

impl<K> fmt::Debug for Heap<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.core.lock();
        f.debug_struct("Heap")
            .field("len", &state.entries.len())
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> Heap<K> {
    /// An empty heap ordered by `less`, keyed by `namespace/name`.
    pub fn new(less: LessFunc<K>) -> Self {
        Heap::with_key_func(meta_namespace_key_func(), less)
    }

    /// An empty heap with another key function.
    pub fn with_key_func(key_func: KeyFunc<K>, less: LessFunc<K>) -> Self {
        Heap {
            key_func,
            less,
            core: QueueCore::new(State {
                entries: Vec::new(),
                positions: HashMap::new(),
            }),
        }
    }

    fn closed_error() -> StoreError {
        StoreError::Closed {
            name: "Heap".to_string(),
        }
    }

    /// Adds or replaces an object.
    pub fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = (self.key_func)(&object)?;
        let mut state = self.core.lock();
        if state.closed {
            return Err(Self::closed_error());
        }
        self.upsert_locked(&mut state, key, object);
        drop(state);
        self.core.wake();
        Ok(())
    }

    /// The same as [`add`](Self::add).
    pub fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.add(object)
    }

    /// Adds an object unless its key is already held (then nothing changes).
    pub fn add_if_not_present(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = (self.key_func)(&object)?;
        let mut state = self.core.lock();
        if state.closed {
            return Err(Self::closed_error());
        }
        if !state.positions.contains_key(&key) {
            self.upsert_locked(&mut state, key, object);
            drop(state);
            self.core.wake();
        }
        Ok(())
    }

    /// Adds or replaces many objects, waking consumers once.
    pub fn bulk_add(&self, objects: Vec<Arc<K>>) -> Result<(), StoreError> {
        let keyed = objects
            .into_iter()
            .map(|object| (self.key_func)(&object).map(|key| (key, object)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut state = self.core.lock();
        if state.closed {
            return Err(Self::closed_error());
        }
        for (key, object) in keyed {
            self.upsert_locked(&mut state, key, object);
        }
        drop(state);
        self.core.wake();
        Ok(())
    }

    /// Removes the object with the same key; an error if none is held.
    pub fn delete(&self, object: &K) -> Result<(), StoreError> {
        let key = (self.key_func)(object)?;
        let mut state = self.core.lock();
        let Some(position) = state.positions.get(&key).copied() else {
            return Err(StoreError::NotFound { key });
        };
        self.remove_at(&mut state, position);
        Ok(())
    }

    /// Waits for the first object and removes it; [`StoreError::Closed`]
    /// once the heap is closed and empty.
    pub async fn pop(&self) -> Result<Arc<K>, StoreError> {
        self.core
            .pop(|state| self.remove_at(state, 0))
            .await
            .ok_or_else(Self::closed_error)
    }

    /// Closes the heap: adds fail from now on, and pops report closed once
    /// it is empty.
    pub fn close(&self) {
        self.core.close();
    }

    /// Whether the heap is closed.
    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// The object held under the same key as `object`.
    pub fn get(&self, object: &K) -> Result<Option<Arc<K>>, StoreError> {
        let key = (self.key_func)(object)?;
        Ok(self.get_by_key(&key))
    }

    /// The object held under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        let state = self.core.lock();
        state
            .positions
            .get(key)
            .map(|&position| Arc::clone(&state.entries[position].object))
    }

    /// Every object held, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.core
            .lock()
            .entries
            .iter()
            .map(|e| Arc::clone(&e.object))
            .collect()
    }

    /// Every key held, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.core
            .lock()
            .entries
            .iter()
            .map(|e| e.key.clone())
            .collect()
    }

    /// The number of objects held.
    pub fn len(&self) -> usize {
        self.core.lock().entries.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.core.lock().entries.is_empty()
    }

    fn upsert_locked(&self, state: &mut State<K>, key: String, object: Arc<K>) {
        match state.positions.get(&key).copied() {
            Some(position) => {
                state.entries[position].object = object;
                let position = self.sift_up(state, position);
                self.sift_down(state, position);
            }
            None => {
                let position = state.entries.len();
                state.positions.insert(key.clone(), position);
                state.entries.push(Entry { key, object });
                self.sift_up(state, position);
            }
        }
    }

    fn remove_at(&self, state: &mut State<K>, position: usize) -> Option<Arc<K>> {
        let last = state.entries.len().checked_sub(1)?;
        self.swap(state, position, last);
        let removed = state.entries.pop()?;
        state.positions.remove(&removed.key);
        if position < state.entries.len() {
            let position = self.sift_up(state, position);
            self.sift_down(state, position);
        }
        Some(removed.object)
    }

    fn less_at(&self, state: &State<K>, a: usize, b: usize) -> bool {
        (self.less)(&state.entries[a].object, &state.entries[b].object)
    }

    fn swap(&self, state: &mut State<K>, a: usize, b: usize) {
        if a == b {
            return;
        }
        state.entries.swap(a, b);
        let key_a = state.entries[a].key.clone();
        let key_b = state.entries[b].key.clone();
        state.positions.insert(key_a, a);
        state.positions.insert(key_b, b);
    }

    fn sift_up(&self, state: &mut State<K>, mut position: usize) -> usize {
        while position > 0 {
            let parent = (position - 1) / 2;
            if !self.less_at(state, position, parent) {
                break;
            }
            self.swap(state, position, parent);
            position = parent;
        }
        position
    }

    fn sift_down(&self, state: &mut State<K>, mut position: usize) {
        let length = state.entries.len();
        loop {
            let left = 2 * position + 1;
            let right = left + 1;
            let mut first = position;
            if left < length && self.less_at(state, left, first) {
                first = left;
            }
            if right < length && self.less_at(state, right, first) {
                first = right;
            }
            if first == position {
                return;
            }
            self.swap(state, position, first);
            position = first;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    /// Objects ordered by their generation, smallest first.
    fn object(name: &str, priority: i64) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                generation: Some(priority),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn heap() -> Heap<ConfigMap> {
        Heap::new(Arc::new(|a: &ConfigMap, b: &ConfigMap| {
            a.metadata.generation < b.metadata.generation
        }))
    }

    async fn pop_name(heap: &Heap<ConfigMap>) -> String {
        heap.pop().await.unwrap().metadata.name.clone().unwrap()
    }

    #[tokio::test]
    async fn pops_in_priority_order() {
        let heap = heap();
        for (name, priority) in [("c", 3), ("a", 1), ("e", 5), ("b", 2), ("d", 4)] {
            heap.add(object(name, priority)).unwrap();
        }
        let mut order = Vec::new();
        while !heap.is_empty() {
            order.push(pop_name(&heap).await);
        }
        assert_eq!(order, ["a", "b", "c", "d", "e"]);
    }

    #[tokio::test]
    async fn update_moves_an_item_and_add_if_not_present_leaves_it() {
        let heap = heap();
        heap.add(object("a", 1)).unwrap();
        heap.add(object("b", 2)).unwrap();
        heap.update(object("a", 10)).unwrap();
        assert_eq!(heap.len(), 2);
        assert_eq!(pop_name(&heap).await, "b");
        heap.add_if_not_present(object("a", 0)).unwrap();
        assert_eq!(heap.get_by_key("a").unwrap().metadata.generation, Some(10));
        heap.add_if_not_present(object("z", 0)).unwrap();
        assert_eq!(pop_name(&heap).await, "z");
    }

    #[tokio::test]
    async fn bulk_add_delete_and_lookups() {
        let heap = heap();
        heap.bulk_add(vec![object("a", 3), object("b", 1), object("c", 2)])
            .unwrap();
        heap.delete(&object("b", 0)).unwrap();
        assert_eq!(
            heap.delete(&object("missing", 0)),
            Err(StoreError::NotFound {
                key: "missing".into()
            })
        );
        assert!(heap.get(&object("a", 0)).unwrap().is_some());
        let mut keys = heap.list_keys();
        keys.sort();
        assert_eq!(keys, ["a", "c"]);
        assert_eq!(heap.list().len(), 2);
        assert_eq!(pop_name(&heap).await, "c");
    }

    #[tokio::test]
    async fn close_rejects_adds_and_pop_drains_then_errors() {
        let heap = heap();
        heap.add(object("a", 1)).unwrap();
        heap.close();
        assert!(heap.is_closed());
        assert!(matches!(
            heap.add(object("b", 1)),
            Err(StoreError::Closed { .. })
        ));
        assert!(matches!(
            heap.add_if_not_present(object("b", 1)),
            Err(StoreError::Closed { .. })
        ));
        assert!(matches!(
            heap.bulk_add(vec![object("b", 1)]),
            Err(StoreError::Closed { .. })
        ));
        assert_eq!(pop_name(&heap).await, "a");
        assert!(matches!(heap.pop().await, Err(StoreError::Closed { .. })));
    }

    #[tokio::test]
    async fn pop_waits_for_an_add() {
        let heap = Arc::new(heap());
        let waiter = {
            let heap = Arc::clone(&heap);
            tokio::spawn(async move { pop_name(&heap).await })
        };
        tokio::task::yield_now().await;
        heap.add(object("late", 1)).unwrap();
        let name = tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(name, "late");
    }

    #[tokio::test]
    async fn random_operations_keep_heap_order() {
        // A deterministic pseudo-random sequence of adds, updates and deletes.
        let heap = heap();
        let mut model: std::collections::BTreeMap<String, i64> = Default::default();
        let mut seed: u64 = 42;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as i64
        };
        for _ in 0..2000 {
            let name = format!("k{}", next() % 50);
            match next() % 3 {
                0 | 1 => {
                    let priority = next() % 1000;
                    heap.add(object(&name, priority)).unwrap();
                    model.insert(name, priority);
                }
                _ => {
                    let deleted = heap.delete(&object(&name, 0)).is_ok();
                    assert_eq!(deleted, model.remove(&name).is_some());
                }
            }
        }
        let mut popped = Vec::new();
        while !heap.is_empty() {
            popped.push(heap.pop().await.unwrap().metadata.generation.unwrap());
        }
        let mut expected: Vec<i64> = model.values().copied().collect();
        expected.sort_unstable();
        assert_eq!(popped, expected);
    }
}
