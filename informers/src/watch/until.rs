//! client-go's `tools/watch` waits: [`until_without_retry`] reads a watch
//! until a condition holds, [`until`] does it over a [`RetryWatcher`], so a
//! closed connection does not end the wait. (`until_with_sync`, which
//! needs an informer, is in clientgo-informers.)

use std::time::Duration;

use clientgo_apimachinery::{Object, WatchEvent};
use futures_util::Stream;
use futures_util::StreamExt;
use tokio::time::Instant;

use clientgo_listwatch::{Error, ListerWatcher};

use crate::watch::retry_watcher::RetryWatcher;

/// Why a wait for a condition ended without it holding.
#[derive(Debug, thiserror::Error)]
pub enum UntilError<E> {
    /// The time given ran out (client-go's `wait.ErrWaitTimeout`).
    #[error("timed out waiting for the condition")]
    TimedOut,
    /// The watch ended before the condition held (client-go's
    /// `ErrWatchClosed`).
    #[error("the watch closed before the condition held")]
    Closed,
    /// The stream yielded an error (an [`EventStream`](clientgo_listwatch::EventStream)
    /// yields an ERROR event as one), or the watch could not be made.
    #[error(transparent)]
    Watch(Error),
    /// The condition returned an error.
    #[error("the condition failed: {0}")]
    Condition(#[source] E),
}

/// Reads `events` until `condition` returns `true` for one, and returns
/// that event (client-go's `UntilWithoutRetry`). The condition sees each
/// event the stream yields, in order (an ERROR event yielded as an event
/// too, as in client-go); its error ends the wait. Fails when `timeout`
/// passes, the stream ends or yields an error.
///
/// client-go takes several conditions met one after another; one closure
/// keeping its own step does the same here.
pub async fn until_without_retry<K, S, E>(
    timeout: Duration,
    mut events: S,
    mut condition: impl FnMut(&WatchEvent<K>) -> Result<bool, E>,
) -> Result<WatchEvent<K>, UntilError<E>>
where
    S: Stream<Item = Result<WatchEvent<K>, Error>> + Unpin,
{
    // A timeout too large for the clock waits without limit.
    let deadline = Instant::now().checked_add(timeout);
    loop {
        let next = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, events.next())
                .await
                .map_err(|_| UntilError::TimedOut)?,
            None => events.next().await,
        };
        match next {
            None => return Err(UntilError::Closed),
            Some(Err(error)) => return Err(UntilError::Watch(error)),
            Some(Ok(event)) => {
                if condition(&event).map_err(UntilError::Condition)? {
                    return Ok(event);
                }
            }
        }
    }
}

/// Watches `lister_watcher` from `initial_resource_version` through a
/// [`RetryWatcher`] until `condition` returns `true` for an event, and
/// returns it (client-go's `watch.Until`). A closed or failed watch is
/// resumed from the last resourceVersion; a 410 ends the wait
/// ([`UntilError::Watch`]), as the events since are gone. `""` and `"0"`
/// are refused, as by the retry watcher.
pub async fn until<K, L, E>(
    timeout: Duration,
    initial_resource_version: &str,
    lister_watcher: L,
    condition: impl FnMut(&WatchEvent<K>) -> Result<bool, E>,
) -> Result<WatchEvent<K>, UntilError<E>>
where
    K: Object + Send + 'static,
    L: ListerWatcher<K> + 'static,
{
    let watcher =
        RetryWatcher::new(lister_watcher, initial_resource_version).map_err(UntilError::Watch)?;
    until_without_retry(timeout, watcher, condition).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::result_large_err)]

    use super::*;
    use clientgo_apimachinery::{Bookmark, DynamicObject};

    fn added(name: &str) -> Result<WatchEvent<DynamicObject>, Error> {
        let mut object = DynamicObject::default();
        object.metadata.name = Some(name.to_string());
        Ok(WatchEvent::Added(object))
    }

    fn named(event: &WatchEvent<DynamicObject>, name: &str) -> bool {
        matches!(event, WatchEvent::Added(object) if object.metadata.name.as_deref() == Some(name))
    }

    #[tokio::test]
    async fn the_event_that_meets_the_condition_is_returned() {
        let events = futures_util::stream::iter(vec![
            added("a"),
            Ok(WatchEvent::Bookmark(Bookmark::new("5"))),
            added("b"),
            added("c"),
        ]);
        let mut seen = 0;
        let found = until_without_retry(Duration::from_secs(1), events, |event| {
            seen += 1;
            Ok::<_, std::convert::Infallible>(named(event, "b"))
        })
        .await
        .unwrap();
        assert!(named(&found, "b"));
        assert_eq!(seen, 3, "the bookmark is seen too");
    }

    #[tokio::test]
    async fn a_wait_ends_on_a_closed_stream_a_condition_error_or_the_timeout() {
        let closed = until_without_retry(
            Duration::from_secs(1),
            futures_util::stream::iter(vec![added("a")]),
            |_| Ok::<_, std::convert::Infallible>(false),
        )
        .await;
        assert!(matches!(closed, Err(UntilError::Closed)));

        let failed = until_without_retry(
            Duration::from_secs(1),
            futures_util::stream::iter(vec![added("a")]),
            |_| Err("no"),
        )
        .await;
        assert!(matches!(failed, Err(UntilError::Condition("no"))));

        let pending = futures_util::stream::pending::<Result<WatchEvent<DynamicObject>, Error>>();
        let timed_out = until_without_retry(Duration::from_millis(50), pending, |_| {
            Ok::<_, std::convert::Infallible>(true)
        })
        .await;
        assert!(matches!(timed_out, Err(UntilError::TimedOut)));
    }
}
