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
//! - [`Config`]: host, TLS, credentials (token, token file re-read every
//!   minute, basic auth, client certificates, exec plugins), impersonation,
//!   user agent, timeouts, rate limits, proxy. `Debug` and `Display` never
//!   print a secret.
//! - Loading: [`Config::infer`] (kubeconfig, else in-cluster, with an error
//!   listing what was tried), [`Config::from_kubeconfig`] with
//!   [`LoadingRules`] (explicit path, `$KUBECONFIG` merged with clientcmd's
//!   rules, `~/.kube/config`) and [`ConfigOverrides`], and
//!   [`Config::in_cluster`].
//! - [`RestClient`] and its [`Request`] builder: path segments checked,
//!   client-side throttling ([`TokenBucket`], watches exempt), retries on
//!   429/5xx with `Retry-After` and on broken GET connections, one retry
//!   with fresh credentials after a 401, `Warning` headers to a
//!   [`WarningHandler`], non-Status error bodies (a proxy's HTML page)
//!   turned into a Status.
//! - [`ResourceClient`]: get, list, watch, create, replace, replace_status,
//!   patch (merge, JSON, strategic, server-side apply), delete (with
//!   preconditions and propagation) and delete_collection, for typed,
//!   dynamic or metadata-only objects; discovery on [`RestClient`]
//!   ([`RestClient::server_version`], [`RestClient::discover_preferred`],
//!   [`RestClient::resolve`]).
//! - Pods' subresources: [`ResourceClient::evict`], logs
//!   ([`LogLines`]), exec and attach ([`RemoteProcess`]) and port-forward
//!   ([`PortForward`], [`PortForwarder`]) over WebSockets
//!   ([`Request::websocket`]); scales ([`ScaleClient`]).
//!
//! # Where this differs from client-go
//!
//! - The default rate limit is 50 QPS with a burst of 300
//!   ([`DEFAULT_QPS`]), not 5 and 10: see the constant for why.
//! - HTTP/2 is negotiated through ALPN by default: short requests share
//!   one connection, and watches go on connection lanes of their own, so
//!   a connection's stream limit never queues a watch forever (see
//!   [`Config::watch_header_wait`]); HTTP/2 pings notice a dead connection
//!   under a watch.
//! - The removed in-tree auth providers (gcp, azure) are refused with a
//!   message pointing at exec plugins; the `oidc` provider is supported
//!   ([`Credentials::Oidc`]).
//! - CBOR is not spoken; protobuf for built-in types is the default, with
//!   JSON for everything else, as client-go 1.35+ ([`ContentType`]).
//!
//! TLS is rustls with the ring provider; nothing links OpenSSL (`.ci/run`
//! checks the dependency tree). The one crate with "openssl" in its name,
//! `openssl-probe`, is pure Rust: reqwest's rustls feature pulls it in to
//! find certificate bundle paths, and this crate does not use it.

mod api_discovery;
mod auth;
mod client;
mod client_config;
mod config;
mod connection_lanes;
mod content_type;
mod discovery;
mod discovery_cache;
mod error;
mod in_cluster;
mod kubeconfig;
mod loading_rules;
mod metrics;
mod options;
mod pod_subresources;
mod port_forward;
#[cfg(feature = "prometheus")]
mod prometheus;
mod proxy_url;
mod remote_command;
mod request;
mod resource_client;
mod rest_mapper;
mod retry;
mod retry_on_conflict;
mod scale_client;
mod secret;
mod send;
mod throttle;
mod tls;
mod tls_file_reload;
mod warnings;
mod websocket_upgrade;

pub use api_discovery::{
    AGGREGATED_DISCOVERY_ACCEPT, ApiDiscovery, DiscoveredGroup, DiscoveredVersion,
};
pub use auth::{
    Credentials, DEFAULT_EXEC_TIMEOUT, EXEC_API_VERSIONS, ExecConfig, ExecEnvVar, OidcConfig,
};
pub use client::{ClientStats, RestClient};
pub use client_config::ConfigOverrides;
pub use config::{
    Config, DEFAULT_BURST, DEFAULT_MAX_RETRIES, DEFAULT_QPS, DEFAULT_WATCH_HEADER_WAIT,
    Impersonation, PemSource, Proxy, TOKEN_FILE_REFRESH, TlsConfig, default_user_agent,
};
pub use connection_lanes::LaneStats;
pub use content_type::{ContentType, PROTOBUF_ACCEPT};
pub use discovery::DiscoveredResource;
pub use discovery_cache::{CachedDiscovery, DEFAULT_DISCOVERY_CACHE_TTL, DiscoveryCacheStats};
pub use error::{AuthError, ConfigError, Error, ExecError, RequestError, Result};
pub use in_cluster::{InClusterOptions, SERVICE_ACCOUNT_DIR};
pub use kubeconfig::{
    AuthInfo, AuthProvider, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};
pub use loading_rules::LoadingRules;
pub use metrics::{RequestMetrics, set_default_request_metrics};
pub use options::{
    DeleteOptions, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy,
};
pub use pod_subresources::{
    EVICTION_RETRY_AFTER, EvictionError, LogLines, LogOptions, LogStream, MAX_LOG_LINE_BYTES,
};
pub use port_forward::{
    ForwardedPort, ForwarderStats, LOCAL_CLOSE_GRACE, MAX_PORTS_PER_SESSION, PortForward,
    PortForwardError, PortForwarder, PortMapping,
};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusRequestMetrics;
pub use remote_command::{
    ExitStatus, RemoteCommandError, RemoteProcess, StreamOptions, TerminalSize,
    V4_CHANNEL_PROTOCOL, V5_CHANNEL_PROTOCOL,
};
pub use request::{ByteStream, RawResponse, Request};
pub use resource_client::ResourceClient;
pub use rest_mapper::{DEFAULT_MISS_REFRESH_INTERVAL, DeferredRestMapper, MapperError, RestMapper};
pub use retry_on_conflict::{Backoff, on_error, retry_on_conflict};
pub use scale_client::{ScaleClient, ScaleError};
pub use secret::Secret;
pub use throttle::TokenBucket;
pub use tls_file_reload::DEFAULT_TLS_FILE_RELOAD_INTERVAL;
pub use warnings::{
    CollectWarnings, LogWarnings, NoWarnings, Warning, WarningHandler, parse_warning_header,
};

/// Re-exported so callers name the same `reqwest` types (methods, headers,
/// HTTP versions) this crate uses.
pub use reqwest;
pub use websocket_upgrade::{UPGRADE_TIMEOUT, UpgradeError, Upgraded, WebSocket};
