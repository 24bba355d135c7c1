//! The WebSocket upgrade the streaming subresources (exec, attach,
//! port-forward) start with, as kube-apiserver and kubelet accept it:
//! HTTP/1.1 only, a subprotocol chosen in the client's order of
//! preference among those the endpoint speaks.

use clientgo_apimachinery::Status;
use hyper::body::Incoming;
use hyper::upgrade::OnUpgrade;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::api::responses::ResponseBody;

/// A WebSocket over an upgraded connection to a client.
pub(crate) type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// An accepted upgrade: the 101 answer to send, the connection it yields
/// once sent, and the subprotocol chosen.
pub(crate) struct Accepted {
    pub(crate) response: Response<ResponseBody>,
    pub(crate) upgrade: OnUpgrade,
    pub(crate) protocol: String,
}

/// Checks that `request` is a WebSocket upgrade offering one of
/// `supported`, and accepts it; a plain request (or HTTP/2) is a 400
/// `Upgrade request required`, as kube-apiserver answers it.
pub(crate) fn accept(
    request: &mut Request<Incoming>,
    supported: &[&str],
) -> Result<Accepted, Status> {
    let headers = request.headers();
    let has_token = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|value| {
            value
                .to_str()
                .unwrap_or_default()
                .split(',')
                .any(|part| part.trim().eq_ignore_ascii_case(token))
        })
    };
    if request.version() != hyper::Version::HTTP_11
        || !has_token(header::CONNECTION, "upgrade")
        || !has_token(header::UPGRADE, "websocket")
    {
        return Err(Status::bad_request("Upgrade request required"));
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|version| version != "13")
    {
        return Err(Status::bad_request("unsupported WebSocket version"));
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return Err(Status::bad_request("missing Sec-WebSocket-Key"));
    };
    let offered: Vec<String> = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .flat_map(|value| value.to_str().unwrap_or_default().split(','))
        .map(|protocol| protocol.trim().to_string())
        .filter(|protocol| !protocol.is_empty())
        .collect();
    let Some(protocol) = offered
        .iter()
        .find(|protocol| supported.contains(&protocol.as_str()))
        .cloned()
    else {
        return Err(Status::bad_request(format!(
            "requested protocol(s) are not supported: {offered:?}; supports {supported:?}"
        )));
    };
    let accept = derive_accept_key(key.as_bytes());
    let mut response = Response::new(crate::api::responses::empty_body());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let answer = response.headers_mut();
    answer.insert(
        header::CONNECTION,
        header::HeaderValue::from_static("Upgrade"),
    );
    answer.insert(
        header::UPGRADE,
        header::HeaderValue::from_static("websocket"),
    );
    for (name, value) in [
        (header::SEC_WEBSOCKET_ACCEPT, accept.as_str()),
        (header::SEC_WEBSOCKET_PROTOCOL, protocol.as_str()),
    ] {
        if let Ok(value) = header::HeaderValue::from_str(value) {
            answer.insert(name, value);
        }
    }
    Ok(Accepted {
        response,
        upgrade: hyper::upgrade::on(request),
        protocol,
    })
}

/// A binary frame carrying `payload` on `channel` (the channel protocols'
/// first byte).
pub(crate) fn channel_frame(channel: u8, payload: &[u8]) -> Message {
    let mut frame = Vec::with_capacity(payload.len() + 1);
    frame.push(channel);
    frame.extend_from_slice(payload);
    Message::Binary(frame.into())
}

/// Room for one more message on `sender`; `None` when there is no
/// receiver (or no sender). The sessions hold input here while they stop
/// reading their socket (back-pressure) and keep sending output.
pub(crate) async fn room_on<T>(
    sender: Option<&tokio::sync::mpsc::Sender<T>>,
) -> Option<tokio::sync::mpsc::Permit<'_, T>> {
    sender?.reserve().await.ok()
}

/// The WebSocket once the 101 has gone out; `None` when the client left
/// first.
pub(crate) async fn socket(upgrade: OnUpgrade) -> Option<Socket> {
    let upgraded = upgrade.await.ok()?;
    let config = WebSocketConfig::default()
        .max_frame_size(Some(16 << 20))
        .max_message_size(Some(16 << 20));
    Some(WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await)
}
