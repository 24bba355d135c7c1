//! [`InformerState`]: what an informer shows whatever its cache keeps:
//! its name and resource, its reflector's status, whether it has started,
//! synced or stopped, and the cache's resourceVersion.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clientgo_apimachinery::{ApiResource, GroupResource};
use clientgo_listwatch::ShardStatus;
use clientgo_reflector::{
    Error as ReflectorError, ReflectorStatus, ResourceVersionTracker, WaitError,
};
use tokio_util::sync::CancellationToken;

use crate::handler::sync_signal::{SyncChanges, SyncSignal};

/// The storage-independent state of one informer, complete when the
/// informer is made. Written by the informer's engine; read by its
/// handles from any task (atomics, a watch channel, and the reflector's
/// status, whose own rules apply).
pub(crate) struct InformerState {
    pub(crate) name: String,
    pub(crate) resource: Option<ApiResource>,
    /// What listers name in not-found errors, worked out once.
    pub(crate) group_resource: GroupResource,
    /// The reflector's status (it is made with the informer).
    pub(crate) reflector: ReflectorStatus,
    /// Who filters the shards, for a sharded informer.
    pub(crate) shard: Option<Arc<ShardStatus>>,
    /// Signalled when the informer syncs, its reflector reports an error,
    /// or it stops; handlers' listeners signal their own syncs.
    pub(crate) sync_signal: SyncSignal,
    /// Set once, after the pop that applied the initial list (so the
    /// reflector's status already shows that sync: see
    /// `Reflector::replace_store`).
    pub(crate) synced: AtomicBool,
    pub(crate) started: AtomicBool,
    pub(crate) stopped: CancellationToken,
    /// The cache's resourceVersion after each pop.
    pub(crate) resource_version: ResourceVersionTracker,
    /// The client whose discovery says whether the resource is served, for
    /// informers made from a client: a 404 then tells a resource that does
    /// not exist from one about to.
    pub(crate) discovery: Option<clientgo_rest::RestClient>,
}

impl InformerState {
    /// Whether the initial list has been applied to the cache and handed
    /// to the handlers' queues.
    pub(crate) fn has_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Records the sync and wakes sync waiters; once.
    pub(crate) fn mark_synced(&self) {
        if !self.synced.swap(true, Ordering::AcqRel) {
            self.sync_signal.notify();
        }
    }

    pub(crate) fn sync_changes(&self) -> SyncChanges {
        self.sync_signal.subscribe()
    }

    pub(crate) fn is_started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.is_cancelled()
    }

    /// Marks the informer stopped: waits fail, sync waiters wake.
    pub(crate) fn mark_stopped(&self) {
        self.stopped.cancel();
        self.resource_version.stop();
        self.sync_signal.notify();
    }

    pub(crate) fn last_sync_resource_version(&self) -> String {
        self.reflector.last_sync_resource_version()
    }

    pub(crate) async fn wait_for_resource_version(
        &self,
        resource_version: &str,
    ) -> Result<(), WaitError> {
        self.resource_version.wait_for(resource_version).await
    }

    pub(crate) fn last_error(&self) -> Option<Arc<ReflectorError>> {
        self.reflector.last_error()
    }

    /// Whether the server serves this informer's resource, by discovery:
    /// `None` when it cannot tell (an informer not made from a client, or
    /// discovery itself failed).
    pub(crate) async fn resource_served(&self) -> Option<bool> {
        let client = self.discovery.as_ref()?;
        let resource = self.resource.as_ref()?;
        match clientgo_rest::Discovery::new(client.clone())
            .discover_group_version(&resource.group_version())
            .await
        {
            Ok(resources) => Some(
                resources
                    .iter()
                    .any(|served| served.resource.plural() == resource.plural()),
            ),
            // The group version itself is not served.
            Err(error) if error.is_not_found() => Some(false),
            Err(_) => None,
        }
    }
}
