//! The store traits: what a reflector writes to ([`ReflectorStore`]), what a
//! cache offers readers ([`Store`]), and what a queue needs to know about
//! the objects already cached ([`KnownObjects`]).

use std::sync::Arc;

use clientgo_apimachinery::Object;

use crate::error::StoreError;
use crate::key::{DeletedFinalStateUnknown, KeyFunc, ObjectOrTombstone};

/// A function applied to objects before they are stored or queued, for
/// example to drop `managedFields`. A store applies it once per object, in
/// [`ReflectorStore::prepare`], as the object arrives.
///
/// It receives the only reference to a freshly decoded object in the
/// common case, so `Arc::get_mut` or `Arc::make_mut` changes it without
/// copying.
pub type TransformFunc<K> = Arc<dyn Fn(Arc<K>) -> Result<Arc<K>, StoreError> + Send + Sync>;

/// How an object reached the reflector, which says whether the cache may
/// already hold it unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// In a list, a watch-list's initial events or a saved state: the
    /// cache may hold the same version already (a relist of unchanged
    /// objects).
    Listed,
    /// A watch event: a change, never a version the cache holds, so
    /// nothing is looked up for it.
    Changed,
}

/// How the stores prepare an object ([`ReflectorStore::prepare`]): for a
/// listed one, the `Arc` `cache` holds when it has the same version (same
/// key, UID and resourceVersion: it was prepared when it arrived, so it is
/// not transformed again, and the decoded duplicate is dropped at once);
/// else the object, transformed.
pub(crate) fn prepare_object<K: Object>(
    object: Arc<K>,
    arrival: Arrival,
    cache: Option<(&dyn KnownObjects<K>, &KeyFunc<K>)>,
    transform: Option<&TransformFunc<K>>,
) -> Result<Arc<K>, StoreError> {
    if arrival == Arrival::Listed
        && let Some((cache, key_func)) = cache
        && let Some(resource_version) = object.resource_version().filter(|rv| !rv.is_empty())
        && let Some(cached) = cache.get_for(&object, key_func)
        && cached.resource_version() == Some(resource_version)
        && cached.uid() == object.uid()
    {
        return Ok(cached);
    }
    match transform {
        Some(transform) => transform(object),
        None => Ok(object),
    }
}

/// What a reflector writes to: a store or a queue (client-go's
/// `ReflectorStore` plus the optional `ReflectorBookmarkStore`).
///
/// Implementations are shared between the reflector's task and readers, so
/// every method takes `&self` and does its own locking, and none awaits.
/// A call does its own work in time proportional to what it is given (a
/// replace to the list's length), but it may **wait for a lock**: a queue
/// whose consumer processes under the queue's lock ([`DeltaFifo`]
/// always, [`RealFifo`] when more than two batches are queued or without
/// `unlock_while_processing`) holds every producer call until the
/// consumer's callback returns. Call these methods where a short block is
/// acceptable (a reflector's task does), not from latency-critical code.
///
/// [`DeltaFifo`]: crate::DeltaFifo
/// [`RealFifo`]: crate::RealFifo
pub trait ReflectorStore<K>: Send + Sync {
    /// Makes an object the reflector received ready to be held, once, as
    /// it arrives: before it waits in a list's pages or a watch-list's
    /// gathered state, and before it is handed to
    /// [`add`](Self::add), [`update`](Self::update),
    /// [`delete`](Self::delete) or [`replace`](Self::replace), which take
    /// prepared objects and prepare nothing again. A store with a
    /// transform applies it here, and one that can see its cache reuses
    /// the cached `Arc` of an unchanged [listed](Arrival::Listed) object
    /// (so a relist of unchanged objects holds no second copy). Code that feeds a store itself calls
    /// this first too. The default wraps the object; a store that wraps
    /// another forwards it, or the inner store's transform never runs.
    ///
    /// A freshly decoded object comes as the only reference to it, so a
    /// transform changes it in place; a shared one (a saved state's, on a
    /// warm restart) is the transform's to copy if it must change it.
    fn prepare(&self, object: Arc<K>, arrival: Arrival) -> Result<Arc<K>, StoreError> {
        let _ = arrival;
        Ok(object)
    }

    /// An object was created.
    fn add(&self, object: Arc<K>) -> Result<(), StoreError>;

    /// An object changed.
    fn update(&self, object: Arc<K>) -> Result<(), StoreError>;

    /// An object was deleted. A tombstone is keyed by its own key.
    fn delete(&self, object: ObjectOrTombstone<K>) -> Result<(), StoreError>;

    /// The complete current state, as of `resource_version`, replaces
    /// whatever was there.
    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError>;

    /// Two replaces in a row, `earlier` (objects and resourceVersion)
    /// first: a warm restart's refused saved state, then the state listed
    /// instead, so that consumers hear of what changed in between. A queue
    /// counts both as its initial population, so it reports synced only
    /// after the second. The default calls [`replace`](Self::replace)
    /// twice.
    fn replace_after(
        &self,
        earlier: (Vec<Arc<K>>, &str),
        objects: Vec<Arc<K>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        self.replace(earlier.0, earlier.1)?;
        self.replace(objects, resource_version)
    }

    /// Periodic redelivery: queues re-send what they know (a no-op for
    /// plain stores).
    fn resync(&self) -> Result<(), StoreError>;

    /// The watch reached `resource_version` with no object changes. The
    /// default does nothing.
    fn bookmark(&self, resource_version: &str) -> Result<(), StoreError> {
        let _ = resource_version;
        Ok(())
    }
}

/// A readable cache of objects (client-go's `Store`).
///
/// Read methods return shared `Arc<K>`s: the objects are owned by the store
/// and must be treated as read-only (clone before changing).
pub trait Store<K>: ReflectorStore<K> {
    /// Every object, in no particular order.
    fn list(&self) -> Vec<Arc<K>>;

    /// Every key, in no particular order.
    fn list_keys(&self) -> Vec<String>;

    /// The stored object with the same key as `object`.
    fn get(&self, object: &K) -> Result<Option<Arc<K>>, StoreError>;

    /// The object stored under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;

    /// The resourceVersion the store was last brought to by an add,
    /// update, delete, replace or bookmark; empty before any.
    fn last_store_sync_resource_version(&self) -> String;
}

/// What a queue needs from the cache behind it to detect deletions on
/// replace and to resync (client-go's `KeyListerGetter`).
pub trait KnownObjects<K>: Send + Sync {
    /// Every key in the cache.
    fn list_keys(&self) -> Vec<String>;

    /// The object cached under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;

    /// The object cached under `object`'s key, as `key_func` gives it
    /// (`None` when it gives none). `key_func` must key this cache as it
    /// keys itself (client-go asks the same of a queue and its known
    /// objects): a cache keyed by objects' own names finds the object by
    /// its name without calling it.
    fn get_for(&self, object: &K, key_func: &KeyFunc<K>) -> Option<Arc<K>> {
        key_func(object).ok().and_then(|key| self.get_by_key(&key))
    }
}

/// Tombstones for the keys `known` holds but a replace neither lists nor
/// has queued (`accounted_for`), ordered by key: deletions missed while
/// the watch was down, as client-go's queues detect them. A key that
/// vanishes from `known` meanwhile gets a tombstone without an object.
pub(crate) fn missed_deletions<K>(
    known: &dyn KnownObjects<K>,
    accounted_for: impl Fn(&str) -> bool,
) -> Vec<DeletedFinalStateUnknown<K>> {
    let mut keys = known.list_keys();
    keys.sort_unstable();
    keys.into_iter()
        .filter(|key| !accounted_for(key))
        .map(|key| {
            let object = known.get_by_key(&key);
            if object.is_none() {
                tracing::warn!(
                    key,
                    "known object vanished during replace; its tombstone has no object"
                );
            }
            DeletedFinalStateUnknown { key, object }
        })
        .collect()
}
