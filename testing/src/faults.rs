//! [`Faults`]: misbehaviour a test can order from the server: failed
//! requests, dropped, stalled or corrupted watches, latency, compaction and
//! restarts.

use std::collections::VecDeque;
use std::time::Duration;

use clientgo_apimachinery::Status;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::request_log::Verb;

/// A bad frame to send in a watch stream, after which the stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corruption {
    /// A line that is not JSON.
    Malformed,
    /// The start of an event, then the connection ends mid-object.
    Truncated,
    /// A syntactically valid event whose object holds a string of this many
    /// bytes (to test a client's frame-size limit).
    Oversized(usize),
}

#[derive(Debug, Default)]
struct State {
    /// Answers for the next requests of a verb (or of any verb: `None`).
    failures: VecDeque<(Option<Verb>, Status)>,
    latency: Duration,
    corruption: Option<Corruption>,
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
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            state: Mutex::new(State::default()),
            watches: Mutex::new(CancellationToken::new()),
            connections: Mutex::new(CancellationToken::new()),
        }
    }
}

impl Faults {
    /// Answers the next request of `verb` (any verb when `None`) with
    /// `status`, without doing it. A Status with a retry delay in its
    /// details also gets a `Retry-After` header. Orders queue up.
    pub fn fail_next(&self, verb: Option<Verb>, status: Status) {
        self.state.lock().failures.push_back((verb, status));
    }

    /// Delays every request by `latency` (zero to stop).
    pub fn set_latency(&self, latency: Duration) {
        self.state.lock().latency = latency;
    }

    /// Sends a bad frame in the next watch, then ends it.
    pub fn corrupt_next_watch(&self, corruption: Corruption) {
        self.state.lock().corruption = Some(corruption);
    }

    /// Makes the next watch send nothing at all (not even headers' worth of
    /// events) for `duration` before it starts.
    pub fn stall_next_watch(&self, duration: Duration) {
        self.state.lock().stall = Some(duration);
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
    pub(crate) fn take_failure(&self, verb: Verb) -> Option<Status> {
        let mut state = self.state.lock();
        let position = state
            .failures
            .iter()
            .position(|(wanted, _)| wanted.is_none_or(|wanted| wanted == verb))?;
        state.failures.remove(position).map(|(_, status)| status)
    }

    pub(crate) fn take_corruption(&self) -> Option<Corruption> {
        self.state.lock().corruption.take()
    }

    pub(crate) fn take_stall(&self) -> Option<Duration> {
        self.state.lock().stall.take()
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
