//! [`ClientInner`]: what every clone of a
//! [`RestClient`](crate::RestClient) and every [`Request`](crate::Request)
//! it made share: the connection pools, the credentials, the rate limiter,
//! the counters.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::auth::authenticator::Authenticator;
use crate::client::throttle::TokenBucket;
use crate::config::content_type::ContentType;
use crate::config::warnings::{WarningHandler, parse_warning_header};
use crate::metrics::request_metrics::RequestMetrics;
use crate::transport::connection_lanes::ConnectionLanes;
use crate::transport::tls_reload::TlsFileReload;

/// The state of one client.
pub(crate) struct ClientInner {
    /// The server URL without a trailing slash (may hold a path prefix).
    pub(crate) base_url: String,
    pub(crate) namespace: String,
    /// The HTTP clients: one for short requests, lanes for watches.
    pub(crate) lanes: ConnectionLanes,
    /// The HTTP/1.1-only client WebSocket upgrades go through: the API
    /// server upgrades only HTTP/1.1 connections, and an upgraded
    /// connection leaves the pool, so certificate changes reach the next
    /// one through the shared certificate slot.
    pub(crate) upgrade_http: reqwest::Client,
    /// How long a watch waits for response headers before it is taken as
    /// queued behind its connection's stream limit.
    pub(crate) watch_header_wait: Duration,
    pub(crate) auth: Authenticator,
    pub(crate) throttle: Option<TokenBucket>,
    pub(crate) max_retries: u32,
    pub(crate) timeout: Option<Duration>,
    /// Impersonation headers, added to every request.
    pub(crate) default_headers: HeaderMap,
    pub(crate) warning_handler: Arc<dyn WarningHandler>,
    pub(crate) counters: Counters,
    pub(crate) content_type: ContentType,
    /// Where requests are reported: set at construction from the
    /// configuration or the process default, else at most once later by
    /// [`RestClient::report_requests_to`](crate::RestClient::report_requests_to).
    pub(crate) request_metrics: OnceLock<Arc<dyn RequestMetrics>>,
    /// The `host` label of request metrics: every request goes to the
    /// base URL's host, so it is worked out once.
    pub(crate) host_label: String,
    /// Re-reads certificate files, when the configuration names any.
    pub(crate) tls_reload: Option<TlsFileReload>,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) requests: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) throttled: AtomicU64,
    pub(crate) throttle_wait_micros: AtomicU64,
    pub(crate) reauthentications: AtomicU64,
}

impl ClientInner {
    /// Replaces the connection pools, so the next requests open new
    /// connections (and present a new client certificate). Requests and
    /// watches in flight keep their connections until they end.
    pub(crate) fn renew_connections(&self) {
        self.lanes.renew();
        tracing::debug!(base_url = %self.base_url, "TLS credentials changed; new connections from now on");
    }

    /// Hands every `Warning` header of a response to the handler.
    pub(crate) fn handle_warnings(&self, headers: &HeaderMap) {
        for value in headers.get_all(reqwest::header::WARNING) {
            if let Ok(text) = value.to_str() {
                for warning in parse_warning_header(text) {
                    self.warning_handler.handle_warning(&warning);
                }
            }
        }
    }
}

impl std::fmt::Debug for ClientInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Named as the client it belongs to: this is what a `RestClient`
        // and a `Request` show.
        f.debug_struct("RestClient")
            .field("base_url", &self.base_url)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}
