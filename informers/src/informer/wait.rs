//! Waiting for caches to sync: [`wait_for_cache_sync`] over any informers
//! or handler registrations, with a [`SyncError`] that says why each one
//! did not sync.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::ApiObject;
use clientgo_reflector::Error as ReflectorError;
use tokio_util::sync::CancellationToken;

use crate::handler::sync_signal::SyncChanges;
use crate::informer::registration::ResourceEventHandlerRegistration;
use crate::informer::shared_index_informer::SharedIndexInformer;

/// How often the sync state of an [`InformerSynced`] without a change
/// signal is checked (client-go's `syncedPollPeriod`, which client-go uses
/// for every informer).
pub(crate) const SYNCED_POLL_PERIOD: Duration = Duration::from_millis(100);

/// Something that syncs: an informer, or a handler registration.
pub trait InformerSynced: Send + Sync {
    /// The name in errors.
    fn sync_name(&self) -> String;
    /// Whether it has synced.
    fn has_synced(&self) -> bool;
    /// The last list or watch error since the last sync, if any.
    fn last_error(&self) -> Option<Arc<ReflectorError>>;
    /// Whether it stopped (and so will never sync).
    fn is_stopped(&self) -> bool;
    /// Whether the server serves its resource, by discovery; `None` when
    /// that cannot be told (the default). Asked only while its last error
    /// is a 404.
    fn resource_served(&self) -> Pin<Box<dyn Future<Output = Option<bool>> + Send + '_>> {
        Box::pin(async { None })
    }
    /// A watcher signalled whenever the sync state may have changed, so a
    /// wait needs no polling; `None` (the default) makes waits poll it
    /// every 100 ms.
    fn sync_changes(&self) -> Option<SyncChanges> {
        None
    }
}

/// Whether an unsynced informer's last error may heal by itself while a
/// caller waits for the caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Healing {
    /// No error yet, or one that passes: a refused connection, a 5xx, a
    /// 410, a 429, a bad frame.
    MayHeal,
    /// 401 Unauthorized or 403 Forbidden: credentials and RBAC rules do not
    /// change by themselves within a wait.
    WillNotHeal,
    /// 404 Not Found: lasting when discovery says the resource is not
    /// served (a CRD not installed); one being installed heals.
    OnceServed,
}

/// The decision table behind giving up early: what an informer's last
/// error says about waiting longer.
pub(crate) fn healing(last_error: Option<&ReflectorError>) -> Healing {
    match last_error
        .and_then(ReflectorError::status)
        .map(|status| status.code)
    {
        Some(401 | 403) => Healing::WillNotHeal,
        Some(404) => Healing::OnceServed,
        _ => Healing::MayHeal,
    }
}

/// What waiting does when every unsynced informer's last error will not
/// heal by itself: a 401 or 403 (credentials and RBAC rules do not change
/// within a wait), or a 404 while discovery says the resource is not
/// served (a CRD not installed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastingErrors {
    /// Return [`SyncFailure::LastingErrors`] at once (the default; client-go
    /// waits out the whole timeout, or forever).
    #[default]
    GiveUp,
    /// Keep waiting until the timeout or cancellation (someone may fix the
    /// RBAC rule or install the CRD meanwhile).
    KeepWaiting,
}

impl<K> InformerSynced for SharedIndexInformer<K>
where
    K: ApiObject,
{
    fn sync_name(&self) -> String {
        self.name().to_string()
    }

    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn last_error(&self) -> Option<Arc<ReflectorError>> {
        SharedIndexInformer::last_error(self)
    }

    fn is_stopped(&self) -> bool {
        SharedIndexInformer::is_stopped(self)
    }

    fn resource_served(&self) -> Pin<Box<dyn Future<Output = Option<bool>> + Send + '_>> {
        Box::pin(SharedIndexInformer::resource_served(self))
    }

    fn sync_changes(&self) -> Option<SyncChanges> {
        Some(SharedIndexInformer::sync_changes(self))
    }
}

impl<K> InformerSynced for ResourceEventHandlerRegistration<K>
where
    K: ApiObject,
{
    fn sync_name(&self) -> String {
        format!("{} handler {}", self.informer_name(), self.name())
    }

    fn has_synced(&self) -> bool {
        ResourceEventHandlerRegistration::has_synced(self)
    }

    fn last_error(&self) -> Option<Arc<ReflectorError>> {
        self.informer()
            .and_then(|informer| SharedIndexInformer::last_error(&informer))
    }

    fn is_stopped(&self) -> bool {
        self.is_removed()
            || self
                .informer()
                .is_none_or(|informer| SharedIndexInformer::is_stopped(&informer))
    }

    fn resource_served(&self) -> Pin<Box<dyn Future<Output = Option<bool>> + Send + '_>> {
        Box::pin(async move {
            match self.informer() {
                Some(informer) => SharedIndexInformer::resource_served(&informer).await,
                None => None,
            }
        })
    }

    fn sync_changes(&self) -> Option<SyncChanges> {
        // A dropped informer never changes again: the stop was signalled.
        self.informer()
            .map(|informer| SharedIndexInformer::sync_changes(&informer))
    }
}

/// Why waiting ended without every cache synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncFailure {
    /// The timeout passed.
    TimedOut(Duration),
    /// The cancellation token fired.
    Cancelled,
    /// An informer (or handler) stopped before syncing.
    Stopped,
    /// Every unsynced informer's last error will not heal by itself (a 401
    /// or 403, or a 404 for a resource discovery says is not served); see
    /// [`LastingErrors`].
    LastingErrors,
}

/// One informer that did not sync, and its last error.
#[derive(Debug, Clone)]
pub struct UnsyncedInformer {
    /// The informer's (or handler's) name.
    pub name: String,
    /// The last list or watch error, if any: a 403 from RBAC, a 404 for a
    /// resource the server does not serve (a CRD not installed), a refused
    /// connection.
    pub last_error: Option<Arc<ReflectorError>>,
    /// Whether it had stopped.
    pub stopped: bool,
}

/// Caches that did not sync, each with its last error, instead of a bare
/// timeout.
#[derive(Debug, Clone)]
pub struct SyncError {
    /// Why waiting ended.
    pub failure: SyncFailure,
    /// The informers not synced, in the order given.
    pub unsynced: Vec<UnsyncedInformer>,
}

impl SyncError {
    /// The HTTP status of the first unsynced informer's last error that
    /// carries one (403, 404, ...).
    pub fn first_status_code(&self) -> Option<u16> {
        self.unsynced.iter().find_map(|informer| {
            informer
                .last_error
                .as_ref()
                .and_then(|error| error.status())
                .map(|status| status.code)
        })
    }
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.failure {
            SyncFailure::TimedOut(after) => write!(f, "caches not synced after {after:?}")?,
            SyncFailure::Cancelled => f.write_str("cancelled before the caches synced")?,
            SyncFailure::Stopped => f.write_str("an informer stopped before its cache synced")?,
            SyncFailure::LastingErrors => f.write_str(
                "caches cannot sync: every unsynced informer failed with an error that will not heal by itself",
            )?,
        }
        for (position, informer) in self.unsynced.iter().enumerate() {
            f.write_str(if position == 0 { ": " } else { "; " })?;
            write!(f, "{}", informer.name)?;
            if informer.stopped {
                f.write_str(" (stopped)")?;
            }
            match &informer.last_error {
                Some(error) => write!(f, ": {error}")?,
                None => f.write_str(": no error reported yet")?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for SyncError {}

/// How [`wait_for_cache_sync`] waits. The default waits with no time
/// limit, until every cache syncs, one stops, or every unsynced one's last
/// error will not heal by itself.
#[derive(Debug, Clone, Default)]
pub struct SyncWaitOptions {
    /// Give up after this long ([`SyncFailure::TimedOut`]).
    pub timeout: Option<Duration>,
    /// Give up when this fires ([`SyncFailure::Cancelled`]), as client-go's
    /// stop channel.
    pub cancel: Option<CancellationToken>,
    /// What lasting errors (a 403 from RBAC, a 401, a 404 for a resource
    /// the server does not serve) do: give up at once by default.
    pub lasting_errors: LastingErrors,
}

impl SyncWaitOptions {
    /// Gives up after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Gives up when `cancel` fires.
    #[must_use]
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Chooses what lasting errors do.
    #[must_use]
    pub fn lasting_errors(mut self, lasting_errors: LastingErrors) -> Self {
        self.lasting_errors = lasting_errors;
        self
    }
}

/// Waits until every one of `informers` (informers, handler
/// registrations) has synced (client-go's `WaitForCacheSync`). Fails when
/// one stops first, when the options' timeout passes or their token
/// fires, and, unless told to keep waiting, when every unsynced one's last
/// error will not heal by itself (client-go waits through those). The
/// error names each unsynced informer with its last list or watch error.
///
/// Unlike client-go, which polls every 100 ms, it wakes when an informer
/// signals a change ([`InformerSynced::sync_changes`]), so it returns as
/// soon as the last cache syncs.
pub async fn wait_for_cache_sync(
    informers: &[&dyn InformerSynced],
    options: SyncWaitOptions,
) -> Result<(), SyncError> {
    let waiting = wait_until_synced(options.cancel.as_ref(), informers, options.lasting_errors);
    match options.timeout {
        None => waiting.await,
        Some(timeout) => match tokio::time::timeout(timeout, waiting).await {
            Ok(result) => result,
            Err(_) => Err(sync_error(SyncFailure::TimedOut(timeout), informers)),
        },
    }
}

async fn wait_until_synced(
    cancel: Option<&CancellationToken>,
    informers: &[&dyn InformerSynced],
    lasting: LastingErrors,
) -> Result<(), SyncError> {
    let never = CancellationToken::new();
    let cancel = cancel.unwrap_or(&never);
    loop {
        // Watch before looking, so no change between the two is missed.
        let mut changes: Vec<Option<SyncChanges>> = informers
            .iter()
            .map(|informer| informer.sync_changes())
            .collect();
        if informers.iter().all(|informer| informer.has_synced()) {
            return Ok(());
        }
        if informers
            .iter()
            .any(|informer| !informer.has_synced() && informer.is_stopped())
        {
            return Err(sync_error(SyncFailure::Stopped, informers));
        }
        if lasting == LastingErrors::GiveUp && all_errors_lasting(informers).await {
            return Err(sync_error(SyncFailure::LastingErrors, informers));
        }
        tokio::select! {
            () = cancel.cancelled() => return Err(sync_error(SyncFailure::Cancelled, informers)),
            () = any_change(&mut changes) => {}
        }
    }
}

/// Completes at the first signal of any watcher; after
/// [`SYNCED_POLL_PERIOD`] when one of them has no signal.
async fn any_change(changes: &mut [Option<SyncChanges>]) {
    let mut signalled = Vec::with_capacity(changes.len());
    let mut polled = false;
    for watcher in changes.iter_mut() {
        match watcher {
            Some(watcher) => signalled.push(Box::pin(watcher.changed())),
            None => polled = true,
        }
    }
    let poll = async {
        if polled {
            tokio::time::sleep(SYNCED_POLL_PERIOD).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    if signalled.is_empty() {
        return poll.await;
    }
    tokio::select! {
        _ = futures_util::future::select_all(signalled) => {}
        () = poll => {}
    }
}

/// Whether every unsynced informer failed with an error that will not heal
/// by itself. Discovery is asked only for 404s, and only when every other
/// unsynced informer's error is lasting. False when none is unsynced any
/// more: the last one may sync between the caller's check and this one,
/// and "every one of none" must not read as a lasting failure.
async fn all_errors_lasting(informers: &[&dyn InformerSynced]) -> bool {
    let mut not_found = Vec::new();
    let mut unsynced = 0;
    for informer in informers.iter().filter(|informer| !informer.has_synced()) {
        unsynced += 1;
        match healing(informer.last_error().as_deref()) {
            Healing::MayHeal => return false,
            Healing::WillNotHeal => {}
            Healing::OnceServed => not_found.push(*informer),
        }
    }
    if unsynced == 0 {
        return false;
    }
    for informer in not_found {
        if informer.resource_served().await != Some(false) {
            return false;
        }
    }
    true
}

fn sync_error(failure: SyncFailure, informers: &[&dyn InformerSynced]) -> SyncError {
    SyncError {
        failure,
        unsynced: informers
            .iter()
            .filter(|informer| !informer.has_synced())
            .map(|informer| UnsyncedInformer {
                name: informer.sync_name(),
                last_error: informer.last_error(),
                stopped: informer.is_stopped(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_apimachinery::Status;

    fn error_with(status: Status) -> ReflectorError {
        ReflectorError::List {
            resource: "pods".to_string(),
            resource_version: "0".to_string(),
            source: clientgo_listwatch::Error::Rest(clientgo_rest::Error::Api(Box::new(status))),
        }
    }

    /// Syncs after its `has_synced` has been asked `unsynced_for` times:
    /// the race where the last informer syncs between the wait's checks.
    struct SyncsAfter {
        asked: std::sync::atomic::AtomicUsize,
        unsynced_for: usize,
    }

    impl InformerSynced for SyncsAfter {
        fn sync_name(&self) -> String {
            "late".to_string()
        }
        fn has_synced(&self) -> bool {
            let asked = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            asked >= self.unsynced_for
        }
        fn last_error(&self) -> Option<Arc<ReflectorError>> {
            None
        }
        fn is_stopped(&self) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn an_informer_syncing_between_the_checks_is_synced_not_a_lasting_failure() {
        // Asked twice unsynced (the "all synced?" and "any stopped?"
        // checks), synced from the third ask on: the lasting-errors check
        // sees no unsynced informer.
        let late = SyncsAfter {
            asked: Default::default(),
            unsynced_for: 2,
        };
        let result = wait_for_cache_sync(
            &[&late],
            SyncWaitOptions::default().timeout(Duration::from_secs(5)),
        )
        .await;
        assert!(result.is_ok(), "{:?}", result.err().map(|e| e.to_string()));
    }

    #[test]
    fn which_errors_heal() {
        use clientgo_apimachinery::GroupResource;
        let pods = GroupResource::new("", "pods");
        let table = [
            (None, Healing::MayHeal),
            (Some(Status::unauthorized("no")), Healing::WillNotHeal),
            (
                Some(Status::forbidden(&pods, "", "no")),
                Healing::WillNotHeal,
            ),
            (Some(Status::not_found(&pods, "")), Healing::OnceServed),
            (Some(Status::expired("old")), Healing::MayHeal),
            (
                Some(Status::too_many_requests("later", 1)),
                Healing::MayHeal,
            ),
            (Some(Status::internal_error("oops")), Healing::MayHeal),
            (Some(Status::service_unavailable("down")), Healing::MayHeal),
        ];
        for (status, expected) in table {
            let error = status.clone().map(error_with);
            assert_eq!(healing(error.as_ref()), expected, "{status:?}");
        }
    }
}
