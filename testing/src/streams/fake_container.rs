//! A pod's `exec` and `attach` over a WebSocket, as kubelet serves them
//! through kube-apiserver, running commands in a fake container.
//!
//! # The session
//!
//! Subprotocols `v5.channel.k8s.io` and `v4.channel.k8s.io`, chosen in the
//! client's order. Frames start with their channel: 0 stdin, 1 stdout, 2
//! stderr, 3 the final Status (JSON, kubelet's words), 4 terminal sizes;
//! under v5, `[255, 0]` closes stdin. The first frame is kubelet's empty
//! readiness frame on the lowest output channel asked for. With a TTY
//! there is no stderr (kubelet drops it).
//!
//! # The fake container
//!
//! Commands are a few shell builtins, enough to exercise every stream:
//!
//! | command | does |
//! |---|---|
//! | `echo WORDS… [>&2]` | prints the words (to stderr with `>&2`) |
//! | `cat` | copies stdin to stdout until stdin closes |
//! | `hostname` | prints the pod's name |
//! | `stty size` | prints the last terminal size sent, `ROWS COLS` |
//! | `sleep SECONDS` | waits |
//! | `true`, `false`, `exit N` | exit 0, 1, N |
//! | `sh -c 'A; B'` | runs each command in turn |
//! | `sh` | reads commands from stdin, one per line, until `exit` or the end of stdin; with a TTY it prompts `$ ` and echoes what it reads |
//!
//! An unknown command run directly fails as a container runtime does (an
//! `InternalError` Status: executable not found); inside `sh` it prints
//! `sh: NAME: not found` and exits 127. `attach` joins the container's
//! main process, which here copies stdin to stdout as `cat` does.

use std::time::Duration;

use bytes::Bytes;
use clientgo_apimachinery::Status;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use hyper::body::Incoming;
use hyper::{Request, Response};

use crate::api::request_path::ResourcePath;
use crate::api::responses::{ResponseBody, status_response};
use crate::api::subresources::pod_container;
use crate::faults::controls::Faults;
use crate::store::storage::Storage;
use crate::streams::websocket::{self, Socket, channel_frame, room_on};

/// The subprotocols served, best first.
pub(crate) const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
const CLOSE: u8 = 255;

/// What an exec or attach request asks for, from its query.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamRequest {
    pub(crate) container: Option<String>,
    command: Vec<String>,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

impl StreamRequest {
    /// Reads the query with kube-apiserver's refusals: no stream at all,
    /// or an exec without a command.
    pub(crate) fn from_query(query: &str, exec: bool) -> Result<StreamRequest, Status> {
        let mut request = StreamRequest::default();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let on = value == "true" || value == "1";
            match key.as_ref() {
                "container" => request.container = Some(value.into_owned()),
                "command" if exec => request.command.push(value.into_owned()),
                "stdin" => request.stdin = on,
                "stdout" => request.stdout = on,
                "stderr" => request.stderr = on,
                "tty" => request.tty = on,
                _ => {}
            }
        }
        if !(request.stdin || request.stdout || request.stderr) {
            return Err(Status::bad_request(
                "you must specify at least 1 of stdin, stdout, stderr",
            ));
        }
        if exec && request.command.is_empty() {
            return Err(Status::bad_request(
                "you must specify at least one command for the container",
            ));
        }
        // kubelet: "Access to exec with tty and stderr is not supported,
        // bypassing stderr".
        request.stderr &= !request.tty;
        Ok(request)
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ended {
    Exit(i32),
    /// The runtime could not start it.
    NotFound(String),
}

/// `GET pods/{name}/exec` or `attach`: checks the request, the pod and
/// its container, accepts the upgrade, and serves the session on a task
/// of its own. A restart of the server (or its stop) drops the socket
/// without a closing handshake, as a dying server's.
pub(crate) fn start(
    storage: &Storage,
    faults: &Faults,
    shutdown: &CancellationToken,
    channel_v5: bool,
    mut request: Request<Incoming>,
    target: &ResourcePath,
    exec: bool,
) -> Response<ResponseBody> {
    let query = request.uri().query().unwrap_or_default().to_string();
    let options = match StreamRequest::from_query(&query, exec) {
        Ok(options) => options,
        Err(status) => return status_response(&status),
    };
    let pod = match pod_container(storage, target, options.container.as_deref()) {
        Ok((pod, _)) => pod,
        Err(status) => return status_response(&status),
    };
    if let Some(phase @ ("Succeeded" | "Failed")) = pod["status"]["phase"].as_str() {
        let verb = if exec { "exec" } else { "attach" };
        return status_response(&Status::bad_request(format!(
            "cannot {verb} into a container in a completed pod; current phase is {phase}"
        )));
    }
    let protocols = if channel_v5 {
        &PROTOCOLS[..]
    } else {
        &PROTOCOLS[1..]
    };
    let accepted = match websocket::accept(&mut request, protocols) {
        Ok(accepted) => accepted,
        Err(status) => return status_response(&status),
    };
    let name = target.name.clone().unwrap_or_default();
    let (shutdown, cut) = (shutdown.clone(), faults.connection_token());
    tokio::spawn(async move {
        let Some(socket) = websocket::socket(accepted.upgrade).await else {
            return;
        };
        tokio::select! {
            () = serve(socket, accepted.protocol, options, name) => {}
            () = shutdown.cancelled() => {}
            () = cut.cancelled() => {}
        }
    });
    accepted.response
}

/// Serves one exec (`command` set) or attach session until the command
/// ends or the client goes.
async fn serve(mut socket: Socket, protocol: String, request: StreamRequest, pod: String) {
    let can_close = protocol == PROTOCOLS[0];
    let ready = if request.stdout {
        STDOUT
    } else if request.stderr {
        STDERR
    } else {
        ERROR
    };
    if socket
        .send(Message::Binary(vec![ready].into()))
        .await
        .is_err()
    {
        return;
    }
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
    let (out_tx, mut out_rx) = mpsc::channel::<(u8, Bytes)>(16);
    let (size_tx, size_rx) = watch::channel(None);
    let shell = Shell {
        pod,
        tty: request.tty,
        stdin: stdin_rx,
        pending: Vec::new(),
        stdin_open: request.stdin,
        out: out_tx,
        stdout: request.stdout,
        stderr: request.stderr,
        size: size_rx,
    };
    let command = request.command.clone();
    let mut process = tokio::spawn(async move {
        let mut shell = shell;
        let ended = if command.is_empty() {
            // The main process runs on without input; only the client
            // leaving ends an attach to it.
            if !shell.stdin_open {
                std::future::pending::<()>().await;
            }
            shell.cat().await;
            Ended::Exit(0)
        } else {
            shell.run_top(&command).await
        };
        (ended, command)
    });
    let mut stdin = Some(stdin_tx);
    // Input the shell has no room for yet: the socket is not read until
    // it is taken (back-pressure), while output keeps flowing.
    let mut pending: Option<Bytes> = None;
    let outcome = loop {
        // A clone, so the branches below may still drop `stdin`.
        let waiting = stdin.clone().filter(|_| pending.is_some());
        tokio::select! {
            permit = room_on(waiting.as_ref()), if pending.is_some() => {
                // A shell that stopped reading drops its input.
                if let (Some(permit), Some(bytes)) = (permit, pending.take()) {
                    permit.send(bytes);
                }
            }
            frame = socket.next(), if pending.is_none() => match frame {
                Some(Ok(Message::Binary(bytes))) => match bytes.split_first() {
                    Some((&CLOSE, [STDIN])) if can_close => stdin = None,
                    Some((&STDIN, data)) if !data.is_empty() && stdin.is_some() => {
                        pending = Some(Bytes::copy_from_slice(data));
                    }
                    Some((&RESIZE, data)) => {
                        if let Ok(size) = serde_json::from_slice::<Value>(data) {
                            let width = size["Width"].as_u64().unwrap_or(0);
                            let height = size["Height"].as_u64().unwrap_or(0);
                            size_tx.send_replace(Some((height, width)));
                        }
                    }
                    _ => {}
                },
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    process.abort();
                    return;
                }
                Some(Ok(_)) => {}
            },
            Some((channel, bytes)) = out_rx.recv() => {
                if socket.send(channel_frame(channel, &bytes)).await.is_err() {
                    process.abort();
                    return;
                }
            }
            ended = &mut process => break ended,
        }
    };
    // Output written before the end goes out before the status.
    while let Ok((channel, bytes)) = out_rx.try_recv() {
        if socket.send(channel_frame(channel, &bytes)).await.is_err() {
            return;
        }
    }
    let status = match outcome {
        Ok((ended, command)) => status_of(&ended, &command),
        Err(_) => {
            json!({"metadata": {}, "status": "Failure", "message": "the command's process failed", "reason": "InternalError", "code": 500})
        }
    };
    let status = serde_json::to_vec(&status).unwrap_or_default();
    if socket.send(channel_frame(ERROR, &status)).await.is_ok() {
        let _ = socket.close(None).await;
    }
}

/// The error channel's Status, in kubelet's words.
fn status_of(ended: &Ended, command: &[String]) -> Value {
    match ended {
        Ended::Exit(0) => json!({"metadata": {}, "status": "Success"}),
        Ended::Exit(code) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!(
                "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
                command.join(" ")
            ),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        }),
        Ended::NotFound(name) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!(
                "Internal error occurred: error executing command in container: failed to exec in container: OCI runtime exec failed: exec failed: unable to start container process: exec: \"{name}\": executable file not found in $PATH: unknown"
            ),
            "reason": "InternalError",
            "details": {"causes": [{"message": format!("exec: \"{name}\": executable file not found in $PATH")}]},
            "code": 500,
        }),
    }
}

/// The fake container's shell: its streams and the builtins.
struct Shell {
    pod: String,
    tty: bool,
    stdin: mpsc::Receiver<Bytes>,
    /// Read from stdin but not yet used.
    pending: Vec<u8>,
    stdin_open: bool,
    out: mpsc::Sender<(u8, Bytes)>,
    stdout: bool,
    stderr: bool,
    /// The last terminal size sent: rows, columns.
    size: watch::Receiver<Option<(u64, u64)>>,
}

impl Shell {
    async fn write(&self, channel: u8, text: impl Into<Bytes>) {
        let wanted = match channel {
            STDOUT => self.stdout,
            _ => self.stderr,
        };
        if !wanted {
            return;
        }
        let mut bytes: Bytes = text.into();
        // A terminal's line discipline turns each newline into CR LF.
        if self.tty && bytes.contains(&b'\n') {
            let mut translated = Vec::with_capacity(bytes.len() + 8);
            for (index, &byte) in bytes.iter().enumerate() {
                if byte == b'\n' && (index == 0 || bytes[index - 1] != b'\r') {
                    translated.push(b'\r');
                }
                translated.push(byte);
            }
            bytes = translated.into();
        }
        let _ = self.out.send((channel, bytes)).await;
    }

    /// The next bytes of stdin; `None` at its end.
    async fn read(&mut self) -> Option<Bytes> {
        if !self.pending.is_empty() {
            return Some(Bytes::from(std::mem::take(&mut self.pending)));
        }
        if !self.stdin_open {
            return None;
        }
        self.stdin.recv().await
    }

    async fn cat(&mut self) {
        while let Some(bytes) = self.read().await {
            self.write(STDOUT, bytes).await;
        }
    }

    /// A command run directly by the runtime.
    async fn run_top(&mut self, command: &[String]) -> Ended {
        match self.run(command).await {
            Some(ended) => ended,
            None => Ended::NotFound(command[0].clone()),
        }
    }

    /// Runs a builtin; `None` when there is no such command.
    async fn run(&mut self, words: &[String]) -> Option<Ended> {
        let (name, args) = words.split_first()?;
        let ended = match name.as_str() {
            "echo" => {
                let (channel, args) = match args.split_last() {
                    Some((last, rest)) if last == ">&2" => (STDERR, rest),
                    _ => (STDOUT, args),
                };
                self.write(channel, format!("{}\n", args.join(" "))).await;
                Ended::Exit(0)
            }
            "cat" if args.is_empty() => {
                self.cat().await;
                Ended::Exit(0)
            }
            "hostname" => {
                self.write(STDOUT, format!("{}\n", self.pod)).await;
                Ended::Exit(0)
            }
            "stty" if args.first().is_some_and(|a| a == "size") => {
                let (rows, columns) = self.size.borrow().unwrap_or((0, 0));
                self.write(STDOUT, format!("{rows} {columns}\n")).await;
                Ended::Exit(0)
            }
            "sleep" => {
                let seconds = args
                    .first()
                    .and_then(|s| s.parse::<f64>().ok())
                    .unwrap_or(0.0);
                tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 3600.0))).await;
                Ended::Exit(0)
            }
            "true" => Ended::Exit(0),
            "false" => Ended::Exit(1),
            "exit" => Ended::Exit(args.first().and_then(|code| code.parse().ok()).unwrap_or(0)),
            "sh" if args.first().is_some_and(|a| a == "-c") => {
                let line = args.get(1).cloned().unwrap_or_default();
                self.line(&line).await
            }
            "sh" => Box::pin(self.interactive()).await,
            _ => return None,
        };
        Some(ended)
    }

    /// Runs `A; B; …`; an `exit` stops it.
    async fn line(&mut self, line: &str) -> Ended {
        let mut last = Ended::Exit(0);
        for part in line.split(';') {
            let words = split_words(part);
            if words.is_empty() {
                continue;
            }
            let exits = words[0] == "exit";
            last = match Box::pin(self.run(&words)).await {
                Some(ended) => ended,
                None => {
                    self.write(STDERR, format!("sh: {}: not found\n", words[0]))
                        .await;
                    Ended::Exit(127)
                }
            };
            if exits {
                break;
            }
        }
        last
    }

    /// Reads lines from stdin and runs them until `exit` or its end.
    async fn interactive(&mut self) -> Ended {
        let mut line = Vec::new();
        let mut last = Ended::Exit(0);
        if self.tty {
            self.write(STDOUT, "$ ").await;
        }
        while let Some(bytes) = self.read().await {
            for (index, &byte) in bytes.iter().enumerate() {
                if byte != b'\n' && byte != b'\r' {
                    line.push(byte);
                    if self.tty {
                        self.write(STDOUT, vec![byte]).await;
                    }
                    continue;
                }
                if self.tty {
                    self.write(STDOUT, "\r\n").await;
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                line.clear();
                // What follows the line is the next commands' input.
                self.pending = bytes[index + 1..].to_vec();
                last = self.line(&text).await;
                if text.trim_start().starts_with("exit") {
                    return last;
                }
                if self.tty {
                    self.write(STDOUT, "$ ").await;
                }
                break;
            }
        }
        last
    }
}

/// A command line's words: split at blanks, with single or double quotes
/// keeping blanks inside a word.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_as_a_shell_splits_them() {
        let table: [(&str, &[&str]); 5] = [
            ("echo a  b", &["echo", "a", "b"]),
            ("echo 'a b' \"c d\"", &["echo", "a b", "c d"]),
            ("  ", &[]),
            ("echo ''", &["echo", ""]),
            ("exit 3", &["exit", "3"]),
        ];
        for (line, want) in table {
            assert_eq!(split_words(line), want, "{line:?}");
        }
    }

    #[test]
    fn requests_kube_apiserver_refuses() {
        assert!(StreamRequest::from_query("command=ls", true).is_err());
        assert!(StreamRequest::from_query("stdout=true", true).is_err());
        assert!(StreamRequest::from_query("stdout=true", false).is_ok());
        let tty = StreamRequest::from_query(
            "command=sh&stdin=true&stdout=true&stderr=true&tty=true",
            true,
        )
        .unwrap();
        assert!(!tty.stderr);
    }

    #[test]
    fn statuses_in_kubelets_words() {
        let command = vec!["sh".to_string(), "-c".to_string(), "exit 3".to_string()];
        assert_eq!(
            status_of(&Ended::Exit(0), &command),
            json!({"metadata": {}, "status": "Success"})
        );
        let three = status_of(&Ended::Exit(3), &command);
        assert_eq!(three["reason"], "NonZeroExitCode");
        assert_eq!(three["details"]["causes"][0]["message"], "3");
        assert_eq!(
            three["message"],
            "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
        );
        assert_eq!(
            status_of(&Ended::NotFound("x".into()), &command)["code"],
            500
        );
    }
}
