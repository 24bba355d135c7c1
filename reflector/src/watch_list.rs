//! The reflector's watch-list phase: stream the state as watch events
//! (`sendInitialEvents=true`) into a temporary map until the
//! initial-events-end bookmark, replace the store at once, and keep the
//! same stream as the live watch.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ListOptions, Object, ResourceVersionMatch, WatchEvent};
use clientgo_listwatch::{ListerWatcher, WatchStream};
use clientgo_store::meta_namespace_key;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::error::Error;
use crate::reflector::{Reflector, ReflectorMode};
use crate::stats::Counters;
use crate::watch::{Opened, retry_after};

/// While waiting for the initial-events-end bookmark, a progress line is
/// logged this often.
const WAITING_FOR_BOOKMARK_LOG: Duration = Duration::from_secs(10);

/// How one watch-list attempt ended, when it did not sync.
enum Attempt {
    /// Try again (after a backoff when `back_off`).
    Retry {
        back_off: bool,
        at_least: Option<Duration>,
    },
    /// Give up on watch-list for this round: fall back to a list.
    FallBack(Box<clientgo_listwatch::Error>),
    Cancelled,
}

impl<K, L> Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Syncs with a watch-list request (client-go's `watchList`). Returns
    /// the open stream to continue as the live watch, `None` when
    /// cancelled, or the error that makes the caller fall back to a list.
    ///
    /// Retries: a 429 or refused connection backs off and asks again; a
    /// 410 or too-large resourceVersion asks again at once at "" (a
    /// consistent read); a stream that ends before the bookmark asks
    /// again (after a backoff if it lasted under a second); bad frames
    /// and broken connections back off and ask again. Anything else (the
    /// server refusing `sendInitialEvents` with 422, a 403) falls back.
    pub(crate) async fn watch_list(
        &self,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> Result<Option<WatchStream<K>>, Error> {
        loop {
            if cancel.is_cancelled() {
                return Ok(None);
            }
            let attempt = match self.watch_list_once(cancel).await {
                Ok(live) => return Ok(Some(live)),
                Err(attempt) => attempt,
            };
            match attempt {
                Attempt::Cancelled => return Ok(None),
                Attempt::FallBack(source) => {
                    return Err(Error::WatchList {
                        resource: self.name.clone(),
                        source: *source,
                    });
                }
                Attempt::Retry { back_off, at_least } => {
                    if back_off && !self.back_off(backoff, cancel, at_least).await {
                        return Ok(None);
                    }
                }
            }
        }
    }

    async fn watch_list_once(&self, cancel: &CancellationToken) -> Result<WatchStream<K>, Attempt> {
        let from = self.rewatch_resource_version();
        let mut options = ListOptions::default()
            .resource_version_match(ResourceVersionMatch::NotOlderThan)
            .send_initial_events(true)
            .allow_watch_bookmarks(true)
            .timeout_seconds(self.watch_timeout_seconds());
        if !from.is_empty() {
            options = options.resource_version(from.clone());
        }
        let mut live = match self.open(&options, cancel).await {
            Opened::Stream(live) => *live,
            Opened::Cancelled => return Err(Attempt::Cancelled),
            Opened::Idle => {
                self.idle_watch();
                return Err(Attempt::Retry {
                    back_off: false,
                    at_least: None,
                });
            }
            Opened::Failed(source) => return Err(self.classify(source)),
        };
        let started = self.options.clock.now();
        let idle = self.options.effective_idle_timeout();
        let poll = idle.min(WAITING_FOR_BOOKMARK_LOG);
        let mut objects: HashMap<String, Arc<K>> = HashMap::new();
        let mut bytes_seen = live.bytes_received();
        let mut last_progress = tokio::time::Instant::now();
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return Err(Attempt::Cancelled),
                next = tokio::time::timeout(poll, live.next()) => next,
            };
            let next = match next {
                Ok(next) => next,
                Err(_) => {
                    if live.bytes_received() != bytes_seen {
                        bytes_seen = live.bytes_received();
                        last_progress = tokio::time::Instant::now();
                    } else if self
                        .stream_idle_timeout()
                        .is_some_and(|idle| last_progress.elapsed() >= idle)
                    {
                        self.idle_watch();
                        return Err(Attempt::Retry {
                            back_off: false,
                            at_least: None,
                        });
                    }
                    tracing::info!(
                        objects = objects.len(),
                        waited = ?self.options.clock.since(started),
                        "still waiting for the watch-list's initial-events-end bookmark"
                    );
                    continue;
                }
            };
            bytes_seen = live.bytes_received();
            last_progress = tokio::time::Instant::now();
            match next {
                None => {
                    let lasted = self.options.clock.since(started);
                    tracing::info!(
                        ?lasted,
                        objects = objects.len(),
                        "watch-list ended before its initial-events-end bookmark; asking again"
                    );
                    return Err(Attempt::Retry {
                        back_off: lasted < Duration::from_secs(1),
                        at_least: None,
                    });
                }
                Some(Err(source)) => return Err(self.classify(source)),
                Some(Ok(WatchEvent::Added(object))) | Some(Ok(WatchEvent::Modified(object))) => {
                    // An object the cache holds at the same version is
                    // reused, as a list's are, so a watch-list relist does
                    // not hold a second copy of everything unchanged.
                    let object = self.transformed(self.reuse_known(object))?;
                    objects.insert(meta_namespace_key(&*object), object);
                }
                Some(Ok(WatchEvent::Deleted(object))) => {
                    objects.remove(&meta_namespace_key(&object));
                }
                Some(Ok(WatchEvent::Bookmark(bookmark))) => {
                    if !bookmark.is_initial_events_end() {
                        self.saw_periodic_bookmark();
                        continue;
                    }
                    let resource_version = bookmark.resource_version().to_string();
                    let count = objects.len();
                    let items: Vec<Arc<K>> = objects.into_values().collect();
                    if let Err(source) = self.store.replace(items, &resource_version) {
                        let error = Error::Store {
                            resource: self.name.clone(),
                            operation: "replace",
                            source,
                        };
                        self.report(error);
                        return Err(Attempt::Retry {
                            back_off: true,
                            at_least: None,
                        });
                    }
                    self.resource_version.set(&resource_version);
                    self.set_resource_version_unavailable(false);
                    Counters::bump(&self.counters.watch_lists);
                    self.clear_last_error();
                    self.set_mode(ReflectorMode::WatchList);
                    tracing::debug!(
                        %resource_version,
                        objects = count,
                        elapsed = ?self.options.clock.since(started),
                        "watch-list synced; the stream continues as the watch"
                    );
                    return Ok(live);
                }
                Some(Ok(WatchEvent::Error(status))) => {
                    return Err(self.classify(clientgo_listwatch::Error::WatchStatus {
                        url: self.name.clone(),
                        status: Box::new(status),
                    }));
                }
            }
        }
    }

    /// Applies the transform option to an object held during the initial
    /// events.
    fn transformed(&self, object: Arc<K>) -> Result<Arc<K>, Attempt> {
        let Some(transform) = &self.options.transform else {
            return Ok(object);
        };
        transform(object).map_err(|source| {
            self.report(Error::Store {
                resource: self.name.clone(),
                operation: "transform",
                source,
            });
            Attempt::Retry {
                back_off: true,
                at_least: None,
            }
        })
    }

    /// What a watch-list error leads to.
    fn classify(&self, source: clientgo_listwatch::Error) -> Attempt {
        if source.is_too_many_requests() || source.is_connection_refused() {
            let at_least = retry_after(&source);
            self.report_watch_list(source);
            return Attempt::Retry {
                back_off: true,
                at_least,
            };
        }
        if source.is_expired_or_gone() || source.is_too_large_resource_version() {
            tracing::info!(
                error = %source,
                "watch-list resourceVersion unavailable; asking again at the latest state (\"\")"
            );
            self.set_resource_version_unavailable(true);
            self.report_watch_list(source);
            return Attempt::Retry {
                back_off: false,
                at_least: None,
            };
        }
        if source.frame_error().is_some() {
            self.report_watch_list(source);
            return Attempt::Retry {
                back_off: true,
                at_least: None,
            };
        }
        if source.is_connection_error() {
            // No answer at all (a connection broke): not a refusal.
            self.report_watch_list(source);
            return Attempt::Retry {
                back_off: true,
                at_least: None,
            };
        }
        Attempt::FallBack(Box::new(source))
    }

    fn report_watch_list(&self, source: clientgo_listwatch::Error) {
        self.report(Error::WatchList {
            resource: self.name.clone(),
            source,
        });
    }
}
