//! Index functions and the index structure a [`ThreadSafeStore`] keeps for
//! each of them.
//!
//! [`ThreadSafeStore`]: crate::ThreadSafeStore

use std::collections::HashMap;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use hashbrown::hash_table::Entry;
use hashbrown::{HashSet, HashTable};

use crate::keyed_items::{Identity, KeyHasher, parts};

/// Why an index function could not index an object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct IndexFuncError(pub String);

/// A function giving the values an object is indexed under. It may return
/// several values (an object with many owner references, many labels) or
/// none.
pub type IndexFunc<K> = Arc<dyn Fn(&K) -> Result<Vec<String>, IndexFuncError> + Send + Sync>;

/// Index functions by index name.
pub type Indexers<K> = HashMap<String, IndexFunc<K>>;

/// The name of the built-in namespace index.
pub const NAMESPACE_INDEX: &str = "namespace";

/// Indexes an object under its namespace (the empty string for
/// cluster-scoped objects), as client-go's `MetaNamespaceIndexFunc`.
pub fn namespace_index_func<K: Object + 'static>() -> IndexFunc<K> {
    Arc::new(|object: &K| Ok(vec![object.namespace().unwrap_or_default().to_string()]))
}

/// Indexers holding only the namespace index.
pub fn namespace_indexers<K: Object + 'static>() -> Indexers<K> {
    HashMap::from([(NAMESPACE_INDEX.to_string(), namespace_index_func::<K>())])
}

/// Turns an index function into a key function (client-go's
/// `IndexFuncToKeyFuncAdapter`): the key is the object's single index
/// value; zero or several values are an error.
pub fn index_func_to_key_func<K: Object + 'static>(
    index_func: IndexFunc<K>,
) -> crate::key::KeyFunc<K> {
    Arc::new(move |object: &K| {
        let describe = || crate::key::describe(object);
        let mut values = index_func(object).map_err(|e| crate::error::StoreError::Key {
            object: describe(),
            reason: e.0,
        })?;
        match (values.pop(), values.is_empty()) {
            (Some(value), true) => Ok(value),
            (None, _) => Err(crate::error::StoreError::Key {
                object: describe(),
                reason: "the index function returned no value".to_string(),
            }),
            (Some(_), false) => Err(crate::error::StoreError::Key {
                object: describe(),
                reason: format!(
                    "the index function returned {} values; a key needs exactly one",
                    values.len() + 1
                ),
            }),
        }
    })
}

/// One index: each value maps to the items indexed under it. A value whose
/// set becomes empty is removed (kubernetes#84959), so the index does not
/// grow with values that are no longer used.
///
/// Natural items ([`KeyedItems`](crate::keyed_items)) are held as their
/// object, hashed by namespace and name with the store's [`KeyHasher`], so
/// a value's members are read without a lookup in the store; each write
/// puts the new object in place. Others are held as their key.
pub(crate) struct Index<K> {
    by_value: hashbrown::HashMap<String, Members<K>>,
    hasher: KeyHasher,
}

/// The items indexed under one value.
pub(crate) struct Members<K> {
    /// Natural items, by namespace and name.
    pub(crate) natural: HashTable<Arc<K>>,
    /// Other items, by key.
    pub(crate) keyed: HashSet<Arc<str>>,
}

impl<K> Members<K> {
    fn is_empty(&self) -> bool {
        self.natural.is_empty() && self.keyed.is_empty()
    }

    /// How many items.
    pub(crate) fn len(&self) -> usize {
        self.natural.len() + self.keyed.len()
    }
}

impl<K: Object> Index<K> {
    /// An empty index hashing as the store's items do.
    pub(crate) fn new(hasher: KeyHasher) -> Self {
        Index {
            by_value: hashbrown::HashMap::new(),
            hasher,
        }
    }

    /// Indexes `item` under `value`, replacing the object held for the
    /// same key.
    pub(crate) fn insert(&mut self, value: &str, item: &Identity<K>) {
        let members = match self.by_value.get_mut(value) {
            Some(members) => members,
            None => self
                .by_value
                .entry(value.to_string())
                .or_insert_with(|| Members {
                    natural: HashTable::new(),
                    keyed: HashSet::new(),
                }),
        };
        match item {
            Identity::Natural { hash, object } => {
                let key = parts(&**object);
                let hasher = &self.hasher;
                match members.natural.entry(
                    *hash,
                    |held| parts(&**held) == key,
                    |held| hasher.of(&**held),
                ) {
                    Entry::Occupied(mut occupied) => *occupied.get_mut() = Arc::clone(object),
                    Entry::Vacant(vacant) => {
                        vacant.insert(Arc::clone(object));
                    }
                }
            }
            Identity::Keyed(key) => {
                members.keyed.insert(Arc::clone(key));
            }
        }
    }

    /// Removes `item` from `value`.
    pub(crate) fn remove(&mut self, value: &str, item: &Identity<K>) {
        if let Some(members) = self.by_value.get_mut(value) {
            Self::remove_from(members, item);
            if members.is_empty() {
                self.by_value.remove(value);
            }
        }
    }

    fn remove_from(members: &mut Members<K>, item: &Identity<K>) {
        match item {
            Identity::Natural { hash, object } => {
                let key = parts(&**object);
                if let Ok(occupied) = members
                    .natural
                    .find_entry(*hash, |held| parts(&**held) == key)
                {
                    occupied.remove();
                }
            }
            Identity::Keyed(key) => {
                members.keyed.remove(&**key);
            }
        }
    }

    /// Removes `item` from every value (used when the values it was indexed
    /// under cannot be recomputed).
    pub(crate) fn remove_everywhere(&mut self, item: &Identity<K>) {
        self.by_value.retain(|_, members| {
            Self::remove_from(members, item);
            !members.is_empty()
        });
    }

    /// The items under `value`.
    pub(crate) fn members(&self, value: &str) -> Option<&Members<K>> {
        self.by_value.get(value)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &String> {
        self.by_value.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::labelled_pod;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn namespace_index_includes_the_empty_namespace() {
        let index = namespace_index_func::<Pod>();
        let namespaced = Pod {
            metadata: ObjectMeta {
                namespace: Some("ns".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(index(&namespaced).unwrap(), vec!["ns".to_string()]);
        assert_eq!(index(&Pod::default()).unwrap(), vec![String::new()]);
    }

    #[test]
    fn index_functions_adapt_to_key_functions_only_with_one_value() {
        let by_label: IndexFunc<Pod> = Arc::new(|p: &Pod| {
            Ok(p.metadata
                .labels
                .iter()
                .flatten()
                .map(|(_, v)| v.clone())
                .collect())
        });
        let key_func = index_func_to_key_func(by_label);
        let with_labels = |labels: &[(&str, &str)]| labelled_pod("", "p", "1", labels);
        assert_eq!(key_func(&with_labels(&[("app", "web")])).unwrap(), "web");
        let none = key_func(&with_labels(&[])).unwrap_err();
        assert!(none.to_string().contains("no value"), "{none}");
        let two = key_func(&with_labels(&[("a", "1"), ("b", "2")])).unwrap_err();
        assert!(two.to_string().contains("2 values"), "{two}");
    }

    #[test]
    fn empty_value_sets_are_removed() {
        let hasher = KeyHasher::default();
        let mut index = Index::<Pod>::new(hasher.clone());
        let natural = |name: &str, version: &str| {
            let object = labelled_pod("ns", name, version, &[]);
            Identity::Natural {
                hash: hasher.of(&*object),
                object,
            }
        };
        let (a, b) = (natural("a", "1"), natural("b", "1"));
        let keyed = Identity::<Pod>::Keyed(Arc::from("custom"));
        index.insert("v", &a);
        index.insert("v", &b);
        index.insert("v", &keyed);
        assert_eq!(index.members("v").map(Members::len), Some(3));
        // A newer object of the same key replaces the one held.
        index.insert("v", &natural("a", "2"));
        let members = index.members("v").unwrap();
        assert_eq!(members.len(), 3);
        assert!(
            members
                .natural
                .iter()
                .any(|p| p.metadata.resource_version.as_deref() == Some("2"))
        );
        index.remove("v", &a);
        index.remove("v", &keyed);
        assert_eq!(index.members("v").map(Members::len), Some(1));
        index.remove("v", &b);
        assert!(index.members("v").is_none());
        assert_eq!(index.values().count(), 0);
        index.insert("x", &a);
        index.insert("y", &a);
        index.remove_everywhere(&a);
        assert_eq!(index.values().count(), 0);
    }
}
