//! [`CompactLister`]: typed reads over an informer of [`Compact`] objects,
//! decoding on demand through a bounded cache of recent decodes.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::{Compact, CompactBody, Json, LabelSelector, Object};
use clientgo_store::meta_namespace_key;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::lister::Lister;

/// Recently decoded objects kept by default.
pub const DEFAULT_DECODED_CAPACITY: usize = 1024;

/// Counters of a [`CompactLister`]'s decode cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodedCacheStats {
    /// Reads answered from the cache (no decode).
    pub hits: u64,
    /// Reads that decoded.
    pub misses: u64,
    /// Objects held decoded now.
    pub held: usize,
}

struct DecodedEntry<K> {
    resource_version: Option<String>,
    object: Arc<K>,
    used: u64,
}

struct DecodedCache<K> {
    capacity: usize,
    entries: HashMap<String, DecodedEntry<K>>,
    clock: u64,
    hits: u64,
    misses: u64,
}

/// A lister of `K` over an informer of `Compact<K, B>` (any body): `get` and `list`
/// return `Arc<K>`, decoded on demand; `keys`, `contains` and
/// `list_metadata` never decode.
///
/// Decoded objects are kept in a cache of `capacity` entries, least
/// recently used out first, and checked against the cached entry's
/// resourceVersion on every read, so a reconcile that reads an object
/// twice decodes it once and never sees a stale decode. Clones share the
/// cache. **Locking:** one mutex over the decode cache, held for a lookup
/// and an insert, never while decoding.
pub struct CompactLister<K, B: CompactBody = Json> {
    lister: Lister<Compact<K, B>>,
    cache: Arc<Mutex<DecodedCache<K>>>,
}

impl<K, B: CompactBody> Clone for CompactLister<K, B> {
    fn clone(&self) -> Self {
        CompactLister {
            lister: self.lister.clone(),
            cache: Arc::clone(&self.cache),
        }
    }
}

impl<K, B: CompactBody> fmt::Debug for CompactLister<K, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cache = self.cache.lock();
        f.debug_struct("CompactLister")
            .field("capacity", &cache.capacity)
            .field("held", &cache.entries.len())
            .finish_non_exhaustive()
    }
}

impl<K, B> CompactLister<K, B>
where
    K: DeserializeOwned + Object + Send + Sync + 'static,
    B: CompactBody,
{
    /// Reads through `lister`, keeping up to `capacity` decoded objects
    /// (0 keeps none).
    pub fn new(lister: Lister<Compact<K, B>>, capacity: usize) -> Self {
        CompactLister {
            lister,
            cache: Arc::new(Mutex::new(DecodedCache {
                capacity,
                entries: HashMap::new(),
                clock: 0,
                hits: 0,
                misses: 0,
            })),
        }
    }

    /// The cluster-scoped object named `name`, decoded.
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        let compact = self.lister.get(name)?;
        self.decoded(name.to_string(), &compact)
    }

    /// The object `name` in `namespace`, decoded.
    pub fn get_namespaced(&self, namespace: &str, name: &str) -> Result<Arc<K>, Error> {
        let compact = self.lister.namespace(namespace).get(name)?;
        self.decoded(format!("{namespace}/{name}"), &compact)
    }

    /// Every cached object matching `selector`, decoded (the first object
    /// that does not decode is the error).
    pub fn list(&self, selector: &LabelSelector) -> Result<Vec<Arc<K>>, Error> {
        self.decoded_all(&self.lister.list(selector))
    }

    /// Every cached object of `namespace` matching `selector`, decoded
    /// (through the namespace index).
    pub fn list_namespaced(
        &self,
        namespace: &str,
        selector: &LabelSelector,
    ) -> Result<Vec<Arc<K>>, Error> {
        self.decoded_all(&self.lister.namespace(namespace).list(selector))
    }

    /// The objects `index_name` files under `value`, decoded (an unknown
    /// index, or the first object that does not decode, is the error).
    /// Index functions over metadata find them without decoding; see
    /// [`decoded_indexers`](crate::decoded_indexers) for functions over
    /// the whole object.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.decoded_all(&self.lister.by_index(index_name, value)?)
    }

    /// The compact objects matching `selector`: keys and metadata, no
    /// decode.
    pub fn list_metadata(&self, selector: &LabelSelector) -> Vec<Arc<Compact<K, B>>> {
        self.lister.list(selector)
    }

    /// Every cached key (`namespace/name`), no decode.
    pub fn keys(&self) -> Vec<String> {
        self.lister
            .list(&LabelSelector::everything())
            .iter()
            .map(|compact| meta_namespace_key(&**compact))
            .collect()
    }

    /// Whether an object is cached under `namespace/name` (or `name`).
    pub fn contains(&self, key: &str) -> bool {
        match key.split_once('/') {
            Some((namespace, name)) => self.lister.namespace(namespace).get(name).is_ok(),
            None => self.lister.get(key).is_ok(),
        }
    }

    /// The decode cache's counters.
    pub fn stats(&self) -> DecodedCacheStats {
        let cache = self.cache.lock();
        DecodedCacheStats {
            hits: cache.hits,
            misses: cache.misses,
            held: cache.entries.len(),
        }
    }

    /// Each of `compacts` decoded, in order; the first failure is the
    /// error.
    fn decoded_all(&self, compacts: &[Arc<Compact<K, B>>]) -> Result<Vec<Arc<K>>, Error> {
        compacts
            .iter()
            .map(|compact| self.decoded(meta_namespace_key(&**compact), compact))
            .collect()
    }

    fn decoded(&self, key: String, compact: &Compact<K, B>) -> Result<Arc<K>, Error> {
        {
            let mut cache = self.cache.lock();
            cache.clock += 1;
            let now = cache.clock;
            if let Some(entry) = cache.entries.get_mut(&key)
                && entry.resource_version.as_deref() == compact.resource_version()
            {
                entry.used = now;
                let object = Arc::clone(&entry.object);
                cache.hits += 1;
                return Ok(object);
            }
            cache.misses += 1;
        }
        let object = compact.decode()?;
        let mut cache = self.cache.lock();
        if cache.capacity == 0 {
            return Ok(object);
        }
        if cache.entries.len() >= cache.capacity && !cache.entries.contains_key(&key) {
            // Least recently used out: a scan, paid only on a miss when
            // full.
            if let Some(oldest) = cache
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(key, _)| key.clone())
            {
                cache.entries.remove(&oldest);
            }
        }
        let used = cache.clock;
        cache.entries.insert(
            key,
            DecodedEntry {
                resource_version: compact.resource_version().map(str::to_string),
                object: Arc::clone(&object),
                used,
            },
        );
        Ok(object)
    }
}
