//! The reflector's watch phase: open watches from the last synced
//! resourceVersion and apply their events to the store, re-watching
//! without a relist whenever the recovery table allows.

use std::sync::Arc;

use clientgo_apimachinery::{ApiObject, ListOptions, WatchEvent};
use clientgo_listwatch::{IdleTimer, ListerWatcher, Next as StreamNext};
use clientgo_store::{Arrival, StoreError};
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::error::Error;
use crate::recovery::{Cause, Ended, Outcome, Phase, RetryState};
use crate::reflector::{Next, Reflector};
use crate::resync_timer::ResyncTimer;
use crate::stats::Counters;

impl<K, L> Reflector<K, L>
where
    K: ApiObject,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Watches from the last synced resourceVersion (client-go's `watch`),
    /// starting with `stream` when a watch-list left one open, until the
    /// recovery table says to relist (or `cancel` fires). Every error is
    /// reported where it happens.
    pub(crate) async fn watch(
        &mut self,
        mut stream: Option<L::Watch>,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) {
        let mut resync = ResyncTimer::new(self.options.resync_period);
        let mut retry = RetryState::new(self.options.max_internal_error_retry_duration);
        loop {
            if cancel.is_cancelled() {
                return;
            }
            let from = self.last_sync_resource_version();
            let started = self.options.clock.now();
            let live = match stream.take() {
                Some(live) => Ok(live),
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
                        Some(opened) => opened,
                        None => return,
                    }
                }
            };
            let (phase, outcome, events) = match live {
                Ok(mut live) => {
                    let Some((outcome, events)) = self
                        .handle_watch(&mut live, &from, cancel, &mut resync)
                        .await
                    else {
                        return;
                    };
                    (Phase::Watch, outcome, events)
                }
                Err(outcome) => (Phase::OpenWatch, outcome, 0),
            };
            let ended = Ended {
                phase,
                outcome,
                lasted: self.options.clock.since(started),
                events,
                at_latest: from.is_empty(),
            };
            if ended.is_very_short_watch() {
                self.report(Error::VeryShortWatch {
                    resource: self.name().to_string(),
                    lasted: ended.lasted,
                });
            }
            match self.recover(ended, &mut retry, backoff, cancel).await {
                Next::AskAgain => Counters::bump(&self.status.counters().rewatches),
                Next::EndAttempt | Next::FallBackToList | Next::Cancelled => return,
            }
        }
    }

    /// Opens a watch, giving up after the idle timeout: the stream, or
    /// how opening failed (reported); `None` when cancelled.
    pub(crate) async fn open(
        &self,
        options: &ListOptions,
        cancel: &CancellationToken,
    ) -> Option<Result<L::Watch, Outcome>> {
        Counters::bump(&self.status.counters().watches);
        tracing::debug!(
            resource_version = options.resource_version.as_deref().unwrap_or_default(),
            timeout_seconds = options.timeout_seconds,
            send_initial_events = options.send_initial_events,
            "opening a watch"
        );
        let idle = self.options.effective_idle_timeout();
        let from = options.resource_version.as_deref().unwrap_or_default();
        tokio::select! {
            () = cancel.cancelled() => None,
            opened = tokio::time::timeout(idle, self.lister_watcher.watch(options)) => Some(match opened {
                Ok(Ok(stream)) => Ok(stream),
                Ok(Err(error)) => Err(self.watch_failed(from, options.send_initial_events == Some(true), error)),
                Err(_) => Err(self.idle_watch()),
            }),
        }
    }

    /// Reports a watch that went idle.
    pub(crate) fn idle_watch(&self) -> Outcome {
        Counters::bump(&self.status.counters().idle_timeouts);
        let idle = self.options.effective_idle_timeout();
        self.report(Error::IdleWatch {
            resource: self.name().to_string(),
            idle,
        });
        Outcome::Idle
    }

    /// Reports a failed watch or watch-list (`watch_list`) from `from`,
    /// and classifies the failure.
    pub(crate) fn watch_failed(
        &self,
        from: &str,
        watch_list: bool,
        source: clientgo_listwatch::Error,
    ) -> Outcome {
        let cause = Cause::of(&source);
        self.report(if watch_list {
            Error::WatchList {
                resource: self.name().to_string(),
                source,
            }
        } else {
            Error::Watch {
                resource: self.name().to_string(),
                resource_version: from.to_string(),
                source,
            }
        });
        Outcome::Failed(cause)
    }

    /// Applies one stream's events until it ends (client-go's
    /// `handleWatch`): how it ended (any error reported) and how many
    /// events (bookmarks included) it carried; `None` when cancelled.
    async fn handle_watch(
        &mut self,
        live: &mut L::Watch,
        from: &str,
        cancel: &CancellationToken,
        resync: &mut ResyncTimer,
    ) -> Option<(Outcome, u64)> {
        // A watch from "" or "0" starts with synthetic ADDED events for
        // every existing object, in no resourceVersion order: they must not
        // move the last resourceVersion.
        let synthetic_adds = from.is_empty() || from == "0";
        let mut only_adds = true;
        let mut events = 0;
        let mut idle = IdleTimer::new();
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return None,
                () = resync.tick() => {
                    if let Err(source) = self.resync() {
                        self.report(Error::Store {
                            resource: self.name().to_string(),
                            operation: "resync",
                            source,
                        });
                        return Some((Outcome::StoreRefused, events));
                    }
                    continue;
                }
                // Re-read each time: the first bookmark may come on this
                // very watch.
                next = idle.next(live, self.stream_idle_timeout()) => next,
            };
            let event = match next {
                StreamNext::Event(event) => event,
                StreamNext::Ended => return Some((Outcome::Ended, events)),
                StreamNext::Idle => return Some((self.idle_watch(), events)),
                StreamNext::Failed(error) => {
                    let last = self.last_sync_resource_version();
                    return Some((self.watch_failed(&last, false, error), events));
                }
            };
            events += 1;
            if !matches!(event, WatchEvent::Added(_)) {
                only_adds = false;
            }
            if let Err(error) = self.apply(event, !(synthetic_adds && only_adds)) {
                let last = self.last_sync_resource_version();
                return Some((self.watch_failed(&last, false, *error), events));
            }
        }
    }

    /// Applies one event to the store, then moves the last resourceVersion
    /// to the event's when `advance`. A store refusal is reported and
    /// skipped (the resourceVersion still moves, as in client-go); an ERROR
    /// event is returned as the error it carries.
    fn apply(
        &mut self,
        event: WatchEvent<K>,
        advance: bool,
    ) -> Result<(), Box<clientgo_listwatch::Error>> {
        // The resourceVersion is read before the object is handed over, so
        // the store's prepare (and its transform) gets the only reference
        // and can change the object in place instead of copying it.
        let version_of =
            |object: &K| advance.then(|| object.resource_version().unwrap_or_default().to_owned());
        if let WatchEvent::Added(object)
        | WatchEvent::Modified(object)
        | WatchEvent::Deleted(object) = &event
            && self.is_other_type(object)
        {
            return Ok(());
        }
        let (operation, outcome, resource_version) = match event {
            WatchEvent::Added(object) => {
                let version = version_of(&object);
                (
                    "add",
                    self.store
                        .prepare(Arc::new(object), Arrival::Changed)
                        .and_then(|object| self.store.add(object)),
                    version,
                )
            }
            WatchEvent::Modified(object) => {
                let version = version_of(&object);
                (
                    "update",
                    self.store
                        .prepare(Arc::new(object), Arrival::Changed)
                        .and_then(|object| self.store.update(object)),
                    version,
                )
            }
            WatchEvent::Deleted(object) => {
                let version = version_of(&object);
                (
                    "delete",
                    self.store
                        .prepare(Arc::new(object), Arrival::Changed)
                        .and_then(|object| self.store.delete(object.into())),
                    version,
                )
            }
            WatchEvent::Bookmark(bookmark) => {
                Counters::bump(&self.status.counters().bookmarks);
                if !bookmark.is_initial_events_end() {
                    self.saw_periodic_bookmark();
                }
                if let Err(source) = self.store.bookmark(bookmark.resource_version()) {
                    self.report(Error::Store {
                        resource: self.name().to_string(),
                        operation: "bookmark",
                        source,
                    });
                }
                if advance {
                    self.status
                        .set_resource_version(bookmark.resource_version());
                }
                return Ok(());
            }
            WatchEvent::Error(status) => {
                return Err(Box::new(clientgo_listwatch::Error::WatchStatus {
                    url: self.name().to_string(),
                    status: Box::new(status),
                }));
            }
        };
        Counters::bump(&self.status.counters().events);
        if let Err(source) = outcome {
            self.report(Error::Store {
                resource: self.name().to_string(),
                operation,
                source,
            });
        }
        if let Some(resource_version) = resource_version {
            self.status.set_resource_version(&resource_version);
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
            Counters::bump(&self.status.counters().resyncs);
            self.store.resync()?;
        }
        Ok(())
    }
}
