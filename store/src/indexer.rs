//! [`Indexer`]: the cache informers keep and listers read, a
//! [`ThreadSafeStore`] keyed by a key function (client-go's `cache`, as
//! returned by `NewStore` and `NewIndexer`).

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::error::StoreError;
use crate::index::{Indexers, namespace_indexers};
use crate::key::{KeyFunc, ObjectOrTombstone, meta_namespace_key_func};
use crate::store::{Arrival, KnownObjects, ReflectorStore, Store, TransformFunc, prepare_object};
use crate::thread_safe_store::{Change, ThreadSafeStore};

/// How an [`Indexer`] is built.
pub struct IndexerOptions<K> {
    key_func: KeyFunc<K>,
    /// Whether `key_func` is the default, each object's own key.
    own_keys: bool,
    indexers: Indexers<K>,
    transform: Option<TransformFunc<K>>,
}

impl<K: Object + Send + Sync + 'static> Default for IndexerOptions<K> {
    /// `namespace/name` keys, no indexes, no transform.
    fn default() -> Self {
        IndexerOptions {
            key_func: meta_namespace_key_func(),
            own_keys: true,
            indexers: Indexers::new(),
            transform: None,
        }
    }
}

impl<K: Object + Send + Sync + 'static> IndexerOptions<K> {
    /// Uses another key function. Tombstones are always keyed by their own
    /// key.
    pub fn key_func(mut self, key_func: KeyFunc<K>) -> Self {
        self.key_func = key_func;
        self.own_keys = false;
        self
    }

    /// Adds index functions.
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers.extend(indexers);
        self
    }

    /// Adds the namespace index (as informers' indexers always have).
    pub fn namespace_index(self) -> Self {
        self.indexers(namespace_indexers())
    }

    /// Transforms each object once, in [`prepare`](ReflectorStore::prepare)
    /// (an object this indexer already holds at the same version is reused
    /// instead). `add`, `update`, `replace` and `transaction` take objects
    /// as they are.
    pub fn transform(mut self, transform: TransformFunc<K>) -> Self {
        self.transform = Some(transform);
        self
    }
}

/// One change of an [`Indexer::transaction`].
#[derive(Debug)]
pub enum Transaction<K> {
    /// Add an object.
    Add(Arc<K>),
    /// Update an object.
    Update(Arc<K>),
    /// Delete an object (or a tombstone's key).
    Delete(ObjectOrTombstone<K>),
}

/// Some changes of a transaction failed; the others were applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} of {total_transactions} changes failed; first: {}", errors.len(), first_error(errors))]
pub struct TransactionError {
    /// Positions of the changes that were applied.
    pub successful_indices: Vec<usize>,
    /// How many changes there were.
    pub total_transactions: usize,
    /// Each failed change's position and error.
    pub errors: Vec<(usize, StoreError)>,
}

fn first_error(errors: &[(usize, StoreError)]) -> String {
    errors
        .first()
        .map_or_else(String::new, |(position, error)| {
            format!("#{position}: {error}")
        })
}

/// A thread-safe, indexed cache of objects keyed by a key function.
///
/// It implements [`Store`] (and so [`ReflectorStore`]) and
/// [`KnownObjects`]. Reads return the stored `Arc<K>` without copying the
/// object. See [`ThreadSafeStore`] for the locking rules.
///
/// ```
/// use std::sync::Arc;
/// use clientgo_store::{Indexer, IndexerOptions, NAMESPACE_INDEX, ReflectorStore, Store};
/// use k8s_openapi::api::core::v1::Pod;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
///
/// let pods: Indexer<Pod> = Indexer::new(IndexerOptions::default().namespace_index());
/// let pod = Pod {
///     metadata: ObjectMeta { namespace: Some("default".into()), name: Some("web".into()), ..Default::default() },
///     ..Default::default()
/// };
/// pods.add(Arc::new(pod)).unwrap();
/// assert!(pods.get_by_key("default/web").is_some());
/// assert_eq!(pods.by_index(NAMESPACE_INDEX, "default").unwrap().len(), 1);
/// ```
pub struct Indexer<K> {
    store: ThreadSafeStore<K>,
    key_func: KeyFunc<K>,
    /// Keys are the objects' own (the default key function): writes and
    /// reads by object build no key string.
    own_keys: bool,
    transform: Option<TransformFunc<K>>,
}

impl<K> fmt::Debug for Indexer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Indexer")
            .field("store", &self.store)
            .field("transform", &self.transform.is_some())
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> Indexer<K> {
    /// A new, empty indexer.
    pub fn new(options: IndexerOptions<K>) -> Self {
        Indexer {
            store: ThreadSafeStore::new(options.indexers),
            key_func: options.key_func,
            own_keys: options.own_keys,
            transform: options.transform,
        }
    }

    /// The key function.
    pub fn key_func(&self) -> &KeyFunc<K> {
        &self.key_func
    }

    /// The key of an object.
    pub fn key_of(&self, object: &K) -> Result<String, StoreError> {
        (self.key_func)(object)
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the indexer is empty.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Objects sharing an index value with `object`.
    pub fn index(&self, index_name: &str, object: &K) -> Result<Vec<Arc<K>>, StoreError> {
        self.store.index(index_name, object)
    }

    /// Keys indexed under `value`, sorted.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, StoreError> {
        self.store.index_keys(index_name, value)
    }

    /// Objects indexed under `value`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        self.store.by_index(index_name, value)
    }

    /// The distinct values of an index; empty for an unknown index.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.store.list_index_func_values(index_name)
    }

    /// The index functions by name.
    pub fn indexers(&self) -> Indexers<K> {
        self.store.indexers()
    }

    /// Adds indexes, allowed at any time: existing objects are indexed at
    /// once.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), StoreError> {
        self.store.add_indexers(indexers)
    }

    /// Every object and the resourceVersion the cache reflects, read under
    /// one lock (a consistent pair: what a snapshot of the cache records).
    pub fn list_with_resource_version(&self) -> (Vec<Arc<K>>, String) {
        self.store.list_with_resource_version()
    }

    /// Visits every object under the read lock without copying the list.
    pub fn for_each(&self, read: impl FnMut(&str, &Arc<K>)) {
        self.store.for_each(read);
    }

    /// [`for_each`](Self::for_each) without the keys (none is built).
    pub fn for_each_object(&self, read: impl FnMut(&Arc<K>)) {
        self.store.for_each_object(read);
    }

    /// Applies many changes under one write lock (client-go's
    /// `TransactionStore`). Keys are computed first; changes whose key or
    /// index values cannot be computed are skipped and reported, the rest
    /// are applied. Objects are not transformed here.
    pub fn transaction(&self, transactions: Vec<Transaction<K>>) -> Result<(), TransactionError> {
        let total_transactions = transactions.len();
        let mut errors = Vec::new();
        let mut positions = Vec::with_capacity(total_transactions);
        let mut changes = Vec::with_capacity(total_transactions);
        for (position, transaction) in transactions.into_iter().enumerate() {
            let keyed = match transaction {
                Transaction::Add(object) | Transaction::Update(object) if self.own_keys => {
                    Ok((None, Change::Upsert(object)))
                }
                Transaction::Add(object) | Transaction::Update(object) => {
                    (self.key_func)(&object).map(|key| (Some(key), Change::Upsert(object)))
                }
                Transaction::Delete(ObjectOrTombstone::Object(object)) if self.own_keys => {
                    Ok((None, Change::Delete(Some(object))))
                }
                Transaction::Delete(target) => target
                    .key(&self.key_func)
                    .map(|key| (Some(key), Change::Delete(target.object().cloned()))),
            };
            match keyed {
                Ok(change) => {
                    positions.push(position);
                    changes.push(change);
                }
                Err(error) => errors.push((position, error)),
            }
        }
        let mut successful_indices = Vec::with_capacity(positions.len());
        for (position, result) in positions
            .into_iter()
            .zip(self.store.transaction_at(changes.into_iter()))
        {
            match result {
                Ok(()) => successful_indices.push(position),
                Err(error) => errors.push((position, error)),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            errors.sort_by_key(|(position, _)| *position);
            Err(TransactionError {
                successful_indices,
                total_transactions,
                errors,
            })
        }
    }
}

impl<K: Object + Send + Sync + 'static> ReflectorStore<K> for Indexer<K> {
    /// Reuses this indexer's own `Arc` of an unchanged object (so a relist
    /// into it holds no second copy), else applies the transform.
    fn prepare(&self, object: Arc<K>, arrival: Arrival) -> Result<Arc<K>, StoreError> {
        prepare_object(
            object,
            arrival,
            Some((self, &self.key_func)),
            self.transform.as_ref(),
        )
    }

    fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        if self.own_keys {
            return self.store.add_own(object);
        }
        let key = (self.key_func)(&object)?;
        self.store.add(&key, object)
    }

    fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.add(object)
    }

    fn delete(&self, object: ObjectOrTombstone<K>) -> Result<(), StoreError> {
        if let (true, ObjectOrTombstone::Object(object)) = (self.own_keys, &object) {
            self.store.delete_own(object);
            return Ok(());
        }
        let key = object.key(&self.key_func)?;
        // A tombstone carries no resourceVersion of its own (client-go
        // ignores it because it has no metadata).
        let for_resource_version = match &object {
            ObjectOrTombstone::Object(object) => Some(&**object),
            ObjectOrTombstone::Tombstone(_) => None,
        };
        self.store.delete(&key, for_resource_version);
        Ok(())
    }

    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError> {
        if self.own_keys {
            return self.store.replace_own(objects, resource_version);
        }
        let mut items = Vec::with_capacity(objects.len());
        for object in objects {
            let key = (self.key_func)(&object)?;
            items.push((key, object));
        }
        self.store.replace(items, resource_version)
    }

    fn resync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn bookmark(&self, resource_version: &str) -> Result<(), StoreError> {
        self.store.set_resource_version(resource_version);
        Ok(())
    }
}

impl<K: Object + Send + Sync + 'static> Store<K> for Indexer<K> {
    fn list(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    fn list_keys(&self) -> Vec<String> {
        self.store.list_keys()
    }

    fn get(&self, object: &K) -> Result<Option<Arc<K>>, StoreError> {
        if self.own_keys {
            return Ok(self.store.get_own(object));
        }
        let key = (self.key_func)(object)?;
        Ok(self.store.get(&key))
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    fn last_store_sync_resource_version(&self) -> String {
        self.store.resource_version()
    }
}

impl<K: Object + Send + Sync + 'static> KnownObjects<K> for Indexer<K> {
    fn list_keys(&self) -> Vec<String> {
        self.store.list_keys()
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// With the default key function, found by the object's own name
    /// (building no key).
    fn get_for(&self, object: &K, key_func: &KeyFunc<K>) -> Option<Arc<K>> {
        if self.own_keys {
            return self.store.get_own(object);
        }
        key_func(object).ok().and_then(|key| self.store.get(&key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::NAMESPACE_INDEX;
    use crate::key::DeletedFinalStateUnknown;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(namespace: &str, name: &str, rv: &str) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                resource_version: Some(rv.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    #[test]
    fn store_methods_key_by_namespace_and_name() {
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default());
        store.add(pod("a", "x", "1")).unwrap();
        store.update(pod("a", "x", "2")).unwrap();
        assert_eq!(store.len(), 1);
        let stored = store.get(&pod("a", "x", "0")).unwrap().unwrap();
        assert_eq!(stored.metadata.resource_version.as_deref(), Some("2"));
        assert_eq!(Store::list_keys(&store), ["a/x"]);
        assert_eq!(store.last_store_sync_resource_version(), "2");
        store.delete(pod("a", "x", "3").into()).unwrap();
        assert!(store.is_empty());
        assert_eq!(store.last_store_sync_resource_version(), "3");
    }

    #[test]
    fn own_keys_and_a_key_function_giving_the_same_keys_agree() {
        // The default keys objects by their own namespace/name without
        // building keys; a key function computing the same keys takes the
        // keyed path. Both must read the same after the same writes,
        // including for a cluster-scoped name with a slash.
        let by_function: IndexerOptions<Pod> = IndexerOptions::default()
            .key_func(Arc::new(|p: &Pod| Ok(crate::meta_namespace_key(p))));
        let stores = [
            Indexer::new(IndexerOptions::default().namespace_index()),
            Indexer::new(by_function.namespace_index()),
        ];
        for store in &stores {
            store.add(pod("a", "x", "1")).unwrap();
            store.add(pod("", "s/t", "2")).unwrap();
            store.update(pod("a", "x", "3")).unwrap();
            store
                .transaction(vec![
                    Transaction::Add(pod("b", "y", "4")),
                    Transaction::Delete(pod("", "s/t", "5").into()),
                ])
                .unwrap();
            let mut keys = Store::list_keys(store);
            keys.sort();
            assert_eq!(keys, ["a/x", "b/y"]);
            let got = store.get(&pod("a", "x", "0")).unwrap().unwrap();
            assert_eq!(got.metadata.resource_version.as_deref(), Some("3"));
            assert_eq!(store.last_store_sync_resource_version(), "5");
            store.add(pod("", "s/t", "6")).unwrap();
            assert!(Store::get_by_key(store, "s/t").is_some());
            store.delete(pod("a", "x", "7").into()).unwrap();
            assert!(store.get(&pod("a", "x", "0")).unwrap().is_none());
            assert_eq!(store.index_keys(NAMESPACE_INDEX, "").unwrap(), ["s/t"]);
            store
                .replace(vec![pod("c", "z", "8"), pod("", "u/v", "8")], "9")
                .unwrap();
            let mut keys = Store::list_keys(store);
            keys.sort();
            assert_eq!(keys, ["c/z", "u/v"]);
            assert_eq!(store.by_index(NAMESPACE_INDEX, "c").unwrap().len(), 1);
        }
    }

    #[test]
    fn reads_share_the_stored_object() {
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default().namespace_index());
        let object = pod("a", "x", "1");
        store.add(Arc::clone(&object)).unwrap();
        assert!(Arc::ptr_eq(
            &Store::get_by_key(&store, "a/x").unwrap(),
            &object
        ));
        assert!(Arc::ptr_eq(&store.list()[0], &object));
        assert!(Arc::ptr_eq(
            &store.by_index(NAMESPACE_INDEX, "a").unwrap()[0],
            &object
        ));
    }

    #[test]
    fn tombstones_delete_by_their_key_and_keep_the_resource_version() {
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default());
        store.add(pod("a", "x", "5")).unwrap();
        store
            .delete(
                DeletedFinalStateUnknown {
                    key: "a/x".into(),
                    object: Some(pod("a", "x", "9")),
                }
                .into(),
            )
            .unwrap();
        assert!(store.is_empty());
        assert_eq!(store.last_store_sync_resource_version(), "5");
    }

    #[test]
    fn replace_and_bookmark_set_the_resource_version() {
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default());
        store.add(pod("a", "old", "1")).unwrap();
        store
            .replace(vec![pod("a", "x", "3"), pod("b", "y", "4")], "20")
            .unwrap();
        assert_eq!(store.len(), 2);
        assert!(Store::get_by_key(&store, "a/old").is_none());
        assert_eq!(store.last_store_sync_resource_version(), "20");
        let (objects, resource_version) = store.list_with_resource_version();
        assert_eq!((objects.len(), resource_version.as_str()), (2, "20"));
        store.bookmark("25").unwrap();
        assert_eq!(store.last_store_sync_resource_version(), "25");
        store.resync().unwrap();
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn prepare_transforms_new_versions_and_reuses_held_ones() {
        let transform: TransformFunc<Pod> = Arc::new(|mut object: Arc<Pod>| {
            Arc::make_mut(&mut object).metadata.annotations =
                Some([("transformed".to_string(), "yes".to_string())].into());
            Ok(object)
        });
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default().transform(transform));
        let prepared = store.prepare(pod("a", "x", "1"), Arrival::Listed).unwrap();
        assert!(prepared.metadata.annotations.is_some());
        store.add(Arc::clone(&prepared)).unwrap();
        let again = store.prepare(pod("a", "x", "1"), Arrival::Listed).unwrap();
        assert!(Arc::ptr_eq(&again, &prepared), "the held Arc is reused");
        let newer = store.prepare(pod("a", "x", "2"), Arrival::Listed).unwrap();
        assert!(!Arc::ptr_eq(&newer, &prepared));
        assert!(newer.metadata.annotations.is_some());
        // Writes take objects as they are.
        store.add(pod("a", "z", "4")).unwrap();
        assert!(
            Store::get_by_key(&store, "a/z")
                .unwrap()
                .metadata
                .annotations
                .is_none()
        );
    }

    #[test]
    fn transform_errors_refuse_the_object() {
        let transform: TransformFunc<Pod> = Arc::new(|object: Arc<Pod>| {
            Err(StoreError::Transform {
                object: crate::key::describe(&*object),
                reason: "refused".into(),
            })
        });
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default().transform(transform));
        let err = store
            .prepare(pod("a", "x", "1"), Arrival::Listed)
            .unwrap_err();
        assert_eq!(err.to_string(), "transform failed for a/x: refused");
        assert!(store.is_empty());
    }

    #[test]
    fn transaction_reports_key_failures_and_applies_the_rest() {
        let key_func: KeyFunc<Pod> = Arc::new(|p: &Pod| match p.metadata.name.as_deref() {
            Some("nokey") => Err(StoreError::Key {
                object: "nokey".into(),
                reason: "refused".into(),
            }),
            _ => Ok(crate::key::meta_namespace_key(p)),
        });
        let store: Indexer<Pod> = Indexer::new(IndexerOptions::default().key_func(key_func));
        store.add(pod("a", "gone", "1")).unwrap();
        let err = store
            .transaction(vec![
                Transaction::Add(pod("a", "x", "2")),
                Transaction::Update(pod("a", "nokey", "3")),
                Transaction::Delete(pod("a", "gone", "4").into()),
            ])
            .unwrap_err();
        assert_eq!(err.successful_indices, [0, 2]);
        assert_eq!(err.total_transactions, 3);
        assert_eq!(err.errors.len(), 1);
        assert_eq!(err.errors[0].0, 1);
        assert!(
            err.to_string().starts_with("1 of 3 changes failed"),
            "{err}"
        );
        assert!(Store::get_by_key(&store, "a/x").is_some());
        assert!(Store::get_by_key(&store, "a/gone").is_none());
        assert_eq!(store.last_store_sync_resource_version(), "4");
    }
}
