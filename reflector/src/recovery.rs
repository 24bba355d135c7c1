//! The reflector's recovery table as one pure function: [`decide`] maps
//! how a request or stream ended to what the reflector does next.
//!
//! The list, watch and watch-list loops do the I/O and report errors; every
//! choice between asking again, backing off, relisting and falling back is
//! made here, row by row as the table in the crate documentation reads. The
//! function reads no clock and does no I/O: time comes in as arguments, and
//! its only effect is the [`RetryState`] it is given, so each row is a unit
//! test with no server.

use std::time::{Duration, Instant};

use clientgo_listwatch::FrameError;

/// A watch closed sooner than this with no events is a "very short watch".
pub(crate) const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// Consecutive bad frames (with no good event between them) after which the
/// reflector relists instead of re-watching.
pub(crate) const FRAME_ERRORS_BEFORE_RELIST: u32 = 2;

/// Which request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Opening a watch-list request, before any answer.
    OpenWatchList,
    /// A watch-list's stream, before its initial-events-end bookmark.
    WatchList,
    /// A list (all its pages).
    List,
    /// Opening a watch, before any answer.
    OpenWatch,
    /// An open watch's stream (a watch-list's after its bookmark included).
    Watch,
    /// A resume from a saved state (warm restart): opening its watch, or
    /// its stream before the replay settled.
    Resume,
}

/// What an error was, as far as recovery cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// 429 Too Many Requests, with the server's Retry-After if it gave one.
    TooManyRequests { retry_after: Option<Duration> },
    /// Nothing listened at the server's address.
    ConnectionRefused,
    /// 410 Gone or Expired: the resourceVersion was compacted away.
    ExpiredOrGone,
    /// The server had not reached the resourceVersion asked for.
    TooLargeResourceVersion,
    /// 500 Internal Error.
    InternalError,
    /// A frame over the size limit.
    FrameTooLarge,
    /// A malformed frame.
    BadFrame,
    /// The stream ended inside a frame (client-go's unexpected EOF).
    CutOff,
    /// No answer, or the connection broke (reset, closed, timed out).
    ConnectionBroken,
    /// Anything else (403, 404, 422, other Statuses).
    Other,
}

impl Cause {
    /// Classifies a list or watch error.
    pub(crate) fn of(error: &clientgo_listwatch::Error) -> Cause {
        if error.is_too_many_requests() {
            let retry_after = error
                .status()
                .and_then(clientgo_apimachinery::Status::retry_after_seconds)
                .map(|seconds| Duration::from_secs(u64::from(seconds)));
            return Cause::TooManyRequests { retry_after };
        }
        if error.is_connection_refused() {
            return Cause::ConnectionRefused;
        }
        if error.is_expired_or_gone() {
            return Cause::ExpiredOrGone;
        }
        if error.is_too_large_resource_version() {
            return Cause::TooLargeResourceVersion;
        }
        if error.is_internal_error() {
            return Cause::InternalError;
        }
        match error.frame_error() {
            Some(FrameError::TooLarge { .. }) => return Cause::FrameTooLarge,
            Some(FrameError::Truncated { .. }) => return Cause::CutOff,
            Some(_) => return Cause::BadFrame,
            None => {}
        }
        if error.is_connection_error() {
            return Cause::ConnectionBroken;
        }
        Cause::Other
    }

    fn resource_version_unavailable(self) -> bool {
        matches!(self, Cause::ExpiredOrGone | Cause::TooLargeResourceVersion)
    }
}

/// How a request or stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It failed (an error answer, an ERROR event, bad bytes, a broken
    /// connection).
    Failed(Cause),
    /// Nothing arrived for the idle timeout.
    Idle,
    /// The server ended it cleanly (for a watch-list: before its
    /// initial-events-end bookmark).
    Ended,
    /// The store refused the result (a replace, a resync, a transform).
    StoreRefused,
}

/// One ended request or stream: the input of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ended {
    /// Which request it was.
    pub(crate) phase: Phase,
    /// How it ended.
    pub(crate) outcome: Outcome,
    /// How long it lasted.
    pub(crate) lasted: Duration,
    /// Events it carried, bookmarks included.
    pub(crate) events: u64,
    /// Whether it was sent at resourceVersion "" (nothing older to step
    /// back from).
    pub(crate) at_latest: bool,
}

impl Ended {
    /// A watch closed within [`VERY_SHORT_WATCH`] with no events:
    /// something between here and the server is likely cutting
    /// connections.
    pub(crate) fn is_very_short_watch(&self) -> bool {
        self.phase == Phase::Watch && self.is_very_short()
    }

    fn is_very_short(&self) -> bool {
        self.outcome == Outcome::Ended && self.events == 0 && self.lasted < VERY_SHORT_WATCH
    }
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Send the same kind of request again at once.
    Retry,
    /// The resourceVersion asked for is unavailable: send the same kind of
    /// request again at once at "" (a consistent read).
    RetryAtLatest,
    /// Wait the backoff's next step (at least `at_least`), then send the
    /// same kind of request again.
    BackOffAndRetry { at_least: Option<Duration> },
    /// End this attempt: the run loop backs off, then lists (or
    /// watch-lists) at the relist resourceVersion; or, while a saved state
    /// waits to be resumed, resumes again.
    Relist,
    /// The server will not serve this sync (a watch-list, or a resume
    /// whose resourceVersion is gone): list, then watch, for this attempt.
    FallBackToList,
}

/// A decision and the reason logged with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decision {
    /// What to do.
    pub(crate) action: Action,
    /// Why, for the log line.
    pub(crate) reason: &'static str,
}

fn decision(action: Action, reason: &'static str) -> Decision {
    Decision { action, reason }
}

/// What the table remembers between the streams of one watch phase.
#[derive(Debug)]
pub(crate) struct RetryState {
    frame_errors_in_a_row: u32,
    internal_errors: InternalErrorRetry,
}

impl RetryState {
    /// A fresh state retrying 500s for `max_internal_error_retry` (zero:
    /// never).
    pub(crate) fn new(max_internal_error_retry: Duration) -> Self {
        RetryState {
            frame_errors_in_a_row: 0,
            internal_errors: InternalErrorRetry::new(max_internal_error_retry),
        }
    }
}

/// The recovery table: what to do after `ended`, at `now`. Pure: reads no
/// clock, does no I/O; its only effect is on `retry`.
pub(crate) fn decide(ended: Ended, retry: &mut RetryState, now: Instant) -> Decision {
    use Action::{BackOffAndRetry, FallBackToList, Relist, Retry, RetryAtLatest};
    use Cause::*;
    if ended.phase == Phase::Watch && ended.events > 0 {
        retry.frame_errors_in_a_row = 0;
    }
    // client-go's stream watcher takes a connection broken or cut inside
    // a frame mid-stream for a clean close: a watch-list stream ending so
    // is asked again (unless it was very short), not turned into a list.
    let outcome = match (ended.phase, ended.outcome) {
        (Phase::WatchList, Outcome::Failed(ConnectionBroken | CutOff)) => Outcome::Ended,
        (_, outcome) => outcome,
    };
    let ended = Ended { outcome, ..ended };
    let cause = match ended.outcome {
        Outcome::Failed(cause) => cause,
        Outcome::Idle => {
            return match ended.phase {
                Phase::List => decision(Relist, "the list went idle"),
                Phase::Resume => decision(
                    Relist,
                    "the resume's watch went idle; backing off, then resuming again",
                ),
                _ => decision(Retry, "nothing arrived for the idle timeout; asking again"),
            };
        }
        Outcome::StoreRefused => {
            return match ended.phase {
                Phase::WatchList | Phase::OpenWatchList => decision(
                    FallBackToList,
                    "the store refused the watch-list's state; listing and watching for this attempt",
                ),
                _ => decision(Relist, "the store refused a change; relisting"),
            };
        }
        Outcome::Ended => {
            let very_short = ended.is_very_short();
            return match ended.phase {
                Phase::WatchList if very_short => decision(
                    FallBackToList,
                    "watch-list ended at once before its initial-events-end bookmark (very short watch); listing and watching for this attempt",
                ),
                Phase::WatchList => decision(
                    Retry,
                    "watch-list ended before its initial-events-end bookmark; asking again",
                ),
                Phase::Watch if very_short => {
                    decision(Relist, "very short watch: closed at once with no events")
                }
                Phase::Watch | Phase::OpenWatch => decision(Retry, "watch closed; watching again"),
                Phase::OpenWatchList => {
                    decision(Retry, "watch-list closed unanswered; asking again")
                }
                Phase::List => decision(Retry, "the list ended early"),
                Phase::Resume => decision(
                    Relist,
                    "the resume's watch closed unanswered; backing off, then resuming again",
                ),
            };
        }
    };
    if ended.phase == Phase::Watch {
        retry.internal_errors.after(cause == InternalError, now);
    }
    match (ended.phase, cause) {
        // Compacted away; or a resourceVersion the server has not reached,
        // which a saved state can only have if the server's data went back
        // in time (a restore): list in both cases.
        (Phase::Resume, cause) if cause.resource_version_unavailable() => decision(
            FallBackToList,
            "the saved state's resourceVersion is gone; listing, with the saved state delivered first",
        ),
        (Phase::Resume, _) => decision(Relist, "resuming failed; backing off, then resuming again"),
        (
            Phase::OpenWatchList | Phase::WatchList | Phase::OpenWatch,
            TooManyRequests { retry_after },
        ) => decision(
            BackOffAndRetry {
                at_least: retry_after,
            },
            "the server is busy or down; backing off, then asking again",
        ),
        (Phase::OpenWatchList | Phase::WatchList | Phase::OpenWatch, ConnectionRefused) => {
            decision(
                BackOffAndRetry { at_least: None },
                "the server is busy or down; backing off, then asking again",
            )
        }
        (Phase::OpenWatchList | Phase::WatchList | Phase::List, cause)
            if cause.resource_version_unavailable() =>
        {
            if ended.at_latest {
                match ended.phase {
                    Phase::List => decision(Relist, "unavailable even at the latest state"),
                    _ => decision(
                        BackOffAndRetry { at_least: None },
                        "unavailable even at the latest state; backing off",
                    ),
                }
            } else {
                decision(
                    RetryAtLatest,
                    "resourceVersion unavailable; asking again at once at the latest state (\"\")",
                )
            }
        }
        // client-go: "making progress is better than deadlocking". Every
        // other failure of a watch-list (a refusal, a 500, an ERROR event,
        // a bad, oversized or undecodable frame, a broken connection)
        // lists instead for this attempt (a connection broken mid-stream
        // is a clean end, above).
        (Phase::OpenWatchList | Phase::WatchList, _) => decision(
            FallBackToList,
            "watch-list failed; listing and watching for this attempt",
        ),
        (Phase::List | Phase::OpenWatch, _) => {
            decision(Relist, "failed; backing off, then relisting")
        }
        (Phase::Watch, ExpiredOrGone) => decision(
            Relist,
            "watch ended with 410 Expired; relisting at the last resourceVersion",
        ),
        (Phase::Watch, TooManyRequests { retry_after }) => decision(
            BackOffAndRetry {
                at_least: retry_after,
            },
            "watch ended with 429; backing off, then watching again",
        ),
        (Phase::Watch, InternalError) if retry.internal_errors.should_retry(now) => decision(
            Retry,
            "watch ended with 500 Internal Error within the retry window; watching again",
        ),
        (Phase::Watch, FrameTooLarge) => decision(
            Relist,
            "watch frame over the size limit; relisting (a list has no frame limit)",
        ),
        (Phase::Watch, BadFrame | CutOff) => {
            retry.frame_errors_in_a_row += 1;
            if retry.frame_errors_in_a_row >= FRAME_ERRORS_BEFORE_RELIST {
                decision(Relist, "bad watch frames in a row; relisting")
            } else {
                decision(
                    BackOffAndRetry { at_least: None },
                    "bad watch frame; backing off, then watching again from the last good resourceVersion",
                )
            }
        }
        (Phase::Watch, ConnectionBroken) => {
            decision(Retry, "watch connection broke; watching again")
        }
        (Phase::Watch, _) => decision(Relist, "watch ended with an error; relisting"),
    }
}

/// client-go's retry window for 500 Internal Error on a watch: retry at
/// once while within `max` of the first such error (never when `max` is
/// zero); the window starts again after a minute without one.
#[derive(Debug)]
struct InternalErrorRetry {
    max: Duration,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl InternalErrorRetry {
    const RESET_AFTER: Duration = Duration::from_secs(60);

    /// A window of `max` (zero: never retry), no error seen yet.
    fn new(max: Duration) -> Self {
        InternalErrorRetry {
            max,
            first: None,
            last: None,
        }
    }

    /// Records how a watch ended. Only a 500 counts: any other outcome
    /// (a clean close, a 429, a broken connection) leaves the window as it
    /// is, as client-go's `retryWithDeadline.After` ignores errors that are
    /// not retryable; otherwise 500s interleaved with them would be retried
    /// past the limit. A gap of a minute or more starts a new window.
    fn after(&mut self, internal_error: bool, now: Instant) {
        if !internal_error {
            return;
        }
        if self
            .last
            .is_none_or(|last| now.saturating_duration_since(last) >= Self::RESET_AFTER)
        {
            self.first = Some(now);
        }
        self.last = Some(now);
    }

    fn should_retry(&mut self, now: Instant) -> bool {
        if self.max.is_zero() {
            return false;
        }
        match self.first {
            Some(first) if now.saturating_duration_since(first) <= self.max => true,
            _ => {
                self.first = None;
                self.last = None;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Action::*;
    use super::Cause::*;
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn ended(phase: Phase, outcome: Outcome) -> Ended {
        Ended {
            phase,
            outcome,
            lasted: Duration::from_secs(30),
            events: 1,
            at_latest: false,
        }
    }

    fn action(ended: Ended) -> Action {
        decide(ended, &mut RetryState::new(Duration::ZERO), Instant::now()).action
    }

    fn failed(phase: Phase, cause: Cause) -> Action {
        action(ended(phase, Outcome::Failed(cause)))
    }

    // Rows of the table in the crate documentation, in its order.

    #[test]
    fn watch_list_refused_falls_back_to_list() {
        assert_eq!(failed(Phase::WatchList, Other), FallBackToList);
    }

    /// The wire issue's fix: watch-list used to back off and ask again,
    /// forever, after these; client-go lists instead.
    #[test]
    fn watch_list_failing_otherwise_falls_back_to_list() {
        for cause in [InternalError, BadFrame, FrameTooLarge, Other] {
            assert_eq!(failed(Phase::WatchList, cause), FallBackToList, "{cause:?}");
        }
        for cause in [InternalError, ConnectionBroken, Other] {
            assert_eq!(
                failed(Phase::OpenWatchList, cause),
                FallBackToList,
                "opening: {cause:?}"
            );
        }
    }

    /// client-go's stream watcher takes a connection broken, or a stream
    /// cut inside a frame, for a clean close: the watch-list is asked for
    /// again, and only a very short one falls back.
    #[test]
    fn watch_list_broken_mid_stream_asks_again_unless_very_short() {
        for cause in [ConnectionBroken, CutOff] {
            assert_eq!(failed(Phase::WatchList, cause), Retry, "{cause:?}");
            let at_once = Ended {
                lasted: SECOND / 2,
                events: 0,
                ..ended(Phase::WatchList, Outcome::Failed(cause))
            };
            assert_eq!(action(at_once), FallBackToList, "{cause:?}, very short");
        }
    }

    #[test]
    fn watch_list_unavailable_resource_version_asks_again_at_latest() {
        assert_eq!(failed(Phase::WatchList, ExpiredOrGone), RetryAtLatest);
        assert_eq!(
            failed(Phase::WatchList, TooLargeResourceVersion),
            RetryAtLatest
        );
        let at_latest = Ended {
            at_latest: true,
            ..ended(Phase::WatchList, Outcome::Failed(ExpiredOrGone))
        };
        assert_eq!(
            action(at_latest),
            BackOffAndRetry { at_least: None },
            "no hot loop when even \"\" is refused"
        );
    }

    #[test]
    fn watch_list_busy_or_refused_connection_backs_off_and_asks_again() {
        let busy = TooManyRequests {
            retry_after: Some(3 * SECOND),
        };
        assert_eq!(
            failed(Phase::WatchList, busy),
            BackOffAndRetry {
                at_least: Some(3 * SECOND)
            }
        );
        assert_eq!(
            failed(Phase::WatchList, ConnectionRefused),
            BackOffAndRetry { at_least: None }
        );
        assert_eq!(
            failed(Phase::OpenWatchList, ConnectionRefused),
            BackOffAndRetry { at_least: None }
        );
    }

    #[test]
    fn watch_list_ending_before_its_bookmark_asks_again() {
        assert_eq!(action(ended(Phase::WatchList, Outcome::Ended)), Retry);
        let at_once = Ended {
            lasted: SECOND / 2,
            events: 0,
            ..ended(Phase::WatchList, Outcome::Ended)
        };
        assert_eq!(action(at_once), FallBackToList, "a very short watch");
    }

    #[test]
    fn watch_list_store_refusal_falls_back_to_list() {
        assert_eq!(
            action(ended(Phase::WatchList, Outcome::StoreRefused)),
            FallBackToList
        );
    }

    #[test]
    fn list_unavailable_resource_version_lists_again_at_latest_once() {
        assert_eq!(failed(Phase::List, ExpiredOrGone), RetryAtLatest);
        assert_eq!(failed(Phase::List, TooLargeResourceVersion), RetryAtLatest);
        let at_latest = Ended {
            at_latest: true,
            ..ended(Phase::List, Outcome::Failed(ExpiredOrGone))
        };
        assert_eq!(action(at_latest), Relist);
    }

    #[test]
    fn list_failing_otherwise_backs_off_and_lists_again() {
        for cause in [
            Other,
            InternalError,
            ConnectionRefused,
            ConnectionBroken,
            TooManyRequests { retry_after: None },
        ] {
            assert_eq!(failed(Phase::List, cause), Relist, "{cause:?}");
        }
        assert_eq!(action(ended(Phase::List, Outcome::StoreRefused)), Relist);
    }

    #[test]
    fn watch_closed_cleanly_watches_again_without_relisting() {
        assert_eq!(action(ended(Phase::Watch, Outcome::Ended)), Retry);
    }

    #[test]
    fn very_short_watch_relists() {
        let very_short = Ended {
            lasted: SECOND / 2,
            events: 0,
            ..ended(Phase::Watch, Outcome::Ended)
        };
        assert_eq!(action(very_short), Relist);
        let short_with_events = Ended {
            lasted: SECOND / 2,
            events: 3,
            ..ended(Phase::Watch, Outcome::Ended)
        };
        assert_eq!(action(short_with_events), Retry);
    }

    #[test]
    fn opening_a_watch_busy_or_refused_backs_off_and_watches_again() {
        assert_eq!(
            failed(
                Phase::OpenWatch,
                TooManyRequests {
                    retry_after: Some(SECOND)
                }
            ),
            BackOffAndRetry {
                at_least: Some(SECOND)
            }
        );
        assert_eq!(
            failed(Phase::OpenWatch, ConnectionRefused),
            BackOffAndRetry { at_least: None }
        );
    }

    #[test]
    fn opening_a_watch_failing_otherwise_relists() {
        for cause in [Other, ExpiredOrGone, InternalError, ConnectionBroken] {
            assert_eq!(failed(Phase::OpenWatch, cause), Relist, "{cause:?}");
        }
    }

    #[test]
    fn watch_expired_relists() {
        assert_eq!(failed(Phase::Watch, ExpiredOrGone), Relist);
    }

    #[test]
    fn watch_too_many_requests_backs_off_and_watches_again() {
        assert_eq!(
            failed(
                Phase::Watch,
                TooManyRequests {
                    retry_after: Some(2 * SECOND)
                }
            ),
            BackOffAndRetry {
                at_least: Some(2 * SECOND)
            }
        );
    }

    #[test]
    fn watch_internal_error_is_retried_only_within_the_window() {
        assert_eq!(
            failed(Phase::Watch, InternalError),
            Relist,
            "the default window is zero"
        );
        let start = Instant::now();
        let mut retry = RetryState::new(30 * SECOND);
        let error = ended(Phase::Watch, Outcome::Failed(InternalError));
        assert_eq!(decide(error, &mut retry, start).action, Retry);
        assert_eq!(decide(error, &mut retry, start + 20 * SECOND).action, Retry);
        assert_eq!(
            decide(error, &mut retry, start + 31 * SECOND).action,
            Relist
        );
    }

    /// The real-server issue's fix: a non-500 outcome between 500s
    /// restarted the window, so interleaved 500s were retried forever.
    #[test]
    fn other_outcomes_between_internal_errors_do_not_restart_the_window() {
        let start = Instant::now();
        let mut retry = RetryState::new(30 * SECOND);
        let error = ended(Phase::Watch, Outcome::Failed(InternalError));
        let busy = ended(
            Phase::Watch,
            Outcome::Failed(TooManyRequests { retry_after: None }),
        );
        let mut last = Retry;
        for second in (0..=40).step_by(10) {
            last = decide(error, &mut retry, start + second * SECOND).action;
            decide(busy, &mut retry, start + (second + 5) * SECOND);
            decide(
                ended(Phase::Watch, Outcome::Ended),
                &mut retry,
                start + (second + 6) * SECOND,
            );
        }
        assert_eq!(last, Relist, "40 s after the first 500");
    }

    /// The real-server issue's fix: client-go starts a new window after a
    /// gap of at least a minute (`>=`), and only 500s count as the last.
    #[test]
    fn a_gap_of_exactly_a_minute_starts_a_new_window() {
        let start = Instant::now();
        let mut retry = RetryState::new(120 * SECOND);
        let error = ended(Phase::Watch, Outcome::Failed(InternalError));
        decide(error, &mut retry, start);
        let later = start + InternalErrorRetry::RESET_AFTER;
        assert_eq!(decide(error, &mut retry, later).action, Retry);
        assert_eq!(retry.internal_errors.first, Some(later));
        decide(error, &mut retry, later + 59 * SECOND);
        assert_eq!(
            retry.internal_errors.first,
            Some(later),
            "59 s is not a gap"
        );
    }

    #[test]
    fn watch_connection_broken_mid_stream_watches_again_at_once() {
        assert_eq!(failed(Phase::Watch, ConnectionBroken), Retry);
    }

    #[test]
    fn bad_frame_watches_again_then_relists_on_the_second_in_a_row() {
        let mut retry = RetryState::new(Duration::ZERO);
        let now = Instant::now();
        let bad = Ended {
            events: 0,
            ..ended(Phase::Watch, Outcome::Failed(BadFrame))
        };
        assert_eq!(
            decide(bad, &mut retry, now).action,
            BackOffAndRetry { at_least: None }
        );
        assert_eq!(decide(bad, &mut retry, now).action, Relist);
        let mut retry = RetryState::new(Duration::ZERO);
        decide(bad, &mut retry, now);
        let after_good_events = Ended { events: 5, ..bad };
        assert_eq!(
            decide(after_good_events, &mut retry, now).action,
            BackOffAndRetry { at_least: None },
            "good events between bad frames start the count again"
        );
    }

    #[test]
    fn a_frame_cut_off_mid_watch_counts_as_a_bad_frame() {
        assert_eq!(
            failed(Phase::Watch, CutOff),
            BackOffAndRetry { at_least: None }
        );
    }

    #[test]
    fn frame_over_the_limit_relists() {
        assert_eq!(failed(Phase::Watch, FrameTooLarge), Relist);
    }

    #[test]
    fn idle_watch_watches_again_at_once() {
        assert_eq!(action(ended(Phase::Watch, Outcome::Idle)), Retry);
        assert_eq!(action(ended(Phase::OpenWatch, Outcome::Idle)), Retry);
        assert_eq!(action(ended(Phase::WatchList, Outcome::Idle)), Retry);
        assert_eq!(action(ended(Phase::OpenWatchList, Outcome::Idle)), Retry);
    }

    #[test]
    fn resync_failure_relists() {
        assert_eq!(action(ended(Phase::Watch, Outcome::StoreRefused)), Relist);
    }

    #[test]
    fn watch_error_otherwise_relists() {
        assert_eq!(failed(Phase::Watch, Other), Relist);
        assert_eq!(failed(Phase::Watch, TooLargeResourceVersion), Relist);
    }

    #[test]
    fn only_a_lost_resource_version_gives_up_a_resume() {
        for cause in [ExpiredOrGone, TooLargeResourceVersion] {
            assert_eq!(failed(Phase::Resume, cause), FallBackToList, "{cause:?}");
        }
        let others = [
            ConnectionRefused,
            ConnectionBroken,
            InternalError,
            TooManyRequests { retry_after: None },
            BadFrame,
            CutOff,
            FrameTooLarge,
            Other,
        ];
        for cause in others {
            assert_eq!(failed(Phase::Resume, cause), Relist, "{cause:?}");
        }
        for outcome in [Outcome::Idle, Outcome::Ended, Outcome::StoreRefused] {
            assert_eq!(action(ended(Phase::Resume, outcome)), Relist, "{outcome:?}");
        }
    }

    #[test]
    fn frame_errors_classify_by_kind() {
        let too_large = clientgo_listwatch::Error::Frame {
            url: "/api/v1/pods".into(),
            source: FrameError::TooLarge {
                limit: 10,
                seen: 11,
            },
        };
        assert_eq!(Cause::of(&too_large), FrameTooLarge);
        use clientgo_apimachinery::Status;
        let status = |status: Status| clientgo_listwatch::Error::WatchStatus {
            url: "/api/v1/pods".into(),
            status: Box::new(status),
        };
        assert_eq!(Cause::of(&status(Status::expired("old"))), ExpiredOrGone);
        assert_eq!(
            Cause::of(&status(Status::resource_version_too_large("new"))),
            TooLargeResourceVersion
        );
        assert_eq!(
            Cause::of(&status(Status::internal_error("boom"))),
            InternalError
        );
        assert_eq!(Cause::of(&status(Status::bad_request("no"))), Other);
        assert_eq!(
            Cause::of(&status(Status::too_many_requests("busy", 2))),
            TooManyRequests {
                retry_after: Some(2 * SECOND)
            }
        );
    }
}
