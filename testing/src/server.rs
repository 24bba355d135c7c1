//! [`TestApiServer`]: the HTTP server on loopback.

use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clientgo_apimachinery::{ApiResource, GroupResource, ListOptions, Status};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::crd;
use crate::discovery;
use crate::faults::{Failure, Faults};
use crate::handlers::{self, Answer, Representation};
use crate::in_flight::InFlight;
use crate::registry::ResourceRegistry;
use crate::request_log::{RequestLog, RequestRecord, Verb};
use crate::request_path::{self, ResourcePath};
use crate::storage::{Storage, StorageOptions};
use crate::tls::{self, CertificateAndKey, ServerCertificateOptions};
use crate::watch::{self, WatchSettings};

/// The largest request body accepted (the real server's 3 MiB).
const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

type ResponseBody = BoxBody<Bytes, Infallible>;

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

struct ServerState {
    storage: Arc<Storage>,
    /// Grows when CRDs are created through the API.
    registry: parking_lot::RwLock<ResourceRegistry>,
    watch: WatchSettings,
    shutdown: CancellationToken,
    faults: Arc<Faults>,
    log: Arc<RequestLog>,
    openapi_v2: Option<Bytes>,
    address: SocketAddr,
    auth: Auth,
    denied: parking_lot::Mutex<Vec<(Verb, GroupResource)>>,
    /// Connections accepted so far (numbers them for the request log).
    connections_accepted: AtomicU64,
    http2_max_concurrent_streams: u32,
    in_flight: InFlight,
}

/// Who may call the server.
struct Auth {
    /// The accepted token; replaceable to test token rotation.
    bearer_token: Mutex<Option<String>>,
    client_certificate: bool,
}

impl Auth {
    fn required(&self) -> bool {
        self.bearer_token.lock().is_some() || self.client_certificate
    }
}

/// A Kubernetes API server for tests, on 127.0.0.1, speaking plain HTTP/1.1
/// and HTTP/2 (prior knowledge).
///
/// Dropping it stops it: the listener closes and open watches end.
///
/// ```
/// use clientgo_testing::TestApiServer;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let server = TestApiServer::builder().start().await?;
/// let url = format!("{}/api/v1/namespaces/default/pods", server.url());
/// assert!(url.starts_with("http://127.0.0.1:"));
/// # Ok(())
/// # }
/// ```
pub struct TestApiServer {
    address: SocketAddr,
    state: Arc<ServerState>,
    accepting: tokio::task::JoinHandle<()>,
    ca_pem: Option<String>,
    client_certificate: Option<CertificateAndKey>,
}

impl fmt::Debug for TestApiServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestApiServer")
            .field("url", &self.url())
            .field("storage", &self.state.storage)
            .finish()
    }
}

impl TestApiServer {
    /// A builder with the defaults.
    pub fn builder() -> TestApiServerBuilder {
        TestApiServerBuilder::default()
    }

    /// The base URL (`http://127.0.0.1:PORT`, or `https://` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.address)
    }

    /// The PEM of the certificate authority that signed the server's
    /// certificate, when serving TLS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The client certificate and key the server accepts, when
    /// client-certificate authentication is on.
    pub fn client_certificate(&self) -> Option<&CertificateAndKey> {
        self.client_certificate.as_ref()
    }

    /// A kubeconfig pointing at this server, as a user's would: the server
    /// URL, the CA data, and the token or client certificate; context
    /// `clientgo-testing`, namespace `default`.
    pub fn kubeconfig(&self) -> String {
        use base64::Engine as _;
        let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let mut cluster = format!("    server: {}\n", self.url());
        if let Some(ca) = &self.ca_pem {
            cluster.push_str(&format!("    certificate-authority-data: {}\n", encode(ca)));
        }
        let mut user = String::new();
        if let Some(token) = self.state.auth.bearer_token.lock().as_ref() {
            user.push_str(&format!("    token: {token}\n"));
        }
        if let Some(client) = &self.client_certificate {
            user.push_str(&format!(
                "    client-certificate-data: {}\n    client-key-data: {}\n",
                encode(&client.certificate_pem),
                encode(&client.key_pem)
            ));
        }
        if user.is_empty() {
            user.push_str("    {}\n");
        }
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: clientgo-testing\n  cluster:\n{cluster}\
             contexts:\n- name: clientgo-testing\n  context:\n    cluster: clientgo-testing\n    \
             user: clientgo-testing\n    namespace: default\ncurrent-context: clientgo-testing\n\
             users:\n- name: clientgo-testing\n  user:\n{user}"
        )
    }

    /// Writes [`kubeconfig`](Self::kubeconfig) to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }

    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The server's store, for seeding and inspecting state directly.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.state.storage
    }

    /// The fault controls: failed requests, dropped, stalled or corrupted
    /// watches, latency, restarts.
    pub fn faults(&self) -> &Faults {
        &self.state.faults
    }

    /// Every request answered so far.
    pub fn requests(&self) -> &RequestLog {
        &self.state.log
    }

    /// Compacts the history up to the current revision: watches and exact
    /// lists from before it get 410 from now on.
    pub fn compact_history(&self) {
        let storage = &self.state.storage;
        storage.compact(storage.current_revision());
    }

    /// Forbids `verb` on `resource` from now on (403 Forbidden).
    pub fn deny(&self, verb: Verb, resource: GroupResource) {
        self.state.denied.lock().push((verb, resource));
    }

    /// Accepts `token` instead of the bearer token set when building (the
    /// old one is refused from now on), as after a token rotation. Only
    /// for servers built with [`bearer_token`](TestApiServerBuilder::bearer_token).
    pub fn rotate_bearer_token(&self, token: impl Into<String>) {
        let mut current = self.state.auth.bearer_token.lock();
        if current.is_some() {
            *current = Some(token.into());
        }
    }

    /// Lifts every deny rule.
    pub fn allow_all(&self) {
        self.state.denied.lock().clear();
    }

    /// Stops the server: no new connections, open watches end.
    pub fn stop(&self) {
        self.state.shutdown.cancel();
        self.accepting.abort();
    }
}

impl Drop for TestApiServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<ServerState>,
) {
    loop {
        let accepted = tokio::select! {
            () = state.shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let state = Arc::clone(&state);
        let acceptor = acceptor.clone();
        let connection = state.connections_accepted.fetch_add(1, Ordering::Relaxed) + 1;
        tokio::spawn(async move {
            match acceptor {
                None => {
                    serve(
                        stream,
                        Peer {
                            certified: false,
                            connection,
                        },
                        state,
                    )
                    .await
                }
                Some(acceptor) => {
                    let handshake =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream))
                            .await;
                    let Ok(Ok(stream)) = handshake else {
                        return;
                    };
                    let certified = stream
                        .get_ref()
                        .1
                        .peer_certificates()
                        .is_some_and(|certificates| !certificates.is_empty());
                    serve(
                        stream,
                        Peer {
                            certified,
                            connection,
                        },
                        state,
                    )
                    .await;
                }
            }
        });
    }
}

/// Serves one connection until it ends, the server stops or restarts.
/// What the server knows of a connection's client.
#[derive(Debug, Clone, Copy)]
struct Peer {
    /// Whether it presented a client certificate the server trusts.
    certified: bool,
    /// The connection's number, from 1 in accept order.
    connection: u64,
}

async fn serve<S>(stream: S, peer: Peer, state: Arc<ServerState>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let shutdown = state.shutdown.clone();
    let restarted = state.faults.connection_token();
    let streams = state.http2_max_concurrent_streams;
    let service = service_fn(move |request| {
        let state = Arc::clone(&state);
        async move { dispatch(state, request, peer).await.ok_or(ConnectionReset) }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http2().max_concurrent_streams(streams);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        () = shutdown.cancelled() => {}
        () = restarted.cancelled() => {}
    }
}

fn json_response(code: u16, body: Vec<u8>) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() =
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn status_response(status: &Status) -> Response<ResponseBody> {
    let code = if status.code == 0 { 500 } else { status.code };
    json_response(code, serde_json::to_vec(status).unwrap_or_default())
}

fn answer_response(answer: Result<Answer, Status>) -> Response<ResponseBody> {
    match answer {
        Ok(answer) => json_response(answer.code, answer.body),
        Err(status) => status_response(&status),
    }
}

/// The max-in-flight filter's 429: plain text and `Retry-After: 1`.
fn too_many_requests_response() -> Response<ResponseBody> {
    let mut response = text_response(crate::in_flight::TOO_MANY_REQUESTS_BODY);
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from_static(crate::in_flight::TOO_MANY_REQUESTS_RETRY_AFTER),
    );
    response
}

/// What the real server answers for a path nothing serves (an unserved
/// group or version, a path that is not an API path): Go's mux's plain
/// text 404, not a Status.
fn page_not_found() -> Response<ResponseBody> {
    let mut response = text_response("404 page not found\n");
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

fn text_response(text: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn version_body() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "major": "1",
        "minor": "36",
        "gitVersion": "v1.36.0-clientgo-testing",
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "linux/amd64",
    }))
    .unwrap_or_default()
}

async fn read_body(request: Request<Incoming>) -> Result<Bytes, Status> {
    Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|e| {
            Status::failure(
                413,
                clientgo_apimachinery::StatusReason::RequestEntityTooLarge,
                format!("Request entity too large: limit is {MAX_BODY_BYTES}: {e}"),
            )
        })
}

/// Classifies a request for the log and for fault matching.
fn verb_of(method: &Method, target: Option<&ResourcePath>, watching: bool) -> Verb {
    let Some(target) = target else {
        return Verb::Other;
    };
    match (method, target.name.is_some()) {
        (&Method::GET, false) if watching => Verb::Watch,
        (&Method::GET, false) => Verb::List,
        (&Method::GET, true) => Verb::Get,
        (&Method::POST, _) => Verb::Create,
        (&Method::PUT, _) => Verb::Update,
        (&Method::PATCH, _) => Verb::Patch,
        (&Method::DELETE, true) => Verb::Delete,
        (&Method::DELETE, false) => Verb::DeleteCollection,
        _ => Verb::Other,
    }
}

/// Paths anyone may call, as the real server's public-info viewer allows.
fn is_public(path: &str) -> bool {
    matches!(path, "/version" | "/healthz" | "/readyz" | "/livez")
}

fn authenticated(state: &ServerState, request: &Request<Incoming>, certified: bool) -> bool {
    if !state.auth.required() || is_public(request.uri().path()) {
        return true;
    }
    if certified && state.auth.client_certificate {
        return true;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    matches!((state.auth.bearer_token.lock().as_ref(), presented), (Some(expected), Some(given)) if expected == given)
}

/// The error a connection's service returns to make hyper drop the
/// connection (HTTP/1.1) or reset the stream (HTTP/2) unanswered.
#[derive(Debug)]
struct ConnectionReset;

impl fmt::Display for ConnectionReset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection reset by fault injection")
    }
}

impl std::error::Error for ConnectionReset {}

/// Answers one request; `None` means "reset it unanswered".
async fn dispatch(
    state: Arc<ServerState>,
    request: Request<Incoming>,
    peer: Peer,
) -> Option<Response<ResponseBody>> {
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let http_version = format!("{:?}", request.version());
    let headers = request.headers().clone();
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    // Parsed once here, then handed to the deny check and the router.
    let parsed = request_path::parse(&path, &state.registry.read());
    let options = ListOptions::from_query(&query);
    let target = parsed.as_ref().ok().and_then(Option::as_ref);
    let watching = options.as_ref().is_ok_and(|o| o.watch);
    let verb = verb_of(&method, target, watching);
    // The real filter chain: authentication, then max-in-flight (which
    // lets long-running requests through), then authorization. Injected
    // latency counts as serving time.
    let slot = (verb != Verb::Watch).then(|| state.in_flight.enter());
    let latency = state.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let response = if !authenticated(&state, &request, peer.certified) {
        Some(status_response(&Status::unauthorized("Unauthorized")))
    } else if matches!(slot, Some(None)) {
        Some(too_many_requests_response())
    } else {
        respond(&state, request, verb, parsed, options).await
    };
    drop(slot);
    let mut response = response;
    if let (Some(response), Some(text)) = (response.as_mut(), state.faults.warning()) {
        let quoted = format!("299 - {:?}", text);
        if let Ok(value) = header::HeaderValue::from_str(&quoted) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    state.log.record(RequestRecord {
        method: method.to_string(),
        path,
        query,
        verb,
        // A reset request is logged with status 0: it had no answer.
        status: response.as_ref().map_or(0, |r| r.status().as_u16()),
        duration: started.elapsed(),
        http_version,
        connection: peer.connection,
        headers,
    });
    response
}

/// The 403 for a denied request, with the real server's message.
fn forbidden(state: &ServerState, target: Option<&ResourcePath>, verb: Verb) -> Option<Status> {
    let target = target?;
    let resource = target.resource.group_resource();
    let denied = state.denied.lock();
    if !denied.iter().any(|(v, r)| *v == verb && *r == resource) {
        return None;
    }
    let scope = match &target.namespace {
        Some(namespace) => format!(" in the namespace {namespace:?}"),
        None => " at the cluster scope".to_string(),
    };
    let why = format!(
        "User \"clientgo-testing\" cannot {} resource {:?} in API group {:?}{scope}",
        verb.as_str(),
        resource.resource,
        resource.group
    );
    Some(Status::forbidden(
        &resource,
        target.name.as_deref().unwrap_or_default(),
        &why,
    ))
}

async fn respond(
    state: &Arc<ServerState>,
    request: Request<Incoming>,
    verb: Verb,
    parsed: Result<Option<ResourcePath>, Status>,
    options: Result<ListOptions, clientgo_apimachinery::ListOptionsError>,
) -> Option<Response<ResponseBody>> {
    if let Some(status) = forbidden(state, parsed.as_ref().ok().and_then(Option::as_ref), verb) {
        return Some(status_response(&status));
    }
    let response = match state.faults.take_failure(verb) {
        Some(Failure::Reset) => return None,
        Some(Failure::Raw {
            code,
            content_type,
            body,
            retry_after,
        }) => {
            let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
            *response.status_mut() =
                StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            if let Ok(value) = header::HeaderValue::from_str(&content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            if let Some(value) =
                retry_after.and_then(|text: String| header::HeaderValue::from_str(&text).ok())
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Some(Failure::Status(status)) => {
            let mut response = status_response(&status);
            if let Some(seconds) = status
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        None => route(Arc::clone(state), request, parsed, options).await,
    };
    Some(response)
}

async fn route(
    state: Arc<ServerState>,
    request: Request<Incoming>,
    parsed: Result<Option<ResourcePath>, Status>,
    options: Result<ListOptions, clientgo_apimachinery::ListOptionsError>,
) -> Response<ResponseBody> {
    let path = request.uri().path().to_string();
    match path.trim_end_matches('/') {
        "/version" => return json_response(200, version_body()),
        "/healthz" | "/readyz" | "/livez" => return text_response("ok"),
        "/api" => {
            let document = discovery::core_versions(&state.address.to_string());
            return json_response(200, serde_json::to_vec(&document).unwrap_or_default());
        }
        "/apis" => {
            let document = discovery::group_list(&state.registry.read());
            return json_response(200, serde_json::to_vec(&document).unwrap_or_default());
        }
        "/openapi/v2" => {
            return match &state.openapi_v2 {
                Some(spec) => {
                    let mut response = Response::new(Full::new(spec.clone()).boxed());
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("application/json"),
                    );
                    response
                }
                None => status_response(&Status::not_found(
                    &GroupResource::new("", ""),
                    "/openapi/v2",
                )),
            };
        }
        trimmed => {
            let segments: Vec<&str> = trimmed.trim_start_matches('/').split('/').collect();
            let group_version = match segments.as_slice() {
                ["api", version] => Some(("", *version)),
                ["apis", group, version] => Some((*group, *version)),
                _ => None,
            };
            if let Some((group, version)) = group_version {
                let document = discovery::resource_list(&state.registry.read(), group, version);
                return match document {
                    Some(document) => {
                        json_response(200, serde_json::to_vec(&document).unwrap_or_default())
                    }
                    None => page_not_found(),
                };
            }
        }
    }
    let target = match parsed {
        Ok(Some(target)) => target,
        Ok(None) => return page_not_found(),
        Err(status) => return status_response(&status),
    };
    let options = match options {
        Ok(options) => options,
        Err(e) => return status_response(&Status::bad_request(e.to_string())),
    };
    let method = request.method().clone();
    let storage = Arc::clone(&state.storage);
    let header_text = |name: header::HeaderName| {
        request
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let representation = Representation::from_accept(&header_text(header::ACCEPT));
    let typed_items = !state.registry.read().is_builtin(&target.resource);
    let content_type = header_text(header::CONTENT_TYPE);
    match (method, target.name.is_some()) {
        (Method::GET, false) if options.watch => {
            match watch::watch(
                storage,
                target,
                options,
                state.watch,
                state.shutdown.clone(),
                Arc::clone(&state.faults),
                representation,
            ) {
                Ok(body) => {
                    let mut response = Response::new(body.boxed());
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("application/json"),
                    );
                    response
                }
                Err(status) => status_response(&status),
            }
        }
        (Method::GET, false) => answer_response(
            handlers::list(
                &storage,
                &target,
                &options,
                representation,
                typed_items,
                state.watch.watch_cache,
            )
            .await,
        ),
        (Method::GET, true) => answer_response(handlers::get(&storage, &target, representation)),
        (Method::POST, false) if crd::is_crd_resource(&target.resource) => {
            with_body(request, |body| create_crd(&state, &target, body)).await
        }
        (Method::POST, false) => {
            with_body(request, |body| handlers::create(&storage, &target, body)).await
        }
        (Method::PUT, true) => {
            with_body(request, |body| handlers::update(&storage, &target, body)).await
        }
        (Method::PATCH, true) => {
            with_body(request, |body| {
                handlers::patch(&storage, &target, &content_type, body)
            })
            .await
        }
        (Method::DELETE, false) => answer_response(handlers::delete_collection(
            &storage,
            &target,
            &options,
            typed_items,
        )),
        (Method::DELETE, true) if crd::is_crd_resource(&target.resource) => {
            with_body(request, |body| delete_crd(&state, &target, body)).await
        }
        (Method::DELETE, true) => {
            with_body(request, |body| handlers::delete(&storage, &target, body)).await
        }
        (method, _) => status_response(&unsupported(&target, &method)),
    }
}

/// Creates a CRD, marks it established, and serves its resources at once.
fn create_crd(state: &ServerState, target: &ResourcePath, body: &[u8]) -> Result<Answer, Status> {
    let mut crd: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        Status::bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))
    })?;
    let resources = crd::served_resources(&crd)?;
    crd::mark_established(&mut crd);
    let created = state
        .storage
        .create(&target.resource.group_resource(), "", crd)?;
    let mut registry = state.registry.write();
    for resource in resources {
        registry.register(resource);
    }
    Ok(Answer {
        code: 201,
        body: created.json.to_vec(),
    })
}

/// Deletes a CRD and stops serving its resources (their objects stay in
/// the store, unreachable, where a real server would delete them).
fn delete_crd(state: &ServerState, target: &ResourcePath, body: &[u8]) -> Result<Answer, Status> {
    let answer = handlers::delete(&state.storage, target, body)?;
    if let Ok(crd) = serde_json::from_slice::<serde_json::Value>(&answer.body)
        && let Ok(resources) = crd::served_resources(&crd)
    {
        let mut registry = state.registry.write();
        for resource in &resources {
            registry.unregister(resource);
        }
    }
    Ok(answer)
}

fn unsupported(target: &ResourcePath, method: &Method) -> Status {
    Status::method_not_supported(&target.resource.group_resource(), method.as_str())
}

async fn with_body(
    request: Request<Incoming>,
    handle: impl FnOnce(&[u8]) -> Result<Answer, Status>,
) -> Response<ResponseBody> {
    match read_body(request).await {
        Ok(body) => answer_response(handle(&body)),
        Err(status) => status_response(&status),
    }
}
