//! [`RecordedAnswer`] and [`ReplayServer`]: an answer recorded from a real
//! kube-apiserver (`../shared/fixtures/real-apiserver-1.36/`), served again
//! byte for byte over a real socket, so a client's whole path (HTTP, gzip,
//! content negotiation, streaming decoders) meets exactly what the real
//! server sent.

use std::convert::Infallible;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use hyper::{Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// One answer as recorded: `NAME.headers` (the status line, then one
/// `name: value` header a line) and `NAME.body` (the body's bytes exactly
/// as received, still compressed when the answer was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedAnswer {
    /// The file name both files start with (`list-pods-rv0.json`).
    pub name: String,
    /// The HTTP status code.
    pub code: u16,
    /// The headers, names in lower case, in the recorded order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl RecordedAnswer {
    /// The directory of the real server's recordings: `CLIENTGO_SHARED_DIR`
    /// (or `shared/` beside the workspace) joined with
    /// `fixtures/real-apiserver-1.36`; `None` when it is absent, so tests
    /// skip cleanly.
    pub fn directory() -> Option<PathBuf> {
        let shared = match std::env::var_os("CLIENTGO_SHARED_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
        };
        let dir = shared.join("fixtures/real-apiserver-1.36");
        dir.is_dir().then_some(dir)
    }

    /// Reads `NAME.headers` and `NAME.body` from `dir`.
    pub fn read(dir: &Path, name: &str) -> io::Result<Self> {
        let headers = std::fs::read_to_string(dir.join(format!("{name}.headers")))?;
        let body = std::fs::read(dir.join(format!("{name}.body")))?;
        let invalid = |what: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{name}.headers: {what}"),
            )
        };
        let mut lines = headers.lines();
        let code = lines
            .next()
            .and_then(|status| status.split_whitespace().nth(1))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| invalid("no status line"))?;
        let headers = lines
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let (name, value) = line.split_once(':').ok_or_else(|| invalid(line))?;
                Ok((name.trim().to_ascii_lowercase(), value.trim().to_string()))
            })
            .collect::<io::Result<_>>()?;
        Ok(RecordedAnswer {
            name: name.to_string(),
            code,
            headers,
            body,
        })
    }

    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A request the replay server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayedRequest {
    /// The method.
    pub method: String,
    /// The path and query.
    pub path_and_query: String,
    /// The `Accept` header, if sent.
    pub accept: Option<String>,
}

/// Serves one [`RecordedAnswer`] to every request on 127.0.0.1 (HTTP/1.1
/// or HTTP/2 without TLS), writing the body in pieces of a set size so the
/// client's decoders meet frames split at every kind of boundary. Dropping
/// it stops the server.
#[derive(Debug)]
pub struct ReplayServer {
    url: String,
    requests: Arc<Mutex<Vec<ReplayedRequest>>>,
    stop: CancellationToken,
}

impl ReplayServer {
    /// Starts serving `answer`, its body in pieces of `piece` bytes (at
    /// least 1).
    pub async fn start(answer: RecordedAnswer, piece: usize) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let answer = Arc::new(answer);
        let piece = piece.max(1);
        tokio::spawn({
            let (requests, stop) = (Arc::clone(&requests), stop.clone());
            async move {
                loop {
                    let stream = tokio::select! {
                        () = stop.cancelled() => return,
                        accepted = listener.accept() => match accepted {
                            Ok((stream, _)) => stream,
                            Err(_) => continue,
                        },
                    };
                    let (answer, requests, stop) =
                        (Arc::clone(&answer), Arc::clone(&requests), stop.clone());
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |request| {
                            requests.lock().push(ReplayedRequest {
                                method: request.method().to_string(),
                                path_and_query: request
                                    .uri()
                                    .path_and_query()
                                    .map(ToString::to_string)
                                    .unwrap_or_default(),
                                accept: request
                                    .headers()
                                    .get(hyper::header::ACCEPT)
                                    .and_then(|value| value.to_str().ok())
                                    .map(str::to_string),
                            });
                            let answer = Arc::clone(&answer);
                            async move { Ok::<_, Infallible>(replay(&answer, piece)) }
                        });
                        let builder = auto::Builder::new(TokioExecutor::new());
                        let connection = builder.serve_connection(TokioIo::new(stream), service);
                        tokio::select! {
                            _ = connection => {}
                            () = stop.cancelled() => {}
                        }
                    });
                }
            }
        });
        Ok(ReplayServer {
            url,
            requests,
            stop,
        })
    }

    /// The server's base URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ReplayedRequest> {
        self.requests.lock().clone()
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The recorded answer as a response whose body comes in `piece`-byte
/// frames. Headers that describe the connection rather than the answer
/// are left to hyper.
fn replay(answer: &RecordedAnswer, piece: usize) -> Response<crate::api::responses::ResponseBody> {
    let pieces = Pieces(
        answer
            .body
            .chunks(piece)
            .map(Bytes::copy_from_slice)
            .collect(),
    );
    let mut response = Response::new(pieces.boxed());
    *response.status_mut() =
        StatusCode::from_u16(answer.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in &answer.headers {
        if matches!(
            name.as_str(),
            "content-length" | "connection" | "transfer-encoding"
        ) {
            continue;
        }
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// A body handed out one piece per poll.
struct Pieces(VecDeque<Bytes>);

impl Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }
}
