//! The accept loop and each connection's service: plain or TLS,
//! HTTP/1.1 or HTTP/2, with its stream limit and the resets faults ask for.
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

use crate::server::routing::{Peer, dispatch};
use crate::server::state::ServerState;

pub(crate) async fn accept(
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
pub(crate) async fn serve<S>(stream: S, peer: Peer, state: Arc<ServerState>)
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
    // With upgrades: exec, attach and port-forward switch to WebSockets.
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        () = shutdown.cancelled() => {}
        () = restarted.cancelled() => {}
    }
}

/// The error a connection's service returns to make hyper drop the
/// connection (HTTP/1.1) or reset the stream (HTTP/2) unanswered.
#[derive(Debug)]
pub(crate) struct ConnectionReset;

impl fmt::Display for ConnectionReset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection reset by fault injection")
    }
}

impl std::error::Error for ConnectionReset {}
