//! A pod's `eviction` and `log` subresources on [`ResourceClient<Pod>`]
//! (client-go's `PolicyV1().Evictions(ns).Evict` and
//! `CoreV1().Pods(ns).GetLogs(name, opts)`; kube-rs's `Api<Pod>::evict`,
//! `logs` and `log_stream`).

use std::time::Duration;

use clientgo_apimachinery::Status;
use futures_core::Stream;
use k8s_openapi::api::core::v1::Pod;

use crate::api::options::DeleteOptions;
use crate::api::resource_client::ResourceClient;
use crate::client::error::{Error, RequestError};
use crate::client::request::{ByteStream, Request};

/// How long kubectl's drain waits before evicting again after a
/// disruption budget refused it, used when the server gives no wait.
pub const EVICTION_RETRY_AFTER: Duration = Duration::from_secs(5);

/// Why an eviction did not happen.
#[derive(Debug, thiserror::Error)]
pub enum EvictionError {
    /// A PodDisruptionBudget does not allow the disruption now (429): try
    /// again after `retry_after` (the server's, else
    /// [`EVICTION_RETRY_AFTER`], as kubectl's drain).
    #[error("{}: {}", .status.message, .status.details.as_ref().and_then(|details| details.causes.first()).map_or("", |cause| cause.message.as_str()))]
    DisruptionBudget {
        /// The server's Status, its cause naming the budget.
        status: Box<Status>,
        /// When to try again.
        retry_after: Duration,
    },
    /// The request failed otherwise (404: the pod is gone already).
    #[error(transparent)]
    Request(Error),
}

/// What a log request asks for (client-go's `PodLogOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// The container; needed when the pod has more than one.
    pub container: Option<String>,
    /// Keep the answer open and stream lines as they are written.
    pub follow: bool,
    /// The previous instance's log (after a restart).
    pub previous: bool,
    /// Only lines of the last this many seconds.
    pub since_seconds: Option<i64>,
    /// Only the last this many lines.
    pub tail_lines: Option<i64>,
    /// At most this many bytes.
    pub limit_bytes: Option<i64>,
    /// Each line prefixed by its RFC 3339 time.
    pub timestamps: bool,
}

impl LogOptions {
    /// Names the container.
    #[must_use]
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// Streams lines as they are written.
    #[must_use]
    pub fn follow(mut self, follow: bool) -> Self {
        self.follow = follow;
        self
    }

    /// Asks for the previous instance's log.
    #[must_use]
    pub fn previous(mut self, previous: bool) -> Self {
        self.previous = previous;
        self
    }

    /// Only the lines of the last `seconds`.
    #[must_use]
    pub fn since_seconds(mut self, seconds: i64) -> Self {
        self.since_seconds = Some(seconds);
        self
    }

    /// Only the last `lines` lines.
    #[must_use]
    pub fn tail_lines(mut self, lines: i64) -> Self {
        self.tail_lines = Some(lines);
        self
    }

    /// At most `bytes` bytes.
    #[must_use]
    pub fn limit_bytes(mut self, bytes: i64) -> Self {
        self.limit_bytes = Some(bytes);
        self
    }

    /// Prefixes each line with its time.
    #[must_use]
    pub fn timestamps(mut self, timestamps: bool) -> Self {
        self.timestamps = timestamps;
        self
    }

    fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = container_and_flags(
            self.container.as_deref(),
            [
                ("follow", self.follow),
                ("previous", self.previous),
                ("timestamps", self.timestamps),
            ],
        );
        for (key, value) in [
            ("sinceSeconds", self.since_seconds),
            ("tailLines", self.tail_lines),
            ("limitBytes", self.limit_bytes),
        ] {
            if let Some(value) = value {
                pairs.push((key, value.to_string()));
            }
        }
        pairs
    }
}

/// The query of a pod's streaming subresource: its container, when named,
/// then each flag that is on as `true` (the API server's defaults are
/// all off, so those are left out).
pub(crate) fn container_and_flags<const N: usize>(
    container: Option<&str>,
    flags: [(&'static str, bool); N],
) -> Vec<(&'static str, String)> {
    let named = container.map(|container| ("container", container.to_string()));
    named
        .into_iter()
        .chain(
            flags
                .into_iter()
                .filter(|(_, on)| *on)
                .map(|(key, _)| (key, "true".to_string())),
        )
        .collect()
}

/// A log's bytes as they arrive ([`ResourceClient::log_stream`]); the
/// lines are [`LogLines`].
pub type LogStream = ByteStream;

impl ResourceClient<Pod> {
    /// Evicts a pod (`POST pods/{name}/eviction`, policy/v1): the server
    /// deletes it unless a PodDisruptionBudget forbids it now, which is
    /// [`EvictionError::DisruptionBudget`] with when to try again.
    pub async fn evict(
        &self,
        name: &str,
        delete_options: Option<&DeleteOptions>,
    ) -> Result<(), EvictionError> {
        let namespace = self.namespace().unwrap_or_default();
        let mut eviction = serde_json::json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        });
        if let Some(options) = delete_options {
            eviction["deleteOptions"] = serde_json::to_value(options)
                .map_err(|error| EvictionError::Request(RequestError::Encode(error).into()))?;
        }
        let request = self
            .object(self.client().post(), name)
            .map_err(EvictionError::Request)?
            .subresource("eviction")
            .json_body(&eviction);
        match request.send_raw().await {
            Ok(_) => Ok(()),
            Err(error) if is_budget_refusal(&error) => {
                let Some(status) = error.status().cloned() else {
                    return Err(EvictionError::Request(error));
                };
                let seconds = status
                    .details
                    .as_ref()
                    .map_or(0, |details| details.retry_after_seconds);
                let retry_after = if seconds > 0 {
                    Duration::from_secs(u64::from(seconds))
                } else {
                    EVICTION_RETRY_AFTER
                };
                Err(EvictionError::DisruptionBudget {
                    status: Box::new(status),
                    retry_after,
                })
            }
            Err(error) => Err(EvictionError::Request(error)),
        }
    }

    /// A container's log, whole (`GET pods/{name}/log`); `follow` is
    /// ignored (use [`log_stream`](Self::log_stream)). Not UTF-8 bytes are
    /// replaced, as a terminal would show them.
    pub async fn logs(&self, name: &str, options: &LogOptions) -> Result<String, Error> {
        let options = LogOptions {
            follow: false,
            ..options.clone()
        };
        let answer = self.log_request(name, &options)?.send_raw().await?;
        Ok(String::from_utf8_lossy(&answer.body).into_owned())
    }

    /// A container's log as it arrives: with `follow`, lines are
    /// delivered as the container writes them until the pod goes, the
    /// stream is dropped, or the server ends it. [`LogLines`] splits it
    /// into lines.
    ///
    /// A followed log is sent as a watch is (kube-apiserver counts both as
    /// long-running): not throttled, on a connection of its own, and not
    /// cut by the client's request timeout.
    pub async fn log_stream(&self, name: &str, options: &LogOptions) -> Result<LogStream, Error> {
        let request = self.log_request(name, options)?;
        if options.follow {
            request.watch().await
        } else {
            request.stream().await
        }
    }

    fn log_request(&self, name: &str, options: &LogOptions) -> Result<Request, Error> {
        let mut request = self
            .object(self.client().get(), name)?
            .subresource("log")
            .header("accept", "*/*");
        for (key, value) in options.query_pairs() {
            request = request.param(key, value);
        }
        Ok(request)
    }
}

/// Whether an error is a disruption budget's refusal: a 429 with the
/// `DisruptionBudget` cause, or kube-apiserver's words for one (a 429 of
/// API Priority and Fairness is not).
fn is_budget_refusal(error: &Error) -> bool {
    error.is_too_many_requests()
        && error.status().is_some_and(|status| {
            status.message.contains("disruption budget")
                || status.details.as_ref().is_some_and(|details| {
                    details
                        .causes
                        .iter()
                        .any(|cause| cause.reason == "DisruptionBudget")
                })
        })
}

/// The longest line [`LogLines`] holds back waiting for its end; a longer
/// one is delivered in pieces of this size.
pub const MAX_LOG_LINE_BYTES: usize = 1024 * 1024;

/// The lines of a [`LogStream`], without their `\n`, as a [`Stream`]; a
/// last line without one is delivered when the stream ends, and a line
/// over [`MAX_LOG_LINE_BYTES`] in pieces of that size. Bytes that are not
/// UTF-8 are replaced.
pub struct LogLines {
    stream: LogStream,
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no `\n`.
    scanned: usize,
    ended: bool,
}

impl LogLines {
    /// The lines of `stream`.
    pub fn new(stream: LogStream) -> Self {
        LogLines {
            stream,
            pending: Vec::new(),
            scanned: 0,
            ended: false,
        }
    }

    /// The next line; `None` at the end.
    pub async fn next_line(&mut self) -> Result<Option<String>, Error> {
        loop {
            if let Some(found) = self.pending[self.scanned..]
                .iter()
                .position(|byte| *byte == b'\n')
            {
                let at = self.scanned + found;
                let line: Vec<u8> = self.pending.drain(..=at).collect();
                self.scanned = 0;
                return Ok(Some(String::from_utf8_lossy(&line[..at]).into_owned()));
            }
            self.scanned = self.pending.len();
            if self.pending.len() >= MAX_LOG_LINE_BYTES {
                let piece: Vec<u8> = self.pending.drain(..MAX_LOG_LINE_BYTES).collect();
                self.scanned = 0;
                return Ok(Some(String::from_utf8_lossy(&piece).into_owned()));
            }
            if self.ended {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                let rest = std::mem::take(&mut self.pending);
                self.scanned = 0;
                return Ok(Some(String::from_utf8_lossy(&rest).into_owned()));
            }
            match self.stream.next_chunk().await? {
                Some(chunk) => self.pending.extend_from_slice(&chunk),
                None => self.ended = true,
            }
        }
    }
}

impl Stream for LogLines {
    type Item = Result<String, Error>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        // `next_line` keeps its state in `self` and reads the body through
        // a cancel-safe call, so a future dropped while pending loses
        // nothing.
        let this = self.get_mut();
        let next = this.next_line();
        let mut next = std::pin::pin!(next);
        next.as_mut().poll(cx).map(Result::transpose)
    }
}
