//! [`Delta`]: one change a queue hands to its consumer.

use std::fmt;
use std::sync::Arc;

use crate::key::ObjectOrTombstone;

/// The kind of a [`Delta`], for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// An object was added.
    Added,
    /// An object was updated.
    Updated,
    /// An object was deleted (possibly seen only as a tombstone).
    Deleted,
    /// An object is part of a relist (non-atomic replace).
    Replaced,
    /// An object is redelivered by a resync.
    Sync,
    /// A whole relist, applied at once (atomic replace).
    ReplacedAll,
    /// A whole-store resync (atomic mode).
    SyncAll,
    /// The watch reached a resourceVersion.
    Bookmark,
}

impl fmt::Display for DeltaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One change, as queued by a FIFO and popped by its consumer.
///
/// Only [`Deleted`](Delta::Deleted) can carry a tombstone: every other delta
/// holds a live object, or (for the atomic kinds) no single object at all.
#[derive(Debug)]
pub enum Delta<K> {
    /// The object was added.
    Added(Arc<K>),
    /// The object was updated.
    Updated(Arc<K>),
    /// The object was deleted; a tombstone when the deletion was inferred
    /// from a relist.
    Deleted(ObjectOrTombstone<K>),
    /// The object is in the list of a relist.
    Replaced(Arc<K>),
    /// The object is redelivered by a resync.
    Sync(Arc<K>),
    /// A relist to apply atomically: these objects, and only these, exist
    /// as of `resource_version`.
    ReplacedAll {
        /// The list's resourceVersion.
        resource_version: String,
        /// Every object of the list (already transformed).
        objects: Vec<Arc<K>>,
    },
    /// Redeliver every cached object.
    SyncAll,
    /// The watch reached `resource_version`.
    Bookmark {
        /// The bookmark's resourceVersion.
        resource_version: String,
    },
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        match self {
            Delta::Added(o) => Delta::Added(Arc::clone(o)),
            Delta::Updated(o) => Delta::Updated(Arc::clone(o)),
            Delta::Deleted(o) => Delta::Deleted(o.clone()),
            Delta::Replaced(o) => Delta::Replaced(Arc::clone(o)),
            Delta::Sync(o) => Delta::Sync(Arc::clone(o)),
            Delta::ReplacedAll {
                resource_version,
                objects,
            } => Delta::ReplacedAll {
                resource_version: resource_version.clone(),
                objects: objects.clone(),
            },
            Delta::SyncAll => Delta::SyncAll,
            Delta::Bookmark { resource_version } => Delta::Bookmark {
                resource_version: resource_version.clone(),
            },
        }
    }
}

impl<K> Delta<K> {
    /// The delta's kind.
    pub fn delta_type(&self) -> DeltaType {
        match self {
            Delta::Added(_) => DeltaType::Added,
            Delta::Updated(_) => DeltaType::Updated,
            Delta::Deleted(_) => DeltaType::Deleted,
            Delta::Replaced(_) => DeltaType::Replaced,
            Delta::Sync(_) => DeltaType::Sync,
            Delta::ReplacedAll { .. } => DeltaType::ReplacedAll,
            Delta::SyncAll => DeltaType::SyncAll,
            Delta::Bookmark { .. } => DeltaType::Bookmark,
        }
    }

    /// The object of a per-object delta (for a tombstone, its last known
    /// state, if any).
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => Some(o),
            Delta::Deleted(target) => target.object(),
            Delta::ReplacedAll { .. } | Delta::SyncAll | Delta::Bookmark { .. } => None,
        }
    }

    /// Whether the delta concerns one object and so may be processed in a
    /// batch (`Added`, `Updated`, `Deleted`, `Replaced`, `Sync`).
    pub fn is_batchable(&self) -> bool {
        !matches!(
            self,
            Delta::ReplacedAll { .. } | Delta::SyncAll | Delta::Bookmark { .. }
        )
    }
}

/// The deltas of one pop, oldest first.
pub type Deltas<K> = Vec<Delta<K>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::DeletedFinalStateUnknown;

    #[test]
    fn types_objects_and_batchability() {
        let object = Arc::new(5u8);
        let cases: Vec<(Delta<u8>, DeltaType, bool, bool)> = vec![
            (
                Delta::Added(Arc::clone(&object)),
                DeltaType::Added,
                true,
                true,
            ),
            (
                Delta::Updated(Arc::clone(&object)),
                DeltaType::Updated,
                true,
                true,
            ),
            (
                Delta::Deleted(Arc::clone(&object).into()),
                DeltaType::Deleted,
                true,
                true,
            ),
            (
                Delta::Replaced(Arc::clone(&object)),
                DeltaType::Replaced,
                true,
                true,
            ),
            (
                Delta::Sync(Arc::clone(&object)),
                DeltaType::Sync,
                true,
                true,
            ),
            (
                Delta::ReplacedAll {
                    resource_version: "1".into(),
                    objects: vec![],
                },
                DeltaType::ReplacedAll,
                false,
                false,
            ),
            (Delta::SyncAll, DeltaType::SyncAll, false, false),
            (
                Delta::Bookmark {
                    resource_version: "1".into(),
                },
                DeltaType::Bookmark,
                false,
                false,
            ),
        ];
        for (delta, kind, has_object, batchable) in cases {
            assert_eq!(delta.delta_type(), kind);
            assert_eq!(delta.object().is_some(), has_object, "{kind}");
            assert_eq!(delta.is_batchable(), batchable, "{kind}");
            assert_eq!(delta.clone().delta_type(), kind);
        }
        let tombstone: Delta<u8> = Delta::Deleted(
            DeletedFinalStateUnknown {
                key: "k".into(),
                object: None,
            }
            .into(),
        );
        assert!(tombstone.object().is_none());
    }
}
