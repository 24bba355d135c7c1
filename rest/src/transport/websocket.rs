//! Turning a request into a WebSocket: the HTTP/1.1 upgrade that exec,
//! attach and port-forward start with (client-go's
//! `transport/websocket.RoundTripper`; kube-rs's `Client::connect`).
//!
//! The API server upgrades only HTTP/1.1 connections (WebSockets over
//! HTTP/2, RFC 8441, are not served), so the upgrade goes through a
//! client of its own that offers HTTP/1.1 alone; TLS, credentials,
//! impersonation and the 401 retry are those of every other request
//! ([`Request::websocket`](crate::Request::websocket) sends it).

use reqwest::header::{self, HeaderValue};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::handshake::{client::generate_key, derive_accept_key};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

/// How long an upgrade may wait for the server's answer (the session
/// after it has no time limit).
pub const UPGRADE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A WebSocket over an upgraded connection to the API server.
pub type WebSocket = WebSocketStream<reqwest::Upgraded>;

/// Why a connection could not be made a WebSocket.
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    /// The server (or a proxy on the way) answered a success but not
    /// `101 Switching Protocols`.
    #[error("{url} answered {status} instead of switching to a WebSocket")]
    NotSwitched {
        /// The request's URL.
        url: String,
        /// The status it answered.
        status: u16,
    },
    /// The server switched without proving it read the request's key
    /// (`Sec-WebSocket-Accept` missing or wrong).
    #[error("{url} switched protocols without a valid Sec-WebSocket-Accept")]
    BadAccept {
        /// The request's URL.
        url: String,
    },
    /// The server chose none of the subprotocols offered, or one that was
    /// not offered.
    #[error("{url} chose subprotocol {chosen:?}; offered {offered:?}")]
    Subprotocol {
        /// The request's URL.
        url: String,
        /// What the server answered (empty when it named none).
        chosen: String,
        /// What was offered, in order of preference.
        offered: Vec<String>,
    },
    /// The server did not answer the upgrade within [`UPGRADE_TIMEOUT`].
    #[error("{url} did not answer the WebSocket upgrade within {} s", UPGRADE_TIMEOUT.as_secs())]
    TimedOut {
        /// The request's URL.
        url: String,
    },
    /// The switched connection could not be taken over.
    #[error("{url}: taking over the upgraded connection failed: {source}")]
    Connection {
        /// The request's URL.
        url: String,
        /// What failed.
        #[source]
        source: reqwest::Error,
    },
}

/// A WebSocket and the subprotocol the server chose for it.
#[derive(Debug)]
pub struct Upgraded {
    /// The WebSocket, its frames not yet read.
    pub socket: WebSocket,
    /// The subprotocol the server chose, one of those offered.
    pub protocol: String,
}

/// A new `Sec-WebSocket-Key` for an upgrade request.
pub(crate) fn new_key() -> String {
    generate_key()
}

/// Finishes an upgrade `response` to a request sent with `key` and
/// offering `protocols`: checks that the server switched to a WebSocket,
/// proved it read the key and chose a subprotocol offered, then takes the
/// connection over.
pub(crate) async fn finish_upgrade(
    response: reqwest::Response,
    url: String,
    key: &str,
    protocols: &[&str],
) -> Result<Upgraded, UpgradeError> {
    if response.status() != reqwest::StatusCode::SWITCHING_PROTOCOLS {
        return Err(UpgradeError::NotSwitched {
            url,
            status: response.status().as_u16(),
        });
    }
    let headers = response.headers();
    let expected = derive_accept_key(key.as_bytes());
    if headers.get(header::SEC_WEBSOCKET_ACCEPT) != HeaderValue::from_str(&expected).ok().as_ref() {
        return Err(UpgradeError::BadAccept { url });
    }
    let chosen = headers
        .get(header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .trim()
        .to_string();
    if !protocols.contains(&chosen.as_str()) {
        return Err(UpgradeError::Subprotocol {
            url,
            chosen,
            offered: protocols.iter().map(|p| (*p).to_string()).collect(),
        });
    }
    let connection = response
        .upgrade()
        .await
        .map_err(|source| UpgradeError::Connection { url, source })?;
    let socket =
        WebSocketStream::from_raw_socket(connection, Role::Client, Some(socket_config())).await;
    Ok(Upgraded {
        socket,
        protocol: chosen,
    })
}

/// Whether a WebSocket error means the connection went away without the
/// closing handshake (a server stopping, a proxy or the network cutting
/// it: a reset, an end of file, TLS ending without its close_notify),
/// rather than a broken protocol.
pub(crate) fn closed_mid_stream(error: &tungstenite::Error) -> bool {
    use std::io::ErrorKind;
    match error {
        tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed
        | tungstenite::Error::Protocol(
            tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
        ) => true,
        tungstenite::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::UnexpectedEof
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
        ),
        _ => false,
    }
}

/// Frames of at most 16 MiB (a bad or hostile server cannot make the
/// client buffer more), messages as large.
fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_frame_size(Some(16 << 20))
        .max_message_size(Some(16 << 20))
}
