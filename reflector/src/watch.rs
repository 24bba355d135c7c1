//! The reflector's watch phase: open watches from the last synced
//! resourceVersion and apply their events to the store, re-watching
//! without a relist whenever that is safe.

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::{ListOptions, Object, WatchEvent};
use clientgo_listwatch::{FrameError, ListerWatcher, WatchStream};
use clientgo_store::StoreError;
use serde::de::DeserializeOwned;
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::error::Error;
use crate::reflector::Reflector;
use crate::stats::Counters;

/// A watch closed sooner than this with no events is a "very short watch".
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// Consecutive bad frames (with no good event between them) after which the
/// reflector relists instead of re-watching.
const FRAME_ERRORS_BEFORE_RELIST: u32 = 2;

/// How opening a watch went.
pub(crate) enum Opened<K> {
    Stream(Box<WatchStream<K>>),
    Cancelled,
    /// No answer within the idle timeout.
    Idle,
    Failed(clientgo_listwatch::Error),
}

/// How one watch stream ended.
enum WatchEnd {
    Cancelled,
    /// The server ended it cleanly (its timeout, a dropped connection
    /// between events).
    Closed,
    VeryShort(Duration),
    Idle,
    ResyncFailed(StoreError),
    Failed(clientgo_listwatch::Error),
}

/// The periodic resync: a timer re-armed after each tick.
pub(crate) struct ResyncTimer {
    period: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl ResyncTimer {
    pub(crate) fn new(period: Duration) -> Self {
        ResyncTimer {
            period,
            sleep: (!period.is_zero()).then(|| Box::pin(tokio::time::sleep(period))),
        }
    }

    /// Completes at the next tick; never when resync is off. Cancel-safe.
    pub(crate) async fn tick(&mut self) {
        match &mut self.sleep {
            Some(sleep) => {
                sleep.as_mut().await;
                let next = tokio::time::Instant::now() + self.period;
                sleep.as_mut().reset(next);
            }
            None => std::future::pending().await,
        }
    }
}

/// client-go's retry window for 500 Internal Error on a watch: retry at
/// once while within `max` of the first such error (never when `max` is
/// zero); the window starts again after a minute without one.
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

impl<K, L> Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Watches from the last synced resourceVersion (client-go's `watch`),
    /// starting with `stream` when a watch-list left one open. Returns
    /// `Ok` when the caller should relist after a backoff, `Err` when it
    /// should too but the cause is worth reporting there.
    pub(crate) async fn watch(
        &self,
        mut stream: Option<WatchStream<K>>,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> Result<(), Error> {
        let mut resync = ResyncTimer::new(self.options.resync_period);
        let mut internal_errors =
            InternalErrorRetry::new(self.options.max_internal_error_retry_duration);
        let mut frame_errors_in_a_row = 0;
        loop {
            if cancel.is_cancelled() {
                return Ok(());
            }
            let from = self.last_sync_resource_version();
            let mut live = match stream.take() {
                Some(live) => live,
                None => {
                    let options = ListOptions::default()
                        .timeout_seconds(self.watch_timeout_seconds())
                        .allow_watch_bookmarks(true);
                    let options = if from.is_empty() {
                        options
                    } else {
                        options.resource_version(from.clone())
                    };
                    match self.open(&options, cancel).await {
                        Opened::Stream(live) => *live,
                        Opened::Cancelled => return Ok(()),
                        Opened::Idle => {
                            self.idle_watch();
                            continue;
                        }
                        Opened::Failed(source)
                            if source.is_too_many_requests() || source.is_connection_refused() =>
                        {
                            let at_least = retry_after(&source);
                            self.report(self.watch_error(&from, source));
                            tracing::info!(
                                resource_version = %from,
                                "backing off, then watching again without relisting"
                            );
                            if !self.back_off(backoff, cancel, at_least).await {
                                return Ok(());
                            }
                            Counters::bump(&self.counters.rewatches);
                            continue;
                        }
                        Opened::Failed(source) => return Err(self.watch_error(&from, source)),
                    }
                }
            };
            let (end, events) = self
                .handle_watch(&mut live, &from, cancel, &mut resync)
                .await;
            drop(live);
            if events > 0 {
                frame_errors_in_a_row = 0;
            }
            let now = self.options.clock.now();
            let last = self.last_sync_resource_version();
            match end {
                WatchEnd::Cancelled => return Ok(()),
                WatchEnd::Closed => {
                    internal_errors.after(false, now);
                    tracing::debug!(resource_version = %last, events, "watch closed; watching again");
                    Counters::bump(&self.counters.rewatches);
                }
                WatchEnd::Idle => self.idle_watch(),
                WatchEnd::VeryShort(lasted) => {
                    return Err(Error::VeryShortWatch {
                        resource: self.name.clone(),
                        lasted,
                    });
                }
                WatchEnd::ResyncFailed(source) => {
                    self.report(Error::Store {
                        resource: self.name.clone(),
                        operation: "resync",
                        source,
                    });
                    return Ok(());
                }
                WatchEnd::Failed(source) => {
                    internal_errors.after(source.is_internal_error(), now);
                    if source.is_expired_or_gone() {
                        tracing::info!(
                            resource_version = %last,
                            "watch ended with 410 Expired; relisting at the last resourceVersion"
                        );
                        self.report(self.watch_error(&last, source));
                        return Ok(());
                    }
                    if source.is_too_many_requests() {
                        let at_least = retry_after(&source);
                        self.report(self.watch_error(&last, source));
                        if !self.back_off(backoff, cancel, at_least).await {
                            return Ok(());
                        }
                        Counters::bump(&self.counters.rewatches);
                        continue;
                    }
                    if source.is_internal_error() && internal_errors.should_retry(now) {
                        tracing::info!("watch ended with 500 Internal Error; retrying at once");
                        self.report(self.watch_error(&last, source));
                        Counters::bump(&self.counters.rewatches);
                        continue;
                    }
                    if let Some(frame) = source.frame_error() {
                        frame_errors_in_a_row += 1;
                        let too_large = matches!(frame, FrameError::TooLarge { .. });
                        self.report(self.watch_error(&last, source));
                        if too_large || frame_errors_in_a_row >= FRAME_ERRORS_BEFORE_RELIST {
                            tracing::info!(
                                resource_version = %last,
                                "bad watch frames cannot be skipped by watching again; relisting"
                            );
                            return Ok(());
                        }
                        tracing::info!(
                            resource_version = %last,
                            "bad watch frame; backing off, then watching again from the last good resourceVersion"
                        );
                        if !self.back_off(backoff, cancel, None).await {
                            return Ok(());
                        }
                        Counters::bump(&self.counters.rewatches);
                        continue;
                    }
                    if source.is_connection_error() {
                        // The connection broke mid-stream: client-go treats
                        // it as a probable EOF, a normal end.
                        tracing::info!(resource_version = %last, error = %source, "watch connection broke; watching again");
                        self.report(self.watch_error(&last, source));
                        Counters::bump(&self.counters.rewatches);
                        continue;
                    }
                    tracing::warn!(resource_version = %last, error = %source, "watch ended with an error; relisting");
                    self.report(self.watch_error(&last, source));
                    return Ok(());
                }
            }
        }
    }

    /// Opens a watch, giving up after the idle timeout or on cancel.
    pub(crate) async fn open(
        &self,
        options: &ListOptions,
        cancel: &CancellationToken,
    ) -> Opened<K> {
        Counters::bump(&self.counters.watches);
        tracing::debug!(
            resource_version = options.resource_version.as_deref().unwrap_or_default(),
            timeout_seconds = options.timeout_seconds,
            send_initial_events = options.send_initial_events,
            "opening a watch"
        );
        let idle = self.options.effective_idle_timeout();
        tokio::select! {
            () = cancel.cancelled() => Opened::Cancelled,
            opened = tokio::time::timeout(idle, self.lister_watcher.watch(options)) => match opened {
                Ok(Ok(stream)) => Opened::Stream(Box::new(stream)),
                Ok(Err(error)) => Opened::Failed(error),
                Err(_) => Opened::Idle,
            },
        }
    }

    /// Reports a watch that went idle.
    pub(crate) fn idle_watch(&self) {
        Counters::bump(&self.counters.idle_timeouts);
        Counters::bump(&self.counters.rewatches);
        let idle = self.options.effective_idle_timeout();
        self.report(Error::IdleWatch {
            resource: self.name.clone(),
            idle,
        });
    }

    pub(crate) fn watch_error(&self, from: &str, source: clientgo_listwatch::Error) -> Error {
        Error::Watch {
            resource: self.name.clone(),
            resource_version: from.to_string(),
            source,
        }
    }

    /// Applies one stream's events until it ends (client-go's
    /// `handleWatch`). Returns how it ended and how many events (bookmarks
    /// included) it carried.
    async fn handle_watch(
        &self,
        live: &mut WatchStream<K>,
        from: &str,
        cancel: &CancellationToken,
        resync: &mut ResyncTimer,
    ) -> (WatchEnd, u64) {
        let started = self.options.clock.now();
        // A watch from "" or "0" starts with synthetic ADDED events for
        // every existing object, in no resourceVersion order: they must not
        // move the last resourceVersion.
        let synthetic_adds = from.is_empty() || from == "0";
        let mut only_adds = true;
        let mut events = 0;
        let mut bytes_seen = live.bytes_received();
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return (WatchEnd::Cancelled, events),
                () = resync.tick() => {
                    if let Err(error) = self.resync() {
                        return (WatchEnd::ResyncFailed(error), events);
                    }
                    continue;
                }
                // Re-read each time: the first bookmark may come on this
                // very watch.
                next = within(self.stream_idle_timeout(), live.next()) => next,
            };
            let next = match next {
                Some(next) => next,
                None if live.bytes_received() != bytes_seen => {
                    // Part of a large event arrived: not idle.
                    bytes_seen = live.bytes_received();
                    continue;
                }
                None => return (WatchEnd::Idle, events),
            };
            bytes_seen = live.bytes_received();
            let event = match next {
                None => {
                    let lasted = self.options.clock.since(started);
                    if events == 0 && lasted < VERY_SHORT_WATCH {
                        return (WatchEnd::VeryShort(lasted), events);
                    }
                    return (WatchEnd::Closed, events);
                }
                Some(Err(error)) => return (WatchEnd::Failed(error), events),
                Some(Ok(event)) => event,
            };
            events += 1;
            if !matches!(event, WatchEvent::Added(_)) {
                only_adds = false;
            }
            if let Err(error) = self.apply(event, !(synthetic_adds && only_adds)) {
                return (WatchEnd::Failed(*error), events);
            }
        }
    }

    /// Applies one event to the store, then moves the last resourceVersion
    /// to the event's when `advance`. A store refusal is reported and
    /// skipped (the resourceVersion still moves, as in client-go); an ERROR
    /// event is returned as the error it carries.
    fn apply(
        &self,
        event: WatchEvent<K>,
        advance: bool,
    ) -> Result<(), Box<clientgo_listwatch::Error>> {
        // The resourceVersion is read before the object is handed over, so
        // the store (and its transform) gets the only reference and can
        // change the object in place instead of copying it.
        let version_of =
            |object: &K| advance.then(|| object.resource_version().unwrap_or_default().to_owned());
        let (operation, outcome, resource_version) = match event {
            WatchEvent::Added(object) => {
                let version = version_of(&object);
                ("add", self.store.add(Arc::new(object)), version)
            }
            WatchEvent::Modified(object) => {
                let version = version_of(&object);
                ("update", self.store.update(Arc::new(object)), version)
            }
            WatchEvent::Deleted(object) => {
                let version = version_of(&object);
                (
                    "delete",
                    self.store.delete(Arc::new(object).into()),
                    version,
                )
            }
            WatchEvent::Bookmark(bookmark) => {
                Counters::bump(&self.counters.bookmarks);
                if !bookmark.is_initial_events_end() {
                    self.saw_periodic_bookmark();
                }
                if let Err(source) = self.store.bookmark(bookmark.resource_version()) {
                    self.report(Error::Store {
                        resource: self.name.clone(),
                        operation: "bookmark",
                        source,
                    });
                }
                if advance {
                    self.resource_version.set(bookmark.resource_version());
                }
                return Ok(());
            }
            WatchEvent::Error(status) => {
                return Err(Box::new(clientgo_listwatch::Error::WatchStatus {
                    url: self.name.clone(),
                    status: Box::new(status),
                }));
            }
        };
        Counters::bump(&self.counters.events);
        if let Err(source) = outcome {
            self.report(Error::Store {
                resource: self.name.clone(),
                operation,
                source,
            });
        }
        if let Some(resource_version) = resource_version {
            self.resource_version.set(&resource_version);
        }
        Ok(())
    }

    /// Resyncs the store if `should_resync` allows.
    fn resync(&self) -> Result<(), StoreError> {
        if self
            .options
            .should_resync
            .as_ref()
            .is_none_or(|should_resync| should_resync())
        {
            tracing::debug!("resyncing the store");
            Counters::bump(&self.counters.resyncs);
            self.store.resync()?;
        }
        Ok(())
    }
}

/// `future`'s output, or `None` when `limit` passes first (never without a
/// limit).
pub(crate) async fn within<T>(
    limit: Option<Duration>,
    future: impl std::future::Future<Output = T>,
) -> Option<T> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, future).await.ok(),
        None => Some(future.await),
    }
}

/// The server's requested delay, from a Status with a retry delay.
pub(crate) fn retry_after(error: &clientgo_listwatch::Error) -> Option<Duration> {
    error
        .status()
        .and_then(clientgo_apimachinery::Status::retry_after_seconds)
        .map(|seconds| Duration::from_secs(u64::from(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_are_retried_only_within_the_window() {
        let start = Instant::now();
        let mut never = InternalErrorRetry::new(Duration::ZERO);
        never.after(true, start);
        assert!(!never.should_retry(start));

        let mut retry = InternalErrorRetry::new(Duration::from_secs(30));
        retry.after(true, start);
        assert!(retry.should_retry(start + Duration::from_secs(10)));
        retry.after(true, start + Duration::from_secs(20));
        assert!(retry.should_retry(start + Duration::from_secs(30)));
        retry.after(true, start + Duration::from_secs(31));
        assert!(
            !retry.should_retry(start + Duration::from_secs(31)),
            "31 s after the first error of a run"
        );
        retry.after(true, start + Duration::from_secs(200));
        assert!(
            retry.should_retry(start + Duration::from_secs(201)),
            "a new run of errors after a quiet minute"
        );
    }

    /// Found against client-go's own tests: a non-500 outcome between 500s
    /// restarted the window, so interleaved 500s were retried forever.
    #[test]
    fn other_outcomes_between_internal_errors_do_not_restart_the_window() {
        let start = Instant::now();
        let mut retry = InternalErrorRetry::new(Duration::from_secs(30));
        for second in (0..=40).step_by(10) {
            let now = start + Duration::from_secs(second);
            retry.after(true, now);
            // A 429 or a clean close in between.
            retry.after(false, now + Duration::from_secs(5));
        }
        assert!(
            !retry.should_retry(start + Duration::from_secs(40)),
            "40 s after the first 500, with other outcomes between"
        );
    }

    /// client-go resets after a gap of at least a minute (`>=`).
    #[test]
    fn a_gap_of_exactly_a_minute_starts_a_new_window() {
        let start = Instant::now();
        let mut retry = InternalErrorRetry::new(Duration::from_secs(30));
        retry.after(true, start);
        let later = start + InternalErrorRetry::RESET_AFTER;
        retry.after(true, later);
        assert_eq!(retry.first, Some(later));
        assert!(retry.should_retry(later + Duration::from_secs(1)));
        retry.after(true, later + Duration::from_secs(59));
        assert_eq!(retry.first, Some(later), "59 s is not a gap");
    }
}
