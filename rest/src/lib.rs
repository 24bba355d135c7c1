//! client-go's `rest` and `clientcmd` layers in Rust: where the API server
//! is, how to authenticate, and a client that sends requests the way
//! client-go does.
//!
//! Loading the kubeconfig `kubectl` uses and listing pods:
//!
//! ```no_run
//! use clientgo_apimachinery::ListOptions;
//! use clientgo_rest::{Config, ResourceClient, RestClient};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! # async fn run() -> Result<(), clientgo_rest::Error> {
//! let client = RestClient::new(Config::infer()?)?;
//! let pods = ResourceClient::<Pod>::default_namespaced(client);
//! for pod in pods.list(&ListOptions::default()).await?.items {
//!     println!("{}", pod.metadata.name.unwrap_or_default());
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # What is here
//!
//! Each module is named after the client-go package it mirrors; the names
//! everyday code uses are also at the crate root.
//!
//! - [`config`] (`rest.Config`, `tools/clientcmd`): [`Config`]: host,
//!   TLS, credentials (token, token file re-read every minute, basic
//!   auth, client certificates, exec plugins, OIDC), impersonation, user
//!   agent, timeouts, rate limits, proxy. `Debug` and `Display` never
//!   print a secret. Loading: [`Config::infer`] (kubeconfig, else
//!   in-cluster, with an error listing what was tried),
//!   [`Config::from_kubeconfig`] with [`LoadingRules`](config::LoadingRules)
//!   (explicit path, `$KUBECONFIG` merged with clientcmd's rules,
//!   `~/.kube/config`) and [`ConfigOverrides`](config::ConfigOverrides),
//!   and [`Config::in_cluster`].
//! - [`client`] (`rest`): [`RestClient`] and its [`Request`] builder: path
//!   segments checked, client-side throttling
//!   ([`TokenBucket`](client::TokenBucket), watches exempt), retries on
//!   429/5xx with `Retry-After` and on broken GET connections, one retry
//!   with fresh credentials after a 401, `Warning` headers to a
//!   [`WarningHandler`](config::WarningHandler), non-Status error bodies
//!   (a proxy's HTML page) turned into a Status.
//! - [`transport`] and [`auth`] (`transport`, `plugin/pkg/client/auth`):
//!   TLS through rustls, certificate files re-read while the client runs,
//!   connection lanes for watches, WebSocket upgrades
//!   ([`Request::websocket`]), and the credentials on each request.
//! - [`api`] (typed and dynamic clients): [`ResourceClient`]: get, list,
//!   watch, create, replace, replace_status, patch (merge, JSON,
//!   strategic, server-side apply), delete (with preconditions and
//!   propagation) and delete_collection, for typed, dynamic or
//!   metadata-only objects; pods' [`evict`](ResourceClient::evict) and
//!   logs ([`LogLines`](api::LogLines)).
//! - [`discovery`] (`discovery`, `restmapper`): [`Discovery`]
//!   ([`Discovery::server_version`], [`Discovery::discover_preferred`],
//!   [`Discovery::resolve`]), cached
//!   ([`CachedDiscovery`](discovery::CachedDiscovery)), and
//!   [`RestMapper`](discovery::RestMapper).
//! - [`scale`] (`scale`): [`ScaleClient`](scale::ScaleClient).
//! - [`tools`] (`tools/remotecommand`, `tools/portforward`): exec and attach
//!   ([`RemoteProcess`](tools::remotecommand::RemoteProcess)) and
//!   port-forward ([`PortForward`](tools::portforward::PortForward),
//!   [`PortForwarder`](tools::portforward::PortForwarder)) over
//!   WebSockets.
//! - [`util::retry`] (`util/retry`):
//!   [`retry_on_conflict`](util::retry::retry_on_conflict).
//! - [`metrics`] (`tools/metrics`): [`RequestMetrics`](metrics::RequestMetrics).
//!
//! # Naming
//!
//! A set of knobs for one call or one component is named `*Options`
//! ([`CreateOptions`], [`UpdateOptions`], [`PatchOptions`],
//! [`DeleteOptions`], [`LogOptions`](api::LogOptions),
//! [`StreamOptions`](tools::remotecommand::StreamOptions),
//! [`InClusterOptions`](config::InClusterOptions)); `*Config` is kept for
//! what client-go calls a configuration: [`Config`] (`rest.Config`) and
//! the kubeconfig's [`ExecConfig`](config::ExecConfig),
//! [`TlsConfig`](config::TlsConfig) and [`OidcConfig`](config::OidcConfig).
//!
//! # Where this differs from client-go
//!
//! - There is no client-side rate limit unless one is set, as with
//!   controller-runtime's configuration loaders, not client-go's 5 QPS
//!   and burst 10: see [`Config::qps`] for why.
//! - HTTP/2 is negotiated through ALPN by default: short requests share
//!   one connection, and watches go on connection lanes of their own, so
//!   a connection's stream limit never queues a watch forever (see
//!   [`Config::watch_header_wait`]); HTTP/2 pings notice a dead connection
//!   under a watch.
//! - The removed in-tree auth providers (gcp, azure) are refused with a
//!   message pointing at exec plugins; the `oidc` provider is supported
//!   ([`Credentials::Oidc`](config::Credentials::Oidc)).
//! - CBOR is not spoken; protobuf for built-in types is the default, with
//!   JSON for everything else, as client-go 1.35+ ([`ContentType`]).
//!
//! TLS is rustls with the ring provider; nothing links OpenSSL (`.ci/run`
//! checks the dependency tree). The one crate with "openssl" in its name,
//! `openssl-probe`, is pure Rust: reqwest's rustls feature pulls it in to
//! find certificate bundle paths, and this crate does not use it.

pub mod api;
pub mod auth;
pub mod client;
pub mod config;
pub mod discovery;
pub mod metrics;
pub mod scale;
pub mod tools;
pub mod transport;
pub mod util;

pub use api::{
    CreateOptions, DeleteOptions, Patch, PatchOptions, Preconditions, PropagationPolicy,
    ResourceClient, UpdateOptions,
};
pub use client::{Error, Request, RestClient, Result};
pub use config::{Config, ContentType};
pub use discovery::Discovery;
/// Re-exported so callers name the same `reqwest` types (methods, headers,
/// HTTP versions) this crate uses.
pub use reqwest;
