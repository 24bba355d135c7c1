//! [`ArrivalOrder`]: objects kept in the order they came, reduced to one
//! per own key (`namespace/name`, the last) only when asked, for a state
//! gathered from a stream that almost never repeats a key (a watch-list's
//! initial events).
//!
//! A table by key grown as the objects arrive rehashes every object at
//! each doubling, re-reading its namespace and name long after it was
//! decoded. Here each object's key hash is taken as it arrives, while the
//! object is fresh in the cache, and one table sized for all of them is
//! built at the end from those hashes: it reads objects only to compare
//! the keys of a likely match.

use std::sync::Arc;

use clientgo_apimachinery::Object;
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use crate::keyed_items::{KeyHasher, parts};

/// Objects in arrival order with their own keys' hashes; see the module
/// documentation.
pub struct ArrivalOrder<K> {
    objects: Vec<Arc<K>>,
    /// The hash of each object's key, in the same order.
    hashes: Vec<u64>,
    hasher: KeyHasher,
}

impl<K> Default for ArrivalOrder<K> {
    fn default() -> Self {
        ArrivalOrder {
            objects: Vec::new(),
            hashes: Vec::new(),
            hasher: KeyHasher::default(),
        }
    }
}

impl<K: Object> ArrivalOrder<K> {
    /// Empty.
    pub fn new() -> Self {
        ArrivalOrder::default()
    }

    /// Keeps `object` after the others, hashing its key now.
    pub fn push(&mut self, object: Arc<K>) {
        self.hashes.push(self.hasher.of(&*object));
        self.objects.push(object);
    }

    /// How many objects (an object given twice counts twice).
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Every object, in arrival order, repeated keys included.
    pub fn into_arrived(self) -> Vec<Arc<K>> {
        self.objects
    }

    /// The objects with only the last of each own key, in arrival order;
    /// the same `Vec`, not copied, when no key came twice.
    pub fn into_last_of_each_key(self) -> Vec<Arc<K>> {
        let ArrivalOrder {
            objects, hashes, ..
        } = self;
        debug_assert_eq!(objects.len(), hashes.len(), "one hash per object");
        let hash_at = |position: &usize| hashes.get(*position).copied().unwrap_or(0);
        let key_at = |position: usize| objects.get(position).map(|object| parts(&**object));
        // Where each key was last seen.
        let mut last: HashTable<usize> = HashTable::with_capacity(objects.len());
        let mut repeated = false;
        for position in 0..objects.len() {
            let same = |seen: &usize| key_at(*seen) == key_at(position);
            match last.entry(hash_at(&position), same, hash_at) {
                Entry::Occupied(mut seen) => {
                    *seen.get_mut() = position;
                    repeated = true;
                }
                Entry::Vacant(vacant) => {
                    vacant.insert(position);
                }
            }
        }
        if !repeated {
            return objects;
        }
        let mut kept = vec![false; objects.len()];
        for position in last {
            if let Some(slot) = kept.get_mut(position) {
                *slot = true;
            }
        }
        objects
            .into_iter()
            .zip(kept)
            .filter_map(|(object, kept)| kept.then_some(object))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;

    use super::*;
    use crate::test_support::labelled_pod;

    fn pod(name: &str, version: &str) -> Arc<Pod> {
        labelled_pod("ns", name, version, &[])
    }

    /// Name and resourceVersion of each, in order.
    fn names(objects: &[Arc<Pod>]) -> Vec<(String, String)> {
        objects
            .iter()
            .map(|p| {
                let name = p.metadata.name.clone().unwrap_or_default();
                (
                    name,
                    p.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn arrived(objects: &[Arc<Pod>]) -> ArrivalOrder<Pod> {
        let mut order = ArrivalOrder::new();
        for object in objects {
            order.push(Arc::clone(object));
        }
        order
    }

    #[test]
    fn the_last_of_each_key_is_kept_in_arrival_order() {
        let repeated = [pod("x", "1"), pod("y", "2"), pod("x", "3"), pod("z", "4")];
        let order = arrived(&repeated);
        assert_eq!(order.len(), 4);
        let kept = order.into_last_of_each_key();
        assert_eq!(names(&kept), owned(&[("y", "2"), ("x", "3"), ("z", "4")]));
        assert_eq!(names(&arrived(&repeated).into_arrived()), names(&repeated));
        // Every hash equal: slower, the same answer.
        let mut order = arrived(&repeated);
        order.hashes.fill(7);
        assert_eq!(
            names(&order.into_last_of_each_key()),
            owned(&[("y", "2"), ("x", "3"), ("z", "4")])
        );
        // No key twice: the very same buffer back.
        let order = arrived(&[pod("x", "1"), pod("y", "2")]);
        let pointer = order.objects.as_ptr();
        let kept = order.into_last_of_each_key();
        assert_eq!(names(&kept), owned(&[("x", "1"), ("y", "2")]));
        assert_eq!(kept.as_ptr(), pointer);
        assert!(
            ArrivalOrder::<Pod>::new()
                .into_last_of_each_key()
                .is_empty()
        );
    }
}
