//! [`LruCache`]: a map by key that forgets its least recently used
//! entries to stay within a total weight (the LRU of k8s.io/apimachinery's
//! `util/cache`, which client-go's mutation cache uses, with weights).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// A map by string key bounded by the total weight of its values: each
/// value is inserted with a weight (1 for a count, an estimate of bytes
/// for a byte budget), and inserting past the capacity forgets the least
/// recently used entries first. [`get`](Self::get) counts as a use;
/// [`peek`](Self::peek) does not.
///
/// Not synchronised: its owner wraps it in the lock it needs. A use or an
/// insert costs O(log n); a use allocates nothing.
pub struct LruCache<V> {
    entries: HashMap<String, Slot<V>>,
    /// Use tick → key, least recent first.
    order: BTreeMap<u64, String>,
    tick: u64,
    weight: usize,
    capacity: usize,
}

struct Slot<V> {
    value: V,
    weight: usize,
    used: u64,
}

impl<V> fmt::Debug for LruCache<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LruCache")
            .field("len", &self.entries.len())
            .field("weight", &self.weight)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<V> LruCache<V> {
    /// An empty cache holding at most `capacity` of total weight.
    pub fn new(capacity: usize) -> Self {
        LruCache {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            weight: 0,
            capacity,
        }
    }

    /// The value under `key`, marked as the most recently used.
    pub fn get(&mut self, key: &str) -> Option<&mut V> {
        let slot = self.entries.get_mut(key)?;
        self.tick += 1;
        let previous = std::mem::replace(&mut slot.used, self.tick);
        // The key moves within the order: nothing is allocated.
        if let Some(key) = self.order.remove(&previous) {
            self.order.insert(self.tick, key);
        }
        Some(&mut slot.value)
    }

    /// The value under `key`, without counting a use.
    pub fn peek(&self, key: &str) -> Option<&V> {
        self.entries.get(key).map(|slot| &slot.value)
    }

    /// Puts `value` under `key` as the most recently used, replacing what
    /// was there, then forgets the least recently used entries until the
    /// total weight is within the capacity. A value heavier than the
    /// whole capacity is not kept (`false`; what was under `key` is gone).
    pub fn insert(&mut self, key: String, value: V, weight: usize) -> bool {
        self.remove(&key);
        if weight > self.capacity {
            return false;
        }
        while self.weight + weight > self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(slot) = self.entries.remove(&oldest) {
                self.weight -= slot.weight;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.weight += weight;
        self.entries.insert(
            key,
            Slot {
                value,
                weight,
                used: self.tick,
            },
        );
        true
    }

    /// Takes the value under `key` out.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let slot = self.entries.remove(key)?;
        self.order.remove(&slot.used);
        self.weight -= slot.weight;
        Some(slot.value)
    }

    /// The keys and weights, least recently used (the next to be
    /// forgotten) first.
    pub fn oldest_first(&self) -> impl Iterator<Item = (&str, usize)> {
        self.order.values().map(|key| {
            let weight = self.entries.get(key).map_or(0, |slot| slot.weight);
            (key.as_str(), weight)
        })
    }

    /// Takes the least recently used entry out: its key and value.
    pub fn pop_oldest(&mut self) -> Option<(String, V)> {
        let (_, key) = self.order.pop_first()?;
        let slot = self.entries.remove(&key)?;
        self.weight -= slot.weight;
        Some((key, slot.value))
    }

    /// The total weight this cache may hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The keys, least recently used first.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.order.values().map(String::as_str)
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The total weight held (at most the capacity).
    pub fn weight(&self) -> usize {
        self.weight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_go_first_and_the_weight_stays_within_capacity() {
        let mut cache = LruCache::new(3);
        assert!(cache.insert("a".into(), 1, 1));
        assert!(cache.insert("b".into(), 2, 1));
        assert!(cache.insert("c".into(), 3, 1));
        assert_eq!(cache.get("a"), Some(&mut 1), "a is now the most recent");
        assert!(cache.insert("d".into(), 4, 1));
        assert_eq!(cache.peek("b"), None, "b was the least recently used");
        assert_eq!(cache.keys().collect::<Vec<_>>(), ["c", "a", "d"]);
        assert!(cache.insert("e".into(), 5, 2));
        assert_eq!(cache.keys().collect::<Vec<_>>(), ["d", "e"]);
        assert_eq!((cache.len(), cache.weight()), (2, 3));
    }

    #[test]
    fn the_oldest_come_first_and_can_be_taken_out() {
        let mut cache = LruCache::new(10);
        assert_eq!(cache.oldest_first().next(), None);
        cache.insert("a".into(), 1, 4);
        cache.insert("b".into(), 2, 5);
        cache.get("a");
        assert_eq!(
            cache.oldest_first().collect::<Vec<_>>(),
            [("b", 5), ("a", 4)]
        );
        assert_eq!(cache.pop_oldest(), Some(("b".to_string(), 2)));
        assert_eq!((cache.len(), cache.weight()), (1, 4));
        assert_eq!(cache.oldest_first().collect::<Vec<_>>(), [("a", 4)]);
        assert_eq!(cache.capacity(), 10);
    }

    #[test]
    fn replacing_removing_and_overweight_values() {
        let mut cache = LruCache::new(10);
        cache.insert("a".into(), "one", 4);
        cache.insert("a".into(), "two", 6);
        assert_eq!((cache.len(), cache.weight()), (1, 6));
        assert!(!cache.insert("a".into(), "huge", 11), "too heavy to keep");
        assert!(cache.is_empty() && cache.weight() == 0);
        cache.insert("b".into(), "b", 5);
        assert_eq!(cache.remove("b"), Some("b"));
        assert_eq!(
            (cache.len(), cache.weight(), cache.keys().count()),
            (0, 0, 0)
        );
    }
}
