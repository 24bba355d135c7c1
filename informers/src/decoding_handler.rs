//! [`DecodingHandler`]: a handler of whole objects over an informer of
//! [`Compact`] objects.

use std::sync::Arc;

use clientgo_apimachinery::{Compact, CompactBody, CompactDecodeError, Object};
use clientgo_store::{ObjectOrTombstone, ResourceEventHandler};
use serde::de::DeserializeOwned;

/// Lets a handler of `K` (`&Arc<K>`) listen to an informer of
/// `Compact<K, B>` (any body): each object is decoded when the handler is called, and
/// handlers of one event share the decode while any of them holds it.
///
/// An object that does not decode (a cached custom resource whose schema
/// changed) is logged with its key and counted
/// ([`compact_decodes`](clientgo_apimachinery::compact_decodes)), and the
/// event skipped for this handler; the cache keeps it. A handler that
/// needs only keys and metadata should take `&Arc<Compact<K, B>>` directly:
/// nothing is then decoded for it.
pub struct DecodingHandler<H> {
    handler: H,
}

impl<H> DecodingHandler<H> {
    /// Wraps `handler`.
    pub fn new(handler: H) -> Self {
        DecodingHandler { handler }
    }
}

fn decoded<K, B>(object: &Compact<K, B>) -> Option<Arc<K>>
where
    K: DeserializeOwned + Object + 'static,
    B: CompactBody,
{
    object
        .decode()
        .map_err(|error: CompactDecodeError| {
            tracing::error!(%error, "skipping an event whose object does not decode");
        })
        .ok()
}

impl<K, B, H> ResourceEventHandler<Compact<K, B>> for DecodingHandler<H>
where
    K: DeserializeOwned + Object + 'static,
    B: CompactBody,
    H: ResourceEventHandler<K>,
{
    fn on_add(&mut self, object: &Arc<Compact<K, B>>, is_in_initial_list: bool) {
        if let Some(object) = decoded(object) {
            self.handler.on_add(&object, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: &Arc<Compact<K, B>>, new: &Arc<Compact<K, B>>) {
        if let (Some(old), Some(new)) = (decoded(old), decoded(new)) {
            self.handler.on_update(&old, &new);
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<Compact<K, B>>) {
        if let Some(deleted) = object.filter_map(|object| decoded(object)) {
            self.handler.on_delete(&deleted);
        }
    }
}
