//! A pod's `portforward` over a WebSocket, as kubelet serves it
//! (`v4.channel.k8s.io`): port *i* of the request has data channel `2i`
//! and error channel `2i+1`, each opened with a frame holding the port
//! (two bytes, little endian). The pod's ports are TCP listeners a test
//! names ([`PortForwardTargets`]); a port with none, or whose listener
//! refuses, gets kubelet's error on its error channel. The session ends
//! when every port's connection has ended or the client goes.

use std::collections::HashMap;
use std::net::SocketAddr;

use clientgo_apimachinery::Status;
use futures_util::{SinkExt, StreamExt};
use parking_lot::Mutex;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use hyper::body::Incoming;
use hyper::{Request, Response};

use crate::api::request_path::ResourcePath;
use crate::api::responses::{ResponseBody, status_response};
use crate::api::subresources::pod_of;
use crate::faults::controls::Faults;
use crate::store::storage::Storage;
use crate::streams::websocket::{self, Socket, channel_frame, room_on};

/// The subprotocol served.
pub(crate) const PROTOCOLS: [&str; 1] = ["v4.channel.k8s.io"];

/// Where pods' ports lead: the TCP listeners a test names for them.
#[derive(Debug, Default)]
pub struct PortForwardTargets {
    targets: Mutex<HashMap<(String, String, u16), SocketAddr>>,
}

impl PortForwardTargets {
    /// Makes port `port` of pod `namespace/pod` lead to `address`.
    pub fn insert(&self, namespace: &str, pod: &str, port: u16, address: SocketAddr) {
        self.targets
            .lock()
            .insert((namespace.to_string(), pod.to_string(), port), address);
    }

    /// Makes the port lead nowhere again.
    pub fn remove(&self, namespace: &str, pod: &str, port: u16) {
        self.targets
            .lock()
            .remove(&(namespace.to_string(), pod.to_string(), port));
    }

    fn get(&self, namespace: &str, pod: &str, port: u16) -> Option<SocketAddr> {
        self.targets
            .lock()
            .get(&(namespace.to_string(), pod.to_string(), port))
            .copied()
    }
}

/// The ports a request names (`ports=80&ports=443` or `ports=80,443`),
/// with kube-apiserver's refusals.
pub(crate) fn ports_of(query: &str) -> Result<Vec<u16>, Status> {
    let mut ports = Vec::new();
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        if key != "ports" {
            continue;
        }
        for part in value.split(',') {
            match part.trim().parse::<u16>() {
                Ok(port) if port > 0 => ports.push(port),
                _ => {
                    return Err(Status::bad_request(format!(
                        "invalid port {part:?}: ports must be numbers from 1 to 65535"
                    )));
                }
            }
        }
    }
    if ports.is_empty() {
        return Err(Status::bad_request("at least one port must be specified"));
    }
    // Two channels a port, numbered by one byte: this server refuses what
    // it could not number (kubelet would mis-number them silently).
    if ports.len() > 128 {
        return Err(Status::bad_request(
            "at most 128 ports can be forwarded at once",
        ));
    }
    Ok(ports)
}

/// `GET pods/{name}/portforward`: checks the pod and the ports, accepts
/// the upgrade, and serves the session on a task of its own.
pub(crate) fn start(
    storage: &Storage,
    targets: Arc<PortForwardTargets>,
    faults: Arc<Faults>,
    shutdown: CancellationToken,
    mut request: Request<Incoming>,
    target: &ResourcePath,
) -> Response<ResponseBody> {
    let query = request.uri().query().unwrap_or_default().to_string();
    let ports = match ports_of(&query) {
        Ok(ports) => ports,
        Err(status) => return status_response(&status),
    };
    if let Err(status) = pod_of(storage, target) {
        return status_response(&status);
    }
    let accepted = match websocket::accept(&mut request, &PROTOCOLS) {
        Ok(accepted) => accepted,
        Err(status) => return status_response(&status),
    };
    let namespace = target.namespace.clone().unwrap_or_default();
    let pod = target.name.clone().unwrap_or_default();
    tokio::spawn(async move {
        let Some(socket) = websocket::socket(accepted.upgrade).await else {
            return;
        };
        let (shutdown, cut) = (shutdown, faults.connection_token());
        tokio::select! {
            () = serve(socket, &targets, &namespace, &pod, ports) => {}
            () = shutdown.cancelled() => {}
            () = cut.cancelled() => {}
        }
    });
    accepted.response
}

/// Serves one port-forward session until every port is done or the
/// client goes.
async fn serve(
    mut socket: Socket,
    targets: &PortForwardTargets,
    namespace: &str,
    pod: &str,
    ports: Vec<u16>,
) {
    let (out_tx, mut out) = mpsc::channel::<Message>(16);
    let mut inputs: Vec<Option<mpsc::Sender<Vec<u8>>>> = Vec::with_capacity(ports.len());
    let mut connections = tokio::task::JoinSet::new();
    for (index, &port) in ports.iter().enumerate() {
        let data = (index * 2) as u8;
        let [low, high] = port.to_le_bytes();
        for channel in [data, data + 1] {
            if socket
                .send(channel_frame(channel, &[low, high]))
                .await
                .is_err()
            {
                return;
            }
        }
        let (input_tx, input) = mpsc::channel::<Vec<u8>>(16);
        inputs.push(Some(input_tx));
        let target = targets.get(namespace, pod, port);
        let message = format!(
            "error forwarding port {port} to pod {pod}, uid : failed to connect to localhost:{port} inside namespace \"{namespace}\""
        );
        connections.spawn(relay(target, data, input, out_tx.clone(), message));
    }
    drop(out_tx);
    // Data a port has no room for yet: the socket is not read until it is
    // taken (back-pressure), while the ports' output keeps flowing.
    let mut pending: Option<(usize, Vec<u8>)> = None;
    loop {
        // A clone, so the branches below may still drop the port's sender.
        let waiting = pending
            .as_ref()
            .and_then(|(index, _)| inputs.get(*index))
            .and_then(Option::clone);
        tokio::select! {
            permit = room_on(waiting.as_ref()), if pending.is_some() => {
                match (permit, pending.take()) {
                    (Some(permit), Some((_, data))) => permit.send(data),
                    // The port's connection has ended: its data goes.
                    (None, Some((index, _))) => {
                        if let Some(slot) = inputs.get_mut(index) {
                            *slot = None;
                        }
                    }
                    _ => {}
                }
            }
            frame = socket.next(), if pending.is_none() => match frame {
                Some(Ok(Message::Binary(bytes))) => {
                    let Some((&channel, data)) = bytes.split_first() else { continue };
                    if channel % 2 != 0 || data.is_empty() {
                        continue;
                    }
                    let index = usize::from(channel / 2);
                    if inputs.get(index).is_some_and(Option::is_some) {
                        pending = Some((index, data.to_vec()));
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            frame = out.recv() => match frame {
                Some(frame) => {
                    if socket.send(frame).await.is_err() {
                        return;
                    }
                }
                // Every port's connection has ended.
                None => break,
            },
        }
    }
    let _ = socket.close(None).await;
}

/// One port: connects to its target and moves bytes both ways until
/// either side ends; a port that cannot be reached gets `message` on its
/// error channel.
async fn relay(
    target: Option<SocketAddr>,
    data: u8,
    mut input: mpsc::Receiver<Vec<u8>>,
    out: mpsc::Sender<Message>,
    message: String,
) {
    let connected = match target {
        Some(address) => TcpStream::connect(address).await.map_err(|e| e.to_string()),
        None => Err("connection refused".to_string()),
    };
    let stream = match connected {
        Ok(stream) => stream,
        Err(why) => {
            let _ = out
                .send(channel_frame(
                    data + 1,
                    format!("{message}: {why}").as_bytes(),
                ))
                .await;
            return;
        }
    };
    let (mut read, mut write) = stream.into_split();
    // Both directions at once, so neither waits on the other; the port is
    // done when the pod's side ends or the session goes.
    let outward = async {
        let mut buffer = vec![0u8; 32 * 1024];
        while let Ok(n) = read.read(&mut buffer).await {
            if n == 0 {
                return;
            }
            if out.send(channel_frame(data, &buffer[..n])).await.is_err() {
                return;
            }
        }
    };
    let inward = async {
        while let Some(bytes) = input.recv().await {
            if write.write_all(&bytes).await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        () = outward => {}
        () = inward => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_repeated_or_joined() {
        assert_eq!(ports_of("ports=80&ports=443").unwrap(), [80, 443]);
        assert_eq!(ports_of("ports=80,443").unwrap(), [80, 443]);
        assert!(ports_of("").is_err());
        assert!(ports_of("ports=0").is_err());
        assert!(ports_of("ports=http").is_err());
    }
}
