//! Object keys: `namespace/name` (or `name` for cluster-scoped objects),
//! [`ObjectName`], tombstones ([`DeletedFinalStateUnknown`]) and the key
//! functions stores and queues use.

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::error::StoreError;

/// A function computing an object's store key.
pub type KeyFunc<K> = Arc<dyn Fn(&K) -> Result<String, StoreError> + Send + Sync>;

/// The standard key: `namespace/name`, or `name` when the namespace is
/// empty (client-go's `MetaNamespaceKeyFunc`). It never fails for an object
/// with metadata; an object without a name gets the key `namespace/` or ``,
/// as in client-go.
pub fn meta_namespace_key<K: Object + ?Sized>(object: &K) -> String {
    let (namespace, name) = (
        object.namespace().unwrap_or_default(),
        object.name().unwrap_or_default(),
    );
    let mut key = String::with_capacity(namespace.len() + 1 + name.len());
    push_meta_namespace_key(&mut key, namespace, name);
    key
}

/// Appends the key [`meta_namespace_key`] gives an object with this
/// namespace and name (built by hand: `format!` costs more than the copy).
pub(crate) fn push_meta_namespace_key(key: &mut String, namespace: &str, name: &str) {
    if !namespace.is_empty() {
        key.push_str(namespace);
        key.push('/');
    }
    key.push_str(name);
}

/// [`meta_namespace_key`] as a [`KeyFunc`].
pub fn meta_namespace_key_func<K: Object + 'static>() -> KeyFunc<K> {
    Arc::new(|object: &K| Ok(meta_namespace_key(object)))
}

/// Splits a key into namespace and name: `name` gives `("", name)`,
/// `namespace/name` gives both, and more than one `/` is an error.
pub fn split_meta_namespace_key(key: &str) -> Result<(&str, &str), StoreError> {
    let mut parts = key.split('/');
    let first = parts.next().unwrap_or_default();
    match (parts.next(), parts.next()) {
        (None, _) => Ok(("", first)),
        (Some(name), None) => Ok((first, name)),
        (Some(_), Some(_)) => Err(StoreError::InvalidKey {
            key: key.to_string(),
        }),
    }
}

/// An object's namespace and name (client-go's `ObjectName`). Display gives
/// the store key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectName {
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectName {
    /// A namespace and name.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectName {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The name of an object.
    pub fn of<K: Object + ?Sized>(object: &K) -> Self {
        ObjectName::new(
            object.namespace().unwrap_or_default(),
            object.name().unwrap_or_default(),
        )
    }

    /// Parses a store key.
    pub fn parse(key: &str) -> Result<Self, StoreError> {
        let (namespace, name) = split_meta_namespace_key(key)?;
        Ok(ObjectName::new(namespace, name))
    }

    /// The namespace and name as a pair.
    pub fn parts(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }
}

impl fmt::Display for ObjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

/// A deletion the informer did not see: a relist found the object gone
/// while the watch was down. `object` is the last state the cache knew,
/// which may be stale, and is absent when the cache no longer had it.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The store key of the deleted object.
    pub key: String,
    /// The last known state, if any.
    pub object: Option<Arc<K>>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        DeletedFinalStateUnknown {
            key: self.key.clone(),
            object: self.object.clone(),
        }
    }
}

impl<K> PartialEq for DeletedFinalStateUnknown<K> {
    /// Tombstones are equal when their keys are and they hold the same
    /// shared object (or both none).
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
            && match (&self.object, &other.object) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

/// What a delete carries: the object, or a tombstone for a deletion seen
/// only by its absence.
#[derive(Debug)]
pub enum ObjectOrTombstone<K> {
    /// The deleted object's last state.
    Object(Arc<K>),
    /// A deletion detected by a relist.
    Tombstone(DeletedFinalStateUnknown<K>),
}

impl<K> Clone for ObjectOrTombstone<K> {
    fn clone(&self) -> Self {
        match self {
            ObjectOrTombstone::Object(object) => ObjectOrTombstone::Object(Arc::clone(object)),
            ObjectOrTombstone::Tombstone(tombstone) => {
                ObjectOrTombstone::Tombstone(tombstone.clone())
            }
        }
    }
}

impl<K> PartialEq for ObjectOrTombstone<K> {
    /// Equal when both are the same shared object, or equal tombstones.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ObjectOrTombstone::Object(a), ObjectOrTombstone::Object(b)) => Arc::ptr_eq(a, b),
            (ObjectOrTombstone::Tombstone(a), ObjectOrTombstone::Tombstone(b)) => a == b,
            _ => false,
        }
    }
}

impl<K> From<Arc<K>> for ObjectOrTombstone<K> {
    fn from(object: Arc<K>) -> Self {
        ObjectOrTombstone::Object(object)
    }
}

impl<K> From<DeletedFinalStateUnknown<K>> for ObjectOrTombstone<K> {
    fn from(tombstone: DeletedFinalStateUnknown<K>) -> Self {
        ObjectOrTombstone::Tombstone(tombstone)
    }
}

impl<K> ObjectOrTombstone<K> {
    /// The object: the deleted one, or the tombstone's last known state.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            ObjectOrTombstone::Object(object) => Some(object),
            ObjectOrTombstone::Tombstone(tombstone) => tombstone.object.as_ref(),
        }
    }

    /// The same delete over another form of the object (a decoded one, a
    /// view): `f` maps the deleted object, or the tombstone's last known
    /// state. `None` when `f` gives nothing for a deleted object; a
    /// tombstone always keeps its key, with no state if `f` gives none.
    pub fn filter_map<T>(
        &self,
        mut f: impl FnMut(&Arc<K>) -> Option<Arc<T>>,
    ) -> Option<ObjectOrTombstone<T>> {
        Some(match self {
            ObjectOrTombstone::Object(object) => ObjectOrTombstone::Object(f(object)?),
            ObjectOrTombstone::Tombstone(tombstone) => {
                ObjectOrTombstone::Tombstone(DeletedFinalStateUnknown {
                    key: tombstone.key.clone(),
                    object: tombstone.object.as_ref().and_then(f),
                })
            }
        })
    }

    /// Whether this is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, ObjectOrTombstone::Tombstone(_))
    }

    /// The key: the tombstone's own, or the key function's for an object
    /// (client-go's `DeletionHandlingMetaNamespaceKeyFunc`).
    pub fn key(&self, key_func: &KeyFunc<K>) -> Result<String, StoreError> {
        match self {
            ObjectOrTombstone::Object(object) => key_func(object),
            ObjectOrTombstone::Tombstone(tombstone) => Ok(tombstone.key.clone()),
        }
    }
}

/// Describes an object for error messages: its `namespace/name`.
pub(crate) fn describe<K: Object + ?Sized>(object: &K) -> String {
    ObjectName::of(object).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Node, Pod};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(namespace: &str, name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn filter_map_maps_objects_and_keeps_tombstone_keys() {
        let name = |pod: &Arc<Pod>| Some(Arc::new(pod.metadata.name.clone().unwrap_or_default()));
        let object = ObjectOrTombstone::Object(Arc::new(pod("n", "a")));
        let mapped = object.filter_map(name).unwrap();
        assert_eq!(mapped.object().map(|name| name.as_str()), Some("a"));
        assert!(object.filter_map(|_| None::<Arc<String>>).is_none());
        let tombstone = ObjectOrTombstone::Tombstone(DeletedFinalStateUnknown {
            key: "n/b".into(),
            object: Some(Arc::new(pod("n", "b"))),
        });
        let mapped = tombstone.filter_map(|_| None::<Arc<String>>).unwrap();
        assert!(mapped.is_tombstone() && mapped.object().is_none());
        assert_eq!(
            tombstone
                .filter_map(name)
                .unwrap()
                .object()
                .unwrap()
                .as_str(),
            "b"
        );
    }

    #[test]
    fn keys_are_namespace_slash_name_or_name() {
        assert_eq!(meta_namespace_key(&pod("default", "web")), "default/web");
        assert_eq!(meta_namespace_key(&pod("", "web")), "web");
        let node = Node {
            metadata: ObjectMeta {
                name: Some("n1".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(meta_namespace_key(&node), "n1");
        assert_eq!(meta_namespace_key(&Pod::default()), "");
        let key_func = meta_namespace_key_func::<Pod>();
        assert_eq!(key_func(&pod("a", "b")).unwrap(), "a/b");
    }

    #[test]
    fn split_keys() {
        assert_eq!(split_meta_namespace_key("web").unwrap(), ("", "web"));
        assert_eq!(split_meta_namespace_key("ns/web").unwrap(), ("ns", "web"));
        assert_eq!(split_meta_namespace_key("").unwrap(), ("", ""));
        assert_eq!(
            split_meta_namespace_key("a/b/c"),
            Err(StoreError::InvalidKey {
                key: "a/b/c".into()
            })
        );
    }

    #[test]
    fn object_names() {
        let name = ObjectName::of(&pod("ns", "web"));
        assert_eq!(name.to_string(), "ns/web");
        assert_eq!(name.parts(), ("ns", "web"));
        assert_eq!(ObjectName::parse("ns/web").unwrap(), name);
        assert_eq!(ObjectName::new("", "n").to_string(), "n");
        assert!(ObjectName::parse("a/b/c").is_err());
    }

    #[test]
    fn tombstones_use_their_own_key() {
        let key_func = meta_namespace_key_func::<Pod>();
        let object = Arc::new(pod("ns", "web"));
        let live: ObjectOrTombstone<Pod> = Arc::clone(&object).into();
        assert_eq!(live.key(&key_func).unwrap(), "ns/web");
        assert!(!live.is_tombstone());
        let tombstone: ObjectOrTombstone<Pod> = DeletedFinalStateUnknown {
            key: "other/key".into(),
            object: Some(Arc::clone(&object)),
        }
        .into();
        assert_eq!(tombstone.key(&key_func).unwrap(), "other/key");
        assert!(tombstone.is_tombstone());
        assert!(Arc::ptr_eq(tombstone.object().unwrap(), &object));
        let empty: ObjectOrTombstone<Pod> = DeletedFinalStateUnknown {
            key: "gone".into(),
            object: None,
        }
        .into();
        assert!(empty.object().is_none());
    }
}
