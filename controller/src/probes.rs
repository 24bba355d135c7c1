//! The manager's HTTP endpoints: `/metrics` (Prometheus text), `/healthz`
//! (the manager is running and its health checks pass; 500 otherwise) and
//! `/readyz` (its caches have synced and its ready checks pass; 503
//! otherwise), each on the address the options give, over plain HTTP/1.1.
//! A failing answer names each failed check and its error.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use prometheus::{Encoder, Registry, TextEncoder};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A user's health or readiness check: `Err` with the reason when failing.
pub(crate) type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The user's checks, by name, in the order added.
#[derive(Default)]
pub(crate) struct Checks {
    health: parking_lot::Mutex<Vec<(String, Check)>>,
    ready: parking_lot::Mutex<Vec<(String, Check)>>,
}

impl Checks {
    pub(crate) fn add_health(&self, name: String, check: Check) {
        self.health.lock().push((name, check));
    }

    pub(crate) fn add_ready(&self, name: String, check: Check) {
        self.ready.lock().push((name, check));
    }

    /// `None` when every check passes; otherwise one line per failing
    /// check (`name: reason`). A panicking check fails.
    fn failures(checks: &parking_lot::Mutex<Vec<(String, Check)>>) -> Option<String> {
        let checks = checks.lock().clone();
        let failed: Vec<String> = checks
            .iter()
            .filter_map(|(name, check)| {
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check()));
                match answer {
                    Ok(Ok(())) => None,
                    Ok(Err(reason)) => Some(format!("{name}: {reason}")),
                    Err(_) => Some(format!("{name}: the check panicked")),
                }
            })
            .collect();
        (!failed.is_empty()).then(|| failed.join("\n"))
    }
}

/// What an endpoint server answers from.
#[derive(Clone)]
pub(crate) struct Endpoints {
    pub(crate) registry: Registry,
    pub(crate) ready: Arc<dyn Fn() -> bool + Send + Sync>,
    pub(crate) checks: Arc<Checks>,
}

/// Binds `address` and serves `endpoints` until `stop` fires; returns the
/// bound address (a port 0 is chosen by the system).
pub(crate) async fn serve(
    address: SocketAddr,
    endpoints: Endpoints,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(address).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            let endpoints = endpoints.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let answer = answer(request.uri().path(), &endpoints);
                    async move { Ok::<_, std::convert::Infallible>(answer) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    _ = connection => {}
                    () = stop.cancelled() => {}
                }
            });
        }
    });
    Ok(bound)
}

fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response
}

/// The answer to a GET of `path`.
fn answer(path: &str, endpoints: &Endpoints) -> Response<Full<Bytes>> {
    match path {
        "/healthz" | "/livez" => match Checks::failures(&endpoints.checks.health) {
            None => text(StatusCode::OK, "ok"),
            Some(failed) => text(StatusCode::INTERNAL_SERVER_ERROR, failed),
        },
        "/readyz" if !(endpoints.ready)() => {
            text(StatusCode::SERVICE_UNAVAILABLE, "caches not synced")
        }
        "/readyz" => match Checks::failures(&endpoints.checks.ready) {
            None => text(StatusCode::OK, "ok"),
            Some(failed) => text(StatusCode::SERVICE_UNAVAILABLE, failed),
        },
        "/metrics" => {
            let encoder = TextEncoder::new();
            let mut body = Vec::new();
            if let Err(error) = encoder.encode(&endpoints.registry.gather(), &mut body) {
                return text(StatusCode::INTERNAL_SERVER_ERROR, error.to_string());
            }
            let mut response = text(StatusCode::OK, body);
            if let Ok(value) = header::HeaderValue::from_str(encoder.format_type()) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            response
        }
        _ => text(StatusCode::NOT_FOUND, "not found"),
    }
}
