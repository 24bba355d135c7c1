//! [`ServerState`]: the state a running server's connections share, and
//! that its handle reads.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use bytes::Bytes;
use clientgo_apimachinery::GroupResource;
use tokio_util::sync::CancellationToken;

use crate::api::registry::ResourceRegistry;
use crate::api::subresources::PodLogs;
use crate::api::watch::WatchSettings;
use crate::faults::controls::Faults;
use crate::faults::request_log::{RequestLog, Verb};
use crate::server::auth::Auth;
use crate::server::in_flight::InFlight;
use crate::server::oidc::OidcIssuer;
use crate::store::storage::Storage;
use crate::streams::port_forward::PortForwardTargets;

/// The state a running server's connections share.
pub(crate) struct ServerState {
    pub(crate) storage: Arc<Storage>,
    /// What pods' `log` subresources serve.
    pub(crate) pod_logs: Arc<PodLogs>,
    /// Where pods' forwarded ports lead.
    pub(crate) port_forwards: Arc<PortForwardTargets>,
    /// Grows when CRDs are created through the API.
    pub(crate) registry: parking_lot::RwLock<ResourceRegistry>,
    pub(crate) watch: WatchSettings,
    pub(crate) shutdown: CancellationToken,
    pub(crate) faults: Arc<Faults>,
    pub(crate) log: Arc<RequestLog>,
    pub(crate) openapi_v2: Option<Bytes>,
    pub(crate) address: SocketAddr,
    pub(crate) auth: Auth,
    pub(crate) denied: parking_lot::Mutex<Vec<(Verb, GroupResource)>>,
    /// Connections accepted so far (numbers them for the request log).
    pub(crate) connections_accepted: AtomicU64,
    pub(crate) http2_max_concurrent_streams: u32,
    pub(crate) in_flight: InFlight,
    /// Whether protobuf is served to clients asking for it.
    pub(crate) protobuf: bool,
    /// Whether `/api` and `/apis` answer aggregated discovery to clients
    /// asking for it.
    pub(crate) aggregated_discovery: bool,
    /// Whether exec and attach speak `v5.channel.k8s.io`.
    pub(crate) channel_v5: bool,
    /// Whether lists and watches apply `shardSelector`.
    pub(crate) sharded_list_and_watch: bool,
    /// Whether large answers are gzip-compressed for clients asking for it.
    pub(crate) gzip: bool,
    /// Whether it serves HTTPS.
    pub(crate) tls: bool,
    /// The OpenID Connect issuer it plays, when asked to.
    pub(crate) oidc: Option<OidcIssuer>,
}
