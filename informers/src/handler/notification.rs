//! The notification a handler's queue holds, delivered to a
//! [`ResourceEventHandler`].

use std::sync::Arc;

use clientgo_store::{ObjectOrTombstone, ResourceEventHandler};

/// One notification waiting in a handler's queue.
pub(crate) enum Notification<K> {
    /// `on_add`.
    Add {
        object: Arc<K>,
        is_in_initial_list: bool,
    },
    /// `on_update`.
    Update { old: Arc<K>, new: Arc<K> },
    /// `on_delete`.
    Delete(ObjectOrTombstone<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add {
                object,
                is_in_initial_list,
            } => Notification::Add {
                object: Arc::clone(object),
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notification::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            Notification::Delete(target) => Notification::Delete(target.clone()),
        }
    }
}

impl<K> Notification<K> {
    /// Whether this is an add of the initial list (counted until delivered
    /// for the handler's `has_synced`).
    pub(crate) fn is_initial(&self) -> bool {
        matches!(
            self,
            Notification::Add {
                is_in_initial_list: true,
                ..
            }
        )
    }

    /// Calls the matching method of `handler`.
    pub(crate) fn deliver(&self, handler: &mut dyn ResourceEventHandler<K>) {
        match self {
            Notification::Add {
                object,
                is_in_initial_list,
            } => handler.on_add(object, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete(target) => handler.on_delete(target),
        }
    }

    /// The object the notification is about (for a tombstone, its last
    /// known state, if any).
    pub(crate) fn object(&self) -> Option<&Arc<K>> {
        match self {
            Notification::Add { object, .. } => Some(object),
            Notification::Update { new, .. } => Some(new),
            Notification::Delete(target) => target.object(),
        }
    }
}
