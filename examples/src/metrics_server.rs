//! [`MetricsServer`]: `/metrics` in Prometheus's text format over plain
//! HTTP, for the controller's `--metrics-addr` (what controller-runtime's
//! metrics endpoint serves: client-go's REST client and workqueue
//! families).

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

/// Serves `registry` at `/metrics` until the token is cancelled (or the
/// value dropped).
#[derive(Debug)]
pub struct MetricsServer {
    /// Where it listens.
    pub address: SocketAddr,
    stop: CancellationToken,
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl MetricsServer {
    /// Binds `address` and serves: `GET /metrics` answers the registry's
    /// families, anything else 404.
    pub async fn start(address: SocketAddr, registry: Registry) -> Result<MetricsServer, String> {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|error| format!("cannot listen on {address} for metrics: {error}"))?;
        let address = listener
            .local_addr()
            .map_err(|error| format!("the metrics listener has no address: {error}"))?;
        let stop = CancellationToken::new();
        let registry = Arc::new(registry);
        let token = stop.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = token.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => continue,
                    },
                };
                let registry = Arc::clone(&registry);
                tokio::spawn(async move {
                    let service =
                        service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let registry = Arc::clone(&registry);
                            async move {
                                Ok::<_, std::convert::Infallible>(answer(
                                    request.uri().path(),
                                    &registry,
                                ))
                            }
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(MetricsServer { address, stop })
    }
}

fn answer(path: &str, registry: &Registry) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    if path != "/metrics" {
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let encoder = TextEncoder::new();
    let mut body = Vec::new();
    if encoder.encode(&registry.gather(), &mut body).is_err() {
        *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return response;
    }
    *response.body_mut() = Full::new(Bytes::from(body));
    if let Ok(value) = header::HeaderValue::from_str(encoder.format_type()) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}
