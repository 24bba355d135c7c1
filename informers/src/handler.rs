//! [`ResourceEventHandler`]: what an informer tells each registered
//! handler, and the notification a handler's queue holds.

use std::sync::Arc;

use clientgo_store::ObjectOrTombstone;

/// Receives an informer's notifications (client-go's
/// `ResourceEventHandler`).
///
/// **Ordering.** Calls to one handler are sequential and, for each object,
/// in the order the informer's cache changed. There is no order across
/// objects, and a handler may miss intermediate states of an object
/// (the cache is eventually consistent): a delete and re-create under the
/// same name can arrive as one update, so compare UIDs when it matters.
///
/// **Sharing.** Objects are the cache's own `Arc`s: read them, clone what
/// you keep, never mutate them.
///
/// **Threads.** Each registered handler runs on its own thread, so a slow
/// or blocking handler delays nobody but itself. That thread has entered
/// the tokio runtime the handler was registered from, so `tokio::spawn`
/// works inside a handler. Handlers should still be quick: the usual
/// pattern is to put the object's key on a workqueue.
///
/// Every method has an empty default, so a handler implements only what
/// it needs.
pub trait ResourceEventHandler<K>: Send {
    /// An object appeared in the cache. `is_in_initial_list` is true for
    /// objects of the informer's first list, and for the objects replayed
    /// to a handler added while the informer runs.
    fn on_add(&mut self, object: &Arc<K>, is_in_initial_list: bool) {
        let _ = (object, is_in_initial_list);
    }

    /// An object changed from `old` to `new`. During a resync, and after a
    /// relist for objects that did not change, `old` and `new` have the
    /// same resourceVersion; only handlers that asked for resync receive
    /// those.
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }

    /// An object was deleted. A [`DeletedFinalStateUnknown`]
    /// (`ObjectOrTombstone::Tombstone`) means the deletion was found by a
    /// relist: the object carried is the last state the cache knew.
    ///
    /// [`DeletedFinalStateUnknown`]: clientgo_store::DeletedFinalStateUnknown
    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        let _ = object;
    }
}

impl<K, H: ResourceEventHandler<K> + ?Sized> ResourceEventHandler<K> for Box<H> {
    fn on_add(&mut self, object: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(object, is_in_initial_list);
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new);
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        (**self).on_delete(object);
    }
}

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
