//! [`RetryWatcher`]: client-go's `tools/watch.RetryWatcher`, a watch that
//! survives its connection: it opens the watch again from the last
//! resourceVersion it delivered whenever the server closes it or it fails
//! with an error that may pass, and ends only when going on would lose
//! events.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use clientgo_apimachinery::{ListOptions, Object, Status, StatusReason, WatchEvent};
use futures_util::Stream;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use tokio::time::Instant;

use clientgo_listwatch::{Error, EventStream, ListerWatcher};

/// The least time between the starts of two watches (client-go's
/// `minRestartDelay`), so a server that closes every watch at once is not
/// asked again in a tight loop.
pub const MIN_RESTART_DELAY: Duration = Duration::from_secs(1);

/// A watch from a resourceVersion that resumes from the last one it
/// delivered, as a [`Stream`] of events (client-go's `RetryWatcher`).
///
/// - **Delivered:** ADDED, MODIFIED and DELETED events, in order, each
///   once. Bookmarks are asked for (`allowWatchBookmarks`) and move the
///   resume point, but are not delivered, as in client-go.
/// - **Resumed** (a new watch from the last resourceVersion, at least
///   [`MIN_RESTART_DELAY`] after the previous one started, and after a
///   Status's `retryAfterSeconds` when it gives one): when the server
///   closes the watch, when the watch cannot be opened for a reason that
///   may pass (a refused connection, a 500, a 429), on an ERROR event other
///   than 410, and on a frame that does not decode.
/// - **Ended**, with the error as the last item: 410 Gone or Expired (the
///   events since the resourceVersion are gone: list again), 401 or 403
///   when opening the watch, and an event whose object has no
///   resourceVersion. Then the stream yields `None`.
///
/// It starts nothing until polled; dropping it closes the watch. Unlike
/// client-go, a 410 answered to the watch request itself also ends it
/// (client-go retries that one forever; it cannot succeed).
pub struct RetryWatcher<K> {
    events: BoxStream<'static, Result<WatchEvent<K>, Error>>,
}

impl<K: Object + Send + 'static> RetryWatcher<K> {
    /// A watch of `lister_watcher` from `initial_resource_version`.
    ///
    /// An error for `""` and `"0"`, which client-go refuses too: a watch
    /// from them starts with a synthetic ADDED event per existing object
    /// instead of the changes after a point.
    #[allow(
        clippy::result_large_err,
        reason = "the lister-watcher's own error, which its callers handle already; returned once, before anything runs"
    )]
    pub fn new<L>(lister_watcher: L, initial_resource_version: &str) -> Result<Self, Error>
    where
        L: ListerWatcher<K> + 'static,
    {
        if initial_resource_version.is_empty() || initial_resource_version == "0" {
            return Err(Error::InvalidArgument(format!(
                "a retry watcher of {} from resourceVersion {initial_resource_version:?}: \
                 a watch from it replays existing objects instead of the changes after a point",
                lister_watcher.describe()
            )));
        }
        let state = Resuming {
            lister_watcher,
            resource_version: initial_resource_version.to_string(),
            watch: None,
            next_start: Instant::now(),
            ended: false,
        };
        let events = futures_util::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        });
        Ok(RetryWatcher {
            events: events.boxed(),
        })
    }
}

impl<K> Stream for RetryWatcher<K> {
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_next_unpin(cx)
    }
}

impl<K: Send> EventStream<K> for RetryWatcher<K> {}

impl<K> std::fmt::Debug for RetryWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryWatcher").finish_non_exhaustive()
    }
}

/// How a watch ended, or why it could not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The server closed the stream cleanly.
    Closed,
    /// Opening the watch failed with this status code (none: no answer,
    /// a refused connection, a timeout).
    NotOpened(Option<u16>),
    /// The stream carried an ERROR event with this code, or a frame that
    /// does not decode (none).
    Failed(Option<u16>),
}

/// What to do after an [`Ending`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Open the watch again from the last resourceVersion.
    Resume,
    /// Deliver the error and end.
    End,
}

/// The retry watcher's one decision (client-go's `doReceive` and its
/// handling of a failed `Watch` call, with a 410 to the call ending too).
fn decide(ending: Ending) -> Next {
    match ending {
        Ending::Closed => Next::Resume,
        Ending::NotOpened(Some(401 | 403 | 410)) | Ending::Failed(Some(410)) => Next::End,
        Ending::NotOpened(_) | Ending::Failed(_) => Next::Resume,
    }
}

/// The state between two items.
struct Resuming<K, L: ListerWatcher<K>> {
    lister_watcher: L,
    /// The last resourceVersion delivered or bookmarked.
    resource_version: String,
    watch: Option<L::Watch>,
    /// When the next watch may start.
    next_start: Instant,
    ended: bool,
}

impl<K: Object + Send + 'static, L: ListerWatcher<K>> Resuming<K, L> {
    async fn next(&mut self) -> Option<Result<WatchEvent<K>, Error>> {
        loop {
            if self.ended {
                return None;
            }
            let Some(watch) = self.watch.as_mut() else {
                if let Err(error) = self.open().await {
                    return Some(Err(error));
                }
                continue;
            };
            let (error, ending) = match watch.next().await {
                None => {
                    self.watch = None;
                    if decide(Ending::Closed) == Next::End {
                        self.ended = true;
                        return None;
                    }
                    tracing::debug!(resource_version = %self.resource_version, "watch closed; resuming");
                    continue;
                }
                Some(Ok(WatchEvent::Bookmark(bookmark))) => {
                    let version = bookmark.metadata.resource_version;
                    if version.is_empty() {
                        return Some(Err(self.end_without_resource_version()));
                    }
                    self.resource_version = version;
                    continue;
                }
                Some(Ok(WatchEvent::Error(status))) => {
                    let code = status.code;
                    let error = Error::WatchStatus {
                        url: self.lister_watcher.describe(),
                        status: Box::new(status),
                    };
                    (error, Ending::Failed(Some(code)))
                }
                Some(Ok(event)) => {
                    let version = match &event {
                        WatchEvent::Added(object)
                        | WatchEvent::Modified(object)
                        | WatchEvent::Deleted(object) => object.resource_version(),
                        WatchEvent::Bookmark(_) | WatchEvent::Error(_) => None,
                    };
                    match version {
                        Some(version) if !version.is_empty() => {
                            self.resource_version = version.to_string();
                            return Some(Ok(event));
                        }
                        _ => return Some(Err(self.end_without_resource_version())),
                    }
                }
                Some(Err(error)) => {
                    let code = error.status().map(|status| status.code);
                    (error, Ending::Failed(code))
                }
            };
            self.watch = None;
            if let Some(ended) = self.after(error, ending) {
                return Some(Err(ended));
            }
        }
    }

    /// Opens the watch from the last resourceVersion once its start time
    /// has come; an error only when the retry watcher ends.
    async fn open(&mut self) -> Result<(), Error> {
        tokio::time::sleep_until(self.next_start).await;
        let started = Instant::now();
        self.next_start = started + MIN_RESTART_DELAY;
        let options = ListOptions {
            resource_version: Some(self.resource_version.clone()),
            allow_watch_bookmarks: true,
            ..ListOptions::default()
        };
        match self.lister_watcher.watch(&options).await {
            Ok(watch) => {
                self.watch = Some(watch);
                Ok(())
            }
            Err(error) => {
                let code = error.status().map(|status| status.code);
                match self.after(error, Ending::NotOpened(code)) {
                    Some(ended) => Err(ended),
                    None => Ok(()),
                }
            }
        }
    }

    /// Applies [`decide`]: `Some(error)` when the watcher ends with it;
    /// `None` after scheduling the next start.
    fn after(&mut self, error: Error, ending: Ending) -> Option<Error> {
        match decide(ending) {
            Next::End => {
                tracing::debug!(%error, "the retry watcher ends");
                self.ended = true;
                Some(error)
            }
            Next::Resume => {
                let wait = retry_after(&error);
                tracing::debug!(%error, ?wait, resource_version = %self.resource_version, "resuming the watch");
                if let Some(later) = Instant::now().checked_add(wait) {
                    self.next_start = self.next_start.max(later);
                }
                None
            }
        }
    }

    fn end_without_resource_version(&mut self) -> Error {
        self.ended = true;
        self.watch = None;
        Error::WatchStatus {
            url: self.lister_watcher.describe(),
            status: Box::new(Status::failure(
                500,
                StatusReason::InternalError,
                "retry watcher: an event's object has no resourceVersion to resume from",
            )),
        }
    }
}

/// The wait a Status asks for (`details.retryAfterSeconds`), else none.
fn retry_after(error: &Error) -> Duration {
    error
        .status()
        .and_then(|status| status.details.as_ref())
        .map_or(Duration::ZERO, |details| {
            Duration::from_secs(u64::from(details.retry_after_seconds))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_ends_the_retry_watcher_and_what_resumes_it() {
        // (how the watch ended, what follows)
        let table = [
            (Ending::Closed, Next::Resume),
            (Ending::NotOpened(None), Next::Resume),
            (Ending::NotOpened(Some(500)), Next::Resume),
            (Ending::NotOpened(Some(429)), Next::Resume),
            (Ending::NotOpened(Some(401)), Next::End),
            (Ending::NotOpened(Some(403)), Next::End),
            (Ending::NotOpened(Some(410)), Next::End),
            (Ending::Failed(Some(410)), Next::End),
            (Ending::Failed(Some(500)), Next::Resume),
            (Ending::Failed(Some(504)), Next::Resume),
            (Ending::Failed(Some(403)), Next::Resume),
            (Ending::Failed(None), Next::Resume),
        ];
        for (ending, next) in table {
            assert_eq!(decide(ending), next, "{ending:?}");
        }
    }
}
