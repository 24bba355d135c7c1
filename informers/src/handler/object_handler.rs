//! [`ObjectHandler`]: a handler of whole objects listening to a cache of
//! any [`Stored`] form of them.

use std::marker::PhantomData;
use std::sync::Arc;

use clientgo_apimachinery::ApiObject;
use clientgo_store::{ObjectOrTombstone, ResourceEventHandler};

use crate::cache::decode_cache::DecodeCache;
use crate::cache::stored::Stored;

/// A handler of `K` listening to a cache of `S`: each entry is turned into
/// its object through the informer's decoder, on the handler's thread.
/// For a compact entry that is a decode, shared by every handler of the
/// event while any holds it; for a decoded object, the cache's own `Arc`.
/// An entry that does not decode is logged and counted by the decoder,
/// and the event skipped for this handler; the cache keeps it. After the
/// call each decode is given back to its entry
/// ([`Stored::release`]), so a decode only handlers held is freed whole
/// once the last handler of the event is done with it.
pub(crate) struct ObjectHandler<K, S, H> {
    decoder: Arc<DecodeCache<K, S>>,
    handler: H,
    _stored: PhantomData<fn() -> S>,
}

impl<K, S, H> ObjectHandler<K, S, H> {
    /// `handler`, fed through `decoder`.
    pub(crate) fn new(decoder: Arc<DecodeCache<K, S>>, handler: H) -> Self {
        ObjectHandler {
            decoder,
            handler,
            _stored: PhantomData,
        }
    }
}

impl<K, S, H> ResourceEventHandler<S> for ObjectHandler<K, S, H>
where
    K: ApiObject,
    S: Stored<K>,
    H: ResourceEventHandler<K>,
{
    fn on_add(&mut self, object: &Arc<S>, is_in_initial_list: bool) {
        if let Some(decoded) = self.decoder.for_handler(object) {
            self.handler.on_add(&decoded, is_in_initial_list);
            S::release(object, decoded);
        }
    }

    fn on_update(&mut self, old: &Arc<S>, new: &Arc<S>) {
        let (old_decoded, new_decoded) =
            (self.decoder.for_handler(old), self.decoder.for_handler(new));
        if let (Some(old_decoded), Some(new_decoded)) = (&old_decoded, &new_decoded) {
            self.handler.on_update(old_decoded, new_decoded);
        }
        // Whichever sides decoded are given back, called or not.
        if let Some(decoded) = old_decoded {
            S::release(old, decoded);
        }
        if let Some(decoded) = new_decoded {
            S::release(new, decoded);
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<S>) {
        let Some(deleted) = object.filter_map(|object| self.decoder.for_handler(object)) else {
            return;
        };
        self.handler.on_delete(&deleted);
        let decoded = match deleted {
            ObjectOrTombstone::Object(decoded) => Some(decoded),
            ObjectOrTombstone::Tombstone(tombstone) => tombstone.object,
        };
        if let (Some(entry), Some(decoded)) = (object.object(), decoded) {
            S::release(entry, decoded);
        }
    }
}
