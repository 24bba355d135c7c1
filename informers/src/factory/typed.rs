//! [`SharedInformerFactory`]: one informer per k8s-openapi type, shared by
//! everything that asks for it (client-go's generated
//! `sharedInformerFactory`).

use std::any::TypeId;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiResource, DynamicObject, GroupVersionResource};
use clientgo_rest::{ResourceClient, RestClient};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::cache::lister::Lister;
use crate::error::Error;
use crate::factory::dynamic::DynamicSharedInformerFactory;
use crate::factory::generic::GenericInformer;
use crate::factory::options::InformerFactoryOptions;
use crate::factory::registry::InformerRegistry;
use crate::informer::shared_index_informer::SharedIndexInformer;
use crate::informer::wait::SyncError;
use crate::typed_resource::TypedResource;

type Constructor = Arc<dyn Fn(&SharedInformerFactory) -> GenericInformer + Send + Sync>;

/// Creates and shares informers of k8s-openapi types (and of custom
/// resource types implementing `k8s_openapi::Resource`).
///
/// - [`informer_for::<K>()`](Self::informer_for) returns the factory's one
///   informer of `K`, creating it on first use with the factory's options
///   (namespace, list-option tweak, resync, transforms, namespace index).
/// - [`start`](Self::start) runs every informer not yet started, each on
///   its own task; call it again after asking for more informers. It
///   never blocks and does nothing after [`shutdown`](Self::shutdown).
/// - [`wait_for_cache_sync`](Self::wait_for_cache_sync) waits for the
///   started informers and reports each one's result.
/// - [`shutdown`](Self::shutdown) stops every started informer and waits
///   for their tasks (client-go's `Shutdown` only waits: you must cancel
///   their context yourself). Dropping the factory stops them too,
///   without waiting.
/// - [`for_resource`](Self::for_resource) finds the informer of a resource
///   by group, version and plural among the GA built-in types and the
///   types asked for or [`register`](Self::register)ed.
pub struct SharedInformerFactory {
    client: RestClient,
    options: InformerFactoryOptions,
    registry: InformerRegistry<TypeId>,
    known: Mutex<HashMap<GroupVersionResource, Constructor>>,
    /// Informers of resources with no Rust type, as `DynamicObject`s.
    dynamic: DynamicSharedInformerFactory,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformerFactory")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl SharedInformerFactory {
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
        SharedInformerFactory {
            dynamic: DynamicSharedInformerFactory::with_options(client.clone(), options.clone()),
            client,
            options,
            registry: InformerRegistry::new(),
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The client informers use.
    pub fn client(&self) -> &RestClient {
        &self.client
    }

    /// The options informers are created with.
    pub fn options(&self) -> &InformerFactoryOptions {
        &self.options
    }

    /// The factory's informer of `K`, created on first use (client-go's
    /// `InformerFor`). Asking again returns the same informer.
    pub fn informer_for<K>(&self) -> SharedIndexInformer<K>
    where
        K: TypedResource,
    {
        self.register::<K>();
        let generic = self.registry.get_or_insert(TypeId::of::<K>(), || {
            GenericInformer::from_informer(self.new_informer::<K>())
        });
        match generic.downcast::<K>() {
            Some(informer) => informer,
            None => {
                // Entries are keyed by the TypeId of their object type, so
                // this cannot happen; a standalone informer keeps the
                // caller working if it ever did.
                tracing::error!(
                    informer = %generic.name(),
                    "factory entry has another object type; returning a standalone informer"
                );
                self.new_informer::<K>()
            }
        }
    }

    /// A lister over the informer of `K` (creating the informer if needed).
    pub fn lister_for<K>(&self) -> Lister<K>
    where
        K: TypedResource,
    {
        self.informer_for::<K>().lister()
    }

    /// The factory's informer of `resource` as [`DynamicObject`]s, created
    /// on first use with the factory's options and started, waited for and
    /// shut down with its typed informers. Generated accessors use it for
    /// custom resources that were given no Rust type
    /// (`clientgo-codegen --from-cluster` without `--type`). Inlined, so
    /// the dynamic informer's code is compiled only in a crate that calls
    /// it.
    #[inline]
    pub fn dynamic_informer_for(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformer<DynamicObject> {
        self.dynamic.for_resource(resource)
    }

    /// Makes [`for_resource`](Self::for_resource) know `K` without
    /// creating its informer.
    pub fn register<K>(&self)
    where
        K: TypedResource,
    {
        let resource = ApiResource::of::<K>().group_version_resource();
        self.known.lock().entry(resource).or_insert_with(|| {
            Arc::new(|factory: &SharedInformerFactory| {
                GenericInformer::from_informer(factory.informer_for::<K>())
            })
        });
    }

    /// The informer of `resource` (by group, version and plural), as a
    /// [`GenericInformer`] (client-go's `ForResource`), created on first
    /// use. Knows every GA built-in resource (see [`crate::builtin`]) and
    /// every type asked for or [`register`](Self::register)ed; errors for
    /// any other.
    ///
    /// Inlined, because it can create the informer of any built-in type: a
    /// crate that calls it compiles the informers of every enabled group,
    /// and a crate that does not, none.
    #[inline]
    pub fn for_resource(&self, resource: &ApiResource) -> Result<GenericInformer, Error> {
        let gvr = resource.group_version_resource();
        let constructor = self.known.lock().get(&gvr).cloned();
        if let Some(constructor) = constructor {
            return Ok(constructor(self));
        }
        crate::builtin::for_resource(self, &gvr).ok_or(Error::NoInformerFound { resource: gvr })
    }

    fn new_informer<K>(&self) -> SharedIndexInformer<K>
    where
        K: TypedResource,
    {
        let resource = ApiResource::of::<K>();
        let namespace = self.options.namespace_for(&resource);
        let client =
            ResourceClient::<K>::with_resource(self.client.clone(), resource.clone(), namespace);
        SharedIndexInformer::from_lister_watcher(
            self.options.lister_watcher(client),
            self.options.informer_options::<K>(&resource),
            self.client.clone(),
        )
    }

    /// Starts every informer not started yet; they run until `cancel`
    /// fires or [`shutdown`](Self::shutdown). Never blocks.
    pub fn start(&self, cancel: &CancellationToken) {
        self.registry.start(cancel);
        self.dynamic.start(cancel);
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
        let deadline = tokio::time::Instant::now() + timeout;
        let mut synced = self
            .registry
            .wait_for_cache_sync(timeout, self.options.lasting_errors)
            .await?;
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        synced.extend(self.dynamic.wait_for_cache_sync(left).await?);
        Ok(synced)
    }

    /// Stops every started informer and waits for their tasks to end.
    pub async fn shutdown(&self) {
        self.registry.shutdown().await;
        self.dynamic.shutdown().await;
    }
}
