//! [`ResourceInformerFactory`]: informers of any resource, by
//! [`ApiResource`], as [`DynamicObject`]s (client-go's `dynamicinformer`)
//! or as [`PartialObjectMetadata`] (client-go's `metadatainformer`).

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use clientgo_apimachinery::{
    ApiObject, ApiResource, DynamicObject, GroupVersionResource, PartialObjectMetadata,
};
use clientgo_rest::{ResourceClient, RestClient};
use tokio_util::sync::CancellationToken;

use crate::cache::lister::Lister;
use crate::error::Error;
use crate::factory::generic::GenericInformer;
use crate::factory::options::InformerFactoryOptions;
use crate::factory::registry::InformerRegistry;
use crate::informer::shared_index_informer::SharedIndexInformer;
use crate::informer::wait::SyncError;

mod sealed {
    pub trait Sealed {}
    impl Sealed for clientgo_apimachinery::DynamicObject {}
    impl Sealed for clientgo_apimachinery::PartialObjectMetadata {}
}

/// The object types a [`ResourceInformerFactory`] caches:
/// [`DynamicObject`] (whole objects of any resource, kept as the
/// factory's [`Storage`](crate::Storage) says: compact by default) and
/// [`PartialObjectMetadata`] (metadata only).
pub trait UntypedObject: ApiObject + Clone + sealed::Sealed {
    /// How the informers of this factory are named in logs.
    const FLAVOUR: &'static str;

    /// The client that lists and watches `resource` as this type.
    fn client(
        client: RestClient,
        resource: ApiResource,
        namespace: Option<&str>,
    ) -> ResourceClient<Self>;
}

impl UntypedObject for DynamicObject {
    const FLAVOUR: &'static str = "dynamic";

    fn client(
        client: RestClient,
        resource: ApiResource,
        namespace: Option<&str>,
    ) -> ResourceClient<Self> {
        ResourceClient::dynamic(client, resource, namespace)
    }
}

impl UntypedObject for PartialObjectMetadata {
    const FLAVOUR: &'static str = "metadata";

    fn client(
        client: RestClient,
        resource: ApiResource,
        namespace: Option<&str>,
    ) -> ResourceClient<Self> {
        ResourceClient::metadata(client, resource, namespace)
    }
}

/// Informers of any resource as [`DynamicObject`]s: for resources known
/// only at run time (custom resources, resources named on a command line).
pub type DynamicSharedInformerFactory = ResourceInformerFactory<DynamicObject>;

/// Informers that cache only metadata (the server's
/// `as=PartialObjectMetadata` form): names, labels, annotations, owners,
/// finalizers. The cheap way to watch many objects.
pub type MetadataSharedInformerFactory = ResourceInformerFactory<PartialObjectMetadata>;

/// One informer per resource (group, version, plural), creating and
/// sharing them as [`SharedInformerFactory`](crate::SharedInformerFactory)
/// does for types. See [`DynamicSharedInformerFactory`] and
/// [`MetadataSharedInformerFactory`].
pub struct ResourceInformerFactory<K> {
    client: RestClient,
    options: InformerFactoryOptions,
    registry: InformerRegistry<GroupVersionResource>,
    objects: PhantomData<fn() -> K>,
}

impl<K: UntypedObject> fmt::Debug for ResourceInformerFactory<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceInformerFactory")
            .field("flavour", &K::FLAVOUR)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<K: UntypedObject> ResourceInformerFactory<K> {
    /// A factory whose informers resync every `default_resync` (zero:
    /// never).
    pub fn new(client: RestClient, default_resync: Duration) -> Self {
        Self::with_options(
            client,
            InformerFactoryOptions::default().resync_period(default_resync),
        )
    }

    /// A factory with options.
    pub fn with_options(client: RestClient, options: InformerFactoryOptions) -> Self {
        ResourceInformerFactory {
            client,
            options,
            registry: InformerRegistry::new(),
            objects: PhantomData,
        }
    }

    /// The factory's informer of `resource`, created on first use.
    pub fn for_resource(&self, resource: &ApiResource) -> SharedIndexInformer<K> {
        let generic = self
            .registry
            .get_or_insert(resource.group_version_resource(), || {
                GenericInformer::from_informer(self.new_informer(resource))
            });
        match generic.downcast::<K>() {
            Some(informer) => informer,
            None => {
                // Every entry of this factory caches K; kept for safety.
                tracing::error!(informer = %generic.name(), "factory entry has another object type");
                self.new_informer(resource)
            }
        }
    }

    /// A lister over the informer of `resource`.
    pub fn lister_for(&self, resource: &ApiResource) -> Lister<K> {
        self.for_resource(resource).lister()
    }

    /// The informer of a resource found through discovery by group,
    /// version and plural. Errors when the server does not serve it, when
    /// it cannot be listed and watched, or when discovery fails.
    pub async fn for_group_version_resource(
        &self,
        resource: &GroupVersionResource,
    ) -> Result<SharedIndexInformer<K>, Error> {
        let discovered = clientgo_rest::Discovery::new(self.client.clone())
            .resolve(resource)
            .await
            .map_err(|source| Error::Discovery {
                resource: resource.clone(),
                source: Box::new(source),
            })?
            .ok_or_else(|| Error::NotServed {
                resource: resource.clone(),
            })?;
        if !discovered.is_watchable() {
            return Err(Error::NotWatchable {
                resource: resource.clone(),
                verbs: discovered.verbs,
            });
        }
        Ok(self.for_resource(&discovered.resource))
    }

    fn new_informer(&self, resource: &ApiResource) -> SharedIndexInformer<K> {
        let namespace = self.options.namespace_for(resource);
        let client = K::client(self.client.clone(), resource.clone(), namespace);
        let mut options = self.options.informer_options::<K>(resource);
        options.name = options.name.map(|name| format!("{name} ({})", K::FLAVOUR));
        SharedIndexInformer::from_lister_watcher(
            self.options.lister_watcher(client),
            options,
            self.client.clone(),
        )
    }

    /// Starts every informer not started yet; they run until `cancel`
    /// fires or [`shutdown`](Self::shutdown). Never blocks.
    pub fn start(&self, cancel: &CancellationToken) {
        self.registry.start(cancel);
    }

    /// Waits up to `timeout` for every started informer to sync. Gives up
    /// at once when every unsynced informer's last error will not heal by
    /// itself (a 403, a 401, a 404 for a resource the server does not
    /// serve), unless the options say
    /// [`lasting_errors`](InformerFactoryOptions::lasting_errors)`(KeepWaiting)`.
    pub async fn wait_for_cache_sync(
        &self,
        timeout: Duration,
    ) -> Result<BTreeMap<String, bool>, SyncError> {
        self.registry
            .wait_for_cache_sync(timeout, self.options.lasting_errors)
            .await
    }

    /// Stops every started informer and waits for their tasks to end.
    pub async fn shutdown(&self) {
        self.registry.shutdown().await;
    }
}
