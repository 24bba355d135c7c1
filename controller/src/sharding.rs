//! Sharded managers: replicas split a controller's keys through the
//! project's [`ShardElector`](clientgo_leaderelection::ShardElector)
//! (one Lease per shard), each reconciling only the keys of the shards it
//! holds.
//!
//! Every replica caches every object (the informers are the manager's
//! shared ones); a worker that takes a key reads its metadata (no decode)
//! and skips it when its shard is held elsewhere. When a replica takes a
//! shard it enqueues every cached key, so the shard's objects are
//! reconciled by their new owner; when it gives one up, the shard's lease
//! is released only after its reconciles in flight ended, so no key is
//! reconciled by two replicas at once.

use std::collections::BTreeMap;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_apimachinery::ShardSelector;
use clientgo_leaderelection::ShardElectorOptions;
use parking_lot::Mutex;
use tokio::sync::Notify;

/// How a manager's replicas split the keys (see the module
/// documentation).
#[derive(Debug, Clone)]
pub struct Sharding {
    pub(crate) identity: String,
    pub(crate) options: ShardElectorOptions,
}

impl Sharding {
    /// This replica as `identity` (unique per replica: a pod name), with
    /// the shards' count, field and leases as `options` say.
    pub fn new(identity: impl Into<String>, options: ShardElectorOptions) -> Self {
        Sharding {
            identity: identity.into(),
            options,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    held: BTreeMap<u32, ShardSelector>,
    in_flight: BTreeMap<u32, usize>,
}

/// The shards this replica holds now, and the reconciles running in each.
#[derive(Debug, Default)]
pub(crate) struct HeldShards {
    state: Mutex<State>,
    idle: Notify,
}

impl HeldShards {
    /// This replica now holds shard `index`.
    pub(crate) fn hold(&self, index: u32, selector: ShardSelector) {
        self.state.lock().held.insert(index, selector);
    }

    /// Gives shard `index` up: no new reconcile enters it; returns once
    /// those running ended.
    pub(crate) async fn release(&self, index: u32) {
        self.state.lock().held.remove(&index);
        loop {
            // Registered before the check, so a guard dropped in between
            // still wakes this wait.
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self
                .state
                .lock()
                .in_flight
                .get(&index)
                .copied()
                .unwrap_or(0)
                == 0
            {
                return;
            }
            idle.await;
        }
    }

    /// Whether `meta`'s object is in a shard held here.
    pub(crate) fn holds(&self, meta: &dyn Object) -> bool {
        shard_of(&self.state.lock(), meta).is_some()
    }

    /// The shards held now, in order.
    pub(crate) fn held(&self) -> Vec<u32> {
        self.state.lock().held.keys().copied().collect()
    }

    /// The shard held here that `meta`'s object belongs to, counted as
    /// running a reconcile until the guard is dropped; `None` when the
    /// object's shard is held elsewhere.
    pub(crate) fn enter(self: &Arc<Self>, meta: &dyn Object) -> Option<ShardGuard> {
        let mut state = self.state.lock();
        let index = shard_of(&state, meta)?;
        *state.in_flight.entry(index).or_default() += 1;
        Some(ShardGuard {
            shards: Arc::clone(self),
            index,
        })
    }
}

/// The shard held in `state` that `meta`'s object belongs to.
fn shard_of(state: &State, meta: &dyn Object) -> Option<u32> {
    state.held.iter().find_map(|(index, selector)| {
        selector
            .matches(meta.uid(), meta.namespace())
            .then_some(*index)
    })
}

/// A reconcile running in a held shard.
pub(crate) struct ShardGuard {
    shards: Arc<HeldShards>,
    index: u32,
}

impl Drop for ShardGuard {
    fn drop(&mut self) {
        let mut state = self.shards.state.lock();
        if let Some(count) = state.in_flight.get_mut(&self.index) {
            *count = count.saturating_sub(1);
        }
        drop(state);
        self.shards.idle.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_apimachinery::ShardField;

    fn meta(uid: &str) -> clientgo_apimachinery::PartialObjectMetadata {
        clientgo_apimachinery::PartialObjectMetadata::from_meta(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                uid: Some(uid.into()),
                ..Default::default()
            },
        )
    }

    #[tokio::test]
    async fn a_shard_is_released_once_its_reconciles_ended() {
        let shards = Arc::new(HeldShards::default());
        // UUID-like, differing early in the string, as real ones do.
        let uids: Vec<String> = (0..64u64)
            .map(|i| {
                format!(
                    "{:08x}-77aa-4c1e-9d2b-3f6e8a1c{i:04x}",
                    i.wrapping_mul(2_654_435_761)
                )
            })
            .collect();
        // Nothing held: every object is someone else's.
        assert!(uids.iter().all(|uid| shards.enter(&meta(uid)).is_none()));
        for index in 0..2 {
            shards.hold(
                index,
                ShardSelector::shard(ShardField::Uid, index, 2).unwrap(),
            );
        }
        let guards: Vec<ShardGuard> = uids
            .iter()
            .filter_map(|uid| shards.enter(&meta(uid)))
            .collect();
        assert_eq!(guards.len(), 64, "two of two shards hold every object");
        let in_zero = guards.iter().filter(|g| g.index == 0).count();
        assert!(in_zero > 0 && in_zero < 64);
        let (zero, one): (Vec<_>, Vec<_>) = guards.into_iter().partition(|g| g.index == 0);
        drop(one);
        let releasing = {
            let shards = Arc::clone(&shards);
            tokio::spawn(async move { shards.release(0).await })
        };
        tokio::task::yield_now().await;
        assert!(!releasing.is_finished(), "released with reconciles running");
        // Released shards take no new reconciles.
        assert!(
            uids.iter()
                .filter_map(|uid| shards.enter(&meta(uid)))
                .all(|guard| guard.index == 1)
        );
        drop(zero);
        releasing.await.unwrap();
    }
}
