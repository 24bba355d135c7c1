//! Waiting for caches to sync: [`wait_for_cache_sync`] over any informers
//! or handler registrations, with a [`SyncError`] that says why each one
//! did not sync.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::Object;
use clientgo_reflector::Error as ReflectorError;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::informer::SharedIndexInformer;
use crate::registration::ResourceEventHandlerRegistration;

/// How often sync state is checked (client-go's `syncedPollPeriod`).
pub const SYNCED_POLL_PERIOD: Duration = Duration::from_millis(100);

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
}

impl<K> InformerSynced for SharedIndexInformer<K>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
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
}

impl<K> InformerSynced for ResourceEventHandlerRegistration<K>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
{
    fn sync_name(&self) -> String {
        format!("{} handler {}", self.informer().name(), self.name())
    }

    fn has_synced(&self) -> bool {
        ResourceEventHandlerRegistration::has_synced(self)
    }

    fn last_error(&self) -> Option<Arc<ReflectorError>> {
        self.informer().last_error()
    }

    fn is_stopped(&self) -> bool {
        self.is_removed() || self.informer().is_stopped()
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

/// Waits until every one of `informers` has synced, for at most
/// `timeout`. Fails early if one of them stops first. The error names
/// each unsynced informer with its last list or watch error.
pub async fn wait_for_cache_sync(
    timeout: Duration,
    informers: &[&dyn InformerSynced],
) -> Result<(), SyncError> {
    let never = CancellationToken::new();
    match tokio::time::timeout(timeout, wait_until_synced(&never, informers)).await {
        Ok(result) => result,
        Err(_) => Err(sync_error(SyncFailure::TimedOut(timeout), informers)),
    }
}

/// Waits until every one of `informers` has synced, or `cancel` fires,
/// or one stops first (client-go's `WaitForCacheSync`, polling every
/// 100 ms).
pub async fn wait_until_synced(
    cancel: &CancellationToken,
    informers: &[&dyn InformerSynced],
) -> Result<(), SyncError> {
    loop {
        if informers.iter().all(|informer| informer.has_synced()) {
            return Ok(());
        }
        if informers
            .iter()
            .any(|informer| !informer.has_synced() && informer.is_stopped())
        {
            return Err(sync_error(SyncFailure::Stopped, informers));
        }
        tokio::select! {
            () = cancel.cancelled() => return Err(sync_error(SyncFailure::Cancelled, informers)),
            () = tokio::time::sleep(SYNCED_POLL_PERIOD) => {}
        }
    }
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
