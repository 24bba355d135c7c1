//! Exec and attach: a command's stdin, stdout, stderr, terminal size and
//! exit status over one WebSocket (client-go's `tools/remotecommand` with
//! its WebSocket executor, `NewWebSocketExecutor`; kube-rs's
//! `Api<Pod>::exec` and `attach`): [`RemoteProcess::exec`] and
//! [`RemoteProcess::attach`].
//!
//! # The protocol
//!
//! The client offers `v5.channel.k8s.io` then `v4.channel.k8s.io`, as
//! kubectl 1.30+ does, and the server chooses. Every binary frame starts
//! with its channel: 0 stdin, 1 stdout, 2 stderr, 3 the error channel
//! (the command's `Status` as JSON, once, at the end), 4 terminal sizes
//! (`{"Width":W,"Height":H}`). Only v5 can close one channel: the frame
//! `[255, 0]` closes stdin, so a command reading stdin to its end (`cat`,
//! `tar x`) can finish. Over v4 stdin stays open until the connection
//! closes. The server's first frame is its readiness (the lowest output
//! channel's byte alone) and is skipped. A status that arrived whole is
//! the answer even if the connection then broke; none at all is
//! [`RemoteCommandError::ConnectionClosed`] (client-go takes an empty
//! error channel as success, which no 1.30+ server sends).
//!
//! # What is not here
//!
//! client-go falls back to SPDY when the WebSocket upgrade fails (servers
//! before 1.30). This crate speaks WebSockets only: rustls and reqwest
//! have no SPDY, and every supported server (1.30+) serves them.

use std::time::Duration;

use clientgo_apimachinery::Status;
use futures_util::{SinkExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::api::pod_subresources::container_and_flags;
use crate::api::resource_client::ResourceClient;
use crate::client::error::Error;
use crate::client::request::Request;
use crate::transport::websocket::{Upgraded, WebSocket, closed_mid_stream};

/// The channel protocol kubectl 1.30+ asks for first: v4 and the stream
/// close signal.
pub const V5_CHANNEL_PROTOCOL: &str = "v5.channel.k8s.io";
/// The channel protocol every supported server speaks; no stream close.
pub const V4_CHANNEL_PROTOCOL: &str = "v4.channel.k8s.io";

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
const CLOSE: u8 = 255;

/// How often the client pings the server, as client-go's executor: keeps
/// proxies and load balancers from closing a quiet session.
const PING_PERIOD: Duration = Duration::from_secs(5);

/// How much of a stream's output waits for its reader before the session
/// stops reading the socket.
const PIPE_BYTES: usize = 64 * 1024;

/// Which streams a session has, and the container (client-go's
/// `PodExecOptions` and `PodAttachOptions` without the command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamOptions {
    /// The container; needed when the pod has more than one.
    pub container: Option<String>,
    /// Send input ([`RemoteProcess::take_stdin`]).
    pub stdin: bool,
    /// Receive standard output. On by default.
    pub stdout: bool,
    /// Receive standard error. On by default; a TTY has none (the server
    /// drops it).
    pub stderr: bool,
    /// Run in a terminal: output is one stream, and the terminal's size
    /// can be set ([`RemoteProcess::terminal_size`]).
    pub tty: bool,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            container: None,
            stdin: false,
            stdout: true,
            stderr: true,
            tty: false,
        }
    }
}

impl StreamOptions {
    /// Names the container.
    #[must_use]
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// Sends input or not.
    #[must_use]
    pub fn stdin(mut self, stdin: bool) -> Self {
        self.stdin = stdin;
        self
    }

    /// Receives standard output or not.
    #[must_use]
    pub fn stdout(mut self, stdout: bool) -> Self {
        self.stdout = stdout;
        self
    }

    /// Receives standard error or not.
    #[must_use]
    pub fn stderr(mut self, stderr: bool) -> Self {
        self.stderr = stderr;
        self
    }

    /// Runs in a terminal or not.
    #[must_use]
    pub fn tty(mut self, tty: bool) -> Self {
        self.tty = tty;
        self
    }

    fn query_pairs(&self) -> Vec<(&'static str, String)> {
        container_and_flags(
            self.container.as_deref(),
            [
                ("stdin", self.stdin),
                ("stdout", self.stdout),
                ("stderr", self.stderr && !self.tty),
                ("tty", self.tty),
            ],
        )
    }
}

/// A terminal's size in characters, as the resize channel carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TerminalSize {
    /// Columns.
    #[serde(rename = "Width")]
    pub width: u16,
    /// Rows.
    #[serde(rename = "Height")]
    pub height: u16,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitStatus {
    /// Its exit code: 0 for success.
    pub code: i32,
    /// The server's message for a non-zero code (empty for 0).
    pub message: String,
}

impl ExitStatus {
    /// Whether the code is 0.
    pub fn success(&self) -> bool {
        self.code == 0
    }
}

/// Why an exec or attach session failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteCommandError {
    /// The session could not start: the pod or container does not exist,
    /// it is not running, the upgrade was refused.
    #[error(transparent)]
    Start(#[from] Error),
    /// The command could not run or failed without an exit code (the
    /// error channel's Status: an executable not found, a runtime error).
    #[error("pod {pod}: {}", .status.message)]
    Failed {
        /// The pod.
        pod: String,
        /// The server's Status.
        status: Box<Status>,
    },
    /// The connection closed before the command's status arrived: the
    /// server, a proxy or the network cut the session mid-stream.
    #[error("pod {pod}: the connection closed before the command's exit status arrived")]
    ConnectionClosed {
        /// The pod.
        pod: String,
    },
    /// The error channel held something other than a Status.
    #[error("pod {pod}: the error channel held no Status ({message}): {text:?}")]
    BadStatus {
        /// The pod.
        pod: String,
        /// Why it could not be read.
        message: String,
        /// What it held (at most 1 KiB of it).
        text: String,
    },
    /// The WebSocket failed (a protocol violation, a reset).
    #[error("pod {pod}: WebSocket: {source}")]
    WebSocket {
        /// The pod.
        pod: String,
        /// What failed.
        #[source]
        source: tungstenite::Error,
    },
}

/// A running exec or attach session: its streams, its terminal, and how
/// it ended ([`wait`](Self::wait)).
///
/// One task owns the WebSocket. It writes each output frame into its
/// stream's pipe (64 KiB) and waits while the pipe is full, as a child
/// process's pipes do: output nobody reads holds the whole session back.
/// So read every stream asked for ([`StreamOptions`] asks for stdout and
/// stderr by default), or turn it off, while waiting; from
/// [`wait`](Self::wait) on, the streams not taken are discarded.
/// Dropping the process closes the session.
#[derive(Debug)]
pub struct RemoteProcess {
    pod: String,
    protocol: String,
    stdin: Option<DuplexStream>,
    stdout: Option<DuplexStream>,
    stderr: Option<DuplexStream>,
    resize: Option<mpsc::Sender<TerminalSize>>,
    ended: oneshot::Receiver<Result<ExitStatus, RemoteCommandError>>,
    task: JoinHandle<()>,
}

impl Drop for RemoteProcess {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RemoteProcess {
    /// The subprotocol the server chose ([`V5_CHANNEL_PROTOCOL`] or
    /// [`V4_CHANNEL_PROTOCOL`]).
    pub fn protocol(&self) -> &str {
        &self.protocol
    }

    /// The command's input, once, when [`StreamOptions::stdin`] was set.
    /// Shutting it down (or dropping it) closes the command's stdin over
    /// v5; over v4 the command sees no end of input.
    pub fn take_stdin(&mut self) -> Option<DuplexStream> {
        self.stdin.take()
    }

    /// The command's standard output (its terminal's, with a TTY), once.
    pub fn take_stdout(&mut self) -> Option<DuplexStream> {
        self.stdout.take()
    }

    /// The command's standard error, once; none with a TTY.
    pub fn take_stderr(&mut self) -> Option<DuplexStream> {
        self.stderr.take()
    }

    /// Where to send terminal sizes, with a TTY: each is sent as it comes
    /// (kubectl sends the first at once and one per window change).
    pub fn terminal_size(&self) -> Option<mpsc::Sender<TerminalSize>> {
        self.resize.clone()
    }

    /// Waits for the command to end: its exit status (a non-zero code is
    /// a status, not an error, as kubectl passes it on), or why it could
    /// not be known. Streams not taken are discarded from here on.
    pub async fn wait(mut self) -> Result<ExitStatus, RemoteCommandError> {
        self.stdout = None;
        self.stderr = None;
        self.stdin = None;
        self.resize = None;
        let pod = self.pod.clone();
        (&mut self.ended)
            .await
            .unwrap_or(Err(RemoteCommandError::ConnectionClosed { pod }))
    }

    /// Runs `command` in a container of pod `name`, through `pods` (`GET
    /// pods/{name}/exec` upgraded to a WebSocket; kubectl exec).
    ///
    /// ```no_run
    /// # async fn run(pods: clientgo_rest::ResourceClient<k8s_openapi::api::core::v1::Pod>) -> Result<(), Box<dyn std::error::Error>> {
    /// use clientgo_rest::tools::remotecommand::{RemoteProcess, StreamOptions};
    /// use tokio::io::AsyncReadExt;
    ///
    /// let mut process =
    ///     RemoteProcess::exec(&pods, "web-0", ["cat", "/etc/hostname"], &StreamOptions::default()).await?;
    /// let mut stdout = process.take_stdout().expect("asked for");
    /// let mut text = String::new();
    /// let (read, status) = tokio::join!(stdout.read_to_string(&mut text), process.wait());
    /// read?;
    /// println!("{text} (exit {})", status?.code);
    /// # Ok(()) }
    /// ```
    pub async fn exec<I, S>(
        pods: &ResourceClient<Pod>,
        name: &str,
        command: I,
        options: &StreamOptions,
    ) -> Result<RemoteProcess, RemoteCommandError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut request = pods.object(pods.client().get(), name)?.subresource("exec");
        for word in command {
            request = request.param("command", word);
        }
        RemoteProcess::start(pods, name, request, options).await
    }

    /// Attaches to the main process of a container of pod `name`, through
    /// `pods` (`GET pods/{name}/attach` upgraded to a WebSocket; kubectl
    /// attach): its output from now on, and its input when the container
    /// has `stdin: true`.
    ///
    /// ```no_run
    /// # async fn run(pods: clientgo_rest::ResourceClient<k8s_openapi::api::core::v1::Pod>) -> Result<(), Box<dyn std::error::Error>> {
    /// use clientgo_rest::tools::remotecommand::{RemoteProcess, StreamOptions};
    ///
    /// let mut process =
    ///     RemoteProcess::attach(&pods, "web-0", &StreamOptions::default().stderr(false)).await?;
    /// let mut output = process.take_stdout().expect("asked for");
    /// tokio::io::copy(&mut output, &mut tokio::io::sink()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn attach(
        pods: &ResourceClient<Pod>,
        name: &str,
        options: &StreamOptions,
    ) -> Result<RemoteProcess, RemoteCommandError> {
        let request = pods
            .object(pods.client().get(), name)?
            .subresource("attach");
        RemoteProcess::start(pods, name, request, options).await
    }

    async fn start(
        pods: &ResourceClient<Pod>,
        name: &str,
        mut request: Request,
        options: &StreamOptions,
    ) -> Result<RemoteProcess, RemoteCommandError> {
        for (key, value) in options.query_pairs() {
            request = request.param(key, value);
        }
        let Upgraded { socket, protocol } = request
            .websocket(&[V5_CHANNEL_PROTOCOL, V4_CHANNEL_PROTOCOL])
            .await?;
        let pod = match pods.namespace() {
            Some(namespace) => format!("{namespace}/{name}"),
            None => name.to_string(),
        };
        let (stdin_ours, stdin_theirs) = tokio::io::duplex(PIPE_BYTES);
        let (stdout_ours, stdout_theirs) = tokio::io::duplex(PIPE_BYTES);
        let (stderr_ours, stderr_theirs) = tokio::io::duplex(PIPE_BYTES);
        let (resize_tx, resize_rx) = mpsc::channel(8);
        let (ended_tx, ended) = oneshot::channel();
        let session = Session {
            pod: pod.clone(),
            can_close: protocol == V5_CHANNEL_PROTOCOL,
            stdin: options.stdin.then_some(stdin_ours),
            stdout: options.stdout.then_some(stdout_ours),
            stderr: (options.stderr && !options.tty).then_some(stderr_ours),
            resize: resize_rx,
        };
        let task = tokio::spawn(async move {
            let _ = ended_tx.send(session.run(socket).await);
        });
        Ok(RemoteProcess {
            pod,
            protocol,
            stdin: options.stdin.then_some(stdin_theirs),
            stdout: options.stdout.then_some(stdout_theirs),
            stderr: (options.stderr && !options.tty).then_some(stderr_theirs),
            resize: options.tty.then_some(resize_tx),
            ended,
            task,
        })
    }
}

/// The session task's side of the streams.
struct Session {
    pod: String,
    /// Whether the protocol can close stdin (v5).
    can_close: bool,
    stdin: Option<DuplexStream>,
    stdout: Option<DuplexStream>,
    stderr: Option<DuplexStream>,
    resize: mpsc::Receiver<TerminalSize>,
}

impl Session {
    /// Moves frames until the server closes the session, then reads the
    /// status gathered from the error channel.
    async fn run(mut self, mut socket: WebSocket) -> Result<ExitStatus, RemoteCommandError> {
        let mut status = ErrorChannel::default();
        let mut input = vec![0u8; 32 * 1024];
        let mut ping =
            tokio::time::interval_at(tokio::time::Instant::now() + PING_PERIOD, PING_PERIOD);
        let mut resizing = true;
        // Once a send fails the server may still have sent the status:
        // nothing more is sent, and the socket is read to its end.
        let mut sending = true;
        let mut failure = None;
        loop {
            let frame = tokio::select! {
                // Ready frames in this order: what the server sent, then
                // a terminal size before the input typed after it.
                biased;
                frame = socket.next() => frame,
                size = self.resize.recv(), if resizing && sending => {
                    let Some(size) = size else {
                        resizing = false;
                        continue;
                    };
                    let json = serde_json::to_vec(&size).unwrap_or_default();
                    let frame = channel_frame(RESIZE, &json);
                    if let Err(source) = socket.send(Message::Binary(frame.into())).await {
                        sending = false;
                        failure = Some(source);
                    }
                    continue;
                },
                read = read_some(&mut self.stdin, &mut input), if sending => {
                    let frame = match read {
                        Some(n) if n > 0 => channel_frame(STDIN, &input[..n]),
                        // The caller closed stdin, or it broke.
                        _ => {
                            self.stdin = None;
                            if !self.can_close {
                                continue;
                            }
                            vec![CLOSE, STDIN]
                        }
                    };
                    if let Err(source) = socket.send(Message::Binary(frame.into())).await {
                        sending = false;
                        failure = Some(source);
                    }
                    continue;
                },
                _ = ping.tick(), if sending => {
                    if let Err(source) = socket.send(Message::Ping(Vec::new().into())).await {
                        sending = false;
                        failure = Some(source);
                    }
                    continue;
                },
            };
            match frame {
                None | Some(Ok(Message::Close(_))) => break,
                Some(Ok(Message::Binary(bytes))) => match Frame::parse(&bytes) {
                    Frame::Data {
                        channel: STDOUT,
                        payload,
                    } => write_discarding(&mut self.stdout, payload).await,
                    Frame::Data {
                        channel: STDERR,
                        payload,
                    } => write_discarding(&mut self.stderr, payload).await,
                    Frame::Data {
                        channel: ERROR,
                        payload,
                    } => status.push(payload),
                    // Readiness, or a channel this side never reads.
                    Frame::Data { .. } | Frame::Empty | Frame::Close { .. } => {}
                },
                Some(Ok(_)) => {}
                Some(Err(source)) => {
                    failure = Some(source);
                    break;
                }
            }
        }
        // Output ends before the status is known.
        for stream in [&mut self.stdout, &mut self.stderr].into_iter().flatten() {
            let _ = stream.shutdown().await;
        }
        // A status that arrived whole wins over how the connection ended.
        match (exit_status(&self.pod, &status), failure) {
            (Err(RemoteCommandError::ConnectionClosed { .. }), Some(source)) => {
                Err(self.socket_error(source))
            }
            (ended, _) => ended,
        }
    }

    /// A failed socket: a server that closed without the closing
    /// handshake is a connection closed mid-stream.
    fn socket_error(&self, source: tungstenite::Error) -> RemoteCommandError {
        if closed_mid_stream(&source) {
            return RemoteCommandError::ConnectionClosed {
                pod: self.pod.clone(),
            };
        }
        RemoteCommandError::WebSocket {
            pod: self.pod.clone(),
            source,
        }
    }
}

/// The most of the error channel kept: a Status is small, and a server
/// that sends more cannot make the client hold it.
const MAX_STATUS_BYTES: usize = 64 * 1024;

/// What the error channel held: its first [`MAX_STATUS_BYTES`], and
/// whether there was more.
#[derive(Debug, Default)]
struct ErrorChannel {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl ErrorChannel {
    fn push(&mut self, payload: &[u8]) {
        let room = MAX_STATUS_BYTES.saturating_sub(self.bytes.len());
        self.overflowed |= payload.len() > room;
        self.bytes
            .extend_from_slice(&payload[..payload.len().min(room)]);
    }
}

/// One frame from the server, by its first byte.
#[derive(Debug, PartialEq, Eq)]
enum Frame<'a> {
    /// No channel byte: ignored.
    Empty,
    /// Bytes for `channel` (possibly none: the server's readiness frame).
    Data { channel: u8, payload: &'a [u8] },
    /// v5's close signal for `channel`.
    Close { channel: u8 },
}

impl<'a> Frame<'a> {
    fn parse(frame: &'a [u8]) -> Frame<'a> {
        match frame {
            [] => Frame::Empty,
            [CLOSE, channel] => Frame::Close { channel: *channel },
            [channel, payload @ ..] => Frame::Data {
                channel: *channel,
                payload,
            },
        }
    }
}

/// `payload` behind its channel byte, as every frame of the channel
/// protocols is sent.
pub(crate) fn channel_frame(channel: u8, payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(payload.len() + 1);
    frame.push(channel);
    frame.extend_from_slice(payload);
    frame
}

/// Writes to a stream the caller holds; a stream the caller dropped (or
/// never asked for) takes the bytes and forgets them.
async fn write_discarding(stream: &mut Option<DuplexStream>, bytes: &[u8]) {
    if let Some(pipe) = stream
        && pipe.write_all(bytes).await.is_err()
    {
        *stream = None;
    }
}

/// Reads from stdin when there is one; never ready otherwise. `None` when
/// the read failed.
async fn read_some(stdin: &mut Option<DuplexStream>, buffer: &mut [u8]) -> Option<usize> {
    match stdin {
        Some(pipe) => pipe.read(buffer).await.ok(),
        None => std::future::pending().await,
    }
}

/// The command's end from what the error channel held: nothing is a
/// session cut short, a Success status exit code 0, `NonZeroExitCode`
/// its code, and any other Status a failure.
fn exit_status(pod: &str, channel: &ErrorChannel) -> Result<ExitStatus, RemoteCommandError> {
    let text = channel.bytes.as_slice();
    if text.is_empty() {
        return Err(RemoteCommandError::ConnectionClosed {
            pod: pod.to_string(),
        });
    }
    if channel.overflowed {
        return Err(RemoteCommandError::BadStatus {
            pod: pod.to_string(),
            message: format!("more than {MAX_STATUS_BYTES} bytes"),
            text: String::from_utf8_lossy(&text[..text.len().min(1024)]).into_owned(),
        });
    }
    let status: Status =
        serde_json::from_slice(text).map_err(|e| RemoteCommandError::BadStatus {
            pod: pod.to_string(),
            message: e.to_string(),
            text: String::from_utf8_lossy(&text[..text.len().min(1024)]).into_owned(),
        })?;
    if status.status == "Success" {
        return Ok(ExitStatus {
            code: 0,
            message: String::new(),
        });
    }
    let code = (status.reason.as_str() == "NonZeroExitCode")
        .then_some(status.details.as_ref())
        .flatten()
        .and_then(|details| {
            details
                .causes
                .iter()
                .find(|cause| cause.reason == "ExitCode")
                .and_then(|cause| cause.message.trim().parse::<i32>().ok())
        });
    match code {
        Some(code) => Ok(ExitStatus {
            code,
            message: status.message,
        }),
        None => Err(RemoteCommandError::Failed {
            pod: pod.to_string(),
            status: Box::new(status),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_by_their_first_byte() {
        let table: [(&[u8], Frame<'_>); 6] = [
            (b"", Frame::Empty),
            (
                &[1],
                Frame::Data {
                    channel: 1,
                    payload: b"",
                },
            ),
            (
                &[1, b'h', b'i'],
                Frame::Data {
                    channel: 1,
                    payload: b"hi",
                },
            ),
            (
                &[3, b'{'],
                Frame::Data {
                    channel: 3,
                    payload: b"{",
                },
            ),
            (&[255, 0], Frame::Close { channel: 0 }),
            // A close signal must name exactly one channel.
            (
                &[255, 0, 1],
                Frame::Data {
                    channel: 255,
                    payload: &[0, 1],
                },
            ),
        ];
        for (bytes, want) in table {
            assert_eq!(Frame::parse(bytes), want, "{bytes:?}");
        }
    }

    fn channel(bytes: &[u8]) -> ErrorChannel {
        let mut channel = ErrorChannel::default();
        channel.push(bytes);
        channel
    }

    #[test]
    fn exit_status_from_the_error_channel() {
        let ok = exit_status("p", &channel(br#"{"metadata":{},"status":"Success"}"#)).unwrap();
        assert!(ok.success());
        let three = br#"{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#;
        let three = exit_status("p", &channel(three)).unwrap();
        assert_eq!(three.code, 3);
        assert!(three.message.contains("exit code 3"));
        let internal = br#"{"status":"Failure","message":"executable file not found in $PATH","reason":"InternalError","code":500}"#;
        assert!(matches!(
            exit_status("p", &channel(internal)),
            Err(RemoteCommandError::Failed { status, .. }) if status.code == 500
        ));
        // A non-zero exit whose code cannot be read is a failure, not 0.
        let unreadable = br#"{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"x"}]}}"#;
        assert!(matches!(
            exit_status("p", &channel(unreadable)),
            Err(RemoteCommandError::Failed { .. })
        ));
        assert!(matches!(
            exit_status("p", &channel(b"")),
            Err(RemoteCommandError::ConnectionClosed { .. })
        ));
        assert!(
            matches!(exit_status("p", &channel(b"oops")), Err(RemoteCommandError::BadStatus { text, .. }) if text == "oops")
        );
    }

    #[test]
    fn a_tty_asks_for_no_stderr() {
        let pairs = StreamOptions::default().tty(true).stdin(true).query_pairs();
        let keys: Vec<_> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["stdin", "stdout", "tty"]);
        let pairs = StreamOptions::default().container("c").query_pairs();
        let keys: Vec<_> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["container", "stdout", "stderr"]);
    }

    #[test]
    fn terminal_sizes_as_the_server_reads_them() {
        let json = serde_json::to_string(&TerminalSize {
            width: 80,
            height: 24,
        })
        .unwrap();
        assert_eq!(json, r#"{"Width":80,"Height":24}"#);
    }
}
