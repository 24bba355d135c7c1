//! client-go's shared informers in Rust: one list and watch per resource,
//! an indexed cache, any number of handlers, typed listers, and factories
//! that share informers between the parts of a controller.
//!
//! # Example
//!
//! client-go's documented informer example, in Rust: watch the Deployments
//! of the `default` namespace, print every add, update and delete, then
//! list the namespace from the cache. (It runs here against
//! clientgo-testing's API server; point the client at a cluster with
//! `RestClient::infer()`.)
//!
//! ```
//! use std::time::Duration;
//! use clientgo_apimachinery::LabelSelector;
//! use clientgo_informers::{InformerFactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
//! use clientgo_rest::{Config, CreateOptions, ResourceClient, RestClient};
//! use clientgo_testing::TestApiServer;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestApiServer::builder().start().await?;
//! let client = RestClient::new(Config::new(server.url()))?;
//!
//! // One factory per process: informers of the default namespace,
//! // resynced every 30 seconds.
//! let factory = SharedInformerFactory::with_options(
//!     client.clone(),
//!     InformerFactoryOptions::default()
//!         .namespace("default")
//!         .resync_period(Duration::from_secs(30)),
//! );
//! let deployments = factory.informer_for::<Deployment>();
//! let name = |d: &Deployment| d.metadata.name.clone().unwrap_or_default();
//! deployments.add_event_handler(
//!     ResourceEventHandlerFuncs::new()
//!         .on_add(move |d, _| println!("Deployment added: {}", name(d)))
//!         .on_update(move |old, new| println!("Deployment updated: {} -> {}", name(old), name(new)))
//!         .on_delete(move |d| println!("Deployment deleted: {:?}", d.object().map(|d| name(d)))),
//! )?;
//!
//! let stop = CancellationToken::new();
//! factory.start(&stop);
//! factory.wait_for_cache_sync(Duration::from_secs(10)).await?;
//!
//! // A write through the API shows up in the cache.
//! let api = ResourceClient::<Deployment>::namespaced(client, "default");
//! let mut web = Deployment::default();
//! web.metadata.name = Some("web".into());
//! let created = api.create(&CreateOptions::default(), &web).await?;
//! deployments
//!     .wait_for_resource_version(created.metadata.resource_version.as_deref().unwrap_or("0"))
//!     .await?;
//!
//! for deployment in deployments.lister().namespace("default").list(&LabelSelector::everything()) {
//!     println!("cached: {}", name(&deployment));
//! }
//! assert!(deployments.lister().namespace("default").get("web").is_some());
//!
//! stop.cancel();
//! factory.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # How it fits together
//!
//! | type | client-go | what it is |
//! |---|---|---|
//! | [`SharedIndexInformer`] | `SharedIndexInformer` | reflector → RealFIFO (atomic) → cache → handlers |
//! | [`ResourceEventHandler`] | `ResourceEventHandler` | on_add / on_update / on_delete |
//! | [`ResourceEventHandlerFuncs`] | `ResourceEventHandlerDetailedFuncs` | a handler from closures |
//! | [`FilteringResourceEventHandler`] | `FilteringResourceEventHandler` | a handler seeing only what a filter accepts |
//! | [`ResourceEventHandlerRegistration`] | the same | a handler's `has_synced`, counters |
//! | [`Storage`], [`Stored`] | none (always decoded) | compact entries (the default) or decoded objects |
//! | [`Transform`] | `TransformFunc` | the one change made to objects before caching |
//! | [`MetadataView`] | none | what a metadata handler and `list_metadata` read, without a decode |
//! | [`Lister`], [`NamespaceLister`] | `GenericLister`, generated listers | reads of the cache |
//! | [`SharedInformerFactory`] | generated `sharedInformerFactory` | one informer per type |
//! | [`DynamicSharedInformerFactory`] | `dynamicinformer` | informers of any resource |
//! | [`MetadataSharedInformerFactory`] | `metadatainformer` | metadata-only informers |
//! | [`wait_for_cache_sync`] | `WaitForCacheSync` | a sync barrier with a typed error |
//! | [`InformerMetricsProvider`] | the same | FIFO depth, latency, resourceVersion, per handler |
//!
//! # Guarantees
//!
//! - **The cache first.** Each popped change is applied to the cache before
//!   any handler hears of it, so a handler reading a lister sees at least
//!   the state it is told about. A relist replaces the cache in one step.
//! - **Order.** Each handler gets its notifications one at a time, in
//!   order for each object. Objects deleted while the watch was down
//!   arrive as deletes carrying a `DeletedFinalStateUnknown` with the last
//!   known state.
//! - **Resync.** Updates with equal resourceVersions (a resync, or an
//!   unchanged object after a relist) reach only handlers whose resync is
//!   due; others never see them.
//! - **Late handlers** get every cached object as an initial add before
//!   any live change, and report synced only once those are delivered.
//! - **Light by default.** The cache keeps each object as the bytes it
//!   arrived in (protobuf for built-in types) with its metadata parsed,
//!   without managedFields; handlers of `K` get one decode per event,
//!   shared by all of them, and listers decode through a bounded cache
//!   ([`Storage`] says what each storage costs). [`Storage::Decoded`]
//!   keeps decoded objects as client-go does, with no copies: `Arc<K>`
//!   from the decoder to every handler, the cache's own `Arc` reused by a
//!   relist for unchanged objects.
//!
//! # Beyond client-go
//!
//! - **Handler isolation:** each handler has its own thread and queue, so
//!   a slow or blocking handler delays neither the cache nor other
//!   handlers. A [`HandlerQueue::Coalescing`] queue keeps at most one
//!   pending add-or-update and one delete per object, so a slow handler's
//!   memory stays bounded by the number of objects (client-go's buffer
//!   grows without bound).
//! - **Handler panics** are caught, logged and counted
//!   ([`HandlerStats::panics`]); client-go crashes the process.
//! - **Sync errors that say why:** [`wait_for_cache_sync`] returns a
//!   [`SyncError`] naming each unsynced informer with its last list or
//!   watch error (a 403 from RBAC, a 404 for a missing CRD), not a bare
//!   timeout.
//! - **Read your own writes:** [`SharedIndexInformer::wait_for_resource_version`]
//!   waits until the cache holds a write.
//! - **Shutdown stops:** a factory's `shutdown` stops its informers and
//!   waits for them (client-go's only waits).

/// Typed informers, listers and factory accessors for every GA built-in
/// resource (`factory.core().v1().pods()`), generated by clientgo-codegen
/// from the Kubernetes 1.36 OpenAPI spec. Types that k8s-openapi has only
/// from a later Kubernetes version on are present when the version feature
/// chosen includes them.
#[rustfmt::skip]
pub mod builtin;
pub(crate) mod cache;
mod error;
pub(crate) mod factory;
pub(crate) mod handler;
pub(crate) mod informer;
pub(crate) mod metrics;
mod typed_resource;
pub(crate) mod warm_restart;
pub mod watch;

pub use cache::cached_object::CachedObject;
pub use cache::decode_cache::{DEFAULT_DECODE_CACHE_BYTES, DecodeStats};
pub use cache::lister::{Lister, NamespaceLister, UncachedRead};
pub use cache::metadata_index::{MetadataIndexFunc, MetadataIndexers, namespace_metadata_indexers};
pub use cache::metadata_view::MetadataView;
pub use cache::storage::Storage;
#[doc(hidden)]
pub use cache::stored::DECODED_EXPANSION;
pub use cache::stored::Stored;
#[doc(hidden)]
pub use cache::transform::Ingest;
pub use cache::transform::{MetadataTransform, Transform};
pub use error::Error;
pub use factory::dynamic::{
    DynamicSharedInformerFactory, MetadataSharedInformerFactory, ResourceInformerFactory,
    UntypedObject,
};
pub use factory::generic::{GenericInformer, GenericLister};
pub use factory::options::InformerFactoryOptions;
pub use factory::typed::SharedInformerFactory;
pub use handler::filtering::FilteringResourceEventHandler;
pub use handler::funcs::ResourceEventHandlerFuncs;
pub use handler::listener::HandlerStats;
pub use handler::options::{HandlerOptions, MINIMUM_RESYNC_PERIOD};
pub use handler::pending_queue::HandlerQueue;
pub use handler::sync_signal::SyncChanges;
pub use informer::options::SharedIndexInformerOptions;
pub use informer::registration::ResourceEventHandlerRegistration;
pub use informer::shared_index_informer::SharedIndexInformer;
pub use informer::stats::InformerStats;
pub use informer::wait::{
    InformerSynced, LastingErrors, SyncError, SyncFailure, SyncWaitOptions, UnsyncedInformer,
    wait_for_cache_sync,
};
#[cfg(feature = "prometheus")]
pub use metrics::prometheus::PrometheusInformerMetrics;
pub use metrics::provider::{
    HistogramMetric, InformerMetricsProvider, NoopMetric, NoopMetricsProvider, SettableGaugeMetric,
};
pub use typed_resource::TypedResource;
pub use warm_restart::options::{EntryTypes, SnapshotOptions, SnapshotStats};

// Re-exported so handlers and options can be written with this crate alone.
pub use clientgo_apimachinery as apimachinery;
pub use clientgo_reflector::{Error as ReflectorError, ReflectorOptions};
pub use clientgo_store::{
    DeletedFinalStateUnknown, Indexers, KeyFunc, ObjectOrTombstone, ResourceEventHandler,
    StoreError, TransformFunc, meta_namespace_key, meta_namespace_key_func,
    split_meta_namespace_key,
};

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    /// Informers, listers and registrations are shared across tasks.
    #[test]
    fn handles_are_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<SharedIndexInformer<Pod>>();
        shared::<Lister<Pod>>();
        shared::<ResourceEventHandlerRegistration<Pod>>();
        shared::<SharedInformerFactory>();
        shared::<DynamicSharedInformerFactory>();
        shared::<GenericInformer>();
    }
}
