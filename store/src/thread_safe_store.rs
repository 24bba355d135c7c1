//! [`ThreadSafeStore`]: a key → object map with secondary indexes, behind
//! one read/write lock (client-go's `threadSafeMap`).

use std::collections::HashSet;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use parking_lot::RwLock;

use crate::error::StoreError;
use crate::index::{Index, IndexFunc, Indexers, Members};
use crate::keyed_items::{Identity, KeyHasher, KeyedItems};

/// One change of a [`ThreadSafeStore::transaction`].
#[derive(Debug)]
pub enum Change<K> {
    /// Store the object under the key (add or update).
    Upsert(Arc<K>),
    /// Remove the key; the object, when given, supplies the resourceVersion.
    Delete(Option<Arc<K>>),
}

/// A concurrent map from keys to shared objects, with any number of
/// secondary indexes kept up to date on every write.
///
/// **Locking.** One `RwLock` guards the items, the indexes and the
/// resourceVersion. Reads take it shared; writes, `replace`, `add_indexers`
/// and `transaction` take it exclusively and compute every index value
/// before changing anything. Index functions therefore run under the lock
/// and must be fast and must not call back into the store.
///
/// **Errors instead of panics.** When an index function fails, the write is
/// refused and the store is left exactly as it was (client-go panics here).
///
/// **Sharing.** Objects are returned as the stored `Arc<K>`; they must not be
/// mutated (the indexes would go stale), which `Arc` enforces.
///
/// **Index functions must be functions of the object.** An index holds an
/// object stored under its own key as the object itself (replaced on each
/// write), so one whose values change without the object changing reads
/// back a stale object rather than, as in client-go, a stale key.
///
/// **Keys.** An object stored under its own `namespace/name` (what
/// [`meta_namespace_key`](crate::meta_namespace_key) gives, so every object
/// of an informer's cache) keeps no key string: it is found through its
/// namespace and name, and the store and its indexes hold one pointer for
/// it. Any other key is kept beside its object. client-go keeps a key
/// string per object, and a copy of it in each index.
pub struct ThreadSafeStore<K> {
    inner: RwLock<Inner<K>>,
}

struct Inner<K> {
    items: KeyedItems<K>,
    /// Index names and functions, in a fixed order matching `indices`.
    indexers: Vec<(String, IndexFunc<K>)>,
    indices: Vec<Index<K>>,
    resource_version: String,
}

/// Where an item to remove is: under a key, or under an object's own key.
enum At<'a, K> {
    Key(&'a str),
    OwnOf(&'a K),
}

// Derived, these would ask `K: Copy`; both variants are references.
impl<K> Clone for At<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for At<'_, K> {}

/// The index values of one object, one vector per indexer (in the
/// indexers' order).
type IndexValues = Vec<Vec<String>>;

impl<K> std::fmt::Debug for ThreadSafeStore<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("ThreadSafeStore")
            .field("items", &inner.items.len())
            .field(
                "indexers",
                &inner.indexers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("resource_version", &inner.resource_version)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> ThreadSafeStore<K> {
    /// An empty store with the given indexers.
    pub fn new(indexers: Indexers<K>) -> Self {
        let mut ordered: Vec<(String, IndexFunc<K>)> = indexers.into_iter().collect();
        ordered.sort_by(|a, b| a.0.cmp(&b.0));
        let hasher = KeyHasher::default();
        let indices = ordered.iter().map(|_| Index::new(hasher.clone())).collect();
        ThreadSafeStore {
            inner: RwLock::new(Inner {
                items: KeyedItems::with_capacity(0, hasher),
                indexers: ordered,
                indices,
                resource_version: String::new(),
            }),
        }
    }

    /// Stores `object` under `key`, replacing any previous object and
    /// re-indexing. Fails, changing nothing, if an index function fails.
    pub fn add(&self, key: &str, object: Arc<K>) -> Result<(), StoreError> {
        self.inner.write().upsert(Some(key), object)
    }

    /// The same as [`add`](Self::add).
    pub fn update(&self, key: &str, object: Arc<K>) -> Result<(), StoreError> {
        self.add(key, object)
    }

    /// Stores `object` under its own key
    /// ([`meta_namespace_key`](crate::meta_namespace_key)), as
    /// [`add`](Self::add) does, without building the key.
    pub fn add_own(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.inner.write().upsert(None, object)
    }

    /// Removes what is under `object`'s own key, and sets the
    /// resourceVersion from `object`.
    pub fn delete_own(&self, object: &K) {
        let mut inner = self.inner.write();
        inner.remove(At::OwnOf(object));
        inner.track_resource_version(object);
    }

    /// Every object, taking the store apart (no copy of the list).
    pub fn into_objects(self) -> Vec<Arc<K>> {
        self.inner.into_inner().items.into_objects()
    }

    /// The object stored under `object`'s own key.
    pub fn get_own(&self, object: &K) -> Option<Arc<K>> {
        self.inner
            .read()
            .items
            .get_own(object)
            .map(|(_, stored)| Arc::clone(stored))
    }

    /// Removes `key`. The object, when given, sets the store's
    /// resourceVersion (a key-only delete leaves it unchanged).
    pub fn delete(&self, key: &str, object: Option<&K>) {
        let mut inner = self.inner.write();
        inner.remove(At::Key(key));
        if let Some(object) = object {
            inner.track_resource_version(object);
        }
    }

    /// The object stored under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().items.get(key).cloned()
    }

    /// Every object.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().items.objects().cloned().collect()
    }

    /// Every object and the resourceVersion they reflect, read under one
    /// lock, so the pair is consistent: the objects are exactly the state
    /// after the write or bookmark that set the resourceVersion.
    pub fn list_with_resource_version(&self) -> (Vec<Arc<K>>, String) {
        let inner = self.inner.read();
        (
            inner.items.objects().cloned().collect(),
            inner.resource_version.clone(),
        )
    }

    /// Every key.
    pub fn list_keys(&self) -> Vec<String> {
        let inner = self.inner.read();
        let mut keys = Vec::with_capacity(inner.items.len());
        inner.items.for_each(|key, _| keys.push(key.to_string()));
        keys
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.read().items.is_empty()
    }

    /// Replaces everything with `items` (a later duplicate key wins) and
    /// rebuilds every index; sets the resourceVersion. Fails, changing
    /// nothing, if an index function fails for any object.
    pub fn replace(
        &self,
        items: Vec<(String, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        let capacity = items.len();
        let items = items.into_iter().map(|(key, object)| (Some(key), object));
        self.replace_with(capacity, resource_version, items)
    }

    /// [`replace`](Self::replace) with each object under its own key,
    /// built for none of them.
    pub fn replace_own(
        &self,
        objects: Vec<Arc<K>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        let capacity = objects.len();
        let items = objects.into_iter().map(|object| (None, object));
        self.replace_with(capacity, resource_version, items)
    }

    /// Replaces the items with `items` (each under its key, or under its
    /// own key when `None`; a later duplicate key wins) in a new map sized
    /// for `capacity`, and the indexes with ones built for them. When the
    /// store has indexes, how the indexes know each inserted item is kept
    /// in order: if no key was given twice, the indexes are built from
    /// that, with the hashes the inserts computed, instead of hashing
    /// every item again.
    fn replace_with(
        &self,
        capacity: usize,
        resource_version: &str,
        items: impl Iterator<Item = (Option<String>, Arc<K>)>,
    ) -> Result<(), StoreError> {
        // Filled before the write lock, so readers go on meanwhile (the
        // hasher never changes).
        let (hasher, indexed) = {
            let inner = self.inner.read();
            (inner.items.hasher().clone(), !inner.indexers.is_empty())
        };
        let mut new_items = KeyedItems::with_capacity(capacity, hasher.clone());
        let mut identities = indexed.then(|| Vec::with_capacity(capacity));
        for (key, object) in items {
            let identity = match key {
                Some(key) => new_items.insert(&key, object),
                None => new_items.insert_own(object),
            };
            if let Some(identities) = identities.as_mut() {
                identities.push(identity);
            }
        }
        let mut inner = self.inner.write();
        let mut new_indices: Vec<Index<K>> = inner
            .indexers
            .iter()
            .map(|_| Index::new(hasher.clone()))
            .collect();
        if !new_indices.is_empty() {
            let mut index = |identity: &Identity<K>, object: &K| -> Result<(), StoreError> {
                let values = inner.index_values(object, || identity.key())?;
                for (index, values) in new_indices.iter_mut().zip(values) {
                    for value in &values {
                        index.insert(value, identity);
                    }
                }
                Ok(())
            };
            match identities {
                // Each insert added an item: the list is the items.
                Some(identities) if identities.len() == new_items.len() => {
                    for identity in &identities {
                        let object = match identity {
                            Identity::Natural { object, .. } => Some(object),
                            Identity::Keyed(key) => new_items.keyed(key),
                        };
                        if let Some(object) = object {
                            index(identity, object)?;
                        }
                    }
                }
                _ => {
                    for (identity, object) in new_items.identified() {
                        index(&identity, object)?;
                    }
                }
            }
        }
        inner.items = new_items;
        inner.indices = new_indices;
        inner.resource_version = resource_version.to_string();
        Ok(())
    }

    /// Applies many changes under one write lock. Returns one result per
    /// change, in order; a failed change (an index function error) leaves
    /// the others applied. The resourceVersion ends as that of the last
    /// applied change that carried an object with one.
    pub fn transaction(&self, changes: Vec<(String, Change<K>)>) -> Vec<Result<(), StoreError>> {
        self.transaction_at(changes.into_iter().map(|(key, change)| (Some(key), change)))
    }

    /// [`transaction`](Self::transaction) where a change without a key is
    /// under its object's own key (a delete without an object and without
    /// a key changes nothing).
    pub(crate) fn transaction_at(
        &self,
        changes: impl Iterator<Item = (Option<String>, Change<K>)>,
    ) -> Vec<Result<(), StoreError>> {
        let mut inner = self.inner.write();
        changes
            .map(|(key, change)| match change {
                Change::Upsert(object) => inner.upsert(key.as_deref(), object),
                Change::Delete(object) => {
                    match (&key, &object) {
                        (Some(key), _) => inner.remove(At::Key(key)),
                        (None, Some(object)) => inner.remove(At::OwnOf(&**object)),
                        (None, None) => {}
                    }
                    if let Some(object) = object {
                        inner.track_resource_version(&object);
                    }
                    Ok(())
                }
            })
            .collect()
    }

    /// Objects whose values in index `index_name` intersect those of
    /// `object`, without duplicates.
    pub fn index(&self, index_name: &str, object: &K) -> Result<Vec<Arc<K>>, StoreError> {
        let inner = self.inner.read();
        let position = inner.position(index_name)?;
        let values = (inner.indexers[position].1)(object).map_err(|e| StoreError::IndexFunc {
            index: index_name.to_string(),
            key: crate::key::describe(object),
            reason: e.0,
        })?;
        let index = &inner.indices[position];
        if let [value] = values.as_slice() {
            return Ok(inner.objects(index.members(value)));
        }
        // One object per key: a natural item is its object, another its
        // key.
        let mut natural: HashSet<*const K> = HashSet::new();
        let mut keyed: HashSet<&str> = HashSet::new();
        let mut objects = Vec::new();
        for members in values.iter().filter_map(|value| index.members(value)) {
            for object in &members.natural {
                if natural.insert(Arc::as_ptr(object)) {
                    objects.push(Arc::clone(object));
                }
            }
            for key in &members.keyed {
                if keyed.insert(key) {
                    objects.extend(inner.items.keyed(key).cloned());
                }
            }
        }
        Ok(objects)
    }

    /// The keys indexed under `value` in index `index_name`, sorted.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, StoreError> {
        let inner = self.inner.read();
        let position = inner.position(index_name)?;
        let mut keys: Vec<String> = Vec::new();
        if let Some(members) = inner.indices[position].members(value) {
            keys.reserve(members.len());
            keys.extend(
                members
                    .natural
                    .iter()
                    .map(|object| crate::meta_namespace_key(&**object)),
            );
            keys.extend(members.keyed.iter().map(|key| key.to_string()));
        }
        keys.sort_unstable();
        Ok(keys)
    }

    /// The objects indexed under `value` in index `index_name`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        let inner = self.inner.read();
        let position = inner.position(index_name)?;
        Ok(inner.objects(inner.indices[position].members(value)))
    }

    /// Every value index `index_name` holds; empty for an unknown index.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        let inner = self.inner.read();
        match inner.position(index_name) {
            Ok(position) => inner.indices[position].values().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The index functions by name.
    pub fn indexers(&self) -> Indexers<K> {
        self.inner
            .read()
            .indexers
            .iter()
            .map(|(name, func)| (name.clone(), Arc::clone(func)))
            .collect()
    }

    /// Adds indexes, indexing every object already stored. Fails, changing
    /// nothing, when a name already exists (naming all such names) or an
    /// index function fails.
    pub fn add_indexers(&self, new: Indexers<K>) -> Result<(), StoreError> {
        let mut inner = self.inner.write();
        let mut conflicts: Vec<String> = new
            .keys()
            .filter(|name| inner.indexers.iter().any(|(existing, _)| existing == *name))
            .cloned()
            .collect();
        if !conflicts.is_empty() {
            conflicts.sort();
            return Err(StoreError::IndexerConflict { names: conflicts });
        }
        let mut additions: Vec<(String, IndexFunc<K>, Index<K>)> = Vec::with_capacity(new.len());
        for (name, func) in new {
            let mut index = Index::new(inner.items.hasher().clone());
            for (identity, object) in inner.items.identified() {
                let values = func(object).map_err(|e| StoreError::IndexFunc {
                    index: name.clone(),
                    key: identity.key(),
                    reason: e.0,
                })?;
                for value in &values {
                    index.insert(value, &identity);
                }
            }
            additions.push((name, func, index));
        }
        for (name, func, index) in additions {
            inner.indexers.push((name, func));
            inner.indices.push(index);
        }
        Ok(())
    }

    /// The resourceVersion of the last write, replace or bookmark.
    pub fn resource_version(&self) -> String {
        self.inner.read().resource_version.clone()
    }

    /// Sets the resourceVersion (bookmarks).
    pub fn set_resource_version(&self, resource_version: &str) {
        self.inner.write().resource_version = resource_version.to_string();
    }

    /// Runs `read` with shared access to every item, without copying the
    /// list (for listers that filter as they go).
    pub fn for_each(&self, read: impl FnMut(&str, &Arc<K>)) {
        self.inner.read().items.for_each(read);
    }

    /// Runs `read` with shared access to every object, as
    /// [`for_each`](Self::for_each) without the keys (none is built).
    pub fn for_each_object(&self, read: impl FnMut(&Arc<K>)) {
        self.inner.read().items.objects().for_each(read);
    }
}

impl<K: Object> Inner<K> {
    fn position(&self, index_name: &str) -> Result<usize, StoreError> {
        self.indexers
            .iter()
            .position(|(name, _)| name == index_name)
            .ok_or_else(|| StoreError::IndexNotFound {
                index: index_name.to_string(),
            })
    }

    /// The objects of an index value's members.
    fn objects(&self, members: Option<&Members<K>>) -> Vec<Arc<K>> {
        let Some(members) = members else {
            return Vec::new();
        };
        let mut objects = Vec::with_capacity(members.len());
        objects.extend(members.natural.iter().cloned());
        objects.extend(
            members
                .keyed
                .iter()
                .filter_map(|key| self.items.keyed(key).cloned()),
        );
        objects
    }

    /// Every index's values of `object`; an error names it by `key()`,
    /// built only then.
    fn index_values(
        &self,
        object: &K,
        key: impl Fn() -> String,
    ) -> Result<IndexValues, StoreError> {
        self.indexers
            .iter()
            .map(|(name, func)| {
                func(object).map_err(|e| StoreError::IndexFunc {
                    index: name.clone(),
                    key: key(),
                    reason: e.0,
                })
            })
            .collect()
    }

    fn track_resource_version(&mut self, object: &K) {
        if let Some(resource_version) = object.resource_version() {
            resource_version.clone_into(&mut self.resource_version);
        }
    }

    /// Stores `object` under `key`, or under its own key when `None`.
    fn upsert(&mut self, key: Option<&str>, object: Arc<K>) -> Result<(), StoreError> {
        let new_values = self.index_values(&object, || match key {
            Some(key) => key.to_string(),
            None => crate::meta_namespace_key(&*object),
        })?;
        let old = if self.indexers.is_empty() {
            None
        } else {
            match key {
                Some(key) => self.items.get_identified(key),
                None => self.items.get_own(&object),
            }
            .map(|(identity, old)| (identity, Arc::clone(old)))
        };
        self.track_resource_version(&object);
        let item = match key {
            Some(key) => self.items.insert(key, object),
            None => self.items.insert_own(object),
        };
        for (position, new) in new_values.iter().enumerate() {
            let old_values = match &old {
                Some((_, old_object)) => match (self.indexers[position].1)(old_object) {
                    Ok(values) => values,
                    Err(_) => {
                        // The old values cannot be recomputed; drop the item
                        // from wherever it is so no stale entry remains.
                        if let Some((old_item, _)) = &old {
                            self.indices[position].remove_everywhere(old_item);
                        }
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
            let index = &mut self.indices[position];
            let same_item = old
                .as_ref()
                .is_some_and(|(old_item, _)| old_item.same_key(&item));
            // The common case: one value, unchanged; a natural member is
            // given the new object in place.
            if same_item && old_values.len() == 1 && new.len() == 1 && old_values[0] == new[0] {
                index.insert(&new[0], &item);
                continue;
            }
            if let Some((old_item, _)) = &old {
                for value in &old_values {
                    index.remove(value, old_item);
                }
            }
            for value in new {
                index.insert(value, &item);
            }
        }
        Ok(())
    }

    fn remove(&mut self, at: At<'_, K>) {
        let removed = match at {
            At::Key(key) => self.items.remove(key),
            At::OwnOf(object) => self.items.remove_own(object),
        };
        if let Some((item, old)) = removed {
            for position in 0..self.indexers.len() {
                match (self.indexers[position].1)(&old) {
                    Ok(values) => {
                        for value in &values {
                            self.indices[position].remove(value, &item);
                        }
                    }
                    Err(_) => self.indices[position].remove_everywhere(&item),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexFuncError, NAMESPACE_INDEX, namespace_indexers};
    use crate::test_support::labelled_pod as pod;
    use k8s_openapi::api::core::v1::Pod;

    /// An index over every label value ("key=value"), so objects can have
    /// many values.
    fn label_indexers() -> Indexers<Pod> {
        let mut indexers = namespace_indexers::<Pod>();
        indexers.insert(
            "labels".into(),
            Arc::new(|p: &Pod| {
                Ok(p.metadata
                    .labels
                    .iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect())
            }),
        );
        indexers
    }

    #[test]
    fn add_get_list_delete() {
        let store = ThreadSafeStore::new(namespace_indexers());
        store.add("a/x", pod("a", "x", "1", &[])).unwrap();
        store.add("b/y", pod("b", "y", "2", &[])).unwrap();
        assert_eq!(store.len(), 2);
        assert_eq!(
            store.get("a/x").unwrap().metadata.name.as_deref(),
            Some("x")
        );
        let mut keys = store.list_keys();
        keys.sort();
        assert_eq!(keys, ["a/x", "b/y"]);
        assert_eq!(store.list().len(), 2);
        store.delete("a/x", None);
        assert!(store.get("a/x").is_none());
        assert_eq!(store.by_index(NAMESPACE_INDEX, "a").unwrap().len(), 0);
        assert_eq!(store.list_index_func_values(NAMESPACE_INDEX), ["b"]);
    }

    #[test]
    fn update_moves_index_entries() {
        let store = ThreadSafeStore::new(label_indexers());
        store
            .add("a/x", pod("a", "x", "1", &[("app", "web")]))
            .unwrap();
        assert_eq!(store.index_keys("labels", "app=web").unwrap(), ["a/x"]);
        store
            .update("a/x", pod("a", "x", "2", &[("app", "db"), ("tier", "1")]))
            .unwrap();
        assert!(store.index_keys("labels", "app=web").unwrap().is_empty());
        assert_eq!(store.index_keys("labels", "app=db").unwrap(), ["a/x"]);
        assert_eq!(store.index_keys("labels", "tier=1").unwrap(), ["a/x"]);
        let mut values = store.list_index_func_values("labels");
        values.sort();
        assert_eq!(values, ["app=db", "tier=1"]);
    }

    #[test]
    fn index_intersects_values_and_deduplicates() {
        let store = ThreadSafeStore::new(label_indexers());
        store
            .add("a/x", pod("a", "x", "1", &[("app", "web"), ("tier", "1")]))
            .unwrap();
        store
            .add("a/y", pod("a", "y", "1", &[("app", "web")]))
            .unwrap();
        store
            .add("a/z", pod("a", "z", "1", &[("tier", "2")]))
            .unwrap();
        let probe = pod("q", "probe", "1", &[("app", "web"), ("tier", "1")]);
        let mut names: Vec<String> = store
            .index("labels", &probe)
            .unwrap()
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["x", "y"]);
    }

    #[test]
    fn index_keys_are_sorted() {
        let store = ThreadSafeStore::new(namespace_indexers());
        for name in ["c", "a", "b"] {
            store
                .add(&format!("ns/{name}"), pod("ns", name, "1", &[]))
                .unwrap();
        }
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "ns").unwrap(),
            ["ns/a", "ns/b", "ns/c"]
        );
    }

    #[test]
    fn unknown_index_is_a_typed_error() {
        let store = ThreadSafeStore::<Pod>::new(Indexers::new());
        let err = store.by_index("nope", "x").unwrap_err();
        assert_eq!(
            err,
            StoreError::IndexNotFound {
                index: "nope".into()
            }
        );
        assert_eq!(err.to_string(), "index with name \"nope\" does not exist");
        assert!(store.index_keys("nope", "x").is_err());
        assert!(store.index("nope", &Pod::default()).is_err());
        assert!(store.list_index_func_values("nope").is_empty());
    }

    #[test]
    fn failing_index_function_leaves_the_store_unchanged() {
        let mut indexers = namespace_indexers::<Pod>();
        indexers.insert(
            "picky".into(),
            Arc::new(|p: &Pod| {
                if p.metadata.name.as_deref() == Some("bad") {
                    Err(IndexFuncError("no bad names".into()))
                } else {
                    Ok(vec![])
                }
            }),
        );
        let store = ThreadSafeStore::new(indexers);
        store.add("ns/good", pod("ns", "good", "1", &[])).unwrap();
        let err = store.add("ns/bad", pod("ns", "bad", "2", &[])).unwrap_err();
        assert!(matches!(err, StoreError::IndexFunc { ref index, .. } if index == "picky"));
        assert!(store.get("ns/bad").is_none());
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "ns").unwrap(),
            ["ns/good"]
        );
        assert_eq!(store.resource_version(), "1");
        // Replace is all or nothing too.
        let err = store.replace(
            vec![
                ("ns/new".into(), pod("ns", "new", "5", &[])),
                ("ns/bad".into(), pod("ns", "bad", "5", &[])),
            ],
            "5",
        );
        assert!(err.is_err());
        assert!(store.get("ns/good").is_some());
        assert!(store.get("ns/new").is_none());
        assert_eq!(store.resource_version(), "1");
    }

    #[test]
    fn replace_rebuilds_indices_and_sets_resource_version() {
        let store = ThreadSafeStore::new(namespace_indexers());
        store.add("a/x", pod("a", "x", "1", &[])).unwrap();
        store
            .replace(
                vec![
                    ("b/y".into(), pod("b", "y", "3", &[])),
                    ("b/z".into(), pod("b", "z", "4", &[])),
                ],
                "10",
            )
            .unwrap();
        assert!(store.get("a/x").is_none());
        assert!(store.by_index(NAMESPACE_INDEX, "a").unwrap().is_empty());
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "b").unwrap(),
            ["b/y", "b/z"]
        );
        assert_eq!(store.resource_version(), "10");
    }

    #[test]
    fn replace_with_duplicate_keys_keeps_the_last() {
        let store = ThreadSafeStore::new(label_indexers());
        store
            .replace(
                vec![
                    ("a/x".into(), pod("a", "x", "1", &[("v", "old")])),
                    ("a/x".into(), pod("a", "x", "2", &[("v", "new")])),
                ],
                "2",
            )
            .unwrap();
        assert_eq!(store.len(), 1);
        assert!(store.index_keys("labels", "v=old").unwrap().is_empty());
        assert_eq!(store.index_keys("labels", "v=new").unwrap(), ["a/x"]);
    }

    #[test]
    fn replace_own_with_a_key_given_twice_indexes_only_the_last() {
        // The indexes are built from the inserts' own list only when no
        // key came twice; otherwise the old version's values would stay.
        let store = ThreadSafeStore::new(label_indexers());
        store
            .replace_own(
                vec![
                    pod("a", "x", "1", &[("v", "old")]),
                    pod("a", "y", "1", &[("v", "old")]),
                    pod("a", "x", "2", &[("v", "new")]),
                ],
                "2",
            )
            .unwrap();
        assert_eq!(store.len(), 2);
        assert_eq!(store.index_keys("labels", "v=old").unwrap(), ["a/y"]);
        assert_eq!(store.index_keys("labels", "v=new").unwrap(), ["a/x"]);
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "a").unwrap(),
            ["a/x", "a/y"]
        );
        // Once each: every index holds every object under its values.
        store
            .replace_own(
                vec![pod("b", "x", "3", &[("v", "old")]), pod("a", "x", "3", &[])],
                "3",
            )
            .unwrap();
        assert_eq!(store.index_keys("labels", "v=old").unwrap(), ["b/x"]);
        assert!(store.index_keys("labels", "v=new").unwrap().is_empty());
        assert_eq!(store.index_keys(NAMESPACE_INDEX, "b").unwrap(), ["b/x"]);
        assert_eq!(store.index_keys(NAMESPACE_INDEX, "a").unwrap(), ["a/x"]);
    }

    #[test]
    fn replace_under_other_keys_indexes_them_under_those_keys() {
        let store = ThreadSafeStore::new(namespace_indexers());
        store
            .replace(
                vec![
                    ("k1".into(), pod("a", "x", "1", &[])),
                    ("a/y".into(), pod("a", "y", "1", &[])),
                ],
                "1",
            )
            .unwrap();
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "a").unwrap(),
            ["a/y", "k1"]
        );
        assert_eq!(store.by_index(NAMESPACE_INDEX, "a").unwrap().len(), 2);
    }

    #[test]
    fn add_indexers_backfills_and_rejects_conflicts() {
        let store = ThreadSafeStore::new(Indexers::new());
        store.add("a/x", pod("a", "x", "1", &[])).unwrap();
        store.add("b/y", pod("b", "y", "1", &[])).unwrap();
        store.add_indexers(namespace_indexers()).unwrap();
        assert_eq!(store.index_keys(NAMESPACE_INDEX, "a").unwrap(), ["a/x"]);
        store.add("a/z", pod("a", "z", "1", &[])).unwrap();
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "a").unwrap(),
            ["a/x", "a/z"]
        );
        let err = store.add_indexers(label_indexers()).unwrap_err();
        assert_eq!(
            err,
            StoreError::IndexerConflict {
                names: vec![NAMESPACE_INDEX.into()]
            }
        );
        // Nothing from the rejected set was added.
        assert!(store.by_index("labels", "x").is_err());
        assert_eq!(store.indexers().len(), 1);
    }

    #[test]
    fn resource_version_tracking() {
        let store = ThreadSafeStore::new(Indexers::new());
        assert_eq!(store.resource_version(), "");
        store.add("a/x", pod("a", "x", "5", &[])).unwrap();
        assert_eq!(store.resource_version(), "5");
        store.delete("a/x", None);
        assert_eq!(store.resource_version(), "5", "a key-only delete keeps it");
        store.add("a/x", pod("a", "x", "6", &[])).unwrap();
        store.delete("a/x", Some(&pod("a", "x", "7", &[])));
        assert_eq!(store.resource_version(), "7");
        store.set_resource_version("9");
        assert_eq!(store.resource_version(), "9");
    }

    #[test]
    fn transaction_applies_all_and_reports_failures_by_position() {
        let mut indexers = namespace_indexers::<Pod>();
        indexers.insert(
            "picky".into(),
            Arc::new(|p: &Pod| {
                if p.metadata.name.as_deref() == Some("bad") {
                    Err(IndexFuncError("no".into()))
                } else {
                    Ok(vec![])
                }
            }),
        );
        let store = ThreadSafeStore::new(indexers);
        store.add("ns/gone", pod("ns", "gone", "1", &[])).unwrap();
        let results = store.transaction(vec![
            ("ns/a".into(), Change::Upsert(pod("ns", "a", "2", &[]))),
            ("ns/bad".into(), Change::Upsert(pod("ns", "bad", "3", &[]))),
            (
                "ns/gone".into(),
                Change::Delete(Some(pod("ns", "gone", "4", &[]))),
            ),
        ]);
        assert!(results[0].is_ok());
        assert!(results[1].is_err());
        assert!(results[2].is_ok());
        assert!(store.get("ns/a").is_some());
        assert!(store.get("ns/bad").is_none());
        assert!(store.get("ns/gone").is_none());
        assert_eq!(store.resource_version(), "4");
    }

    #[test]
    fn debug_output_is_a_summary() {
        let store = ThreadSafeStore::new(namespace_indexers());
        store.add("a/x", pod("a", "x", "1", &[])).unwrap();
        let text = format!("{store:?}");
        assert!(text.contains("items: 1"), "{text}");
        assert!(text.contains("namespace"), "{text}");
    }

    mod against_a_model {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeMap;

        /// One write: the object's namespace, name, label value and key
        /// (its own `namespace/name`, or another one), or a delete, or a
        /// replace of everything.
        #[derive(Debug, Clone)]
        enum Op {
            Add {
                namespace: usize,
                name: usize,
                label: usize,
                custom_key: Option<usize>,
            },
            Delete {
                key: usize,
            },
            Replace {
                count: usize,
            },
        }

        const NAMESPACES: [&str; 3] = ["", "a", "b"];
        // Names with a slash are stored under a key they do not split into.
        const NAMES: [&str; 5] = ["x", "y", "z/w", "", "/x"];
        const KEYS: [&str; 6] = ["k1", "a/x", "z/w", "b/", "/x", "/"];

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                6 => (0..3usize, 0..5usize, 0..2usize, proptest::option::weighted(0.3, 0..6usize))
                    .prop_map(|(namespace, name, label, custom_key)| Op::Add { namespace, name, label, custom_key }),
                2 => (0..6usize).prop_map(|key| Op::Delete { key }),
                1 => (0..6usize).prop_map(|count| Op::Replace { count }),
            ]
        }

        fn natural(namespace: &str, name: &str) -> String {
            if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{namespace}/{name}")
            }
        }

        proptest! {
            #[test]
            fn reads_match_a_plain_map(ops in proptest::collection::vec(op(), 1..60)) {
                let store = ThreadSafeStore::new(label_indexers());
                // key -> (namespace, name, label value)
                let mut model: BTreeMap<String, (String, String, String)> = BTreeMap::new();
                for (version, op) in ops.into_iter().enumerate() {
                    let version = version.to_string();
                    match op {
                        Op::Add { namespace, name, label, custom_key } => {
                            let (namespace, name) = (NAMESPACES[namespace], NAMES[name]);
                            let label = ["one", "two"][label];
                            let key = custom_key.map_or_else(|| natural(namespace, name), |k| KEYS[k].to_string());
                            store.add(&key, pod(namespace, name, &version, &[("app", label)])).unwrap();
                            model.insert(key, (namespace.into(), name.into(), label.into()));
                        }
                        Op::Delete { key } => {
                            let key = KEYS[key];
                            store.delete(key, None);
                            model.remove(key);
                        }
                        Op::Replace { count } => {
                            let items: Vec<(String, Arc<Pod>)> = (0..count)
                                .map(|n| {
                                    let (namespace, name) = (NAMESPACES[n % 3], NAMES[n]);
                                    (natural(namespace, name), pod(namespace, name, &version, &[("app", "one")]))
                                })
                                .collect();
                            model = items
                                .iter()
                                .map(|(key, p)| (key.clone(), (
                                    p.metadata.namespace.clone().unwrap_or_default(),
                                    p.metadata.name.clone().unwrap_or_default(),
                                    "one".to_string(),
                                )))
                                .collect();
                            store.replace(items, &version).unwrap();
                        }
                    }
                    let mut keys = store.list_keys();
                    keys.sort();
                    prop_assert_eq!(&keys, &model.keys().cloned().collect::<Vec<_>>());
                    prop_assert_eq!(store.len(), model.len());
                    for (key, (namespace, name, _)) in &model {
                        let stored = store.get(key);
                        prop_assert!(stored.is_some(), "{} missing", key);
                        let stored = stored.unwrap();
                        prop_assert_eq!(stored.metadata.namespace.as_deref().unwrap_or_default(), namespace.as_str());
                        prop_assert_eq!(stored.metadata.name.as_deref().unwrap_or_default(), name.as_str());
                    }
                    for label in ["one", "two"] {
                        let value = format!("app={label}");
                        let expected: Vec<String> = model
                            .iter()
                            .filter(|(_, (_, _, l))| l == label)
                            .map(|(key, _)| key.clone())
                            .collect();
                        prop_assert_eq!(store.index_keys("labels", &value).unwrap(), expected.clone());
                        let objects = store.by_index("labels", &value).unwrap();
                        prop_assert_eq!(objects.len(), expected.len());
                        // Each object read through the index is the one stored now.
                        for object in objects {
                            let version = object.metadata.resource_version.clone();
                            prop_assert!(model.keys().any(|key| {
                                store.get(key).is_some_and(|p| Arc::ptr_eq(&p, &object))
                            }), "a stale object (version {:?}) under {}", version, value);
                        }
                    }
                    for namespace in NAMESPACES {
                        let expected = model.values().filter(|(ns, _, _)| ns == namespace).count();
                        prop_assert_eq!(store.by_index(NAMESPACE_INDEX, namespace).unwrap().len(), expected);
                    }
                }
            }
        }
    }
}
