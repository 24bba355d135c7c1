//! The manager's HTTP endpoints: `/metrics` (Prometheus text), `/healthz`
//! (the manager is running) and `/readyz` (its caches have synced; 503
//! before), each on the address the options give, over plain HTTP/1.1.

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

/// What an endpoint server answers from.
#[derive(Clone)]
pub(crate) struct Endpoints {
    pub(crate) registry: Registry,
    pub(crate) ready: Arc<dyn Fn() -> bool + Send + Sync>,
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
        "/healthz" | "/livez" => text(StatusCode::OK, "ok"),
        "/readyz" if (endpoints.ready)() => text(StatusCode::OK, "ok"),
        "/readyz" => text(StatusCode::SERVICE_UNAVAILABLE, "caches not synced"),
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
