//! [`UndeltaStore`]: a store that pushes its complete state after every
//! change (client-go's `UndeltaStore`).

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::error::StoreError;
use crate::key::ObjectOrTombstone;
use crate::store::{Arrival, ReflectorStore, Store};

/// Receives the complete state of an [`UndeltaStore`].
pub type PushFunc<K> = Arc<dyn Fn(Vec<Arc<K>>) + Send + Sync>;

/// Wraps a store and, after every successful add, update, delete or
/// replace, calls the push function with every object it holds. Reads never
/// push. For consumers that want "the whole current state" rather than
/// changes.
///
/// The push runs on the writer's thread after the write's lock is released;
/// with concurrent writers the same state may be pushed twice, and pushes
/// may arrive in a different order than the writes.
pub struct UndeltaStore<K, S> {
    store: S,
    push: PushFunc<K>,
}

impl<K, S: fmt::Debug> fmt::Debug for UndeltaStore<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UndeltaStore")
            .field("store", &self.store)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static, S: Store<K>> UndeltaStore<K, S> {
    /// Wraps `store`, pushing to `push`.
    pub fn new(store: S, push: PushFunc<K>) -> Self {
        UndeltaStore { store, push }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.store
    }

    fn push_state(&self, result: Result<(), StoreError>) -> Result<(), StoreError> {
        result?;
        (self.push)(self.store.list());
        Ok(())
    }
}

impl<K: Object + Send + Sync + 'static, S: Store<K>> ReflectorStore<K> for UndeltaStore<K, S> {
    /// The wrapped store's.
    fn prepare(&self, object: Arc<K>, arrival: Arrival) -> Result<Arc<K>, StoreError> {
        self.store.prepare(object, arrival)
    }

    fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.push_state(self.store.add(object))
    }

    fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.push_state(self.store.update(object))
    }

    fn delete(&self, object: ObjectOrTombstone<K>) -> Result<(), StoreError> {
        self.push_state(self.store.delete(object))
    }

    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError> {
        self.push_state(self.store.replace(objects, resource_version))
    }

    fn resync(&self) -> Result<(), StoreError> {
        self.store.resync()
    }

    fn bookmark(&self, resource_version: &str) -> Result<(), StoreError> {
        self.store.bookmark(resource_version)
    }
}

impl<K: Object + Send + Sync + 'static, S: Store<K>> Store<K> for UndeltaStore<K, S> {
    fn list(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    fn list_keys(&self) -> Vec<String> {
        self.store.list_keys()
    }

    fn get(&self, object: &K) -> Result<Option<Arc<K>>, StoreError> {
        self.store.get(object)
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get_by_key(key)
    }

    fn last_store_sync_resource_version(&self) -> String {
        self.store.last_store_sync_resource_version()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::{Indexer, IndexerOptions};
    use crate::test_support::config_map;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::Mutex;

    fn object(name: &str) -> Arc<ConfigMap> {
        config_map(name, "1")
    }

    fn names(state: &[Arc<ConfigMap>]) -> Vec<String> {
        let mut names: Vec<String> = state
            .iter()
            .map(|o| o.metadata.name.clone().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_write_pushes_the_complete_state_and_reads_do_not() {
        let pushes: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
        let sink = Arc::clone(&pushes);
        let store = UndeltaStore::new(
            Indexer::<ConfigMap>::new(IndexerOptions::default()),
            Arc::new(move |state: Vec<Arc<ConfigMap>>| sink.lock().unwrap().push(names(&state))),
        );
        store.add(object("a")).unwrap();
        store.add(object("b")).unwrap();
        store.update(object("a")).unwrap();
        store.delete(object("b").into()).unwrap();
        store.replace(vec![object("x"), object("y")], "1").unwrap();
        let _ = store.list();
        let _ = store.get_by_key("x");
        store.resync().unwrap();
        assert_eq!(
            *pushes.lock().unwrap(),
            vec![
                vec!["a"],
                vec!["a", "b"],
                vec!["a", "b"],
                vec!["a"],
                vec!["x", "y"],
            ]
        );
        assert_eq!(store.inner().len(), 2);
    }
}
