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
//! | module | feature | client-go | what it holds |
//! |---|---|---|---|
//! | [`apimachinery`] | always | `k8s.io/apimachinery` | `Object`, `ApiResource`, `ListOptions`, selectors, `Status`, `DynamicObject` |
//! | `rest` | `rest` (default) | `rest`, `tools/clientcmd`, `discovery`, `restmapper`, `scale`, `util/retry`, `tools/remotecommand`, `tools/portforward` | `Config` from a kubeconfig or in-cluster, `RestClient`, `ResourceClient<K>` (eviction, logs, exec, attach and port-forward for pods), cached discovery, `RestMapper`, `ScaleClient`, `retry_on_conflict`, `PortForwarder` |
//! | `listwatch` | `listwatch` | `tools/cache` `ListerWatcher`, `tools/pager`, `tools/watch` | list and watch streams, decoded as they arrive; `RetryWatcher`, `until` |
//! | `store` | `store` | `tools/cache` stores | `Indexer`, `DeltaFIFO`, `RealFIFO`, tombstones |
//! | `reflector` | `reflector` | `tools/cache` `Reflector` | list, watch and watch-list into a store, with client-go's recovery rules |
//! | `informers` | `informers` (default) | `informers`, `tools/cache` informers, listers, `tools/watch.UntilWithSync` | `SharedInformerFactory`, `SharedIndexInformer`, handlers, `Lister`, generated `factory.core().v1().pods()`, `until_with_sync` |
//! | `workqueue` | `workqueue` | `util/workqueue` | rate-limited and delaying queues |
//! | `leaderelection` | `leaderelection` | `tools/leaderelection` | Lease-based leader election |
//! | `record` | `record` | `tools/record`, `tools/events` | Events with client-go's correlator |
//! | `protobuf` | `protobuf` | `application/vnd.kubernetes.protobuf` codecs | decoders and encoders of k8s-openapi's types |
//! | `metrics` | `metrics` | `tools/metrics` | the metric traits; `prometheus` adds exports |
//! | `testing` | `testing` | (envtest, fake clients) | an API server for tests over real HTTP(S) |
//!
//! `full` turns on every module but `testing`. The modules are the
//! workspace's crates re-exported whole (`clientgo::informers` is
//! `clientgo_informers`), so their documentation is this crate's.
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
#[cfg(feature = "workqueue")]
pub use clientgo_workqueue as workqueue;

/// What a controller names every day, from every enabled module:
/// `use clientgo::prelude::*;`.
pub mod prelude {
    pub use clientgo_apimachinery::{ApiResource, LabelSelector, ListOptions, Object};
    pub use tokio_util::sync::CancellationToken;

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
