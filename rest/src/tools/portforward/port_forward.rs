//! Port-forward: a pod's ports as byte streams over a WebSocket
//! ([`PortForward::open`], kube-rs's `Api<Pod>::portforward`),
//! and local listeners that forward each connection to them
//! ([`PortForwarder`], client-go's `tools/portforward.PortForwarder`;
//! kubectl port-forward).
//!
//! # The protocol, and why this one
//!
//! `GET pods/{name}/portforward?ports=P1&ports=P2` upgraded to a WebSocket
//! with the `v4.channel.k8s.io` subprotocol (kubelet's WebSocket
//! port-forward, as kube-rs speaks it): port *i* has data channel `2i`
//! and error channel `2i+1`; every frame starts with its channel, and the
//! server's first frame on each channel is the port, two bytes little
//! endian. An error channel carries the server's message when it cannot
//! reach the port.
//!
//! kubectl 1.31+ instead tunnels SPDY (`SPDY/3.1+portforward.k8s.io`)
//! through one WebSocket, which multiplexes every connection of a port
//! over it. That needs an SPDY implementation, which neither rustls nor
//! reqwest has and no maintained Rust crate offers; the plain WebSocket
//! protocol needs none, and costs one WebSocket (one upgraded connection)
//! per forwarded connection, which is what [`PortForwarder`] opens. It
//! also cannot half-close: when the local side of a forwarded connection
//! stops sending, the pod's side gets [`LOCAL_CLOSE_GRACE`] to finish its
//! answer, then both are closed (else a keep-alive server in the pod
//! would hold the WebSocket open forever).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::{SinkExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, WriteHalf};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::api::resource_client::ResourceClient;
use crate::client::error::Error;
use crate::tools::remotecommand::remote_command::{V4_CHANNEL_PROTOCOL, channel_frame};
use crate::transport::websocket::{Upgraded, WebSocket, closed_mid_stream};

/// How much of a port's data waits for its reader before the session
/// stops reading the socket.
const PIPE_BYTES: usize = 64 * 1024;

/// The most of an error channel kept.
const MAX_ERROR_BYTES: usize = 16 * 1024;

/// Why a port-forward failed.
#[derive(Debug, thiserror::Error)]
pub enum PortForwardError {
    /// The session could not start (the pod does not exist, is not
    /// running, the upgrade was refused).
    #[error(transparent)]
    Start(#[from] Error),
    /// The server could not reach the port in the pod: its message.
    #[error("pod {pod} port {port}: {message}")]
    Remote {
        /// The pod.
        pod: String,
        /// The pod's port.
        port: u16,
        /// The server's message.
        message: String,
    },
    /// The connection closed without the closing handshake: cut
    /// mid-stream.
    #[error("pod {pod}: the port-forward connection closed mid-stream")]
    ConnectionClosed {
        /// The pod.
        pod: String,
    },
    /// The WebSocket failed.
    #[error("pod {pod}: WebSocket: {source}")]
    WebSocket {
        /// The pod.
        pod: String,
        /// What failed.
        #[source]
        source: tungstenite::Error,
    },
    /// A local listener could not be opened.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address.
        address: SocketAddr,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The ports asked for cannot share one WebSocket: none, more than
    /// 128 (channels are numbered by one byte, two per port), 0, or one
    /// twice.
    #[error("ports {ports:?}: {message}")]
    Ports {
        /// The ports asked for.
        ports: Vec<u16>,
        /// What is wrong.
        message: String,
    },
    /// A port mapping is not `LOCAL:REMOTE`, `:REMOTE` or `PORT`.
    #[error("port mapping {text:?}: {message}")]
    Mapping {
        /// The text.
        text: String,
        /// What is wrong.
        message: String,
    },
}

/// One WebSocket carrying a pod's ports: a byte stream per port. Dropping
/// it closes them all.
#[derive(Debug)]
pub struct PortForward {
    streams: Vec<(u16, Option<DuplexStream>)>,
    ended: oneshot::Receiver<Result<(), PortForwardError>>,
    pod: String,
    task: JoinHandle<()>,
}

impl Drop for PortForward {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PortForward {
    /// Opens one WebSocket to `ports` of pod `name`, through `pods` (`GET
    /// pods/{name}/portforward`).
    ///
    /// ```no_run
    /// # async fn run(pods: clientgo_rest::ResourceClient<k8s_openapi::api::core::v1::Pod>) -> Result<(), Box<dyn std::error::Error>> {
    /// use clientgo_rest::tools::portforward::PortForward;
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let mut session = PortForward::open(&pods, "web-0", &[8080]).await?;
    /// let mut port = session.take_stream(8080).expect("asked for");
    /// port.write_all(b"GET / HTTP/1.0\r\n\r\n").await?;
    /// let mut answer = String::new();
    /// port.read_to_string(&mut answer).await?;
    /// session.join().await?;
    /// # Ok(()) }
    /// ```
    pub async fn open(
        pods: &ResourceClient<Pod>,
        name: &str,
        ports: &[u16],
    ) -> Result<PortForward, PortForwardError> {
        check_ports(ports)?;
        let mut request = pods
            .object(pods.client().get(), name)?
            .subresource("portforward");
        for port in ports {
            request = request.param("ports", port.to_string());
        }
        let Upgraded { socket, .. } = request.websocket(&[V4_CHANNEL_PROTOCOL]).await?;
        let pod = match pods.namespace() {
            Some(namespace) => format!("{namespace}/{name}"),
            None => name.to_string(),
        };
        let mut streams = Vec::with_capacity(ports.len());
        let mut ours = Vec::with_capacity(ports.len());
        for port in ports {
            let (session_side, caller_side) = tokio::io::duplex(PIPE_BYTES);
            streams.push((*port, Some(caller_side)));
            ours.push((*port, session_side));
        }
        let (ended_tx, ended) = oneshot::channel();
        let session_pod = pod.clone();
        let task = tokio::spawn(async move {
            let _ = ended_tx.send(run(session_pod, socket, ours).await);
        });
        Ok(PortForward {
            streams,
            ended,
            pod,
            task,
        })
    }

    /// The stream of a pod's `port`, once: what is written to it reaches
    /// the port, what the port sends is read from it.
    pub fn take_stream(&mut self, port: u16) -> Option<DuplexStream> {
        self.streams
            .iter_mut()
            .find(|(p, _)| *p == port)
            .and_then(|(_, stream)| stream.take())
    }

    /// Waits until the server ends the session: `Ok` when it closed it
    /// cleanly, else the first port's error (even when the connection
    /// then broke) or how the connection broke. Streams not taken are
    /// discarded from here on, so an unread port holds no other back.
    pub async fn join(mut self) -> Result<(), PortForwardError> {
        for (_, stream) in &mut self.streams {
            *stream = None;
        }
        let pod = self.pod.clone();
        (&mut self.ended)
            .await
            .unwrap_or(Err(PortForwardError::ConnectionClosed { pod }))
    }
}

/// The session's side of one port.
struct PortChannels {
    port: u16,
    /// Where its data goes to the caller; `None` once the caller is gone.
    write: Option<WriteHalf<DuplexStream>>,
    /// Bytes of the port prefix still to strip from the data and error
    /// channels.
    prefix: [usize; 2],
    error: Vec<u8>,
}

/// The most ports one WebSocket carries: two channels each, numbered by
/// one byte.
pub const MAX_PORTS_PER_SESSION: usize = 128;

fn check_ports(ports: &[u16]) -> Result<(), PortForwardError> {
    let wrong = |message: &str| PortForwardError::Ports {
        ports: ports.to_vec(),
        message: message.to_string(),
    };
    if ports.is_empty() {
        return Err(wrong("no port given"));
    }
    if ports.len() > MAX_PORTS_PER_SESSION {
        return Err(wrong("more than 128 ports on one WebSocket"));
    }
    if ports.contains(&0) {
        return Err(wrong("port 0 cannot be forwarded"));
    }
    let mut sorted = ports.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(wrong("a port is given twice"));
    }
    Ok(())
}

/// Strips what is left of a channel's two-byte port prefix from a frame.
fn strip_prefix<'a>(remaining: &mut usize, payload: &'a [u8]) -> &'a [u8] {
    let strip = (*remaining).min(payload.len());
    *remaining -= strip;
    &payload[strip..]
}

/// Moves frames between the socket and the ports' pipes until the server
/// closes the socket.
async fn run(
    pod: String,
    mut socket: WebSocket,
    pipes: Vec<(u16, DuplexStream)>,
) -> Result<(), PortForwardError> {
    // Readers of the callers' pipes, one task each, aborted with this one.
    let (input_tx, mut input) = mpsc::channel::<Vec<u8>>(pipes.len().max(1));
    let mut readers = JoinSet::new();
    let mut ports = Vec::with_capacity(pipes.len());
    for (index, (port, pipe)) in pipes.into_iter().enumerate() {
        let (mut read, write) = tokio::io::split(pipe);
        ports.push(PortChannels {
            port,
            write: Some(write),
            prefix: [2, 2],
            error: Vec::new(),
        });
        // Two channels per port: a byte holds 128 ports' channels.
        let channel = (index * 2) as u8;
        let sender = input_tx.clone();
        readers.spawn(async move {
            let mut buffer = vec![0u8; 32 * 1024];
            loop {
                match read.read(&mut buffer).await {
                    Ok(n) if n > 0 => {
                        let frame = channel_frame(channel, &buffer[..n]);
                        if sender.send(frame).await.is_err() {
                            return;
                        }
                    }
                    _ => return,
                }
            }
        });
    }
    drop(input_tx);
    let outcome = loop {
        tokio::select! {
            frame = socket.next() => match frame {
                None | Some(Ok(Message::Close(_))) => break Ok(()),
                Some(Ok(Message::Binary(bytes))) => {
                    let Some((&channel, payload)) = bytes.split_first() else {
                        continue;
                    };
                    let Some(port) = ports.get_mut(usize::from(channel / 2)) else {
                        continue;
                    };
                    let is_error = channel % 2 == 1;
                    let payload = strip_prefix(&mut port.prefix[usize::from(is_error)], payload);
                    if is_error {
                        if port.error.len() + payload.len() <= MAX_ERROR_BYTES {
                            port.error.extend_from_slice(payload);
                        }
                    } else if let Some(write) = &mut port.write
                        && !payload.is_empty()
                        && write.write_all(payload).await.is_err()
                    {
                        port.write = None;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(source)) => break Err(socket_error(&pod, source)),
            },
            Some(frame) = input.recv() => {
                if let Err(source) = socket.send(Message::Binary(frame.into())).await {
                    break Err(socket_error(&pod, source));
                }
            },
        }
    };
    readers.abort_all();
    for port in &mut ports {
        if let Some(write) = &mut port.write {
            let _ = write.shutdown().await;
        }
    }
    // A port's error says more than how the connection then ended.
    match ports.iter().find(|port| !port.error.is_empty()) {
        Some(port) => Err(PortForwardError::Remote {
            pod,
            port: port.port,
            message: String::from_utf8_lossy(&port.error).into_owned(),
        }),
        None => outcome,
    }
}

fn socket_error(pod: &str, source: tungstenite::Error) -> PortForwardError {
    if closed_mid_stream(&source) {
        return PortForwardError::ConnectionClosed {
            pod: pod.to_string(),
        };
    }
    PortForwardError::WebSocket {
        pod: pod.to_string(),
        source,
    }
}

/// A local port and the pod's port it forwards to, as kubectl writes it:
/// `8080:80`, `:80` (any free local port) or `80` (the same port).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortMapping {
    /// The local port; 0 picks a free one.
    pub local: u16,
    /// The pod's port.
    pub remote: u16,
}

impl FromStr for PortMapping {
    type Err = PortForwardError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = |message: &str| PortForwardError::Mapping {
            text: text.to_string(),
            message: message.to_string(),
        };
        let port = |part: &str, what: &str| {
            part.parse::<u16>()
                .map_err(|_| wrong(&format!("the {what} port is not a number from 0 to 65535")))
        };
        let (local, remote) = match text.split_once(':') {
            Some(("", remote)) => (0, port(remote, "remote")?),
            Some((local, remote)) => (port(local, "local")?, port(remote, "remote")?),
            None => {
                let both = port(text, "remote")?;
                (both, both)
            }
        };
        if remote == 0 {
            return Err(wrong("the remote port cannot be 0"));
        }
        Ok(PortMapping { local, remote })
    }
}

impl fmt::Display for PortMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.local, self.remote)
    }
}

/// A listening local port and the pod's port it forwards to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardedPort {
    /// Where it listens.
    pub local: SocketAddr,
    /// The pod's port.
    pub remote: u16,
}

/// Counters of a [`PortForwarder`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForwarderStats {
    /// Local connections accepted.
    pub connections: u64,
    /// Connections that ended with an error (the pod's port refused, the
    /// session could not start or broke); each is logged.
    pub failures: u64,
    /// Connections that have ended, with or without an error (counted
    /// after `failures`).
    pub closed: u64,
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    failures: AtomicU64,
    closed: AtomicU64,
}

/// Local listeners forwarding to a pod (client-go's
/// `portforward.PortForwarder`): each accepted connection gets a
/// WebSocket of its own to the pod's port, closed when the pod's side
/// ends or [`LOCAL_CLOSE_GRACE`] after the local side stops sending.
///
/// The listeners are open when [`bind`](Self::bind) returns. One task
/// accepts for all of them and owns the connections' tasks; dropping the
/// forwarder stops it and closes every connection.
#[derive(Debug)]
pub struct PortForwarder {
    ports: Vec<ForwardedPort>,
    counters: Arc<Counters>,
    task: JoinHandle<()>,
}

impl Drop for PortForwarder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PortForwarder {
    /// Listens on `address` (kubectl's default is localhost: pass
    /// [`PortForwarder::LOCALHOST`]) for each mapping and forwards to pod
    /// `name` through `pods`.
    ///
    /// ```no_run
    /// # async fn run(pods: clientgo_rest::ResourceClient<k8s_openapi::api::core::v1::Pod>) -> Result<(), Box<dyn std::error::Error>> {
    /// use clientgo_rest::tools::portforward::{PortForwarder, PortMapping};
    ///
    /// let mapping: PortMapping = ":8080".parse()?;
    /// let forwarder = PortForwarder::bind(pods, "web-0", &[mapping], PortForwarder::LOCALHOST).await?;
    /// println!("forwarding {} -> 8080", forwarder.ports()[0].local);
    /// # Ok(()) }
    /// ```
    pub async fn bind(
        pods: ResourceClient<Pod>,
        name: &str,
        mappings: &[PortMapping],
        address: IpAddr,
    ) -> Result<PortForwarder, PortForwardError> {
        let mut listeners = Vec::with_capacity(mappings.len());
        let mut ports = Vec::with_capacity(mappings.len());
        for mapping in mappings {
            let wanted = SocketAddr::new(address, mapping.local);
            let listener =
                TcpListener::bind(wanted)
                    .await
                    .map_err(|source| PortForwardError::Listen {
                        address: wanted,
                        source,
                    })?;
            let local = listener
                .local_addr()
                .map_err(|source| PortForwardError::Listen {
                    address: wanted,
                    source,
                })?;
            ports.push(ForwardedPort {
                local,
                remote: mapping.remote,
            });
            listeners.push((listener, mapping.remote));
        }
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(accept_all(
            pods,
            name.to_string(),
            listeners,
            Arc::clone(&counters),
        ));
        Ok(PortForwarder {
            ports,
            counters,
            task,
        })
    }

    /// 127.0.0.1, where kubectl listens by default.
    pub const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    /// The listening ports, in the order of the mappings given.
    pub fn ports(&self) -> &[ForwardedPort] {
        &self.ports
    }

    /// What has been forwarded so far.
    pub fn stats(&self) -> ForwarderStats {
        ForwarderStats {
            connections: self.counters.connections.load(Ordering::Relaxed),
            failures: self.counters.failures.load(Ordering::Relaxed),
            closed: self.counters.closed.load(Ordering::Relaxed),
        }
    }
}

/// Accepts on every listener and forwards each connection; the
/// connections' tasks live in a set dropped (and so aborted) with this
/// task.
async fn accept_all(
    pods: ResourceClient<Pod>,
    name: String,
    listeners: Vec<(TcpListener, u16)>,
    counters: Arc<Counters>,
) {
    let (accepted_tx, mut accepted) = mpsc::channel(16);
    let mut tasks = JoinSet::new();
    for (listener, remote) in listeners {
        let accepted_tx = accepted_tx.clone();
        tasks.spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        if accepted_tx.send((stream, remote)).await.is_err() {
                            return;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "port-forward: accepting a connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        });
    }
    drop(accepted_tx);
    while let Some((mut stream, remote)) = accepted.recv().await {
        counters.connections.fetch_add(1, Ordering::Relaxed);
        let pods = pods.clone();
        let name = name.clone();
        let counters = Arc::clone(&counters);
        tasks.spawn(async move {
            if let Err(error) = forward(&pods, &name, remote, &mut stream).await {
                counters.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(pod = %name, port = remote, %error, "port-forward: a connection failed");
            }
            counters.closed.fetch_add(1, Ordering::Relaxed);
        });
        // Finished connections' results are dropped as they come.
        while tasks.try_join_next().is_some() {}
    }
}

/// Forwards one local connection over a WebSocket of its own.
async fn forward(
    pods: &ResourceClient<Pod>,
    name: &str,
    remote: u16,
    local: &mut tokio::net::TcpStream,
) -> Result<(), PortForwardError> {
    let mut session = PortForward::open(pods, name, &[remote]).await?;
    let Some(pipe) = session.take_stream(remote) else {
        return Ok(());
    };
    let (mut local_read, mut local_write) = local.split();
    let (mut pipe_read, mut pipe_write) = tokio::io::split(pipe);
    let outward = tokio::io::copy(&mut local_read, &mut pipe_write);
    let inward = async {
        let copied = tokio::io::copy(&mut pipe_read, &mut local_write).await;
        let _ = local_write.shutdown().await;
        copied
    };
    tokio::pin!(outward, inward);
    // The protocol cannot half-close: once the local side stops sending,
    // the pod's answer gets LOCAL_CLOSE_GRACE to finish, then both go.
    tokio::select! {
        _ = &mut inward => {}
        _ = &mut outward => {
            let _ = tokio::time::timeout(LOCAL_CLOSE_GRACE, &mut inward).await;
        }
    }
    // The session's own end says why it ended; when the pod's side is
    // still open it is closed by dropping the session.
    match tokio::time::timeout(std::time::Duration::from_millis(100), session.join()).await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

/// How long a forwarded connection stays open for the pod's answer after
/// the local side stopped sending.
pub const LOCAL_CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_mappings_as_kubectl_writes_them() {
        let table = [
            ("8080:80", Some((8080, 80))),
            (":80", Some((0, 80))),
            ("5432", Some((5432, 5432))),
            ("0:80", Some((0, 80))),
            ("80:0", None),
            ("0", None),
            ("http", None),
            ("70000:80", None),
            ("8080:", None),
            ("", None),
        ];
        for (text, want) in table {
            let got = text
                .parse::<PortMapping>()
                .ok()
                .map(|m| (m.local, m.remote));
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn the_port_prefix_is_stripped_across_frames() {
        let mut remaining = 2;
        assert_eq!(strip_prefix(&mut remaining, &[80]), b"");
        assert_eq!(strip_prefix(&mut remaining, &[0, b'h', b'i']), b"hi");
        assert_eq!(strip_prefix(&mut remaining, b"there"), b"there");
        let mut remaining = 2;
        assert_eq!(strip_prefix(&mut remaining, &[80, 0]), b"");
        assert_eq!(strip_prefix(&mut remaining, b""), b"");
        assert_eq!(strip_prefix(&mut remaining, b"x"), b"x");
    }
}
