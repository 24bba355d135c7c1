//! [`ReflectorOptions`]: a reflector's settings, client-go's defaults
//! unless said otherwise.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::clock::{Clock, RealClock};

use crate::backoff::BackoffOptions;
use crate::error::Error;

/// The shortest watch timeout: each watch asks the server to end it after a
/// random time in [5, 10) minutes, so watches of many clients do not all
/// end together.
pub const MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

/// How often an API server is expected to send bookmarks on an idle watch
/// (the watch cache sends one about every minute).
pub const DEFAULT_EXPECTED_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// How long a resumed watch must be quiet for its replay to count as
/// consumed (see [`ReflectorOptions::resume_settle`]).
pub const DEFAULT_RESUME_SETTLE: Duration = Duration::from_millis(100);

/// The least idle timeout the default allows.
pub const MIN_DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// Called with every error a reflector meets (client-go's
/// `WatchErrorHandler`). Runs on the reflector's task: it must not block.
pub type WatchErrorHandler = Arc<dyn Fn(&Error) + Send + Sync>;

/// Asked at each resync tick whether to resync now (client-go's
/// `ShouldResync`; an informer answers whether any handler is due).
pub type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

/// A reflector's settings.
///
/// | setting | default | client-go |
/// |---|---|---|
/// | `name` | the ListerWatcher's description | caller's file:line |
/// | `resync_period` | zero: no resync | the same |
/// | `min_watch_timeout` | 5 min (watches last [5, 10) min) | the same; values under 5 min are ignored |
/// | `backoff` | 800 ms ×2 up to 30 s, jitter 1.0, reset after 2 min | the same |
/// | `use_watch_list` | on | on since 1.35 (`WatchListClient`) |
/// | `page_size` | 500 for lists at "" or "0", else unpaginated | `WatchListPageSize` |
/// | `watch_idle_timeout` | max(2 × expected bookmark interval, 90 s) = 120 s, once bookmarks were seen | none |
/// | `max_internal_error_retry_duration` | zero: a 500 ends the watch and relists | the same |
/// | `resume_settle` | 100 ms | none |
#[derive(Clone)]
pub struct ReflectorOptions {
    /// The name in logs and errors; the ListerWatcher's description when
    /// unset.
    pub name: Option<String>,
    /// How often to ask `should_resync` and resync the store; zero for
    /// never.
    pub resync_period: Duration,
    /// Whether to resync at a tick; resync always when unset.
    pub should_resync: Option<ShouldResync>,
    /// The shortest server-side watch timeout; honoured only above
    /// [`MIN_WATCH_TIMEOUT`]. Each watch asks for a random time in
    /// [min, 2 × min).
    pub min_watch_timeout: Duration,
    /// The waits between failed attempts.
    pub backoff: BackoffOptions,
    /// Start with a watch-list request (`sendInitialEvents=true`) instead
    /// of a list, when the ListerWatcher says the server supports it.
    pub use_watch_list: bool,
    /// A fixed page size for every list, overriding client-go's rule.
    pub page_size: Option<u64>,
    /// How often the server is expected to send bookmarks; the default
    /// idle timeout is twice this, at least 90 s.
    pub expected_bookmark_interval: Duration,
    /// Restart a watch that received no bytes for this long, once the
    /// server has shown that it sends bookmarks (a periodic bookmark on any
    /// watch of this reflector; never before); `None` for the default (see
    /// `expected_bookmark_interval`).
    pub watch_idle_timeout: Option<Duration>,
    /// Retry a watch at once after a 500 Internal Error for this long
    /// after the first such error (zero: never, the default).
    pub max_internal_error_retry_duration: Duration,
    /// Receives every error.
    pub watch_error_handler: Option<WatchErrorHandler>,
    /// The clock for backoff resets, resync bookkeeping and watch
    /// durations.
    pub clock: Arc<dyn Clock>,
    /// When resuming ([`Reflector::resume_from`](crate::Reflector::resume_from)),
    /// the watch's replay counts as consumed once nothing has arrived for
    /// this long, at its first bookmark, or 20 times this long after the
    /// watch opened, whichever comes first (on a cluster that never goes
    /// quiet for this long, the rest of the replay then comes as live
    /// events).
    pub resume_settle: Duration,
}

impl Default for ReflectorOptions {
    fn default() -> Self {
        ReflectorOptions {
            name: None,
            resync_period: Duration::ZERO,
            should_resync: None,
            min_watch_timeout: MIN_WATCH_TIMEOUT,
            backoff: BackoffOptions::default(),
            use_watch_list: true,
            page_size: None,
            expected_bookmark_interval: DEFAULT_EXPECTED_BOOKMARK_INTERVAL,
            watch_idle_timeout: None,
            max_internal_error_retry_duration: Duration::ZERO,
            watch_error_handler: None,
            clock: Arc::new(RealClock),
            resume_settle: DEFAULT_RESUME_SETTLE,
        }
    }
}

impl fmt::Debug for ReflectorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflectorOptions")
            .field("name", &self.name)
            .field("resync_period", &self.resync_period)
            .field("should_resync", &self.should_resync.is_some())
            .field("min_watch_timeout", &self.min_watch_timeout)
            .field("backoff", &self.backoff)
            .field("use_watch_list", &self.use_watch_list)
            .field("page_size", &self.page_size)
            .field(
                "expected_bookmark_interval",
                &self.expected_bookmark_interval,
            )
            .field("watch_idle_timeout", &self.watch_idle_timeout)
            .field(
                "max_internal_error_retry_duration",
                &self.max_internal_error_retry_duration,
            )
            .field("watch_error_handler", &self.watch_error_handler.is_some())
            .field("clock", &self.clock)
            .field("resume_settle", &self.resume_settle)
            .finish()
    }
}

impl ReflectorOptions {
    /// Names the reflector in logs and errors.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Resyncs the store every `period` (zero: never).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Asks `should_resync` at each resync tick.
    #[must_use]
    pub fn should_resync(
        mut self,
        should_resync: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Self {
        self.should_resync = Some(Arc::new(should_resync));
        self
    }

    /// Sets the shortest watch timeout (ignored unless above 5 minutes).
    #[must_use]
    pub fn min_watch_timeout(mut self, timeout: Duration) -> Self {
        self.min_watch_timeout = timeout;
        self
    }

    /// Sets the backoff between failed attempts.
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffOptions) -> Self {
        self.backoff = backoff;
        self
    }

    /// Turns watch-list on (the default) or off.
    #[must_use]
    pub fn use_watch_list(mut self, use_watch_list: bool) -> Self {
        self.use_watch_list = use_watch_list;
        self
    }

    /// Lists in pages of `page_size` always (0: never paginate).
    #[must_use]
    pub fn page_size(mut self, page_size: u64) -> Self {
        self.page_size = Some(page_size);
        self
    }

    /// Sets the expected bookmark interval the default idle timeout
    /// derives from.
    #[must_use]
    pub fn expected_bookmark_interval(mut self, interval: Duration) -> Self {
        self.expected_bookmark_interval = interval;
        self
    }

    /// Restarts a watch that received nothing for `timeout`.
    #[must_use]
    pub fn watch_idle_timeout(mut self, timeout: Duration) -> Self {
        self.watch_idle_timeout = Some(timeout);
        self
    }

    /// Retries watches at once after 500 Internal Error for `duration`.
    #[must_use]
    pub fn max_internal_error_retry_duration(mut self, duration: Duration) -> Self {
        self.max_internal_error_retry_duration = duration;
        self
    }

    /// Sends every error to `handler`.
    #[must_use]
    pub fn watch_error_handler(mut self, handler: impl Fn(&Error) + Send + Sync + 'static) -> Self {
        self.watch_error_handler = Some(Arc::new(handler));
        self
    }

    /// Uses `clock` for time bookkeeping.
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets how long a resumed watch must be quiet for its replay to count
    /// as consumed.
    #[must_use]
    pub fn resume_settle(mut self, settle: Duration) -> Self {
        self.resume_settle = settle;
        self
    }

    /// The idle timeout in effect.
    pub fn effective_idle_timeout(&self) -> Duration {
        self.watch_idle_timeout
            .unwrap_or_else(|| (self.expected_bookmark_interval * 2).max(MIN_DEFAULT_IDLE_TIMEOUT))
    }

    /// The shortest watch timeout in effect.
    pub fn effective_min_watch_timeout(&self) -> Duration {
        self.min_watch_timeout.max(MIN_WATCH_TIMEOUT)
    }
}
