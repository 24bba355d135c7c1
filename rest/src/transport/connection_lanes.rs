//! [`ConnectionLanes`]: the HTTP clients (and so the connections) a
//! [`RestClient`](crate::RestClient) sends through, so that long-running
//! requests can never hold every stream of a connection.
//!
//! Over HTTP/2 every request to a server shares one connection, and the
//! server caps how many streams it carries at once
//! (`SETTINGS_MAX_CONCURRENT_STREAMS`: kube-apiserver's default is 100).
//! reqwest keeps one connection per host and queues requests beyond the
//! cap, so with 100 open watches every later request, watch or GET, waits
//! for one of them to end: minutes, or forever. Go's transport opens another
//! connection instead. reqwest gives no way to read the server's setting or
//! to pick a connection, so this module does it one level up:
//!
//! - Short requests go through the **general lane**, one reqwest client that
//!   no long-running request ever uses: it can queue behind short requests
//!   only, which end.
//! - Long-running requests (watches) go through **long-running lanes**,
//!   each its own reqwest client and so its own connection. A watch takes
//!   the first lane below its stream limit, opening a new lane when none
//!   is.
//! - A lane's limit is learned: when a watch gets no response headers for
//!   [`Config::watch_header_wait`](crate::Config::watch_header_wait) while
//!   other watches on its lane were answered, it is queued behind the
//!   limit. The lane's limit becomes the number answered, the waiting
//!   request is dropped (an HTTP/2 request waiting for a stream was never
//!   sent) and sent again on another lane, and lanes opened later start
//!   with the smallest limit learned. The server answers a watch's headers
//!   at once, so a real wait is rare; a mistaken one costs a connection.
//!
//! - A lane dials once. Its client starts with no connection, and whether
//!   the connection will be HTTP/2 is known only after the TLS handshake,
//!   so requests sent at once on a fresh client would each dial one (ten
//!   informers starting together opened up to ten, one of which stayed).
//!   The first request on a fresh lane dials; the others wait until its
//!   response headers arrive, then share its connection, as Go's transport
//!   lets one dial per host serve the requests waiting for it. A dialer
//!   that ends unanswered hands the dial to one of the waiters; a wait
//!   longer than `watch_header_wait` gives up and sends anyway; a lane
//!   left with no request dials anew for the next (its connection may
//!   have gone with them).
//!
//! Over HTTP/1.1 each request has a connection of its own anyway, headers
//! come at once, and the lanes only spread watches over a few pools.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

/// The clients requests are sent through. Cheap to share; every method
/// takes a short lock and never blocks on I/O.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionLanes {
    state: Arc<Mutex<LanesState>>,
}

#[derive(Debug)]
struct LanesState {
    general: reqwest::Client,
    lanes: Vec<Lane>,
    /// The smallest stream limit learned on any lane.
    learned_limit: Option<usize>,
    next_id: u64,
    /// Builds a client with its own connection pool.
    build: ClientFactory,
}

/// Makes a reqwest client with a connection pool of its own.
#[derive(Clone)]
struct ClientFactory(Arc<dyn Fn() -> reqwest::Client + Send + Sync>);

impl ClientFactory {
    fn build(&self) -> reqwest::Client {
        (self.0)()
    }
}

impl std::fmt::Debug for ClientFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientFactory")
    }
}

#[derive(Debug)]
struct Lane {
    id: u64,
    client: reqwest::Client,
    /// Long-running requests on it, waiting or answered.
    assigned: usize,
    /// Of those, the ones whose response headers arrived.
    answered: usize,
    /// The most it may carry at once, once learned.
    limit: Option<usize>,
    /// `true` once the lane's client has a connection (the request dialing
    /// for it was answered); a change with `false` hands the dial over.
    /// Requests wait on it before sending.
    dialed: Arc<tokio::sync::watch::Sender<bool>>,
    /// Whether a request is dialing for the lane now.
    dialing: bool,
}

impl Lane {
    /// What a request taking a place on the lane does about its
    /// connection: use it, dial it, or wait for the one dialing.
    fn dial_for_request(&mut self) -> Dial {
        if *self.dialed.borrow() {
            Dial::Connected
        } else if self.dialing {
            Dial::Waiting(self.dialed.subscribe())
        } else {
            self.dialing = true;
            Dial::Dialing(Arc::clone(&self.dialed))
        }
    }

    /// Forgets the lane's connection: the next request dials.
    fn forget_connection(&mut self) {
        self.dialed = Arc::new(tokio::sync::watch::Sender::new(false));
        self.dialing = false;
    }

    fn new(id: u64, client: reqwest::Client, limit: Option<usize>) -> Self {
        Lane {
            id,
            client,
            assigned: 0,
            answered: 0,
            limit,
            dialed: Arc::new(tokio::sync::watch::Sender::new(false)),
            dialing: false,
        }
    }

    fn has_room(&self) -> bool {
        self.limit.is_none_or(|limit| self.assigned < limit)
    }
}

/// One long-running request's place on a lane, given back when dropped
/// (when the watch's stream is dropped).
#[derive(Debug)]
pub(crate) struct LaneTicket {
    state: Arc<Mutex<LanesState>>,
    lane: u64,
    client: reqwest::Client,
    answered: bool,
    /// How this request relates to its lane's first connection.
    dial: Dial,
}

/// A long-running request's part in its lane's first connection.
#[derive(Debug)]
enum Dial {
    /// The lane was connected when the request took its place.
    Connected,
    /// The request dials for the lane: once it is answered the lane is
    /// connected; if it ends unanswered, a waiter dials instead.
    Dialing(Arc<tokio::sync::watch::Sender<bool>>),
    /// The request waits for the one dialing.
    Waiting(tokio::sync::watch::Receiver<bool>),
}

/// Statistics of the lanes, for tests and diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaneStats {
    /// Long-running lanes open (each its own connection pool).
    pub lanes: usize,
    /// Long-running requests on each lane, in lane order.
    pub assigned: Vec<usize>,
    /// The smallest stream limit learned, if any lane reached its limit.
    pub learned_limit: Option<usize>,
}

impl ConnectionLanes {
    /// Lanes with `general` for short requests and clients from `build`
    /// for the others.
    pub(crate) fn new(
        general: reqwest::Client,
        build: impl Fn() -> reqwest::Client + Send + Sync + 'static,
    ) -> Self {
        let build = ClientFactory(Arc::new(build));
        ConnectionLanes {
            state: Arc::new(Mutex::new(LanesState {
                general,
                lanes: Vec::new(),
                learned_limit: None,
                next_id: 0,
                build,
            })),
        }
    }

    /// The client for requests that end by themselves.
    pub(crate) fn general(&self) -> reqwest::Client {
        self.state.lock().general.clone()
    }

    /// A place for a long-running request: the first lane with room, or a
    /// new one.
    pub(crate) fn long_running(&self) -> LaneTicket {
        let mut state = self.state.lock();
        let index = match state.lanes.iter().position(Lane::has_room) {
            Some(index) => index,
            None => {
                let id = state.next_id;
                state.next_id += 1;
                let client = state.build.build();
                let limit = state.learned_limit;
                state.lanes.push(Lane::new(id, client, limit));
                tracing::debug!(
                    lane = id,
                    lanes = state.lanes.len(),
                    ?limit,
                    "opening a connection lane for long-running requests"
                );
                state.lanes.len() - 1
            }
        };
        let lane = &mut state.lanes[index];
        lane.assigned += 1;
        let dial = lane.dial_for_request();
        LaneTicket {
            state: Arc::clone(&self.state),
            lane: lane.id,
            client: lane.client.clone(),
            answered: false,
            dial,
        }
    }

    /// Replaces every client, so later requests open new connections (a
    /// new client certificate). Requests in flight keep theirs.
    pub(crate) fn renew(&self) {
        let mut state = self.state.lock();
        state.general = state.build.build();
        let build = state.build.clone();
        for lane in &mut state.lanes {
            lane.client = build.build();
            // The new client dials anew; a request still dialing for the
            // old one marks the old sender only.
            lane.forget_connection();
        }
    }

    /// The lanes as they are now.
    pub(crate) fn stats(&self) -> LaneStats {
        let state = self.state.lock();
        LaneStats {
            lanes: state.lanes.len(),
            assigned: state.lanes.iter().map(|lane| lane.assigned).collect(),
            learned_limit: state.learned_limit,
        }
    }
}

impl LaneTicket {
    /// The client to send through.
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Waits until the lane's client has a connection to share: at once
    /// unless another request is dialing for the lane, then until that
    /// request is answered, this one is handed the dial (the dialer ended
    /// unanswered), or `limit` passes (then it sends anyway, and may open
    /// a connection of its own). Cancel-safe.
    pub(crate) async fn wait_for_connection(&mut self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while let Dial::Waiting(dialed) = &mut self.dial {
            // An error means the sender is gone (the lane was renewed):
            // look at the lane again, as after a change.
            if tokio::time::timeout_at(deadline, dialed.changed())
                .await
                .is_err()
            {
                self.dial = Dial::Connected;
                return;
            }
            let mut state = self.state.lock();
            self.dial = match state.lanes.iter_mut().find(|lane| lane.id == self.lane) {
                Some(lane) => lane.dial_for_request(),
                None => Dial::Connected,
            };
        }
    }

    /// Records that the response headers arrived.
    pub(crate) fn answered(&mut self) {
        if self.answered {
            return;
        }
        self.answered = true;
        if let Dial::Dialing(dialed) = std::mem::replace(&mut self.dial, Dial::Connected) {
            dialed.send_replace(true);
        }
        let mut state = self.state.lock();
        if let Some(lane) = state.lanes.iter_mut().find(|lane| lane.id == self.lane) {
            lane.answered += 1;
        }
    }

    /// Called when the response headers are late: whether the request is
    /// queued behind its lane's stream limit (other requests on the lane
    /// were answered). If so the lane's limit is set to the number
    /// answered, and the caller should drop the request and send it on
    /// another lane; if not (nothing on the lane was answered either: the
    /// server is slow) it should keep waiting.
    pub(crate) fn lane_is_full(&self) -> bool {
        let mut state = self.state.lock();
        let Some(lane) = state.lanes.iter_mut().find(|lane| lane.id == self.lane) else {
            return false;
        };
        if lane.answered == 0 {
            return false;
        }
        let limit = lane.answered;
        lane.limit = Some(limit);
        let learned = state.learned_limit.map_or(limit, |known| known.min(limit));
        state.learned_limit = Some(learned);
        tracing::info!(
            lane = self.lane,
            limit,
            "a long-running request waited for a stream: the connection is at the server's \
             stream limit; sending it on another connection"
        );
        true
    }
}

impl Drop for LaneTicket {
    fn drop(&mut self) {
        // Waiters are woken outside the lock: they take it to look again.
        if let Some(dialed) = self.leave_lane() {
            dialed.send_modify(|_| {});
        }
    }
}

impl LaneTicket {
    /// Gives the ticket's place back; the dial to hand over, if this
    /// request was dialing and ends unanswered.
    fn leave_lane(&mut self) -> Option<Arc<tokio::sync::watch::Sender<bool>>> {
        let mut state = self.state.lock();
        // A request that dialed and ended without an answer hands the dial
        // over: the lane is no longer dialing, and the waiters look again
        // (the first to look dials).
        let handed_over = match &self.dial {
            Dial::Dialing(dialed) => {
                if let Some(lane) = state
                    .lanes
                    .iter_mut()
                    .find(|lane| lane.id == self.lane && Arc::ptr_eq(&lane.dialed, dialed))
                {
                    lane.dialing = false;
                }
                Some(Arc::clone(dialed))
            }
            _ => None,
        };
        let index = state.lanes.iter().position(|lane| lane.id == self.lane)?;
        let lane = &mut state.lanes[index];
        lane.assigned = lane.assigned.saturating_sub(1);
        if self.answered {
            lane.answered = lane.answered.saturating_sub(1);
        }
        if lane.assigned == 0 {
            // Its connection may have gone with its requests (a server
            // restart): the next request dials.
            lane.forget_connection();
        }
        // An empty lane past the first is closed: its connection goes once
        // its pool idles out.
        if lane.assigned == 0 && state.lanes.len() > 1 {
            state.lanes.remove(index);
        }
        handed_over
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes() -> ConnectionLanes {
        let _ = rustls::crypto::ring::default_provider().install_default();
        ConnectionLanes::new(reqwest::Client::new(), reqwest::Client::new)
    }

    #[test]
    fn watches_share_a_lane_until_its_limit_is_learned() {
        let lanes = lanes();
        let mut first: Vec<LaneTicket> = (0..3).map(|_| lanes.long_running()).collect();
        assert_eq!(lanes.stats().assigned, [3]);
        for ticket in &mut first {
            ticket.answered();
        }
        let waiting = lanes.long_running();
        assert!(waiting.lane_is_full(), "three answered, one waiting");
        assert_eq!(lanes.stats().learned_limit, Some(3));
        let moved = lanes.long_running();
        drop(waiting);
        assert_eq!(lanes.stats().assigned, [3, 1]);
        // New lanes start with the learned limit.
        let more: Vec<LaneTicket> = (0..3).map(|_| lanes.long_running()).collect();
        assert_eq!(lanes.stats().assigned, [3, 3, 1]);
        drop(more);
        drop(moved);
        assert_eq!(lanes.stats().assigned, [3], "empty lanes close");
        drop(first);
        assert_eq!(lanes.stats().assigned, [0], "the first lane stays");
    }

    #[test]
    fn a_wait_with_nothing_answered_is_not_a_full_lane() {
        let lanes = lanes();
        let only = lanes.long_running();
        assert!(!only.lane_is_full());
        assert_eq!(lanes.stats().learned_limit, None);
        let second = lanes.long_running();
        assert_eq!(lanes.stats().assigned, [2]);
        drop((only, second));
    }

    const LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

    #[tokio::test]
    async fn a_fresh_lane_dials_once_and_the_others_wait() {
        let lanes = lanes();
        let mut dialer = lanes.long_running();
        let mut waiters: Vec<LaneTicket> = (0..3).map(|_| lanes.long_running()).collect();
        assert_eq!(lanes.stats().assigned, [4], "one lane");
        dialer.wait_for_connection(LIMIT).await;
        let short = std::time::Duration::from_millis(20);
        assert!(
            tokio::time::timeout(short, waiters[0].wait_for_connection(LIMIT))
                .await
                .is_err(),
            "waits for the dialer"
        );
        dialer.answered();
        for waiter in &mut waiters {
            waiter.wait_for_connection(LIMIT).await;
        }
        let mut later = lanes.long_running();
        later.wait_for_connection(LIMIT).await;

        assert!(
            matches!(later.dial, Dial::Connected),
            "the lane is connected"
        );
    }

    #[tokio::test]
    async fn a_dialer_ending_unanswered_hands_the_dial_to_one_waiter() {
        let lanes = lanes();
        let dialer = lanes.long_running();
        let mut first = lanes.long_running();
        let mut second = lanes.long_running();
        drop(dialer);
        first.wait_for_connection(LIMIT).await;
        assert!(matches!(first.dial, Dial::Dialing(_)), "the first dials");
        let short = Duration::from_millis(20);
        assert!(
            tokio::time::timeout(short, second.wait_for_connection(LIMIT))
                .await
                .is_err(),
            "the second waits for the new dialer"
        );
        first.answered();
        second.wait_for_connection(LIMIT).await;
        assert!(matches!(second.dial, Dial::Connected));
    }

    #[tokio::test]
    async fn a_wait_past_its_limit_sends_anyway_and_an_empty_lane_dials_anew() {
        let lanes = lanes();
        let dialer = lanes.long_running();
        let mut waiter = lanes.long_running();
        waiter.wait_for_connection(Duration::from_millis(10)).await;
        assert!(matches!(waiter.dial, Dial::Connected), "gave up waiting");
        drop((dialer, waiter));
        let next = lanes.long_running();
        assert!(
            matches!(next.dial, Dial::Dialing(_)),
            "a lane left empty dials again"
        );
    }
}
