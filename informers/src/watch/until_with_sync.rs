//! [`until_with_sync`]: client-go's `watch.UntilWithSync`, a wait for a
//! condition on objects that an informer keeps, so it first sees the
//! current state (as ADDED events) and survives closed watches and 410s
//! by relisting, which [`until`](crate::watch::until) cannot.

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiObject, WatchEvent};
use clientgo_listwatch::ListerWatcher;

use crate::watch::until::{UntilError, until_without_retry};
use clientgo_store::ObjectOrTombstone;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cache::lister::Lister;
use crate::cache::storage::Storage;
use crate::handler::funcs::ResourceEventHandlerFuncs;
use crate::informer::options::SharedIndexInformerOptions;
use crate::informer::shared_index_informer::SharedIndexInformer;
use crate::informer::wait::{LastingErrors, SyncWaitOptions, wait_for_cache_sync};

/// Runs an informer over `lister_watcher` and waits until `condition`
/// returns `true` for one of its events, which it returns (client-go's
/// `UntilWithSync`).
///
/// The events are the informer's: an ADDED per object of the initial
/// list, then ADDED, MODIFIED (the new object) and DELETED (the last known
/// state, a relist's tombstone unwrapped) as the cache changes; a relist
/// after a 410 goes on, where [`until`](crate::watch::until) ends.
/// With a `precondition`, the cache is first synced and the precondition
/// called on its lister: `Ok(true)` returns `Ok(None)` at once, without
/// calling the condition (the state already holds); an error ends the
/// wait. `timeout` bounds the whole wait, the sync included
/// ([`UntilError::TimedOut`]).
///
/// The informer keeps decoded objects and stops before this returns, or
/// when the future is dropped.
pub async fn until_with_sync<K, L, E>(
    timeout: Duration,
    lister_watcher: L,
    precondition: Option<impl FnOnce(&Lister<K>) -> Result<bool, E>>,
    condition: impl FnMut(&WatchEvent<Arc<K>>) -> Result<bool, E>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError<E>>
where
    K: ApiObject,
    L: ListerWatcher<K> + Clone + 'static,
{
    let started = Instant::now();
    let informer = SharedIndexInformer::new(
        lister_watcher,
        SharedIndexInformerOptions::default()
            .name("until-with-sync")
            .storage(Storage::Decoded)
            // client-go's UntilWithSync hands out objects whole.
            .keep_managed_fields(true),
    );
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let (on_add, on_update, on_delete) = (sender.clone(), sender.clone(), sender);
    let handler = ResourceEventHandlerFuncs::<K>::new()
        .on_add(move |object, _| {
            let _ = on_add.send(WatchEvent::Added(Arc::clone(object)));
        })
        .on_update(move |_, new| {
            let _ = on_update.send(WatchEvent::Modified(Arc::clone(new)));
        })
        .on_delete(move |deleted| {
            let last = match deleted {
                ObjectOrTombstone::Object(object) => Some(Arc::clone(object)),
                ObjectOrTombstone::Tombstone(tombstone) => tombstone.object.clone(),
            };
            if let Some(object) = last {
                let _ = on_delete.send(WatchEvent::Deleted(object));
            }
        });
    if let Err(error) = informer.add_event_handler(handler) {
        // A fresh informer takes handlers; this is never expected.
        tracing::error!(%error, "until_with_sync could not register its handler");
        return Err(UntilError::Closed);
    }
    let stop = CancellationToken::new();
    let _stop_on_drop = stop.clone().drop_guard();
    let running = tokio::spawn({
        let informer = informer.clone();
        let stop = stop.clone();
        async move { informer.run(stop).await }
    });

    let result = async {
        if let Some(precondition) = precondition {
            let left = timeout.saturating_sub(started.elapsed());
            // As client-go, waits out errors that may not heal (a 403):
            // only the time given ends the wait.
            let waiting = SyncWaitOptions::default()
                .timeout(left)
                .lasting_errors(LastingErrors::KeepWaiting);
            if let Err(error) = wait_for_cache_sync(&[&informer], waiting).await {
                tracing::debug!(%error, "until_with_sync: the cache did not sync in time");
                return Err(UntilError::TimedOut);
            }
            if precondition(&informer.lister()).map_err(UntilError::Condition)? {
                return Ok(None);
            }
        }
        let events = futures_util::stream::poll_fn(|cx| {
            receiver
                .poll_recv(cx)
                .map(|event| event.map(Ok::<_, clientgo_listwatch::Error>))
        });
        let left = timeout.saturating_sub(started.elapsed());
        until_without_retry(left, events, condition).await.map(Some)
    }
    .await;
    stop.cancel();
    if let Err(error) = running.await {
        tracing::warn!(%error, "until_with_sync's informer task failed");
    }
    result
}
