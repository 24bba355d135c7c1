//! [`ResourceEventHandler`]: what a cache's changes are told to.

use std::sync::Arc;

use crate::key::ObjectOrTombstone;

/// Receives what changed in a cache (client-go's `ResourceEventHandler`):
/// an informer's notifications to each registered handler, and what
/// [`process_deltas`](crate::process_deltas) tells its caller. One trait
/// for both, as in client-go.
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
/// **Threads.** An informer runs each registered handler on its own
/// thread, so a slow or blocking handler delays nobody but itself. That
/// thread has entered the tokio runtime the handler was registered from,
/// so `tokio::spawn` works inside a handler. Handlers should still be
/// quick: the usual pattern is to put the object's key on a workqueue.
///
/// Every method has an empty default, so a handler implements only what
/// it needs.
pub trait ResourceEventHandler<K>: Send {
    /// An object appeared in the cache. `is_in_initial_list` is true for
    /// objects of the first list, and for the objects an informer replays
    /// to a handler added while it runs.
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
    /// [`DeletedFinalStateUnknown`]: crate::DeletedFinalStateUnknown
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
