//! [`CachedObject`]: a cached object of any type, seen through its
//! metadata.

use std::any::Any;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A cached object of any type: its metadata, and a way back to the
/// concrete type. Every [`Object`] is one; `Arc<K>` converts to
/// `Arc<dyn CachedObject>` without copying.
pub trait CachedObject: Any + Send + Sync {
    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;
    /// The object, for downcasting with `downcast_ref`.
    fn as_any(&self) -> &dyn Any;
    /// The shared object, for downcasting with `Arc::downcast`.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<K: Object + Send + Sync + 'static> CachedObject for K {
    fn metadata(&self) -> &ObjectMeta {
        self.meta()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}
