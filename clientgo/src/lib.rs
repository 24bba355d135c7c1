//! client-go in Rust, as one crate: each client-go package is a module
//! here, behind a cargo feature of the same name, and [`prelude`] holds
//! what a controller names every day.
//!
//! ```toml
//! clientgo = { git = "https://github.com/clientgo-rs/clientgo-rs", features = ["workqueue"] }
//! k8s-openapi = { version = "0.29", features = ["v1_36"] } # the cluster's version
//! ```
//!
//! # The map
//!
//! Each client-go package, and where it lives here. Every name links to
//! its documentation, so `cargo doc` fails when the map goes stale.
//!
//! | client-go package | here | feature |
//! |---|---|---|
//! | `apimachinery/pkg/apis/meta/v1`, `runtime`, `api/errors` | [`apimachinery`]: [`Object`](apimachinery::Object), [`ListOptions`](apimachinery::ListOptions), [`WatchEvent`](apimachinery::WatchEvent), [`Status`](apimachinery::Status), [`DynamicObject`](apimachinery::DynamicObject), [`PartialObjectMetadata`](apimachinery::PartialObjectMetadata) | always |
//! | `apimachinery/pkg/labels`, `fields` | [`apimachinery::LabelSelector`], [`apimachinery::FieldSelector`], [`apimachinery::ShardSelector`] | always |
//! | `rest` | [`rest::client`]: [`RestClient`](rest::RestClient), [`Request`](rest::Request); [`rest::Config`] | `rest` |
//! | `tools/clientcmd`, `tools/clientcmd/api` | [`rest::config`]: [`Kubeconfig`](rest::config::Kubeconfig), [`LoadingRules`](rest::config::LoadingRules), [`ConfigOverrides`](rest::config::ConfigOverrides), [`Config::infer`](rest::Config::infer) | `rest` |
//! | `transport` | [`rest::transport`] | `rest` |
//! | `plugin/pkg/client/auth` (exec, oidc) | [`rest::auth`], [`Credentials`](rest::config::Credentials) | `rest` |
//! | `kubernetes` (typed clientsets), `dynamic`, `metadata` | [`rest::ResourceClient`] over a typed, [`DynamicObject`](apimachinery::DynamicObject) or [`PartialObjectMetadata`](apimachinery::PartialObjectMetadata) object; [`rest::api`] | `rest` |
//! | `discovery`, `discovery/cached` | [`rest::discovery`]: [`Discovery`](rest::Discovery), [`CachedDiscovery`](rest::discovery::CachedDiscovery) | `rest` |
//! | `restmapper` | [`rest::discovery::RestMapper`], [`rest::discovery::DeferredRestMapper`] | `rest` |
//! | `scale` | [`rest::scale::ScaleClient`] | `rest` |
//! | `util/retry` | [`rest::util::retry`] | `rest` |
//! | `util/flowcontrol` (client-side rate limit) | [`rest::client::TokenBucket`], [`rest::Config::qps`] | `rest` |
//! | server-side apply (`applyconfigurations`, `Apply`) | [`rest::Patch::Apply`], [`rest::PatchOptions`] | `rest` |
//! | `tools/remotecommand` | [`rest::tools::remotecommand`] | `rest` |
//! | `tools/portforward` | [`rest::tools::portforward`] | `rest` |
//! | `tools/metrics` | [`metrics`], [`rest::metrics`] | `metrics`, `rest` |
//! | `tools/cache`: `ListerWatcher`, `tools/pager` | [`listwatch::ListerWatcher`], [`listwatch::ResourceListerWatcher`], [`listwatch::Pager`] | `listwatch` |
//! | `tools/watch` | [`informers::watch`]: [`RetryWatcher`](informers::watch::RetryWatcher), [`until`](informers::watch::until), [`until_with_sync`](informers::watch::until_with_sync) | `informers` |
//! | `tools/cache`: stores and queues | [`store`]: [`Indexer`](store::Indexer), [`DeltaFifo`](store::DeltaFifo), [`RealFifo`](store::RealFifo) | `store` |
//! | `tools/cache`: `Reflector` | [`reflector::Reflector`] | `reflector` |
//! | `tools/cache`: `SharedIndexInformer`, handlers, `WaitForCacheSync`, `MetaNamespaceKeyFunc` | [`informers::SharedIndexInformer`], [`informers::ResourceEventHandlerFuncs`], [`informers::wait_for_cache_sync`], [`store::meta_namespace_key`] | `informers` |
//! | `informers`, `listers` (generated) | [`informers::SharedInformerFactory`], [`informers::Lister`], [`informers::builtin`] | `informers` |
//! | `dynamic/dynamicinformer`, `metadata/metadatainformer` | [`informers::DynamicSharedInformerFactory`], [`informers::MetadataSharedInformerFactory`] | `informers` |
//! | `util/workqueue` | [`workqueue`] | `workqueue` |
//! | `tools/leaderelection` | [`leaderelection`] | `leaderelection` |
//! | controller-runtime's `builder`, `reconcile`, `handler`, `predicate`, `manager`, `controllerutil` (not client-go) | [`controller`]: [`Controller`](controller::Controller), [`Manager`](controller::Manager), [`predicate`](controller::predicate), [`controllerutil`](controller::controllerutil) | `controller` |
//! | `tools/record`, `tools/events` | [`record`] | `record` |
//! | protobuf codecs (`k8s.io/api` `generated.pb.go`) | [`protobuf`] | `protobuf` |
//! | controller-gen's CRD generation, kube-rs's `#[derive(CustomResource)]` (not client-go) | [`crd`]: [`CustomResource`](crd::CustomResource), [`Schema`](crd::Schema), [`install_crds`](crd::install_crds) | `derive` |
//! | controller-runtime's `webhook`, `webhook/admission`, `webhook/conversion`, `certwatcher` (not client-go) | [`webhook`]: [`Validator`](webhook::Validator), [`Defaulter`](webhook::Defaulter), [`Conversion`](webhook::Conversion), [`WebhookServer`](webhook::WebhookServer) | `webhook` |
//! | (fake clientsets, a server with faults) | [`testing::TestApiServer`] | `testing` |
//! | controller-runtime's `pkg/envtest` | [`testing::envtest::ControlPlane`]: a real kube-apiserver and etcd | `envtest` |
//!
//! `full` turns on every module but `testing` and `envtest`. The modules are the
//! workspace's crates re-exported whole (`clientgo::informers` is
//! `clientgo_informers`), so their documentation is this crate's. Beyond
//! client-go: compact storage ([`informers::Storage`]), warm restart
//! ([`informers::SnapshotOptions`]), sharding
//! ([`leaderelection::ShardElector`]).
//!
//! # Example
//!
//! An informer of pods, with no option set: it asks for protobuf,
//! watch-lists, and keeps each pod compact; handlers and listers see
//! `Pod`s. (It runs here against the `testing` module's API server; point
//! the client at a cluster with `RestClient::infer()`.)
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use clientgo::prelude::*;
//! use k8s_openapi::api::core::v1::Pod;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = clientgo_testing::TestApiServer::builder().start().await?;
//! let client = RestClient::new(Config::new(server.url()))?;
//! let factory = SharedInformerFactory::new(client, Duration::ZERO);
//! let pods = factory.core().v1().pods();
//! pods.informer().add_event_handler(
//!     ResourceEventHandlerFuncs::new().on_add(|pod: &Arc<Pod>, _| {
//!         println!("added: {:?}", pod.metadata.name);
//!     }),
//! )?;
//! let stop = CancellationToken::new();
//! factory.start(&stop);
//! factory.wait_for_cache_sync(Duration::from_secs(10)).await?;
//! println!("{} pods cached", pods.informer().lister().len());
//! stop.cancel();
//! factory.shutdown().await;
//! # Ok(())
//! # }
//! ```

pub use clientgo_apimachinery as apimachinery;
#[cfg(feature = "controller")]
pub use clientgo_controller as controller;
#[cfg(feature = "derive")]
pub mod crd;
#[cfg(feature = "informers")]
pub use clientgo_informers as informers;
#[cfg(feature = "leaderelection")]
pub use clientgo_leaderelection as leaderelection;
#[cfg(feature = "listwatch")]
pub use clientgo_listwatch as listwatch;
#[cfg(feature = "metrics")]
pub use clientgo_metrics as metrics;
#[cfg(feature = "protobuf")]
pub use clientgo_protobuf as protobuf;
#[cfg(feature = "record")]
pub use clientgo_record as record;
#[cfg(feature = "reflector")]
pub use clientgo_reflector as reflector;
#[cfg(feature = "rest")]
pub use clientgo_rest as rest;
#[cfg(feature = "store")]
pub use clientgo_store as store;
#[cfg(feature = "testing")]
pub use clientgo_testing as testing;
#[cfg(feature = "webhook")]
pub use clientgo_webhook as webhook;
#[cfg(feature = "workqueue")]
pub use clientgo_workqueue as workqueue;

/// What a controller names every day, from every enabled module:
/// `use clientgo::prelude::*;`.
pub mod prelude {
    pub use clientgo_apimachinery::{ApiResource, LabelSelector, ListOptions, Object};
    pub use tokio_util::sync::CancellationToken;

    #[cfg(feature = "controller")]
    pub use clientgo_controller::{
        Action, Controller, Manager, ManagerOptions, Replicas, Request, Retry, WatchOptions,
    };
    #[cfg(feature = "informers")]
    pub use clientgo_informers::{
        HandlerOptions, InformerFactoryOptions, Lister, MetadataView, NamespaceLister,
        ObjectOrTombstone, ResourceEventHandler, ResourceEventHandlerFuncs, SharedIndexInformer,
        SharedInformerFactory, Storage, meta_namespace_key, split_meta_namespace_key,
    };
    #[cfg(feature = "leaderelection")]
    pub use clientgo_leaderelection::{Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
    #[cfg(feature = "record")]
    pub use clientgo_record::{BroadcasterOptions, EventBroadcaster, EventRecorder, EventType};
    #[cfg(feature = "rest")]
    pub use clientgo_rest::{
        Config, ContentType, CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient,
        RestClient,
        util::retry::{Backoff, retry_on_conflict},
    };
    #[cfg(feature = "workqueue")]
    pub use clientgo_workqueue::{
        QueueOptions, RateLimitingQueue, default_controller_rate_limiter,
    };
}
