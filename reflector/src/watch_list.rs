//! The reflector's watch-list phase: stream the state as watch events
//! (`sendInitialEvents=true`) into a temporary map until the
//! initial-events-end bookmark, replace the store at once, and keep the
//! same stream as the live watch.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ListOptions, Object, ResourceVersionMatch, WatchEvent};
use clientgo_listwatch::{IdleTimer, ListerWatcher, Next};
use clientgo_store::meta_namespace_key;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::error::Error;
use crate::recovery::{Ended, Outcome, Phase, RetryState};
use crate::reflector::{Reflector, ReflectorMode, Step};
use crate::stats::Counters;

/// While waiting for the initial-events-end bookmark, a progress line is
/// logged this often.
const WAITING_FOR_BOOKMARK_LOG: Duration = Duration::from_secs(10);

/// How the watch-list phase ended.
pub(crate) enum WatchListEnd<S> {
    /// Synced: the stream goes on as the live watch.
    Synced(S),
    /// The server will not serve a watch-list: list and watch this round.
    FallBack,
    /// Cancelled, or the attempt ended otherwise.
    Stopped,
}

impl<K, L> Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Syncs with a watch-list request (client-go's `watchList`), asking
    /// again as the recovery table says until the initial-events-end
    /// bookmark arrives, the server refuses watch-list, or `cancel` fires.
    pub(crate) async fn watch_list(
        &self,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> WatchListEnd<L::Watch> {
        let mut retry = RetryState::new(Duration::ZERO);
        loop {
            if cancel.is_cancelled() {
                return WatchListEnd::Stopped;
            }
            let from = self.rewatch_resource_version();
            let started = self.options.clock.now();
            let (phase, outcome, events) = match self.watch_list_once(&from, cancel).await {
                Some(Ok(live)) => return WatchListEnd::Synced(live),
                Some(Err(ended)) => ended,
                None => return WatchListEnd::Stopped,
            };
            let ended = Ended {
                phase,
                outcome,
                lasted: self.options.clock.since(started),
                events,
                at_latest: from.is_empty(),
            };
            match self
                .follow(self.decide(ended, &mut retry), backoff, cancel)
                .await
            {
                Step::Again => {}
                Step::FallBack => {
                    Counters::bump(&self.counters.watch_list_fallbacks);
                    return WatchListEnd::FallBack;
                }
                Step::Relist | Step::Cancelled => return WatchListEnd::Stopped,
            }
        }
    }

    /// One watch-list request from `from`: the synced stream, or how it
    /// ended (reported: opening it or its stream, how, and after how many
    /// events); `None` when cancelled.
    async fn watch_list_once(
        &self,
        from: &str,
        cancel: &CancellationToken,
    ) -> Option<Result<L::Watch, (Phase, Outcome, u64)>> {
        let mut options = ListOptions::default()
            .resource_version_match(ResourceVersionMatch::NotOlderThan)
            .send_initial_events(true)
            .allow_watch_bookmarks(true)
            .timeout_seconds(self.watch_timeout_seconds());
        if !from.is_empty() {
            options = options.resource_version(from);
        }
        let mut live = match self.open(&options, cancel).await? {
            Ok(live) => live,
            Err(outcome) => return Some(Err((Phase::OpenWatchList, outcome, 0))),
        };
        let mut events = 0;
        let ended = |outcome, events| Some(Err((Phase::WatchList, outcome, events)));
        let started = self.options.clock.now();
        let mut objects: HashMap<String, Arc<K>> = HashMap::new();
        let mut idle = IdleTimer::new();
        let mut progress_log = tokio::time::interval_at(
            tokio::time::Instant::now() + WAITING_FOR_BOOKMARK_LOG,
            WAITING_FOR_BOOKMARK_LOG,
        );
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return None,
                _ = progress_log.tick() => {
                    tracing::info!(
                        objects = objects.len(),
                        waited = ?self.options.clock.since(started),
                        "still waiting for the watch-list's initial-events-end bookmark"
                    );
                    continue;
                }
                next = idle.next(&mut live, self.stream_idle_timeout()) => next,
            };
            let event = match next {
                Next::Event(event) => event,
                Next::Ended => {
                    tracing::info!(
                        objects = objects.len(),
                        "watch-list ended before its initial-events-end bookmark"
                    );
                    return ended(Outcome::Ended, events);
                }
                Next::Idle => return ended(self.idle_watch(), events),
                Next::Failed(error) => return ended(self.watch_failed(from, true, error), events),
            };
            events += 1;
            match event {
                WatchEvent::Added(object)
                | WatchEvent::Modified(object)
                | WatchEvent::Deleted(object)
                    if self.is_other_type(&object) => {}
                WatchEvent::Added(object) | WatchEvent::Modified(object) => {
                    // An object the cache holds at the same version is
                    // reused, as a list's are, so a watch-list relist does
                    // not hold a second copy of everything unchanged.
                    let Some(object) = self.transformed(self.reuse_known(object)) else {
                        return ended(Outcome::StoreRefused, events);
                    };
                    objects.insert(meta_namespace_key(&*object), object);
                }
                WatchEvent::Deleted(object) => {
                    objects.remove(&meta_namespace_key(&object));
                }
                WatchEvent::Bookmark(bookmark) if !bookmark.is_initial_events_end() => {
                    self.saw_periodic_bookmark();
                }
                WatchEvent::Bookmark(bookmark) => {
                    let resource_version = bookmark.resource_version().to_string();
                    let count = objects.len();
                    let items: Vec<Arc<K>> = objects.into_values().collect();
                    if let Err(source) = self.replace_store(items, &resource_version) {
                        self.report(Error::Store {
                            resource: self.name.clone(),
                            operation: "replace",
                            source,
                        });
                        return ended(Outcome::StoreRefused, events);
                    }
                    self.synced(&resource_version, ReflectorMode::WatchList);
                    Counters::bump(&self.counters.watch_lists);
                    tracing::debug!(
                        %resource_version,
                        objects = count,
                        elapsed = ?self.options.clock.since(started),
                        "watch-list synced; the stream continues as the watch"
                    );
                    return Some(Ok(live));
                }
                WatchEvent::Error(status) => {
                    let error = clientgo_listwatch::Error::WatchStatus {
                        url: self.name.clone(),
                        status: Box::new(status),
                    };
                    return ended(self.watch_failed(from, true, error), events);
                }
            }
        }
    }

    /// Applies the transform option to an object held during the initial
    /// events; `None` (reported) when it fails.
    fn transformed(&self, object: Arc<K>) -> Option<Arc<K>> {
        let Some(transform) = &self.options.transform else {
            return Some(object);
        };
        transform(object)
            .map_err(|source| {
                self.report(Error::Store {
                    resource: self.name.clone(),
                    operation: "transform",
                    source,
                });
            })
            .ok()
    }
}
