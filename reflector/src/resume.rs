//! The reflector's resume phase (warm restart): instead of a first list,
//! watch from a saved state's resourceVersion, fold the replay into the
//! saved objects, and replace the store once with the result.
//!
//! Not in client-go, which always lists first. The API server's watch
//! semantics make it safe: a watch from resourceVersion R either sends
//! every change after R, in order, or answers 410 Gone (R was compacted
//! away); then the reflector lists as it would have anyway.

use std::collections::HashMap;
use std::sync::Arc;

use clientgo_apimachinery::{ListOptions, Object, WatchEvent};
use clientgo_listwatch::{IdleTimer, ListerWatcher, Next};
use clientgo_store::meta_namespace_key;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::recovery::{Cause, Outcome};
use crate::reflector::{Reflector, ReflectorMode};
use crate::stats::Counters;

/// A saved state to resume from: the objects a cache held and the
/// resourceVersion they reflect (as
/// `Indexer::list_with_resource_version` reads them).
///
/// The objects must be exactly the state at `resource_version` of the
/// same resource, namespace and selectors on the same server; a warm
/// restart checks that before it hands one over.
#[derive(Debug)]
pub struct ResumePoint<K> {
    /// The objects, as cached (transformed already).
    pub objects: Vec<Arc<K>>,
    /// The resourceVersion they reflect.
    pub resource_version: String,
}

impl<K> Clone for ResumePoint<K> {
    fn clone(&self) -> Self {
        ResumePoint {
            objects: self.objects.clone(),
            resource_version: self.resource_version.clone(),
        }
    }
}

/// How a resume ended.
pub(crate) enum ResumeEnd<S> {
    /// The store holds the saved state with the replay folded in; the
    /// stream goes on as the live watch.
    Synced(S),
    /// The resourceVersion is gone (410, or expired): sync as usual, with
    /// the saved state delivered first so that objects deleted meanwhile
    /// become tombstones.
    Expired,
    /// The watch could not be opened or broke (the server is down, say):
    /// back off and try to resume again.
    Retry,
    /// Cancelled.
    Stopped,
}

impl<K, L> Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Resumes from `point`: opens a watch at its resourceVersion (never a
    /// list or watch-list), applies the events the server replays to the
    /// saved objects until the stream is quiet for `resume_settle` or
    /// sends a bookmark, then replaces the store with the result once.
    /// The store's handlers therefore see what a fresh list would have
    /// given them: one add per object that exists now.
    pub(crate) async fn resume(
        &self,
        point: &ResumePoint<K>,
        cancel: &CancellationToken,
    ) -> ResumeEnd<L::Watch> {
        let from = point.resource_version.as_str();
        let options = ListOptions::default()
            .resource_version(from)
            .allow_watch_bookmarks(true)
            .timeout_seconds(self.watch_timeout_seconds());
        let mut live = match self.open(&options, cancel).await {
            None => return ResumeEnd::Stopped,
            Some(Ok(live)) => live,
            Some(Err(outcome)) => return ended(outcome),
        };
        let mut objects: HashMap<String, Arc<K>> = point
            .objects
            .iter()
            .map(|object| (meta_namespace_key(&**object), Arc::clone(object)))
            .collect();
        let mut resource_version = point.resource_version.clone();
        let mut replayed = 0_u64;
        let mut idle = IdleTimer::new();
        loop {
            let waited = tokio::select! {
                () = cancel.cancelled() => return ResumeEnd::Stopped,
                next = tokio::time::timeout(
                    self.options.resume_settle,
                    idle.next(&mut live, self.stream_idle_timeout()),
                ) => next,
            };
            let event = match waited {
                // Quiet: what the server had to replay has arrived.
                Err(_) | Ok(Next::Ended) => break,
                Ok(Next::Event(event)) => event,
                Ok(Next::Idle) => return ended(self.idle_watch()),
                Ok(Next::Failed(error)) => return ended(self.watch_failed(from, false, error)),
            };
            match event {
                WatchEvent::Added(object) | WatchEvent::Modified(object) => {
                    replayed += 1;
                    if let Some(version) = object.resource_version() {
                        resource_version = version.to_string();
                    }
                    objects.insert(meta_namespace_key(&object), Arc::new(object));
                }
                WatchEvent::Deleted(object) => {
                    replayed += 1;
                    if let Some(version) = object.resource_version() {
                        resource_version = version.to_string();
                    }
                    objects.remove(&meta_namespace_key(&object));
                }
                WatchEvent::Bookmark(bookmark) => {
                    // The server has sent everything up to the bookmark.
                    resource_version = bookmark.resource_version().to_string();
                    break;
                }
                WatchEvent::Error(status) => {
                    let error = clientgo_listwatch::Error::WatchStatus {
                        url: self.name.clone(),
                        status: Box::new(status),
                    };
                    return ended(self.watch_failed(from, false, error));
                }
            }
        }
        let count = objects.len();
        if let Err(source) = self
            .store
            .replace(objects.into_values().collect(), &resource_version)
        {
            self.report(Error::Store {
                resource: self.name.clone(),
                operation: "replace",
                source,
            });
            return ResumeEnd::Retry;
        }
        self.synced(&resource_version, ReflectorMode::Resumed);
        Counters::bump(&self.counters.resumes);
        tracing::info!(
            from,
            %resource_version,
            objects = count,
            replayed,
            "resumed from a saved state without listing"
        );
        ResumeEnd::Synced(live)
    }
}

/// What an ended resume attempt leads to.
fn ended<S>(outcome: Outcome) -> ResumeEnd<S> {
    match outcome {
        // Compacted away; or a resourceVersion the server has not reached,
        // which a saved state can only have if the server's data went
        // back in time (a restore): list in both cases.
        Outcome::Failed(Cause::ExpiredOrGone | Cause::TooLargeResourceVersion) => {
            ResumeEnd::Expired
        }
        _ => ResumeEnd::Retry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(outcome: Outcome) -> &'static str {
        match ended::<()>(outcome) {
            ResumeEnd::Synced(()) => "synced",
            ResumeEnd::Expired => "expired",
            ResumeEnd::Retry => "retry",
            ResumeEnd::Stopped => "stopped",
        }
    }

    #[test]
    fn only_a_lost_resource_version_gives_up_the_resume() {
        let table = [
            (Outcome::Failed(Cause::ExpiredOrGone), "expired"),
            (Outcome::Failed(Cause::TooLargeResourceVersion), "expired"),
            (Outcome::Failed(Cause::ConnectionRefused), "retry"),
            (Outcome::Failed(Cause::ConnectionBroken), "retry"),
            (Outcome::Failed(Cause::InternalError), "retry"),
            (
                Outcome::Failed(Cause::TooManyRequests { retry_after: None }),
                "retry",
            ),
            (Outcome::Failed(Cause::BadFrame), "retry"),
            (Outcome::Failed(Cause::Other), "retry"),
            (Outcome::Idle, "retry"),
            (Outcome::Ended, "retry"),
            (Outcome::StoreRefused, "retry"),
        ];
        for (outcome, expected) in table {
            assert_eq!(kind(outcome), expected, "{outcome:?}");
        }
    }
}
