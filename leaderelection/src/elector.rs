//! [`LeaderElector`]: acquire, renew and release a lock as client-go's
//! `LeaderElector` does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use clientgo_apimachinery::random::Random;
use jiff::Timestamp;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::callbacks::Callbacks;
use crate::config::{JITTER_FACTOR, LeaderElectionConfig};
use crate::error::{ConfigError, HealthError};
use crate::lease_lock::ResourceLock;
use crate::record::LeaderElectionRecord;

/// What the elector last saw of the lock, and when (local time).
#[derive(Debug, Default)]
struct Observed {
    record: Option<LeaderElectionRecord>,
    at: Option<Instant>,
    /// The holder last reported to `on_new_leader`.
    reported: Option<String>,
}

/// Counters of an elector, for metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ElectorStats {
    /// Whether this candidate leads now.
    pub is_leader: bool,
    /// Times this candidate became leader.
    pub acquired: u64,
    /// Times it stopped leading (a failed renewal, or a cancelled run).
    pub lost: u64,
    /// Holder changes it observed (client-go's leader transitions as seen
    /// from here).
    pub transitions_observed: u64,
    /// Attempts to acquire or renew that failed (a conflict, an error, a
    /// lease held by another).
    pub failed_attempts: u64,
}

/// Runs an election over one lock (client-go's `LeaderElector`).
///
/// [`run`](Self::run) drives it on the caller's task; the accessors may be
/// read from anywhere meanwhile. One elector runs once at a time.
pub struct LeaderElector<L> {
    lock: L,
    config: LeaderElectionConfig,
    callbacks: Callbacks,
    observed: Mutex<Observed>,
    acquired: AtomicU64,
    lost: AtomicU64,
    transitions: AtomicU64,
    failed: AtomicU64,
    leading: AtomicBool,
}

impl<L> std::fmt::Debug for LeaderElector<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.config)
            .field("observed", &*self.observed.lock())
            .finish_non_exhaustive()
    }
}

/// A jittered wait: `period` stretched by a random factor in [1, 1 +
/// `JITTER_FACTOR`).
fn jittered(period: Duration) -> Duration {
    period.mul_f64(1.0 + JITTER_FACTOR * Random::new().fraction())
}

impl<L: ResourceLock> LeaderElector<L> {
    /// An elector over `lock`; refuses what client-go refuses (see
    /// [`LeaderElectionConfig::validate`]) and an empty identity.
    pub fn new(
        lock: L,
        config: LeaderElectionConfig,
        callbacks: Callbacks,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        if lock.identity().is_empty() {
            return Err(ConfigError::NoIdentity);
        }
        Ok(LeaderElector {
            lock,
            config,
            callbacks,
            observed: Mutex::new(Observed::default()),
            acquired: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            transitions: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            leading: AtomicBool::new(false),
        })
    }

    /// Campaigns until this candidate leads, then renews until a renewal
    /// fails past the renew deadline or `cancel` fires (client-go's
    /// `Run`). `on_stopped_leading` is called on the way out in every case.
    /// Returns when it no longer leads; to campaign again, call `run`
    /// again.
    pub async fn run(&self, cancel: CancellationToken) {
        let span = tracing::info_span!("leaderelection", lock = %self.lock.describe(), identity = %self.lock.identity());
        async {
            if self.acquire(&cancel).await {
                let leading = cancel.child_token();
                self.leading.store(true, Ordering::Release);
                self.acquired.fetch_add(1, Ordering::Relaxed);
                tracing::info!("started leading");
                if let Some(started) = &self.callbacks.started_leading {
                    started(leading.clone());
                }
                self.renew(&leading).await;
                leading.cancel();
                self.leading.store(false, Ordering::Release);
                self.lost.fetch_add(1, Ordering::Relaxed);
                tracing::info!("stopped leading");
                if self.config.release_on_cancel {
                    self.release().await;
                }
            }
            if let Some(stopped) = &self.callbacks.stopped_leading {
                stopped();
            }
        }
        .instrument(span)
        .await;
    }

    /// Whether this candidate leads now.
    pub fn is_leader(&self) -> bool {
        self.leading.load(Ordering::Acquire)
    }

    /// The holder last observed (empty when released), if any.
    pub fn leader(&self) -> Option<String> {
        self.observed
            .lock()
            .record
            .as_ref()
            .map(|record| record.holder_identity.clone())
    }

    /// The elector's counters.
    pub fn stats(&self) -> ElectorStats {
        ElectorStats {
            is_leader: self.is_leader(),
            acquired: self.acquired.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
            transitions_observed: self.transitions.load(Ordering::Relaxed),
            failed_attempts: self.failed.load(Ordering::Relaxed),
        }
    }

    /// The health check (client-go's `HealthzAdaptor`): fails when this
    /// candidate believes it leads but has not renewed for longer than
    /// the lease duration plus `tolerance`. A non-leader is healthy.
    pub fn check(&self, tolerance: Duration) -> Result<(), HealthError> {
        if !self.is_leader() {
            return Ok(());
        }
        let since = self
            .observed
            .lock()
            .at
            .map_or(Duration::ZERO, |at| at.elapsed());
        if since > self.config.lease_duration + tolerance {
            return Err(HealthError {
                lease: self.lock.describe(),
                since,
            });
        }
        Ok(())
    }

    /// Tries every jittered retry period until the lock is ours; `false`
    /// when cancelled first.
    async fn acquire(&self, cancel: &CancellationToken) -> bool {
        tracing::info!("attempting to acquire the leader lease");
        loop {
            let acquired = tokio::select! {
                () = cancel.cancelled() => return false,
                acquired = self.try_acquire_or_renew() => acquired,
            };
            self.report_transition();
            if acquired {
                return true;
            }
            tokio::select! {
                () = cancel.cancelled() => return false,
                () = tokio::time::sleep(jittered(self.config.retry_period)) => {}
            }
        }
    }

    /// Renews every retry period while each renewal succeeds within the
    /// renew deadline; returns when one does not, or when `leading` is
    /// cancelled.
    async fn renew(&self, leading: &CancellationToken) {
        loop {
            tokio::select! {
                () = leading.cancelled() => return,
                () = tokio::time::sleep(self.config.retry_period) => {}
            }
            let deadline = Instant::now() + self.config.renew_deadline;
            let renewed = loop {
                // Every attempt is cut off at the deadline: a request that
                // hangs cannot keep leadership past it.
                let attempt = tokio::select! {
                    () = leading.cancelled() => return,
                    attempt = tokio::time::timeout_at(deadline, self.try_acquire_or_renew()) => attempt,
                };
                match attempt {
                    Ok(true) => break true,
                    Err(_) => break false,
                    Ok(false) => {}
                }
                if Instant::now() + self.config.retry_period >= deadline {
                    break false;
                }
                tokio::select! {
                    () = leading.cancelled() => return,
                    () = tokio::time::sleep(self.config.retry_period) => {}
                }
            };
            self.report_transition();
            if !renewed {
                tracing::warn!(
                    renew_deadline = ?self.config.renew_deadline,
                    "failed to renew the lease within the renew deadline; leadership lost"
                );
                return;
            }
        }
    }

    /// One attempt (client-go's `tryAcquireOrRenew`); `true` when the lock
    /// is ours afterwards.
    async fn try_acquire_or_renew(&self) -> bool {
        let acquired = self.attempt().await;
        if !acquired {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        acquired
    }

    async fn attempt(&self) -> bool {
        let now = Timestamp::now();
        let mut record = LeaderElectionRecord {
            holder_identity: self.lock.identity().to_string(),
            lease_duration_seconds: i32::try_from(self.config.lease_duration.as_secs())
                .unwrap_or(i32::MAX),
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 0,
        };

        // 1. A leader whose lease is still valid renews optimistically.
        if self.holds_valid_lease() {
            if let Some(observed) = self.observed.lock().record.clone() {
                record.acquire_time = observed.acquire_time;
                record.leader_transitions = observed.leader_transitions;
            }
            match self.lock.update(&record).await {
                Ok(()) => {
                    self.observe(record);
                    return true;
                }
                Err(error) => {
                    tracing::debug!(%error, "optimistic renewal failed; reading the lease");
                }
            }
        }

        // 2. Read the lock; create it when there is none.
        let current = match self.lock.get().await {
            Ok(Some(current)) => current,
            Ok(None) => {
                return match self.lock.create(&record).await {
                    Ok(()) => {
                        self.observe(record);
                        true
                    }
                    Err(error) => {
                        tracing::debug!(%error, "could not create the lease");
                        false
                    }
                };
            }
            Err(error) => {
                tracing::warn!(%error, "could not read the lease");
                return false;
            }
        };

        // 3. Note a changed record (and when it was seen), then refuse to
        //    take a lease another holds and that is still valid.
        let changed = self.observed.lock().record.as_ref() != Some(&current);
        if changed {
            self.observe(current.clone());
        }
        let ours = current.holder_identity == self.lock.identity();
        if !current.holder_identity.is_empty() && self.lease_valid() && !ours {
            tracing::trace!(holder = %current.holder_identity, "the lease is held by another and not expired");
            return false;
        }

        // 4. Take it (or renew it), keeping the acquire time when it was
        //    ours and counting a transition when it was not.
        if ours {
            record.acquire_time = current.acquire_time;
            record.leader_transitions = current.leader_transitions;
        } else {
            record.leader_transitions = current.leader_transitions.saturating_add(1);
        }
        match self.lock.update(&record).await {
            Ok(()) => {
                self.observe(record);
                true
            }
            Err(error) => {
                tracing::debug!(%error, "could not update the lease");
                false
            }
        }
    }

    /// Gives the lock up: an empty holder and a 1 s lease, so a successor
    /// takes over at once (client-go's `release`).
    pub(crate) async fn release(&self) {
        let deadline = self.config.renew_deadline;
        // Read the lease first, as client-go does: a renewal cut off by
        // the cancellation may have been written without our seeing its
        // answer, and an update over the older resourceVersion would be
        // refused (409), leaving successors to wait out the lease.
        let observed = match tokio::time::timeout(deadline, self.lock.get()).await {
            Ok(Ok(Some(current))) => {
                self.observe(current.clone());
                current
            }
            Ok(Ok(None)) => return,
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not read the lease to release it");
                return;
            }
            Err(_) => {
                tracing::warn!("reading the lease to release it timed out");
                return;
            }
        };
        if observed.holder_identity != self.lock.identity() {
            return;
        }
        let now = Timestamp::now();
        let record = LeaderElectionRecord {
            holder_identity: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: observed.leader_transitions,
        };
        match tokio::time::timeout(deadline, self.lock.update(&record)).await {
            Ok(Ok(())) => {
                self.observe(record);
                tracing::info!("released the lease");
            }
            Ok(Err(error)) => tracing::warn!(%error, "could not release the lease"),
            Err(_) => tracing::warn!("releasing the lease timed out"),
        }
    }

    /// Records `record` as observed now.
    fn observe(&self, record: LeaderElectionRecord) {
        let mut observed = self.observed.lock();
        observed.record = Some(record);
        observed.at = Some(Instant::now());
    }

    /// Whether the observed record is still valid: seen within the lease
    /// duration (local time; see the crate documentation on clock skew).
    fn lease_valid(&self) -> bool {
        self.observed
            .lock()
            .at
            .is_some_and(|at| at.elapsed() < self.config.lease_duration)
    }

    /// Whether we hold the observed record and it is still valid.
    fn holds_valid_lease(&self) -> bool {
        let holder_is_us = self
            .observed
            .lock()
            .record
            .as_ref()
            .is_some_and(|record| record.holder_identity == self.lock.identity());
        holder_is_us && self.lease_valid()
    }

    /// Calls `on_new_leader` when the observed holder changed.
    fn report_transition(&self) {
        let holder = {
            let mut observed = self.observed.lock();
            let Some(holder) = observed.record.as_ref().map(|r| r.holder_identity.clone()) else {
                return;
            };
            if observed.reported.as_deref() == Some(holder.as_str()) {
                return;
            }
            observed.reported = Some(holder.clone());
            holder
        };
        self.transitions.fetch_add(1, Ordering::Relaxed);
        if let Some(new_leader) = &self.callbacks.new_leader {
            new_leader(&holder);
        }
    }
}
