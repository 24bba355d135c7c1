//! [`Faults`]: misbehaviour a test can order from the server: failed
//! requests, dropped, stalled or corrupted watches, latency, compaction and
//! restarts.

use std::collections::VecDeque;
use std::time::Duration;

use clientgo_apimachinery::Status;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::faults::request_log::Verb;

/// A bad frame to send in a watch stream, after which the stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corruption {
    /// A line that is not JSON.
    Malformed,
    /// The start of an event, then the connection ends mid-object.
    Truncated,
    /// A syntactically valid event whose object holds a string of this many
    /// bytes (to test a client's frame-size limit). It is streamed in 64 KiB
    /// pieces, so the server never holds it whole.
    Oversized(usize),
    /// An event whose object holds bytes that are not UTF-8.
    InvalidUtf8,
    /// An event whose string never ends: `x`s are streamed until the client
    /// hangs up (or the watch is dropped).
    EndlessString,
    /// An event whose object is nested this many arrays deep.
    DeepNesting(usize),
}

/// How the server fails a request it was told to fail.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Answer with this Status as JSON, with its HTTP code, and a
    /// `Retry-After` header when its details carry a retry delay.
    Status(Box<Status>),
    /// Answer with a body that is not a Status, as a proxy or load balancer
    /// in front of the API server might (an HTML error page, say).
    Raw {
        /// The HTTP status code.
        code: u16,
        /// The `Content-Type` header.
        content_type: String,
        /// The body, sent as is.
        body: String,
        /// A `Retry-After` header value, sent as is when set.
        retry_after: Option<String>,
    },
    /// Close the connection (HTTP/1.1) or reset the stream (HTTP/2) without
    /// answering, as a connection reset in flight looks to a client.
    Reset,
}

/// The body kube-apiserver answers a request over the limit with (Go's
/// `http.Error`: `text/plain; charset=utf-8`, a newline at the end).
pub(crate) const TOO_MANY_REQUESTS_BODY: &str = "Too many requests, please try again later.\n";

/// The `Retry-After` the max-in-flight filter sends: always one second.
pub(crate) const TOO_MANY_REQUESTS_RETRY_AFTER: &str = "1";

impl Failure {
    /// The answer of kube-apiserver's max-in-flight filter (and of priority
    /// and fairness when it rejects): 429 with the plain-text body
    /// `Too many requests, please try again later.` and `Retry-After: 1`,
    /// not a Status.
    pub fn too_many_requests() -> Self {
        Failure::Raw {
            code: 429,
            content_type: "text/plain; charset=utf-8".to_string(),
            body: TOO_MANY_REQUESTS_BODY.to_string(),
            retry_after: Some(TOO_MANY_REQUESTS_RETRY_AFTER.to_string()),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Answers for the next requests of a verb (or of any verb: `None`).
    failures: VecDeque<(Option<Verb>, Failure)>,
    /// A `Warning` header text added to every answer while set.
    warning: Option<String>,
    latency: Duration,
    corruption: Option<Corruption>,
    /// The Status of an ERROR event ending the next watch.
    error_event: Option<Status>,
    /// Watches that still get an event of another kind first.
    foreign_events: usize,
    stall: Option<Duration>,
    /// Events left before every watch is dropped.
    drop_after_events: Option<usize>,
}

/// The server's fault controls. Get them from
/// [`TestApiServer::faults`](crate::TestApiServer::faults).
#[derive(Debug)]
pub struct Faults {
    state: Mutex<State>,
    /// Cancelled to end every open watch; replaced by a fresh token.
    watches: Mutex<CancellationToken>,
    /// Cancelled to close every connection; replaced by a fresh token.
    connections: Mutex<CancellationToken>,
    /// While `true`, watches that start wait before reading anything.
    held: tokio::sync::watch::Sender<bool>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            state: Mutex::new(State::default()),
            watches: Mutex::new(CancellationToken::new()),
            connections: Mutex::new(CancellationToken::new()),
            held: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl Faults {
    /// Answers the next request of `verb` (any verb when `None`) with
    /// `status`, without doing it. A Status with a retry delay in its
    /// details also gets a `Retry-After` header. Orders queue up.
    pub fn fail_next(&self, verb: Option<Verb>, status: Status) {
        self.fail_next_with(verb, Failure::Status(Box::new(status)));
    }

    /// Fails the next request of `verb` (any verb when `None`) as `failure`
    /// says: a Status, a raw non-Status body, or a reset connection. Orders
    /// queue up together with [`fail_next`](Self::fail_next)'s.
    pub fn fail_next_with(&self, verb: Option<Verb>, failure: Failure) {
        self.state.lock().failures.push_back((verb, failure));
    }

    /// Adds `Warning: 299 - "<text>"` to every answer from now on, as the
    /// API server does for deprecated APIs (`None` to stop).
    pub fn set_warning(&self, text: Option<String>) {
        self.state.lock().warning = text;
    }

    /// Delays every request by `latency` (zero to stop).
    pub fn set_latency(&self, latency: Duration) {
        self.state.lock().latency = latency;
    }

    /// Sends a bad frame in the next watch, then ends it. The frame comes
    /// after the watch's initial events and before a watch-list's
    /// initial-events-end bookmark, so it breaks a watch-list too.
    pub fn corrupt_next_watch(&self, corruption: Corruption) {
        self.state.lock().corruption = Some(corruption);
    }

    /// Ends the next watch with an ERROR event carrying `status`, sent
    /// where [`corrupt_next_watch`](Self::corrupt_next_watch) sends its
    /// frame (a watch-list's ends before its bookmark).
    pub fn error_event_next_watch(&self, status: Status) {
        self.state.lock().error_event = Some(status);
    }

    /// Makes the next watch send, after its initial events (before a
    /// watch-list's initial-events-end bookmark), one well-formed ADDED
    /// event whose object is of another kind (a `v1` `Event` named
    /// `foreign-object`), and then carry on as usual: clients should skip
    /// it and keep the stream, as client-go's reflector does.
    pub fn foreign_event_next_watch(&self) {
        self.state.lock().foreign_events += 1;
    }

    /// Makes the next watch send nothing at all (not even headers' worth of
    /// events) for `duration` before it starts.
    pub fn stall_next_watch(&self, duration: Duration) {
        self.state.lock().stall = Some(duration);
    }

    /// Holds every watch that starts from now on after its response
    /// headers, before it reads anything, until
    /// [`release_watches`](Self::release_watches). Writes made meanwhile
    /// pile up in the history, so a released watch receives them as fast as
    /// the server can send: a benchmark uses this to measure how fast a
    /// client applies events. Watches already open are not affected; drop
    /// them with [`drop_watches`](Self::drop_watches) to make clients
    /// re-watch into the hold.
    pub fn hold_watches(&self) {
        self.held.send_replace(true);
    }

    /// Lets held watches (and every later one) start.
    pub fn release_watches(&self) {
        self.held.send_replace(false);
    }

    /// Ends every open watch now (the server closes their streams).
    pub fn drop_watches(&self) {
        let mut token = self.watches.lock();
        token.cancel();
        *token = CancellationToken::new();
    }

    /// Ends every open watch once `events` more events have been sent in
    /// total across watches.
    pub fn drop_watches_after(&self, events: usize) {
        self.state.lock().drop_after_events = Some(events);
        if events == 0 {
            self.drop_watches();
        }
    }

    /// Closes every connection (requests in flight fail, watches end) while
    /// the server keeps its data and port, as a restarted API server.
    pub fn restart(&self) {
        self.drop_watches();
        let mut token = self.connections.lock();
        token.cancel();
        *token = CancellationToken::new();
    }

    pub(crate) fn latency(&self) -> Duration {
        self.state.lock().latency
    }

    /// The failure ordered for a request of `verb`, if any.
    pub(crate) fn warning(&self) -> Option<String> {
        self.state.lock().warning.clone()
    }

    pub(crate) fn take_failure(&self, verb: Verb) -> Option<Failure> {
        let mut state = self.state.lock();
        let position = state
            .failures
            .iter()
            .position(|(wanted, _)| wanted.is_none_or(|wanted| wanted == verb))?;
        state.failures.remove(position).map(|(_, failure)| failure)
    }

    pub(crate) fn take_corruption(&self) -> Option<Corruption> {
        self.state.lock().corruption.take()
    }

    pub(crate) fn take_error_event(&self) -> Option<Status> {
        self.state.lock().error_event.take()
    }

    pub(crate) fn take_foreign_event(&self) -> bool {
        let mut state = self.state.lock();
        let ordered = state.foreign_events > 0;
        state.foreign_events = state.foreign_events.saturating_sub(1);
        ordered
    }

    pub(crate) fn take_stall(&self) -> Option<Duration> {
        self.state.lock().stall.take()
    }

    /// Resolves once watches are not held (at once when they are not).
    pub(crate) async fn wait_while_held(&self) {
        let mut held = self.held.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = held.wait_for(|held| !*held).await;
    }

    pub(crate) fn watch_token(&self) -> CancellationToken {
        self.watches.lock().clone()
    }

    pub(crate) fn connection_token(&self) -> CancellationToken {
        self.connections.lock().clone()
    }

    /// Counts one sent watch event; drops every watch when an ordered count
    /// runs out.
    pub(crate) fn event_sent(&self) {
        let drop_now = {
            let mut state = self.state.lock();
            match &mut state.drop_after_events {
                Some(remaining) => {
                    *remaining = remaining.saturating_sub(1);
                    if *remaining == 0 {
                        state.drop_after_events = None;
                        true
                    } else {
                        false
                    }
                }
                None => false,
            }
        };
        if drop_now {
            self.drop_watches();
        }
    }
}
