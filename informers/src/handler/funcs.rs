//! [`ResourceEventHandlerFuncs`]: a handler built from closures.

use std::sync::Arc;

use clientgo_store::{ObjectOrTombstone, ResourceEventHandler};

type AddFn<K> = Box<dyn FnMut(&Arc<K>, bool) + Send>;
type UpdateFn<K> = Box<dyn FnMut(&Arc<K>, &Arc<K>) + Send>;
type DeleteFn<K> = Box<dyn FnMut(&ObjectOrTombstone<K>) + Send>;

/// A [`ResourceEventHandler`] made of closures (client-go's
/// `ResourceEventHandlerDetailedFuncs`); a notification without a closure
/// is ignored.
///
/// ```
/// use clientgo_informers::ResourceEventHandlerFuncs;
/// use k8s_openapi::api::core::v1::Pod;
///
/// let handler = ResourceEventHandlerFuncs::<Pod>::new()
///     .on_add(|pod, initial| println!("added {:?} (initial list: {initial})", pod.metadata.name))
///     .on_delete(|pod| println!("deleted {:?}", pod.object().map(|p| &p.metadata.name)));
/// # let _ = handler;
/// ```
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        ResourceEventHandlerFuncs {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> std::fmt::Debug for ResourceEventHandlerFuncs<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEventHandlerFuncs")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores everything until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Called with each added object and whether it is part of the initial
    /// list.
    #[must_use]
    pub fn on_add(mut self, add: impl FnMut(&Arc<K>, bool) + Send + 'static) -> Self {
        self.add = Some(Box::new(add));
        self
    }

    /// Called with the old and new state of each updated object.
    #[must_use]
    pub fn on_update(mut self, update: impl FnMut(&Arc<K>, &Arc<K>) + Send + 'static) -> Self {
        self.update = Some(Box::new(update));
        self
    }

    /// Called with each deleted object or tombstone.
    #[must_use]
    pub fn on_delete(mut self, delete: impl FnMut(&ObjectOrTombstone<K>) + Send + 'static) -> Self {
        self.delete = Some(Box::new(delete));
        self
    }
}

impl<K> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&mut self, object: &Arc<K>, is_in_initial_list: bool) {
        if let Some(add) = &mut self.add {
            add(object, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(update) = &mut self.update {
            update(old, new);
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        if let Some(delete) = &mut self.delete {
            delete(object);
        }
    }
}
