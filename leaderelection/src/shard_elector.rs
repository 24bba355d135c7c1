//! [`ShardElector`]: a controller's key space split into shards, each
//! owned by one replica at a time through a Lease of its own, so N
//! replicas each cache and reconcile about 1/N of the objects.
//!
//! # How replicas agree
//!
//! - Each replica renews a membership Lease (`{name}-member-{hash of its
//!   identity}`); the live replicas are those whose membership lease is
//!   valid. Its share is the shard count divided by the live replicas,
//!   rounded up.
//! - Each shard `i` has a Lease `{name}-shard-{i}`, contended for by a
//!   [`LeaderElector`] with client-go's rules (optimistic updates, so two
//!   replicas never both take one). A replica campaigns only for free
//!   shards, and only up to its share, preferring shards by a hash of its
//!   identity, so replicas rarely race.
//! - A replica over its share (another joined) stops the work of the
//!   shards beyond it, waits for that work to end, and releases their
//!   leases: the newcomer takes them at its next round. A replica that
//!   dies stops renewing: its shards are free once their leases expire.
//!
//! # Shard work
//!
//! For each shard it leads, the replica runs `run_shard(shard, token)`: a
//! typical one starts an informer with the shard's
//! [`ShardSelector`](clientgo_apimachinery::ShardSelector) and workers,
//! and returns when `token` fires. Only that shard is listed, so taking a
//! shard over lists one shard, and the others keep their caches. `token`
//! fires when the shard is released (then the lease is released only
//! after the work returned, so two replicas never work on one shard) or
//! when its lease could not be renewed within the renew deadline (then
//! the work has the rest of the lease to stop: client-go's guarantee).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ListOptions, ShardField, ShardSelector, fnv1a_64};
use clientgo_rest::{ResourceClient, RestClient};
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::callbacks::Callbacks;
use crate::config::LeaderElectionConfig;
use crate::elector::LeaderElector;
use crate::error::{ConfigError, LockError};
use crate::lease_lock::{LeaseLock, ResourceLock};
use crate::record::LeaderElectionRecord;
use crate::shard_plan::{ShardView, fair_share, plan};

/// The default number of shards: more than the replicas one expects, so
/// shares stay even as replicas come and go.
pub const DEFAULT_SHARDS: u32 = 16;

/// How a [`ShardElector`] splits the work and times its leases.
#[derive(Debug, Clone)]
pub struct ShardElectorOptions {
    /// The namespace of the leases.
    pub namespace: String,
    /// The leases' name prefix.
    pub name: String,
    /// The number of shards; fixed for the life of the deployment (every
    /// replica must use the same).
    pub shards: u32,
    /// What an object's shard is computed from.
    pub field: ShardField,
    /// The leases' timings (client-go's 15 s, 10 s and 2 s by default);
    /// `release_on_cancel` and `name` are set by the controller.
    pub election: LeaderElectionConfig,
}

impl ShardElectorOptions {
    /// Leases `name-…` in `namespace`, [`DEFAULT_SHARDS`] shards by uid.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ShardElectorOptions {
            namespace: namespace.into(),
            name: name.into(),
            shards: DEFAULT_SHARDS,
            field: ShardField::Uid,
            election: LeaderElectionConfig::default(),
        }
    }

    /// Sets the number of shards.
    #[must_use]
    pub fn shards(mut self, shards: u32) -> Self {
        self.shards = shards;
        self
    }

    /// Shards by `field`.
    #[must_use]
    pub fn field(mut self, field: ShardField) -> Self {
        self.field = field;
        self
    }

    /// Sets the leases' timings.
    #[must_use]
    pub fn election(mut self, election: LeaderElectionConfig) -> Self {
        self.election = election;
        self
    }
}

/// One shard a replica leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// Its number, from 0.
    pub index: u32,
    /// How many shards there are.
    pub count: u32,
    /// The objects it holds.
    pub selector: ShardSelector,
}

/// What a [`ShardElector`] has done.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardedStats {
    /// The shards led now, in order (a shard leaves the list when its
    /// work is told to stop, before it has stopped).
    pub held: Vec<u32>,
    /// Live replicas seen at the last round, this one included.
    pub replicas: u32,
    /// Shards taken so far.
    pub acquired: u64,
    /// Shards given up so far (released or lost).
    pub released: u64,
}

/// One replica of a sharded controller: an owned task and this handle.
/// Dropping the handle (or [`stop`](Self::stop)) stops every shard's
/// work and releases the leases, so other replicas take them at once;
/// [`abandon`](Self::abandon) stops without releasing, as a crashed
/// process.
#[derive(Debug)]
pub struct ShardElector {
    state: Arc<Mutex<ShardedStats>>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Drop for ShardElector {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

type RunShard = Arc<dyn Fn(Shard, CancellationToken) -> BoxFuture + Send + Sync>;
type BoxFuture = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

impl ShardElector {
    /// Starts a replica named `identity` (unique per replica, as a pod
    /// name) that runs `run_shard` for each shard it leads.
    pub fn start<F, Fut>(
        client: RestClient,
        identity: impl Into<String>,
        config: ShardElectorOptions,
        run_shard: F,
    ) -> Result<ShardElector, ConfigError>
    where
        F: Fn(Shard, CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let identity = identity.into();
        if identity.is_empty() {
            return Err(ConfigError::NoIdentity);
        }
        config.election.validate()?;
        if config.shards == 0 {
            return Err(ConfigError::Zero("the number of shards"));
        }
        let run_shard: RunShard = Arc::new(move |shard, token| Box::pin(run_shard(shard, token)));
        let state = Arc::new(Mutex::new(ShardedStats::default()));
        let cancel = CancellationToken::new();
        let replica = Replica {
            client,
            identity,
            config,
            run_shard,
            state: Arc::clone(&state),
            campaigns: BTreeMap::new(),
            rounds: 0,
        };
        let span = tracing::info_span!(
            "shard_elector",
            name = %replica.config.name,
            identity = %replica.identity
        );
        let task = tokio::spawn(replica.run(cancel.clone()).instrument(span));
        Ok(ShardElector {
            state,
            cancel,
            task: Some(task),
        })
    }

    /// The shards this replica leads now.
    pub fn held(&self) -> Vec<u32> {
        self.state.lock().held.clone()
    }

    /// Counters.
    pub fn stats(&self) -> ShardedStats {
        self.state.lock().clone()
    }

    /// Stops every shard's work, releases the leases, and returns when
    /// done.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Stops at once without releasing anything, as a crashed process
    /// would: the shards are taken over when their leases expire.
    pub fn abandon(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// One shard's campaign (and work, while led).
struct Campaign {
    /// Ends the elector (it never releases: `give_up` does, after the
    /// work).
    elector_cancel: CancellationToken,
    /// Taken by `give_up`, which waits for it; aborted on drop.
    elector_task: Option<JoinHandle<()>>,
    elector: Arc<LeaderElector<LeaseLock>>,
    /// Ends the shard's work.
    work_cancel: CancellationToken,
    work: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl Drop for Campaign {
    /// Aborted with the replica's task (abandon): nothing is released.
    fn drop(&mut self) {
        self.work_cancel.cancel();
        if let Some(task) = &self.elector_task {
            task.abort();
        }
        if let Some(work) = self.work.lock().take() {
            work.abort();
        }
    }
}

struct Replica {
    client: RestClient,
    identity: String,
    config: ShardElectorOptions,
    run_shard: RunShard,
    state: Arc<Mutex<ShardedStats>>,
    campaigns: BTreeMap<u32, Campaign>,
    /// Rounds so far.
    rounds: u64,
}

impl Replica {
    fn shard_lease(&self, index: u32) -> String {
        format!("{}-shard-{index}", self.config.name)
    }

    fn member_lease(&self) -> String {
        format!(
            "{}-member-{:016x}",
            self.config.name,
            fnv1a_64(self.identity.as_bytes())
        )
    }

    async fn run(mut self, cancel: CancellationToken) {
        let membership = LeaseLock::new(
            self.client.clone(),
            self.config.namespace.clone(),
            self.member_lease(),
            self.identity.clone(),
        );
        let leases =
            ResourceClient::<Lease>::namespaced(self.client.clone(), &self.config.namespace);
        loop {
            if let Err(error) = self.renew_membership(&membership).await {
                tracing::warn!(%error, "could not renew the membership lease");
            }
            match leases.list(&ListOptions::default()).await {
                Ok(list) => self.round(&list.items).await,
                Err(error) => tracing::warn!(%error, "could not list the leases"),
            }
            let wait = self.config.election.retry_period;
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(wait) => {}
            }
        }
        // Stop the work of every shard, then release them all.
        for index in self.campaigns.keys().copied().collect::<Vec<_>>() {
            self.give_up(index).await;
        }
        // Leave the membership at once, so the others' shares grow now.
        let mut left = membership.get().await.ok().flatten().unwrap_or_default();
        left.holder_identity = String::new();
        left.lease_duration_seconds = 1;
        let _ = membership.update(&left).await;
    }

    async fn renew_membership(&self, membership: &LeaseLock) -> Result<(), LockError> {
        let now = Timestamp::now();
        let record = LeaderElectionRecord {
            holder_identity: self.identity.clone(),
            lease_duration_seconds: i32::try_from(self.config.election.lease_duration.as_secs())
                .unwrap_or(i32::MAX),
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 0,
        };
        match membership.get().await? {
            None => membership.create(&record).await,
            Some(_) => membership.update(&record).await,
        }
    }

    /// One round: counts the live replicas, sees each shard's lease, and
    /// carries out the plan.
    async fn round(&mut self, leases: &[Lease]) {
        self.rounds += 1;
        // The first round only announced this replica: the others may not
        // have yet, and a replica that thinks itself alone takes everything.
        if self.rounds == 1 {
            return;
        }
        // An elector that stopped (its renewal failed) is a campaign over:
        // its work is stopped, and the shard campaigned for anew.
        let ended: Vec<u32> = self
            .campaigns
            .iter()
            .filter(|(_, campaign)| {
                campaign
                    .elector_task
                    .as_ref()
                    .is_some_and(JoinHandle::is_finished)
            })
            .map(|(index, _)| *index)
            .collect();
        for index in ended {
            self.give_up(index).await;
        }
        let now = Timestamp::now();
        let member_prefix = format!("{}-member-", self.config.name);
        let valid = |lease: &Lease| {
            let record = lease
                .spec
                .as_ref()
                .map(LeaderElectionRecord::from_lease_spec)
                .unwrap_or_default();
            let alive = record.renew_time.is_some_and(|renewed| {
                let duration =
                    Duration::from_secs(u64::try_from(record.lease_duration_seconds).unwrap_or(0));
                now.duration_since(renewed).unsigned_abs() < duration
            });
            (!record.holder_identity.is_empty() && alive).then_some(record.holder_identity)
        };
        let members: Vec<String> = leases
            .iter()
            .filter(|lease| {
                lease
                    .metadata
                    .name
                    .as_deref()
                    .is_some_and(|name| name.starts_with(&member_prefix))
            })
            .filter_map(valid)
            .collect();
        let replicas = members.len().max(1) as u32;
        let holders: BTreeMap<&str, Option<String>> = leases
            .iter()
            .filter_map(|lease| Some((lease.metadata.name.as_deref()?, valid(lease))))
            .collect();
        // A campaign for a shard another replica holds would wait out its
        // lease while a free shard goes untaken: withdraw it.
        let lost_races: Vec<u32> = self
            .campaigns
            .iter()
            .filter(|(index, campaign)| {
                !campaign.elector.is_leader()
                    && matches!(
                        holders.get(self.shard_lease(**index).as_str()),
                        Some(Some(holder)) if *holder != self.identity
                    )
            })
            .map(|(index, _)| *index)
            .collect();
        for index in lost_races {
            self.give_up(index).await;
        }
        let views: Vec<ShardView> = (0..self.config.shards)
            .map(|index| match self.campaigns.get(&index) {
                Some(campaign) if campaign.elector.is_leader() => ShardView::Mine,
                Some(_) => ShardView::Campaigning,
                None => match holders.get(self.shard_lease(index).as_str()) {
                    Some(Some(holder)) if *holder != self.identity => ShardView::Taken,
                    _ => ShardView::Free,
                },
            })
            .collect();
        // Whether a live replica leads fewer than the lower share.
        let lower = self.config.shards as usize / replicas as usize;
        let shard_prefix = format!("{}-shard-", self.config.name);
        let led_by = |member: &String| {
            holders
                .iter()
                .filter(|(name, holder)| {
                    name.starts_with(&shard_prefix) && holder.as_ref() == Some(member)
                })
                .count()
        };
        let starving = members.iter().any(|member| led_by(member) < lower);
        let identity = self.identity.clone();
        let decided = plan(&views, replicas, starving, |shard| {
            fnv1a_64(format!("{identity}/{shard}").as_bytes())
        });
        if !decided.release.is_empty() || !decided.campaign.is_empty() {
            tracing::info!(
                replicas,
                share = fair_share(self.config.shards, replicas),
                release = ?decided.release,
                campaign = ?decided.campaign,
                "rebalancing"
            );
        }
        for index in decided.release.iter().chain(&decided.withdraw) {
            self.give_up(*index).await;
        }
        for index in decided.campaign {
            self.campaign(index);
        }
        self.state.lock().replicas = replicas;
    }

    /// Starts campaigning for shard `index`; its work starts when it
    /// leads.
    fn campaign(&mut self, index: u32) {
        let Some(selector) = ShardSelector::shard(self.config.field, index, self.config.shards)
        else {
            return;
        };
        let shard = Shard {
            index,
            count: self.config.shards,
            selector,
        };
        let lock = LeaseLock::new(
            self.client.clone(),
            self.config.namespace.clone(),
            self.shard_lease(index),
            self.identity.clone(),
        );
        let work_cancel = CancellationToken::new();
        let work: Arc<Mutex<Option<JoinHandle<()>>>> = Arc::default();
        let callbacks = {
            let (run_shard, work, work_cancel, state) = (
                Arc::clone(&self.run_shard),
                Arc::clone(&work),
                work_cancel.clone(),
                Arc::clone(&self.state),
            );
            let stopped_state = Arc::clone(&self.state);
            Callbacks::new()
                .on_started_leading(move |leading: CancellationToken| {
                    // Held while deciding, so a give-up either sees the
                    // work to wait for or stops it from starting.
                    let mut slot = work.lock();
                    if work_cancel.is_cancelled() {
                        return;
                    }
                    // The work ends when the shard is given up or the
                    // lease is lost, whichever comes first.
                    let token = work_cancel.child_token();
                    let stop = token.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            () = leading.cancelled() => stop.cancel(),
                            () = stop.cancelled() => {}
                        }
                    });
                    {
                        let mut state = state.lock();
                        state.acquired += 1;
                        if let Err(at) = state.held.binary_search(&shard.index) {
                            state.held.insert(at, shard.index);
                        }
                    }
                    tracing::info!(shard = shard.index, "took the shard");
                    *slot = Some(tokio::spawn(run_shard(shard.clone(), token)));
                })
                .on_stopped_leading(move || {
                    let mut state = stopped_state.lock();
                    if let Ok(at) = state.held.binary_search(&index) {
                        state.held.remove(at);
                        state.released += 1;
                    }
                })
        };
        // The elector never releases: it would on a failed renewal too,
        // while the work may still run. `give_up` releases once the work
        // has returned.
        let config = LeaderElectionConfig {
            release_on_cancel: false,
            name: self.shard_lease(index),
            ..self.config.election.clone()
        };
        let elector = match LeaderElector::new(lock, config, callbacks) {
            Ok(elector) => Arc::new(elector),
            Err(error) => {
                tracing::error!(%error, shard = index, "cannot campaign for the shard");
                return;
            }
        };
        let elector_cancel = CancellationToken::new();
        let elector_task = {
            let (elector, cancel) = (Arc::clone(&elector), elector_cancel.clone());
            tokio::spawn(async move { elector.run(cancel).await })
        };
        self.campaigns.insert(
            index,
            Campaign {
                elector_cancel,
                elector_task: Some(elector_task),
                elector,
                work_cancel,
                work,
            },
        );
    }

    /// Stops shard `index`'s work and waits for it, ends the campaign,
    /// then releases the lease if this replica still holds it (whether
    /// its elector led, lost, or took it just as it was told to stop).
    async fn give_up(&mut self, index: u32) {
        let Some(mut campaign) = self.campaigns.remove(&index) else {
            return;
        };
        // Not held from here on: its work is being stopped.
        {
            let mut state = self.state.lock();
            if let Ok(at) = state.held.binary_search(&index) {
                state.held.remove(at);
                state.released += 1;
            }
        }
        campaign.work_cancel.cancel();
        let work = campaign.work.lock().take();
        if let Some(work) = work {
            let _ = work.await;
        }
        campaign.elector_cancel.cancel();
        if let Some(task) = campaign.elector_task.take() {
            let _ = task.await;
        }
        // The elector's own release (it rereads the lease and writes only
        // when this replica holds it), now that nothing runs the shard.
        campaign.elector.release().await;
        tracing::info!(shard = index, "gave the shard up");
    }
}
