//! [`KeyedItems`]: the key → object map under a
//! [`ThreadSafeStore`](crate::ThreadSafeStore), which keeps no key string
//! for an object stored under its own `namespace/name`.
//!
//! Nearly every object a cache holds is stored under
//! [`meta_namespace_key`](crate::meta_namespace_key) of itself, which the
//! object already holds in its name and namespace. Such an item (here
//! *natural*) is kept as the object alone, hashed and compared through its
//! namespace and name read in place: no key is allocated for it, and the
//! table holds one pointer per item instead of a key string's two words and
//! the object's pointer. An object stored under any other key (a custom key
//! function, a name holding a `/`) keeps its key beside it, as before.
//!
//! A key hashes as the two halves it splits into at its first `/` (no `/`:
//! an empty namespace and the whole key), which for a natural item are its
//! namespace and name: so a lookup by key string and a rehash from the
//! object agree without building the string. A key beginning with `/` is
//! no object's own key and is always kept as given.

use std::hash::BuildHasher;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashMap, HashTable};

use crate::key::{meta_namespace_key, push_meta_namespace_key};

/// An item's key as the store's indexes know it.
#[derive(Debug)]
pub(crate) enum Identity<K> {
    /// Stored under its own `namespace/name`: found through the object.
    Natural {
        /// The hash of its namespace and name ([`KeyHasher::hash`]).
        hash: u64,
        /// The object stored.
        object: Arc<K>,
    },
    /// Stored under another key, kept here (shared with the map).
    Keyed(Arc<str>),
}

impl<K> Identity<K> {
    /// Whether both name the same key the same way.
    pub(crate) fn same_key(&self, other: &Identity<K>) -> bool
    where
        K: Object,
    {
        match (self, other) {
            (
                Identity::Natural { hash, object },
                Identity::Natural {
                    hash: other_hash,
                    object: other_object,
                },
            ) => hash == other_hash && parts(&**object) == parts(&**other_object),
            (Identity::Keyed(key), Identity::Keyed(other_key)) => key == other_key,
            _ => false,
        }
    }

    /// The key, built for a natural item.
    pub(crate) fn key(&self) -> String
    where
        K: Object,
    {
        match self {
            Identity::Natural { object, .. } => meta_namespace_key(&**object),
            Identity::Keyed(key) => key.to_string(),
        }
    }
}

/// The hasher every table of one store shares, so a hash computed once
/// per write serves the items and every index.
#[derive(Clone, Default)]
pub(crate) struct KeyHasher(DefaultHashBuilder);

impl KeyHasher {
    /// The hash of a key split into namespace and name.
    pub(crate) fn hash(&self, (namespace, name): (&str, &str)) -> u64 {
        self.0.hash_one((namespace, name))
    }

    /// The hash of a natural item.
    pub(crate) fn of<K: Object>(&self, object: &K) -> u64 {
        self.hash(parts(object))
    }
}

/// An object's namespace and name, empty when unset.
pub(crate) fn parts<K: Object + ?Sized>(object: &K) -> (&str, &str) {
    (
        object.namespace().unwrap_or_default(),
        object.name().unwrap_or_default(),
    )
}

/// A key split at its first `/` (no `/`: the empty namespace and the
/// key); `None` for a key that begins with `/`, which no object's own key
/// does (`/x` would otherwise split as `x` does).
pub(crate) fn split(key: &str) -> Option<(&str, &str)> {
    match key.split_once('/') {
        Some(("", _)) => None,
        Some(halves) => Some(halves),
        None => Some(("", key)),
    }
}

/// An object's namespace and name when its own key (`namespace/name`)
/// splits back into them, so it can be kept as a natural item without
/// building the key.
fn own_parts<K: Object + ?Sized>(object: &K) -> Option<(&str, &str)> {
    let (namespace, name) = parts(object);
    let splits_back = if namespace.is_empty() {
        !name.contains('/')
    } else {
        !namespace.contains('/')
    };
    splits_back.then_some((namespace, name))
}

/// Whether `object` stored under `key` is a natural item: the key splits
/// into exactly its namespace and name (so building the key back from the
/// object gives `key`).
fn is_natural<K: Object + ?Sized>(object: &K, key: &str) -> bool {
    split(key) == Some(parts(object))
}

/// A natural item found with its hash, as the indexes know it.
fn natural<K>((hash, object): (u64, &Arc<K>)) -> (Identity<K>, &Arc<K>) {
    let identity = Identity::Natural {
        hash,
        object: Arc::clone(object),
    };
    (identity, object)
}

/// Objects by key; see the module documentation.
///
/// At most one object per key, across both kinds of item.
pub(crate) struct KeyedItems<K> {
    natural: HashTable<Arc<K>>,
    keyed: HashMap<Arc<str>, Arc<K>>,
    hasher: KeyHasher,
}

impl<K> KeyedItems<K> {
    /// How many objects.
    pub(crate) fn len(&self) -> usize {
        self.natural.len() + self.keyed.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Object> KeyedItems<K> {
    /// An empty map hashing with `hasher`, with room for `capacity`
    /// natural items.
    pub(crate) fn with_capacity(capacity: usize, hasher: KeyHasher) -> Self {
        KeyedItems {
            natural: HashTable::with_capacity(capacity),
            keyed: HashMap::new(),
            hasher,
        }
    }

    /// The hasher, for indexes that must agree with it.
    pub(crate) fn hasher(&self) -> &KeyHasher {
        &self.hasher
    }

    /// The object under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Arc<K>> {
        split(key)
            .and_then(|split| self.find_natural(split))
            .map(|(_, object)| object)
            .or_else(|| self.keyed.get(key))
    }

    /// The object under `key` and how the indexes know it.
    pub(crate) fn get_identified(&self, key: &str) -> Option<(Identity<K>, &Arc<K>)> {
        if let Some(found) = split(key).and_then(|split| self.find_natural(split)) {
            return Some(natural(found));
        }
        self.keyed
            .get_key_value(key)
            .map(|(key, object)| (Identity::Keyed(Arc::clone(key)), object))
    }

    /// Stores `object` under `key`, replacing what was there; returns how
    /// the indexes know the new item.
    pub(crate) fn insert(&mut self, key: &str, object: Arc<K>) -> Identity<K> {
        if is_natural(&*object, key) {
            if !self.keyed.is_empty() {
                self.keyed.remove(key);
            }
            return self.insert_natural(object);
        }
        // A natural item whose own key this is goes.
        if let Some(split) = split(key) {
            self.remove_natural(split);
        }
        let shared = match self.keyed.get_key_value(key) {
            Some((existing, _)) => Arc::clone(existing),
            None => Arc::from(key),
        };
        self.keyed.insert(Arc::clone(&shared), object);
        Identity::Keyed(shared)
    }

    /// Stores `object` under its own key ([`meta_namespace_key`]). The key
    /// string is built only when the object cannot be kept as a natural
    /// item, or when keyed items exist (one of them may hold that key).
    ///
    /// [`meta_namespace_key`]: crate::meta_namespace_key
    pub(crate) fn insert_own(&mut self, object: Arc<K>) -> Identity<K> {
        if own_parts(&*object).is_none() {
            let key = meta_namespace_key(&*object);
            return self.insert(&key, object);
        }
        if !self.keyed.is_empty() {
            self.keyed.remove(meta_namespace_key(&*object).as_str());
        }
        self.insert_natural(object)
    }

    /// Stores a natural item (its key splits into its namespace and name),
    /// where no keyed item has its key.
    fn insert_natural(&mut self, object: Arc<K>) -> Identity<K> {
        let hash = self.hasher.of(&*object);
        let identity = Identity::Natural {
            hash,
            object: Arc::clone(&object),
        };
        let key = parts(&*object);
        let hasher = &self.hasher;
        match self.natural.entry(
            hash,
            |stored| parts(&**stored) == key,
            |stored| hasher.of(&**stored),
        ) {
            Entry::Occupied(mut occupied) => *occupied.get_mut() = object,
            Entry::Vacant(vacant) => {
                vacant.insert(object);
            }
        }
        identity
    }

    /// The object under `object`'s own key and how the indexes know it.
    pub(crate) fn get_own(&self, object: &K) -> Option<(Identity<K>, &Arc<K>)> {
        match own_parts(object) {
            Some(key) if self.keyed.is_empty() => self.find_natural(key).map(natural),
            _ => self.get_identified(&meta_namespace_key(object)),
        }
    }

    /// The natural item named `key` (namespace and name), with its hash.
    fn find_natural(&self, key: (&str, &str)) -> Option<(u64, &Arc<K>)> {
        let hash = self.hasher.hash(key);
        self.natural
            .find(hash, |stored| parts(&**stored) == key)
            .map(|object| (hash, object))
    }

    /// Removes the natural item named `key` (namespace and name).
    fn remove_natural(&mut self, key: (&str, &str)) -> Option<(Identity<K>, Arc<K>)> {
        let hash = self.hasher.hash(key);
        let occupied = self
            .natural
            .find_entry(hash, |stored| parts(&**stored) == key)
            .ok()?;
        let (object, _) = occupied.remove();
        let identity = Identity::Natural {
            hash,
            object: Arc::clone(&object),
        };
        Some((identity, object))
    }

    /// Removes the object under `object`'s own key.
    pub(crate) fn remove_own(&mut self, object: &K) -> Option<(Identity<K>, Arc<K>)> {
        match own_parts(object) {
            Some(key) if self.keyed.is_empty() => self.remove_natural(key),
            _ => self.remove(&meta_namespace_key(object)),
        }
    }

    /// Removes the object under `key`, returning it and how the indexes
    /// knew it.
    pub(crate) fn remove(&mut self, key: &str) -> Option<(Identity<K>, Arc<K>)> {
        if let Some(removed) = split(key).and_then(|split| self.remove_natural(split)) {
            return Some(removed);
        }
        self.keyed
            .remove_entry(key)
            .map(|(key, object)| (Identity::Keyed(key), object))
    }

    /// Every object.
    pub(crate) fn objects(&self) -> impl Iterator<Item = &Arc<K>> {
        self.natural.iter().chain(self.keyed.values())
    }

    /// Every object, taking the map apart.
    pub(crate) fn into_objects(self) -> Vec<Arc<K>> {
        let mut objects = Vec::with_capacity(self.len());
        objects.extend(self.natural);
        objects.extend(self.keyed.into_values());
        objects
    }

    /// Every object with how the indexes know it.
    pub(crate) fn identified(&self) -> impl Iterator<Item = (Identity<K>, &Arc<K>)> {
        let natural = self
            .natural
            .iter()
            .map(|object| natural((self.hasher.of(&**object), object)));
        let keyed = self
            .keyed
            .iter()
            .map(|(key, object)| (Identity::Keyed(Arc::clone(key)), object));
        natural.chain(keyed)
    }

    /// Runs `read` on every key and object; a natural item's key is built
    /// in one reused buffer (see [`objects`](Self::objects) for a reader
    /// that needs none).
    pub(crate) fn for_each(&self, mut read: impl FnMut(&str, &Arc<K>)) {
        let mut key = String::new();
        for object in &self.natural {
            key.clear();
            let (namespace, name) = parts(&**object);
            push_meta_namespace_key(&mut key, namespace, name);
            read(&key, object);
        }
        for (key, object) in &self.keyed {
            read(key, object);
        }
    }

    /// The object of a keyed item (for an index's keyed members).
    pub(crate) fn keyed(&self, key: &str) -> Option<&Arc<K>> {
        self.keyed.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::labelled_pod as pod;
    use k8s_openapi::api::core::v1::Pod;

    fn items() -> KeyedItems<Pod> {
        KeyedItems::with_capacity(0, KeyHasher::default())
    }

    #[test]
    fn split_and_natural_keys() {
        // (namespace, name, key, natural)
        let cases = [
            ("ns", "a", "ns/a", true),
            ("", "a", "a", true),
            ("ns", "a/b", "ns/a/b", true),
            ("", "a/b", "a/b", false),
            ("x/y", "z", "x/y/z", false),
            ("ns", "", "ns/", true),
            ("ns", "a", "other", false),
            ("", "", "", true),
            // A key beginning with a slash is no object's own key.
            ("", "x", "/x", false),
            ("", "/x", "/x", false),
        ];
        for (namespace, name, key, natural) in cases {
            let object = pod(namespace, name, "1", &[]);
            assert_eq!(
                is_natural(&*object, key),
                natural,
                "{namespace:?} {name:?} {key:?}"
            );
            if natural {
                assert_eq!(meta_namespace_key(&*object), key);
            }
        }
        assert_eq!(split("a/b/c"), Some(("a", "b/c")));
        assert_eq!(split("abc"), Some(("", "abc")));
        assert_eq!(split("/abc"), None);
        assert_eq!(split("/"), None);
    }

    #[test]
    fn natural_items_keep_no_key_and_others_do() {
        let mut items = items();
        assert!(matches!(
            items.insert("ns/a", pod("ns", "a", "1", &[])),
            Identity::Natural { .. }
        ));
        assert!(matches!(
            items.insert("custom", pod("ns", "b", "1", &[])),
            Identity::Keyed(_)
        ));
        assert_eq!(items.natural.len(), 1);
        assert_eq!(items.keyed.len(), 1);
        assert_eq!(items.len(), 2);
        assert_eq!(
            items.get("ns/a").unwrap().metadata.name.as_deref(),
            Some("a")
        );
        assert_eq!(
            items.get("custom").unwrap().metadata.name.as_deref(),
            Some("b")
        );
        assert!(
            items.get("ns/b").is_none(),
            "stored under its custom key only"
        );
        let mut keys = Vec::new();
        items.for_each(|key, _| keys.push(key.to_string()));
        keys.sort();
        assert_eq!(keys, ["custom", "ns/a"]);
    }

    #[test]
    fn one_object_per_key_whichever_kind_holds_it() {
        let mut items = items();
        // A natural item, then an object under the same key that is not
        // its own name (cluster-scoped, named with a slash).
        // And back.
        for (object, version) in [
            (pod("x", "y", "1", &[]), "1"),
            (pod("", "x/y", "2", &[]), "2"),
            (pod("x", "y", "3", &[]), "3"),
        ] {
            items.insert("x/y", object);
            assert_eq!(items.len(), 1);
            let stored = items.get("x/y").unwrap();
            assert_eq!(stored.metadata.resource_version.as_deref(), Some(version));
        }
        let (identity, object) = items.remove("x/y").unwrap();
        assert!(matches!(identity, Identity::Natural { .. }));
        assert_eq!(object.metadata.resource_version.as_deref(), Some("3"));
        assert!(items.remove("x/y").is_none());
        assert_eq!(items.len(), 0);
    }

    #[test]
    fn own_keys_are_the_meta_namespace_keys() {
        let mut items = items();
        // Kept natural, and found by key string and by object alike.
        assert!(matches!(
            items.insert_own(pod("ns", "a/b", "1", &[])),
            Identity::Natural { .. }
        ));
        assert!(items.get("ns/a/b").is_some());
        // A cluster-scoped name with a slash cannot be: kept under its key.
        assert!(matches!(
            items.insert_own(pod("", "c/d", "1", &[])),
            Identity::Keyed(_)
        ));
        assert!(items.get("c/d").is_some());
        assert!(items.get_own(&pod("", "c/d", "0", &[])).is_some());
        // Once a keyed item exists, an own key replaces a keyed item of
        // the same key string.
        items.insert("ns/x", pod("", "ns/x", "1", &[]));
        items.insert_own(pod("ns", "x", "2", &[]));
        assert_eq!(items.len(), 3);
        assert_eq!(
            items
                .get("ns/x")
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("2")
        );
        assert!(items.remove_own(&pod("ns", "x", "0", &[])).is_some());
        assert!(items.remove_own(&pod("", "c/d", "0", &[])).is_some());
        assert!(items.remove_own(&pod("ns", "a/b", "0", &[])).is_some());
        assert!(items.is_empty());
        for (namespace, name, splits_back) in [
            ("a", "b", true),
            ("", "b", true),
            ("a", "b/c", true),
            ("", "b/c", false),
            ("a/b", "c", false),
        ] {
            assert_eq!(
                own_parts(&*pod(namespace, name, "1", &[])).is_some(),
                splits_back,
                "{namespace:?} {name:?}"
            );
        }
    }

    #[test]
    fn a_key_beginning_with_a_slash_is_its_own_key() {
        let mut items = items();
        items.insert("/x", pod("", "x", "1", &[]));
        items.insert("x", pod("", "x", "2", &[]));
        assert_eq!(items.len(), 2, "two keys, two objects");
        assert_eq!(
            items
                .get("/x")
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("1")
        );
        assert_eq!(
            items.get("x").unwrap().metadata.resource_version.as_deref(),
            Some("2")
        );
        let mut keys = Vec::new();
        items.for_each(|key, _| keys.push(key.to_string()));
        keys.sort();
        assert_eq!(keys, ["/x", "x"]);
        // Named with a leading slash, cluster-scoped: its own key is kept.
        items.insert_own(pod("", "/y", "3", &[]));
        assert!(items.get("/y").is_some());
        assert!(items.remove("/x").is_some());
        assert_eq!(
            items.get("x").unwrap().metadata.resource_version.as_deref(),
            Some("2")
        );
    }

    #[test]
    fn many_items_survive_growth() {
        let mut items = items();
        for n in 0..2_000 {
            let namespace = format!("ns{}", n % 7);
            let name = format!("pod-{n}");
            items.insert(
                &format!("{namespace}/{name}"),
                pod(&namespace, &name, "1", &[]),
            );
        }
        assert_eq!(items.len(), 2_000);
        for n in 0..2_000 {
            let key = format!("ns{}/pod-{n}", n % 7);
            assert!(items.get(&key).is_some(), "{key}");
        }
        for (identity, object) in items.identified() {
            assert_eq!(identity.key(), meta_namespace_key(&**object));
        }
    }
}
