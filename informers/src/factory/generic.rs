//! [`GenericInformer`] and [`GenericLister`]: an informer and lister with
//! the object type erased, as a factory's `for_resource` returns them
//! (client-go's `GenericInformer` and `GenericLister`).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use clientgo_apimachinery::{ApiObject, ApiResource, LabelSelector};
use tokio_util::sync::CancellationToken;

use crate::cache::cached_object::CachedObject;
use crate::cache::lister::Lister;
use crate::error::Error;
use crate::informer::shared_index_informer::SharedIndexInformer;
use crate::informer::wait::InformerSynced;

/// What a factory needs of an informer, whatever its object type.
pub(crate) trait ErasedInformer: InformerSynced {
    fn run(&self, cancel: CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>>;
    fn resource(&self) -> Option<&ApiResource>;
    fn list(&self, namespace: Option<&str>, selector: &LabelSelector)
    -> Vec<Arc<dyn CachedObject>>;
    fn get(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<dyn CachedObject>>, Error>;
    fn as_any(&self) -> &dyn Any;
}

impl<K> ErasedInformer for SharedIndexInformer<K>
where
    K: ApiObject,
{
    fn run(&self, cancel: CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let informer = self.clone();
        Box::pin(async move { informer.run(cancel).await })
    }

    fn resource(&self) -> Option<&ApiResource> {
        SharedIndexInformer::resource(self)
    }

    fn list(
        &self,
        namespace: Option<&str>,
        selector: &LabelSelector,
    ) -> Vec<Arc<dyn CachedObject>> {
        let lister: Lister<K> = self.lister();
        let objects = match namespace {
            Some(namespace) => lister.namespace(namespace).list(selector),
            None => lister.list(selector),
        };
        objects
            .into_iter()
            .map(|object| object as Arc<dyn CachedObject>)
            .collect()
    }

    fn get(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<dyn CachedObject>>, Error> {
        let lister: Lister<K> = self.lister();
        let object = match namespace {
            Some(namespace) => lister.namespace(namespace).try_get(name)?,
            None => lister.try_get_by_key(name)?,
        };
        Ok(object.map(|object| object as Arc<dyn CachedObject>))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// An informer whose object type is known only at run time.
#[derive(Clone)]
pub struct GenericInformer {
    pub(crate) informer: Arc<dyn ErasedInformer>,
}

impl fmt::Debug for GenericInformer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericInformer")
            .field("name", &self.informer.sync_name())
            .finish()
    }
}

impl GenericInformer {
    /// Erases the object type of `informer` (what generated `for_resource`
    /// functions return).
    pub fn from_informer<K>(informer: SharedIndexInformer<K>) -> Self
    where
        K: ApiObject,
    {
        GenericInformer {
            informer: Arc::new(informer),
        }
    }

    /// The informer's name.
    pub fn name(&self) -> String {
        self.informer.sync_name()
    }

    /// The resource cached.
    pub fn resource(&self) -> Option<&ApiResource> {
        self.informer.resource()
    }

    /// Whether the cache has synced.
    pub fn has_synced(&self) -> bool {
        self.informer.has_synced()
    }

    /// The typed informer, if its objects are `K`.
    pub fn downcast<K: 'static>(&self) -> Option<SharedIndexInformer<K>> {
        self.informer
            .as_any()
            .downcast_ref::<SharedIndexInformer<K>>()
            .cloned()
    }

    /// A lister over the cache.
    pub fn lister(&self) -> GenericLister {
        GenericLister {
            informer: Arc::clone(&self.informer),
            namespace: None,
        }
    }

    /// For [`wait_for_cache_sync`](crate::wait_for_cache_sync).
    pub fn as_synced(&self) -> &dyn InformerSynced {
        &*self.informer
    }

    pub(crate) fn run(
        &self,
        cancel: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.informer.run(cancel)
    }
}

/// Lists and gets objects of any type from an informer's cache.
#[derive(Clone)]
pub struct GenericLister {
    informer: Arc<dyn ErasedInformer>,
    namespace: Option<String>,
}

impl fmt::Debug for GenericLister {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericLister")
            .field("informer", &self.informer.sync_name())
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl GenericLister {
    /// The objects (of the namespace, for a namespace lister) whose labels
    /// match `selector`.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<dyn CachedObject>> {
        self.informer.list(self.namespace.as_deref(), selector)
    }

    /// The object named `name` (in the namespace, for a namespace
    /// lister), `None` when none is cached; see [`Lister::get_by_key`].
    pub fn get(&self, name: &str) -> Option<Arc<dyn CachedObject>> {
        self.try_get(name).ok().flatten()
    }

    /// As [`get`](Self::get), with a cached entry that does not decode an
    /// error; see [`Lister::try_get_by_key`].
    pub fn try_get(&self, name: &str) -> Result<Option<Arc<dyn CachedObject>>, Error> {
        self.informer.get(self.namespace.as_deref(), name)
    }

    /// A lister of one namespace (client-go's `ByNamespace`).
    pub fn namespace(&self, namespace: impl Into<String>) -> GenericLister {
        GenericLister {
            informer: Arc::clone(&self.informer),
            namespace: Some(namespace.into()),
        }
    }
}
