//! Index functions and the index structure a [`ThreadSafeStore`] keeps for
//! each of them.
//!
//! [`ThreadSafeStore`]: crate::ThreadSafeStore

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use clientgo_apimachinery::Object;

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

/// One index: each value maps to the set of keys indexed under it. A value
/// whose set becomes empty is removed (kubernetes#84959), so the index does
/// not grow with values that are no longer used.
#[derive(Debug, Default)]
pub(crate) struct Index {
    by_value: HashMap<String, HashSet<Arc<str>>>,
}

impl Index {
    pub(crate) fn insert(&mut self, value: &str, key: &Arc<str>) {
        match self.by_value.get_mut(value) {
            Some(keys) => {
                keys.insert(Arc::clone(key));
            }
            None => {
                self.by_value
                    .insert(value.to_string(), HashSet::from([Arc::clone(key)]));
            }
        }
    }

    pub(crate) fn remove(&mut self, value: &str, key: &str) {
        if let Some(keys) = self.by_value.get_mut(value) {
            keys.remove(key);
            if keys.is_empty() {
                self.by_value.remove(value);
            }
        }
    }

    /// Removes `key` from every value (used when the values it was indexed
    /// under cannot be recomputed).
    pub(crate) fn remove_everywhere(&mut self, key: &str) {
        self.by_value.retain(|_, keys| {
            keys.remove(key);
            !keys.is_empty()
        });
    }

    pub(crate) fn keys(&self, value: &str) -> Option<&HashSet<Arc<str>>> {
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
        let mut index = Index::default();
        let a: Arc<str> = Arc::from("a");
        let b: Arc<str> = Arc::from("b");
        index.insert("v", &a);
        index.insert("v", &b);
        index.remove("v", "a");
        assert_eq!(index.keys("v").map(HashSet::len), Some(1));
        index.remove("v", "b");
        assert!(index.keys("v").is_none());
        assert_eq!(index.values().count(), 0);
        index.insert("x", &a);
        index.insert("y", &a);
        index.remove_everywhere("a");
        assert_eq!(index.values().count(), 0);
    }
}
