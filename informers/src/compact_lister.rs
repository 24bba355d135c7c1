//! [`CompactLister`]: typed reads over an informer of explicit
//! [`Compact`] objects, decoding on demand through a cache of recent
//! decodes bounded in bytes (the same as the default storage's
//! [`Lister`] uses).

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::{ApiObject, Compact, CompactBody, Json, LabelSelector};

use crate::decode_cache::{DecodeCache, DecodeStats};
use crate::error::Error;
use crate::lister::Lister;

/// A lister of `K` over an informer of `Compact<K, B>` (any body): `get`
/// and `list` return `Arc<K>`, decoded on demand; `keys`, `contains` and
/// `list_metadata` never decode. For an informer of `K` in the default
/// storage, its own [`Lister`] does this; this type is for informers
/// declared over `Compact<K, B>`.
///
/// Decoded objects are kept up to `budget` estimated bytes, least
/// recently used out first, and checked against the cached entry's
/// resourceVersion on every read, so a reconcile that reads an object
/// twice decodes it once and never sees a stale decode. Clones share the
/// cache. **Locking:** one mutex over the decode cache, held for a lookup
/// and an insert, never while decoding.
pub struct CompactLister<K, B: CompactBody = Json> {
    lister: Lister<Compact<K, B>>,
    cache: Arc<DecodeCache<K, B>>,
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
        f.debug_struct("CompactLister").finish_non_exhaustive()
    }
}

impl<K, B> CompactLister<K, B>
where
    K: ApiObject,
    B: CompactBody,
{
    /// Reads through `lister`, keeping up to `budget` estimated bytes of
    /// decoded objects (0 keeps none; see
    /// [`DEFAULT_DECODE_CACHE_BYTES`](crate::DEFAULT_DECODE_CACHE_BYTES)).
    pub fn new(lister: Lister<Compact<K, B>>, budget: usize) -> Self {
        CompactLister {
            lister,
            cache: Arc::new(DecodeCache::new(budget, None)),
        }
    }

    /// The cluster-scoped object named `name`, decoded; `None` when none
    /// is cached or it does not decode (see [`Lister::get`]).
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.try_get(name).ok().flatten()
    }

    /// As [`get`](Self::get), with an entry that does not decode an error.
    pub fn try_get(&self, name: &str) -> Result<Option<Arc<K>>, Error> {
        self.decoded(self.lister.get(name))
    }

    /// The object `name` in `namespace`, decoded; `None` when none is
    /// cached or it does not decode.
    pub fn get_namespaced(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.try_get_namespaced(namespace, name).ok().flatten()
    }

    /// As [`get_namespaced`](Self::get_namespaced), with an entry that
    /// does not decode an error.
    pub fn try_get_namespaced(&self, namespace: &str, name: &str) -> Result<Option<Arc<K>>, Error> {
        self.decoded(self.lister.namespace(namespace).get(name))
    }

    /// `entry`, when there is one, decoded.
    fn decoded(&self, entry: Option<Arc<Compact<K, B>>>) -> Result<Option<Arc<K>>, Error> {
        entry.map(|entry| self.cache.for_lister(&entry)).transpose()
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
    /// [`decoded_indexers`](crate::compact::decoded_indexers) for functions
    /// over the whole object.
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
        self.lister.keys()
    }

    /// Whether an object is cached under `namespace/name` (or `name`).
    pub fn contains(&self, key: &str) -> bool {
        self.lister.contains(key)
    }

    /// The decode cache's counters.
    pub fn stats(&self) -> DecodeStats {
        self.cache.stats()
    }

    /// Each of `compacts` decoded, in order; the first failure is the
    /// error.
    fn decoded_all(&self, compacts: &[Arc<Compact<K, B>>]) -> Result<Vec<Arc<K>>, Error> {
        compacts
            .iter()
            .map(|compact| self.cache.for_lister(compact))
            .collect()
    }
}
