//! The store traits: what a reflector writes to ([`ReflectorStore`]), what a
//! cache offers readers ([`Store`]), and what a queue needs to know about
//! the objects already cached ([`KnownObjects`]).

use std::sync::Arc;

use crate::error::StoreError;
use crate::key::{DeletedFinalStateUnknown, ObjectOrTombstone};

/// A function applied to objects before they are stored or queued, for
/// example to drop `managedFields`. It must be idempotent: on the watch-list
/// path an object can pass through it twice.
///
/// It receives the only reference to a freshly decoded object in the
/// common case, so `Arc::get_mut` or `Arc::make_mut` changes it without
/// copying.
pub type TransformFunc<K> = Arc<dyn Fn(Arc<K>) -> Result<Arc<K>, StoreError> + Send + Sync>;

/// Applies an optional transform to an object about to be stored or
/// queued.
pub(crate) fn apply_transform<K>(
    transform: Option<&TransformFunc<K>>,
    object: Arc<K>,
) -> Result<Arc<K>, StoreError> {
    match transform {
        Some(transform) => transform(object),
        None => Ok(object),
    }
}

/// Applies an optional transform to what a delete carries. A tombstone is
/// left alone: its object came from the cache, already transformed.
pub(crate) fn apply_transform_to_deleted<K>(
    transform: Option<&TransformFunc<K>>,
    target: ObjectOrTombstone<K>,
) -> Result<ObjectOrTombstone<K>, StoreError> {
    match target {
        ObjectOrTombstone::Object(object) => Ok(ObjectOrTombstone::Object(apply_transform(
            transform, object,
        )?)),
        tombstone => Ok(tombstone),
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
    /// An object was created.
    fn add(&self, object: Arc<K>) -> Result<(), StoreError>;

    /// An object changed.
    fn update(&self, object: Arc<K>) -> Result<(), StoreError>;

    /// An object was deleted. A tombstone is keyed by its own key.
    fn delete(&self, object: ObjectOrTombstone<K>) -> Result<(), StoreError>;

    /// The complete current state, as of `resource_version`, replaces
    /// whatever was there.
    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError>;

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
}

/// Tombstones for the keys `known` holds but a replace neither lists nor
/// has queued (`accounted_for`), ordered by key: deletions missed while
/// the watch was down, as client-go's queues detect them. A key that
/// vanishes from `known` meanwhile gets a tombstone without an object.
pub(crate) fn vanished_known<K>(
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
