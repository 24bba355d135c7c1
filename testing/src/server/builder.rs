//! [`TestApiServerBuilder`]: how a [`TestApiServer`](crate::TestApiServer) is
//! configured and started, and the defaults it shares with kube-apiserver.
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use bytes::Bytes;
use clientgo_apimachinery::{ApiResource, GroupResource};
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::api::registry::ResourceRegistry;
use crate::api::watch::WatchSettings;
use crate::faults::controls::Faults;
use crate::faults::request_log::{RequestLog, Verb};
use crate::server::auth::Auth;
use crate::server::connection::accept;
use crate::server::handle::TestApiServer;
use crate::server::in_flight::InFlight;
use crate::server::state::ServerState;
use crate::server::tls;
use crate::store::storage::{Storage, StorageOptions};
use crate::util::certificate_authority::ServerCertificateOptions;

/// How a [`TestApiServer`] is built.
#[derive(Debug, Clone)]
pub struct TestApiServerBuilder {
    registry: ResourceRegistry,
    storage: StorageOptions,
    bookmark_interval: Duration,
    openapi_v2: Option<Bytes>,
    tls: bool,
    server_certificate: ServerCertificateOptions,
    bearer_token: Option<String>,
    client_certificate_auth: bool,
    denied: Vec<(Verb, GroupResource)>,
    port: u16,
    watch_list: bool,
    protobuf: bool,
    aggregated_discovery: bool,
    channel_v5: bool,
    sharded_list_and_watch: bool,
    gzip: bool,
    oidc: Option<crate::server::oidc::OidcIssuer>,
    watch_cache: bool,
    http2_max_concurrent_streams: u32,
    max_requests_in_flight: Option<usize>,
}

/// kube-apiserver's `--http2-max-streams-per-connection` default (0 there
/// means Go's default of 100 as well).
pub const DEFAULT_HTTP2_MAX_STREAMS: u32 = 100;

/// kube-apiserver's `--max-requests-inflight` default: the most requests
/// that are not long-running (watches are) served at once.
pub const DEFAULT_MAX_REQUESTS_IN_FLIGHT: usize = 400;

/// How often the real server's watch cache sends bookmarks (about once a
/// minute, the first about a minute after the watch starts).
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

impl TestApiServer {
    /// A builder with the defaults.
    pub fn builder() -> TestApiServerBuilder {
        TestApiServerBuilder::default()
    }
}

impl Default for TestApiServerBuilder {
    /// As kube-apiserver 1.36 with its defaults: the common built-in
    /// resources, a watch cache sending bookmarks every 60 s (the first
    /// after 60 s), at most 100 concurrent HTTP/2 streams per connection,
    /// at most 400 requests in flight (watches aside), and 10,000 events of
    /// history.
    fn default() -> Self {
        TestApiServerBuilder {
            registry: ResourceRegistry::with_builtins(),
            storage: StorageOptions::default(),
            bookmark_interval: DEFAULT_BOOKMARK_INTERVAL,
            openapi_v2: None,
            tls: false,
            server_certificate: ServerCertificateOptions::default(),
            bearer_token: None,
            client_certificate_auth: false,
            denied: Vec::new(),
            port: 0,
            watch_list: true,
            protobuf: true,
            aggregated_discovery: true,
            channel_v5: true,
            sharded_list_and_watch: false,
            gzip: true,
            oidc: None,
            watch_cache: true,
            http2_max_concurrent_streams: DEFAULT_HTTP2_MAX_STREAMS,
            max_requests_in_flight: Some(DEFAULT_MAX_REQUESTS_IN_FLIGHT),
        }
    }
}

impl TestApiServerBuilder {
    /// Also serves this resource (a custom resource, say).
    pub fn resource(mut self, resource: ApiResource) -> Self {
        self.registry.register(resource);
        self
    }

    /// How many events of history the store keeps.
    pub fn history_limit(mut self, limit: usize) -> Self {
        self.storage = self.storage.history_limit(limit);
        self
    }

    /// How often watches that allow bookmarks get one, the first one this
    /// long after the watch starts. The real server's watch cache sends
    /// about one a minute ([`DEFAULT_BOOKMARK_INTERVAL`]); tests that want
    /// them sooner say so here.
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.bookmark_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Serves watches and lists as kube-apiserver with
    /// `--watch-cache=false` (or a server without a cache) does: straight
    /// from etcd, so no watch ever gets a bookmark, a watch from a
    /// compacted resourceVersion is answered with a 410 ERROR event, and a
    /// list at resourceVersion "0" is paginated by its `limit`. On (a watch
    /// cache) by default.
    pub fn watch_cache(mut self, enabled: bool) -> Self {
        self.watch_cache = enabled;
        self
    }

    /// The HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS` the server advertises:
    /// how many requests one connection may have open at once (a client
    /// must queue or open another connection beyond it).
    /// [`DEFAULT_HTTP2_MAX_STREAMS`] (100) by default, as kube-apiserver's
    /// `--http2-max-streams-per-connection`.
    pub fn http2_max_concurrent_streams(mut self, streams: u32) -> Self {
        self.http2_max_concurrent_streams = streams.max(1);
        self
    }

    /// The most requests served at once, watches aside (kube-apiserver's
    /// `--max-requests-inflight`, [`DEFAULT_MAX_REQUESTS_IN_FLIGHT`] by
    /// default); beyond it a request gets the real server's 429: a
    /// `text/plain` body and `Retry-After: 1`. `None` for no limit.
    pub fn max_requests_in_flight(mut self, limit: Option<usize>) -> Self {
        self.max_requests_in_flight = limit;
        self
    }

    /// Serves this document (a Kubernetes OpenAPI v2 spec) at
    /// `/openapi/v2`; without it that path is 404.
    pub fn openapi_v2(mut self, spec: impl Into<Bytes>) -> Self {
        self.openapi_v2 = Some(spec.into());
        self
    }

    /// Serves HTTPS with a certificate authority generated at start (its
    /// PEM is [`TestApiServer::ca_pem`]); HTTP/2 and HTTP/1.1 are offered
    /// by ALPN.
    pub fn tls(mut self) -> Self {
        self.tls = true;
        self
    }

    /// Serves HTTPS with a server certificate made as `options` say (an
    /// expired one, or one for other names), to test that clients refuse
    /// it. Implies [`tls`](Self::tls).
    pub fn tls_server_certificate(mut self, options: ServerCertificateOptions) -> Self {
        self.server_certificate = options;
        self.tls = true;
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request but the
    /// public ones (`/version`, `/healthz`, `/readyz`, `/livez`); others get
    /// 401 Unauthorized.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Accepts a client certificate signed by the server's CA as
    /// authentication (implies [`tls`](Self::tls)); the server issues one,
    /// [`TestApiServer::client_certificate`]. With a bearer token also set,
    /// either authenticates.
    pub fn client_certificate_auth(mut self) -> Self {
        self.client_certificate_auth = true;
        self.tls = true;
        self
    }

    /// Forbids `verb` on `resource`: such requests get 403 Forbidden, as
    /// from a missing RBAC permission. See also [`TestApiServer::deny`].
    pub fn deny(mut self, verb: Verb, resource: GroupResource) -> Self {
        self.denied.push((verb, resource));
        self
    }

    /// Answers watch-list requests (`sendInitialEvents`) as a server with
    /// the WatchList feature off does (422 Invalid), to test clients'
    /// fallback to list-then-watch. On by default.
    pub fn watch_list(mut self, supported: bool) -> Self {
        self.watch_list = supported;
        self
    }

    /// Serves protobuf to clients that ask for it, for built-in types, as
    /// kube-apiserver does (on by default). Off, it answers JSON whatever
    /// is asked, as an aggregated API server without protobuf does, to test
    /// clients' fallback.
    pub fn protobuf(mut self, serve: bool) -> Self {
        self.protobuf = serve;
        self
    }

    /// Answers aggregated discovery (one `APIGroupDiscoveryList` for `/api`
    /// and one for `/apis`) to clients asking for it, as kube-apiserver
    /// does since 1.26 (on by default). Off, it plays an older server,
    /// which answers the legacy documents whatever is asked.
    pub fn aggregated_discovery(mut self, serve: bool) -> Self {
        self.aggregated_discovery = serve;
        self
    }

    /// Whether exec and attach speak `v5.channel.k8s.io` (on by default,
    /// as 1.30+). Off, the server plays an older one that speaks
    /// `v4.channel.k8s.io` alone, which cannot close stdin.
    pub fn channel_v5(mut self, serve: bool) -> Self {
        self.channel_v5 = serve;
        self
    }

    /// Turns on the `ShardedListAndWatch` feature gate (alpha in 1.36, off
    /// by default as there): lists, watches and watch-lists apply
    /// `shardSelector`, lists echo it in `metadata.shardInfo`, and a
    /// selector that cannot be read is a 500, as kube-apiserver answers.
    /// Off, the field is ignored.
    pub fn sharded_list_and_watch(mut self, on: bool) -> Self {
        self.sharded_list_and_watch = on;
        self
    }

    /// Compresses answers to resource requests other than watches with
    /// gzip when the client's `Accept-Encoding` asks for it and the body is
    /// over 128 KiB, as kube-apiserver does with its `APIResponseCompression`
    /// feature (on by default). Off, it plays a server with that feature off.
    pub fn gzip(mut self, compress: bool) -> Self {
        self.gzip = compress;
        self
    }

    /// Encodes objects of built-in types as protobuf when they are written
    /// (see [`StorageOptions::encode_protobuf_on_write`]); off by default.
    pub fn encode_protobuf_on_write(mut self, encode: bool) -> Self {
        self.storage = self.storage.encode_protobuf_on_write(encode);
        self
    }

    /// Plays an OpenID Connect issuer too, at the server's own URL:
    /// discovery and a token endpoint trading `issuer`'s refresh token for
    /// its ID token, for tests of clients' `oidc` auth-provider. Combine
    /// with [`bearer_token`](Self::bearer_token) set to that ID token.
    pub fn oidc_issuer(mut self, issuer: crate::server::oidc::OidcIssuer) -> Self {
        self.oidc = Some(issuer);
        self
    }

    /// Binds this port instead of an ephemeral one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Binds 127.0.0.1 (on an ephemeral port unless one was given) and
    /// starts serving.
    pub async fn start(self) -> std::io::Result<TestApiServer> {
        let tls = if self.tls {
            Some(
                tls::generate(self.client_certificate_auth, &self.server_certificate)
                    .map_err(std::io::Error::other)?,
            )
        } else {
            None
        };
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await?;
        let address = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let state = Arc::new(ServerState {
            storage: Arc::new(Storage::new(self.storage)),
            pod_logs: Arc::default(),
            port_forwards: Default::default(),
            registry: parking_lot::RwLock::new(self.registry),
            watch: WatchSettings {
                bookmark_interval: self.watch_cache.then_some(self.bookmark_interval),
                watch_list: self.watch_list,
                watch_cache: self.watch_cache,
            },
            http2_max_concurrent_streams: self.http2_max_concurrent_streams,
            in_flight: InFlight::new(self.max_requests_in_flight),
            shutdown,
            faults: Arc::new(Faults::default()),
            log: Arc::new(RequestLog::default()),
            openapi_v2: self.openapi_v2,
            address,
            auth: Auth {
                bearer_token: Mutex::new(self.bearer_token),
                client_certificate: self.client_certificate_auth,
            },
            denied: parking_lot::Mutex::new(self.denied),
            connections_accepted: AtomicU64::new(0),
            protobuf: self.protobuf,
            aggregated_discovery: self.aggregated_discovery,
            channel_v5: self.channel_v5,
            sharded_list_and_watch: self.sharded_list_and_watch,
            gzip: self.gzip,
            tls: tls.is_some(),
            oidc: self.oidc,
        });
        let acceptor = tls.as_ref().map(|tls| tls.acceptor.clone());
        let accepting = tokio::spawn(accept(listener, acceptor, Arc::clone(&state)));
        Ok(TestApiServer {
            address,
            state,
            accepting,
            ca_pem: tls.as_ref().map(|tls| tls.ca_pem.clone()),
            client_certificate: tls.and_then(|tls| tls.client),
        })
    }
}
