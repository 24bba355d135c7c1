//! [`ObjectHandler`]: a handler of whole objects listening to a cache of
//! any [`Stored`] form of them.

use std::marker::PhantomData;
use std::sync::Arc;

use clientgo_apimachinery::ApiObject;
use clientgo_store::{ObjectOrTombstone, ResourceEventHandler};

use crate::decode_cache::DecodeCache;
use crate::stored::Stored;

/// A handler of `K` listening to a cache of `S`: each entry is turned into
/// its object through the informer's decoder, on the handler's thread.
/// For a compact entry that is a decode, shared by every handler of the
/// event while any holds it; for a decoded object, the cache's own `Arc`.
/// An entry that does not decode is logged and counted by the decoder,
/// and the event skipped for this handler; the cache keeps it.
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
        if let Some(object) = self.decoder.for_handler(object) {
            self.handler.on_add(&object, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: &Arc<S>, new: &Arc<S>) {
        if let (Some(old), Some(new)) =
            (self.decoder.for_handler(old), self.decoder.for_handler(new))
        {
            self.handler.on_update(&old, &new);
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<S>) {
        if let Some(deleted) = object.filter_map(|object| self.decoder.for_handler(object)) {
            self.handler.on_delete(&deleted);
        }
    }
}
