//! [`WebhookServer`]: one HTTPS server for every admission and conversion
//! path registered, and [`BoundWebhookServer`], the same server
//! listening.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use futures_util::FutureExt as _;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::server::WebPkiClientVerifier;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::admission::{
    AdmissionHandler, AdmissionResponse, AdmissionReview, Defaulter, Mutating, Validating,
    Validator,
};
use crate::conversion::{Conversion, ConversionResponse, ConversionReview};
use crate::error::Error;
use crate::server::certificate_watcher::CertificateWatcher;
use crate::server::metrics::WebhookMetrics;
use crate::server::options::WebhookServerOptions;
use crate::server::registration::{Registration, WebhookOptions, default_path, valid_path};

/// The path conversions are served at, controller-runtime's.
pub const CONVERSION_PATH: &str = "/convert";

enum Route {
    Admission(Arc<dyn AdmissionHandler>),
    Conversion,
}

/// A webhook server being set up: register validators, defaulters, raw
/// handlers and conversions, make the configurations that point
/// kube-apiserver at them, then [`bind`](Self::bind).
pub struct WebhookServer {
    options: WebhookServerOptions,
    routes: BTreeMap<String, Route>,
    conversions: Vec<Conversion>,
    pub(crate) registrations: Vec<Registration>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("options", &self.options)
            .field("paths", &self.routes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl WebhookServer {
    /// A server with no paths yet.
    pub fn new(options: WebhookServerOptions) -> Self {
        WebhookServer {
            options,
            routes: BTreeMap::new(),
            conversions: Vec::new(),
            registrations: Vec::new(),
        }
    }

    fn route(&mut self, path: &str, route: Route) -> Result<(), Error> {
        if !valid_path(path) {
            return Err(Error::Path {
                path: path.to_owned(),
                message: "a path is `/` and segments of letters, digits, `-` and `_`",
            });
        }
        if self.routes.contains_key(path) {
            return Err(Error::Path {
                path: path.to_owned(),
                message: "two handlers for one path",
            });
        }
        self.routes.insert(path.to_owned(), route);
        Ok(())
    }

    fn register<K: k8s_openapi::Resource>(
        &mut self,
        verb: &str,
        options: WebhookOptions,
        handler: Arc<dyn AdmissionHandler>,
    ) -> Result<&mut Self, Error> {
        let path = options
            .path
            .clone()
            .unwrap_or_else(|| default_path(verb, K::GROUP, K::VERSION, K::KIND));
        self.route(&path, Route::Admission(handler))?;
        // A webhook name has three segments at least: the core group is k8s.io here.
        let group = if K::GROUP.is_empty() {
            "k8s.io".to_owned()
        } else {
            K::GROUP.to_owned()
        };
        let letter = if verb == "mutate" { "m" } else { "v" };
        let name = options.name.clone().unwrap_or_else(|| {
            format!(
                "{letter}{}-{}.{group}",
                K::KIND.to_ascii_lowercase(),
                K::VERSION
            )
        });
        let mutating = verb == "mutate";
        if self
            .registrations
            .iter()
            .any(|registration| registration.name == name && registration.mutating == mutating)
        {
            self.routes.remove(&path);
            return Err(Error::Path {
                path,
                message: "a webhook of that name is registered already (name it in WebhookOptions)",
            });
        }
        self.registrations.push(Registration {
            name,
            path,
            mutating,
            group: K::GROUP.to_owned(),
            version: K::VERSION.to_owned(),
            plural: K::URL_PATH_SEGMENT.to_owned(),
            namespaced: std::any::type_name::<K::Scope>().ends_with("NamespaceResourceScope"),
            options,
        });
        Ok(self)
    }

    /// Validates `K` with `validator` (a validating webhook).
    pub fn validating<K, V>(
        &mut self,
        validator: V,
        options: WebhookOptions,
    ) -> Result<&mut Self, Error>
    where
        K: k8s_openapi::Resource + DeserializeOwned + Send + Sync + 'static,
        V: Validator<K>,
    {
        self.register::<K>(
            "validate",
            options,
            Arc::new(Validating::<K, V>::new(validator)),
        )
    }

    /// Defaults `K` with `defaulter` (a mutating webhook).
    pub fn mutating<K, D>(
        &mut self,
        defaulter: D,
        options: WebhookOptions,
    ) -> Result<&mut Self, Error>
    where
        K: k8s_openapi::Resource + DeserializeOwned + Serialize + Send + Sync + 'static,
        D: Defaulter<K>,
    {
        self.register::<K>(
            "mutate",
            options,
            Arc::new(Mutating::<K, D>::new(defaulter)),
        )
    }

    /// Serves `handler` at `path`, for any kind (no configuration is made
    /// for it: write it yourself).
    pub fn admission(
        &mut self,
        path: &str,
        handler: impl AdmissionHandler,
    ) -> Result<&mut Self, Error> {
        self.route(path, Route::Admission(Arc::new(handler)))?;
        Ok(self)
    }

    /// Converts a kind's versions at [`CONVERSION_PATH`] (one path for
    /// every kind, found by each object's group and kind).
    pub fn conversion(&mut self, conversion: Conversion) -> &mut Self {
        if !self.routes.contains_key(CONVERSION_PATH) {
            self.routes
                .insert(CONVERSION_PATH.to_owned(), Route::Conversion);
        }
        self.conversions.push(conversion);
        self
    }

    /// The paths served.
    pub fn paths(&self) -> Vec<String> {
        self.routes.keys().cloned().collect()
    }

    /// Reads the certificate (a missing or bad file fails here) and
    /// listens.
    pub async fn bind(self) -> Result<BoundWebhookServer, Error> {
        let watcher = Arc::new(CertificateWatcher::new(
            &self.options.certificate_file,
            &self.options.key_file,
        )?);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|error| Error::Certificate {
                file: self.options.certificate_file.clone(),
                message: error.to_string(),
            })?;
        let builder = match &self.options.client_ca_file {
            None => builder.with_no_client_auth(),
            Some(file) => {
                let bad = |message: String| Error::ClientCa {
                    file: file.clone(),
                    message,
                };
                let pem = std::fs::read(file).map_err(|error| bad(error.to_string()))?;
                let mut roots = RootCertStore::empty();
                for certificate in CertificateDer::pem_slice_iter(&pem) {
                    let certificate = certificate.map_err(|error| bad(error.to_string()))?;
                    roots
                        .add(certificate)
                        .map_err(|error| bad(error.to_string()))?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .map_err(|error| bad(error.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config =
            builder.with_cert_resolver(
                Arc::clone(&watcher) as Arc<dyn rustls::server::ResolvesServerCert>
            );
        // HTTP/1.1 only, as kubebuilder's scaffolds configure
        // controller-runtime since the HTTP/2 rapid-reset advisories.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let listener = TcpListener::bind(self.options.bind_address)
            .await
            .map_err(|source| Error::Bind {
                address: self.options.bind_address,
                source,
            })?;
        let local_addr = listener.local_addr().map_err(|source| Error::Bind {
            address: self.options.bind_address,
            source,
        })?;
        let registry = self.options.metrics_registry.clone().unwrap_or_default();
        let metrics = WebhookMetrics::register(&registry, &self.paths())?;
        Ok(BoundWebhookServer {
            listener,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            watcher,
            shared: Arc::new(Shared {
                routes: self.routes,
                conversions: self.conversions,
                metrics,
                options: self.options,
            }),
            registry,
            local_addr,
            ready: Arc::new(AtomicBool::new(false)),
            registrations: self.registrations,
        })
    }
}

struct Shared {
    routes: BTreeMap<String, Route>,
    conversions: Vec<Conversion>,
    metrics: WebhookMetrics,
    options: WebhookServerOptions,
}

/// The server, listening. [`serve`](Self::serve) answers until its token
/// is cancelled, then lets requests in flight finish (up to the
/// shutdown timeout).
pub struct BoundWebhookServer {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    watcher: Arc<CertificateWatcher>,
    shared: Arc<Shared>,
    registry: prometheus::Registry,
    local_addr: SocketAddr,
    ready: Arc<AtomicBool>,
    pub(crate) registrations: Vec<Registration>,
}

impl std::fmt::Debug for BoundWebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundWebhookServer")
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

impl BoundWebhookServer {
    /// The address listened on (the port, when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The registry holding the server's metrics.
    pub fn metrics_registry(&self) -> &prometheus::Registry {
        &self.registry
    }

    /// A flag that is true while [`serve`](Self::serve) accepts
    /// connections: a manager's readiness check.
    pub fn ready_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.ready)
    }

    /// Answers reviews until `stop`, reloading the certificate files on
    /// the options' interval.
    pub async fn serve(self, stop: CancellationToken) -> Result<(), Error> {
        let reload_stop = stop.child_token();
        let _stop_reloads = reload_stop.clone().drop_guard();
        tokio::spawn(
            Arc::clone(&self.watcher)
                .watch(self.shared.options.certificate_reload_interval, reload_stop),
        );
        let mut connections = JoinSet::new();
        self.ready.store(true, Ordering::Release);
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => break,
                accepted = self.listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!(%error, "the webhook server could not accept a connection");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let acceptor = self.acceptor.clone();
            let shared = Arc::clone(&self.shared);
            let stop = stop.clone();
            connections.spawn(async move {
                let timeout = shared.options.read_header_timeout;
                let Ok(Ok(tls)) = tokio::time::timeout(timeout, acceptor.accept(stream)).await
                else {
                    return;
                };
                let service = hyper::service::service_fn(move |request| {
                    let shared = Arc::clone(&shared);
                    async move { Ok::<_, std::convert::Infallible>(answer(&shared, request).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(timeout)
                    .serve_connection(TokioIo::new(tls), service);
                tokio::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = stop.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            });
            // Finished connections are collected as they go.
            while connections.try_join_next().is_some() {}
        }
        self.ready.store(false, Ordering::Release);
        // Refuse new connections at once while those in flight finish.
        drop(self.listener);
        let deadline = self.shared.options.shutdown_timeout;
        let _ = tokio::time::timeout(deadline, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        Ok(())
    }
}

fn plain(code: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = code;
    response
}

fn json(body: &impl Serialize) -> Response<Full<Bytes>> {
    match serde_json::to_vec(body) {
        Ok(bytes) => {
            let mut response = Response::new(Full::new(Bytes::from(bytes)));
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(error) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("encoding the answer: {error}"),
        ),
    }
}

async fn answer(shared: &Shared, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let Some(route) = shared.routes.get(&path) else {
        return plain(StatusCode::NOT_FOUND, format!("no webhook at {path}"));
    };
    let mut measured = Measured::start(&shared.metrics, path);
    let response = answer_route(shared, route, request).await;
    measured.code = response.status().as_u16();
    response
}

/// One request's metrics, recorded when it ends however it ends (hyper
/// drops a request's future when its client hangs up): in flight until
/// then, its latency, and its code (499 for a client gone, as nginx
/// counts it).
struct Measured<'a> {
    metrics: &'a WebhookMetrics,
    path: String,
    began: Instant,
    code: u16,
}

impl<'a> Measured<'a> {
    fn start(metrics: &'a WebhookMetrics, path: String) -> Self {
        metrics.in_flight.with_label_values(&[path.as_str()]).inc();
        Measured {
            metrics,
            path,
            began: Instant::now(),
            code: 499,
        }
    }
}

impl Drop for Measured<'_> {
    fn drop(&mut self) {
        let path = self.path.as_str();
        self.metrics.in_flight.with_label_values(&[path]).dec();
        self.metrics
            .latency
            .with_label_values(&[path])
            .observe(self.began.elapsed().as_secs_f64());
        self.metrics
            .requests
            .with_label_values(&[path, &self.code.to_string()])
            .inc();
    }
}

async fn answer_route(
    shared: &Shared,
    route: &Route,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    if request.method() != Method::POST {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "a webhook takes POST".into(),
        );
    }
    let content_type = request
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if !content_type.starts_with("application/json") {
        return plain(
            StatusCode::BAD_REQUEST,
            format!("a review is application/json, not {content_type:?}"),
        );
    }
    let limit = match route {
        Route::Admission(_) => shared.options.max_body_bytes,
        Route::Conversion => shared.options.max_conversion_body_bytes,
    };
    let body = match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a review is at most {limit} bytes"),
            );
        }
        Err(error) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("reading the review: {error}"),
            );
        }
    };
    if body.is_empty() {
        return plain(StatusCode::BAD_REQUEST, "the review is empty".into());
    }
    match route {
        Route::Admission(handler) => admit(shared, handler.as_ref(), &body).await,
        Route::Conversion => convert(shared, &body).await,
    }
}

async fn admit(
    shared: &Shared,
    handler: &dyn AdmissionHandler,
    body: &[u8],
) -> Response<Full<Bytes>> {
    let review: AdmissionReview = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("not an AdmissionReview: {error}"),
            );
        }
    };
    let Some(request) = review.request else {
        return plain(
            StatusCode::BAD_REQUEST,
            "the AdmissionReview has no request".into(),
        );
    };
    let handled = AssertUnwindSafe(handler.handle(&request)).catch_unwind();
    let mut response = match tokio::time::timeout(shared.options.handler_timeout, handled).await {
        Ok(Ok(response)) => response,
        Ok(Err(_)) => {
            shared.metrics.panics.inc();
            tracing::error!(uid = %request.uid, "an admission handler panicked");
            AdmissionResponse::errored(500, "internal error: the webhook's handler panicked")
        }
        Err(_) => AdmissionResponse::errored(500, "the webhook's handler did not answer in time"),
    };
    response.uid = request.uid;
    json(&AdmissionReview {
        api_version: review.api_version,
        kind: "AdmissionReview".into(),
        request: None,
        response: Some(response),
    })
}

async fn convert(shared: &Shared, body: &[u8]) -> Response<Full<Bytes>> {
    let review: ConversionReview = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("not a ConversionReview: {error}"),
            );
        }
    };
    let Some(request) = review.request else {
        return plain(
            StatusCode::BAD_REQUEST,
            "the ConversionReview has no request".into(),
        );
    };
    // A list's conversion is CPU work for as long as the list is long:
    // done beside the runtime's workers, not on them.
    let work = || {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            request
                .objects
                .iter()
                .map(|object| {
                    convert_one(&shared.conversions, object, &request.desired_api_version)
                })
                .collect::<Result<Vec<_>, String>>()
        }))
    };
    let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    let converted = if multi_thread {
        tokio::task::block_in_place(work)
    } else {
        work()
    };
    let outcome = converted.unwrap_or_else(|_| {
        shared.metrics.conversion_panics.inc();
        Err("internal error occurred during conversion".into())
    });
    let (converted_objects, result) = match outcome {
        Ok(objects) => (
            objects,
            clientgo_apimachinery::Status {
                status: "Success".into(),
                ..clientgo_apimachinery::Status::default()
            },
        ),
        Err(message) => (
            Vec::new(),
            clientgo_apimachinery::Status {
                status: "Failure".into(),
                message,
                ..clientgo_apimachinery::Status::default()
            },
        ),
    };
    json(&ConversionReview {
        api_version: review.api_version,
        kind: "ConversionReview".into(),
        request: None,
        response: Some(ConversionResponse {
            uid: request.uid,
            converted_objects,
            result,
        }),
    })
}

/// One object converted, or the message naming it and why not.
fn convert_one(
    conversions: &[Conversion],
    object: &serde_json::Value,
    desired: &str,
) -> Result<serde_json::Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let group = api_version
        .rsplit_once('/')
        .map(|(group, _)| group)
        .unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let which = if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    };
    let conversion = conversions
        .iter()
        .find(|conversion| conversion.group() == group && conversion.kind() == kind)
        .ok_or_else(|| format!("{which}: no conversion for {kind}.{group}"))?;
    conversion
        .convert(object, desired)
        .map_err(|error| format!("{which} from {api_version} to {desired}: {error}"))
}
