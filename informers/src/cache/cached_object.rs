//! [`CachedObject`]: a cached object of any type, seen through its
//! metadata.

use std::any::Any;
use std::sync::Arc;

use clientgo_apimachinery::Object;

/// A cached object of any type: its metadata through the [`Object`]
/// accessors (a `&dyn CachedObject` is a `&dyn Object`), and a way back to
/// the concrete type. Every [`Object`] is one; `Arc<K>` converts to
/// `Arc<dyn CachedObject>` without copying.
pub trait CachedObject: Object + Any + Send + Sync {
    /// The object, for downcasting with `downcast_ref`.
    fn as_any(&self) -> &dyn Any;
    /// The shared object, for downcasting with `Arc::downcast`.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<K: Object + Send + Sync + 'static> CachedObject for K {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}
