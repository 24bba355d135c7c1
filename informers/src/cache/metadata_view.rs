//! [`MetadataView`]: a cached object's metadata, shared with the cache,
//! for handlers and reads that need no more than keys, labels, owners and
//! annotations.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_store::ObjectOrTombstone;
use clientgo_store::ResourceEventHandler;

use crate::cache::cached_object::CachedObject;

/// The metadata of one cached object version, read in place: no decode
/// and no copy (in compact storage the entry's metadata was parsed once,
/// at ingest, and is kept packed). It holds the cached object (or entry)
/// alive while held. Dereferences to `dyn` [`Object`], client-go's
/// `metav1.Object`: read it with the accessors (`name()`, `labels()`,
/// `owner_references()`, ...); `meta()` builds a whole `ObjectMeta` for a
/// compact entry and keeps it with the entry.
#[derive(Clone)]
pub struct MetadataView(Arc<dyn CachedObject>);

impl MetadataView {
    /// A view of `object`'s metadata.
    pub(crate) fn of<E: Object + Send + Sync + 'static>(object: &Arc<E>) -> Self {
        MetadataView(Arc::clone(object) as Arc<dyn CachedObject>)
    }

    /// The cache key: `namespace/name`, or `name` for a cluster-scoped
    /// object (client-go's `MetaNamespaceKeyFunc`).
    pub fn key(&self) -> String {
        clientgo_store::meta_namespace_key(&**self)
    }
}

impl Deref for MetadataView {
    type Target = dyn Object + Send + Sync;

    fn deref(&self) -> &(dyn Object + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for MetadataView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetadataView")
            .field("key", &self.key())
            .field("resource_version", &self.resource_version())
            .finish()
    }
}

/// A handler of [`MetadataView`]s listening to an informer's cache of
/// `E` (decoded objects or compact entries).
pub(crate) struct MetadataHandler<H>(pub(crate) H);

fn view<E: Object + Send + Sync + 'static>(object: &Arc<E>) -> Arc<MetadataView> {
    Arc::new(MetadataView::of(object))
}

impl<E, H> ResourceEventHandler<E> for MetadataHandler<H>
where
    E: Object + Send + Sync + 'static,
    H: ResourceEventHandler<MetadataView>,
{
    fn on_add(&mut self, object: &Arc<E>, is_in_initial_list: bool) {
        self.0.on_add(&view(object), is_in_initial_list);
    }

    fn on_update(&mut self, old: &Arc<E>, new: &Arc<E>) {
        self.0.on_update(&view(old), &view(new));
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<E>) {
        if let Some(deleted) = object.filter_map(|object| Some(view(object))) {
            self.0.on_delete(&deleted);
        }
    }
}
