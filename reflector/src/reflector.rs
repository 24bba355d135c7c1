//! [`Reflector`]: keeps a store in step with one resource on the API
//! server: the struct and its run loop. The phases live beside it: the
//! list in `list.rs`, the watch in `watch.rs`, and the two syncs gathered
//! from a watch stream (watch-list and resume) in `initial_events.rs`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::ApiObject;
use clientgo_listwatch::ListerWatcher;
use clientgo_store::{Arrival, ReflectorStore, StoreError};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::backoff::{Backoff, Random};
use crate::error::Error;
use crate::options::ReflectorOptions;
use crate::recovery::{self, Action, Decision, Ended, Outcome, RetryState};
use crate::resume_point::ResumePoint;
use crate::stats::Counters;
use crate::status::{ReflectorMode, ReflectorStatus};

/// What a phase's loop does once a decision's waiting is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Send its request again.
    AskAgain,
    /// End the attempt; the run loop backs off and starts the next.
    EndAttempt,
    /// Sync with a list instead, for this attempt.
    FallBackToList,
    /// Cancelled during a backoff.
    Cancelled,
}

/// How a sync from a watch stream (watch-list, resume) ended.
pub(crate) enum Synced<S> {
    /// The store holds the state; the stream goes on as the live watch.
    Live(S),
    /// List instead, for this attempt.
    FallBack,
    /// Cancelled, or the attempt ended otherwise (the run loop backs off).
    Stopped,
}

/// Keeps a store in step with one resource: lists (or streams the state
/// with watch-list), replaces the store, then watches and applies each
/// event, recovering from every fault by re-watching or relisting as
/// client-go's Reflector does. See the crate documentation for the
/// recovery rules.
///
/// A reflector is an owned task: [`run`](Self::run) takes it and drives it
/// on one task until cancelled, writing to the store only from there, in
/// the order the server sent events. Its state is plain fields of that
/// task. What others may watch meanwhile is its [`status`](Self::status),
/// taken before `run`.
pub struct Reflector<K, L> {
    pub(crate) lister_watcher: L,
    pub(crate) store: Arc<dyn ReflectorStore<K>>,
    pub(crate) options: ReflectorOptions,
    pub(crate) status: ReflectorStatus,
    /// The `apiVersion` and `kind` of the watched objects: `K`'s fixed
    /// type, else the lister-watcher's. Events naming another are skipped.
    expected_type: Option<(String, String)>,
    /// The last synced resourceVersion cannot be used (it expired, or the
    /// server had not reached it): the next list is a consistent read at
    /// "".
    pub(crate) resource_version_unavailable: bool,
    /// An RV="0" list came back in pages: the server has no watch cache,
    /// so later relists keep paginating.
    pub(crate) paginated_result: bool,
    /// Whether any watch of this reflector has received a periodic
    /// bookmark (not the watch-list's initial-events-end one): only then
    /// does a silent watch mean a dead connection, and the idle timeout
    /// apply.
    periodic_bookmarks: bool,
    random: Random,
    /// The saved state the first sync resumes from (taken when used).
    resume: Option<ResumePoint<K>>,
    /// A saved state whose resume was refused (410): replaced into the
    /// store just before the next sync's own replace, so that handlers
    /// hear of objects deleted meanwhile as tombstones.
    refused_resume: Option<ResumePoint<K>>,
}

impl<K, L> fmt::Debug for Reflector<K, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("status", &self.status)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<K, L> Reflector<K, L>
where
    K: ApiObject,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// A reflector that lists and watches through `lister_watcher` into
    /// `store`. Nothing happens until [`run`](Self::run).
    pub fn new(
        lister_watcher: L,
        store: Arc<dyn ReflectorStore<K>>,
        options: ReflectorOptions,
    ) -> Self {
        let name = options
            .name
            .clone()
            .unwrap_or_else(|| lister_watcher.describe());
        let expected_type = K::fixed_type()
            .map(|(api_version, kind)| (api_version.to_string(), kind.to_string()))
            .or_else(|| lister_watcher.object_type());
        Reflector {
            expected_type,
            lister_watcher,
            store,
            options,
            status: ReflectorStatus::new(name),
            resource_version_unavailable: false,
            paginated_result: false,
            periodic_bookmarks: false,
            random: Random::new(),
            resume: None,
            refused_resume: None,
        }
    }

    /// Starts from a saved state instead of the first list (warm restart;
    /// see [`ResumePoint`] and the crate documentation's recovery table).
    #[must_use]
    pub fn resume_from(mut self, point: ResumePoint<K>) -> Self {
        self.resume = Some(point);
        self
    }

    /// Sets [`ReflectorOptions::resync_period`], for an owner that settles
    /// it only when it starts the reflector (an informer, whose handlers
    /// may lower it until then).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.options.resync_period = period;
        self
    }

    /// Sets [`ReflectorOptions::resume_settle`], for an owner that learns
    /// it with the saved state it resumes from.
    #[must_use]
    pub fn resume_settle(mut self, settle: Duration) -> Self {
        self.options.resume_settle = settle;
        self
    }

    /// A handle on this reflector's resourceVersion, last error, counters
    /// and mode, which stays valid after [`run`](Self::run) takes the
    /// reflector.
    pub fn status(&self) -> ReflectorStatus {
        self.status.clone()
    }

    /// The name used in logs.
    pub fn name(&self) -> &str {
        self.status.name()
    }

    /// Whether `object` names another type than the watched resource's
    /// (client-go's reflector checks each event's type against its
    /// expected type and skips the event): logged and counted. Typed
    /// decoders skip such events before decoding them; this catches the
    /// rest (dynamic and metadata objects, in-memory sources).
    pub(crate) fn is_other_type(&self, object: &K) -> bool {
        let Some((expected_api_version, expected_kind)) = &self.expected_type else {
            return false;
        };
        let Some((api_version, kind)) = object.object_type() else {
            return false;
        };
        if api_version == expected_api_version && kind == expected_kind {
            return false;
        }
        Counters::bump(&self.status.counters().other_type_events);
        tracing::warn!(
            api_version,
            kind,
            %expected_api_version,
            %expected_kind,
            name = object.name().unwrap_or_default(),
            "skipping a watch event whose object is of another type"
        );
        true
    }

    /// Notes that the server sends periodic bookmarks on this resource's
    /// watches.
    pub(crate) fn saw_periodic_bookmark(&mut self) {
        self.periodic_bookmarks = true;
    }

    /// The idle timeout for a watch's stream: `None` until the server has
    /// shown that it sends bookmarks. A watch served without a watch cache
    /// (kube-apiserver with `--watch-cache=false`, or a server without
    /// one) gets none, and a quiet resource is then silent for the whole
    /// watch: restarting it would only end in a 410 and a relist every
    /// few minutes. Dead connections are still noticed by HTTP/2 pings and
    /// TCP keepalive (clientgo-rest), as in client-go, which has no idle
    /// timeout at all.
    pub(crate) fn stream_idle_timeout(&self) -> Option<Duration> {
        self.periodic_bookmarks
            .then(|| self.options.effective_idle_timeout())
    }

    /// Lists and watches until `cancel` fires, backing off after every
    /// attempt that ends (client-go's `Run`: the first attempt at once,
    /// then a wait of the backoff's next step, measured from the end of the
    /// attempt). Errors go to the watch-error handler and
    /// the status's [`last_error`](ReflectorStatus::last_error); none ends
    /// the loop. When it returns, the status reads as stopped.
    pub async fn run(mut self, cancel: CancellationToken) {
        let span = tracing::info_span!("reflector", name = %self.status.name());
        async {
            tracing::debug!(options = ?self.options, "starting");
            let mut backoff = Backoff::new(self.options.backoff, Arc::clone(&self.options.clock));
            while !cancel.is_cancelled() {
                if let Err(error) = self.list_and_watch(&cancel, &mut backoff).await {
                    self.report(error);
                }
                if cancel.is_cancelled() || !self.back_off(&mut backoff, &cancel, None).await {
                    break;
                }
            }
            tracing::debug!("stopped");
        }
        .instrument(span)
        .await;
        self.status.stopped();
    }

    /// One attempt: sync (resume, watch-list, or list), then watch until
    /// the recovery table says to relist.
    async fn list_and_watch(
        &mut self,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> Result<(), Error> {
        if let Some(point) = self.resume.take() {
            match self.resume(&point, cancel, backoff).await {
                Synced::Live(live) => {
                    self.watch(Some(live), cancel, backoff).await;
                    return Ok(());
                }
                Synced::FallBack => {
                    Counters::bump(&self.status.counters().resume_fallbacks);
                    self.refused_resume = Some(point);
                }
                Synced::Stopped => {
                    self.resume = Some(point);
                    return Ok(());
                }
            }
        }
        let mut stream = None;
        if self.options.use_watch_list && self.lister_watcher.supports_watch_list() {
            match self.watch_list(cancel, backoff).await {
                Synced::Live(live) => stream = Some(live),
                Synced::Stopped => return Ok(()),
                Synced::FallBack => self.list(cancel).await?,
            }
        } else {
            self.list(cancel).await?;
        }
        if !cancel.is_cancelled() {
            self.watch(stream, cancel, backoff).await;
        }
        Ok(())
    }

    /// The recovery table's decision after `ended`, logged.
    pub(crate) fn decide(&self, ended: Ended, retry: &mut RetryState) -> Decision {
        let decision = recovery::decide(ended, retry, self.options.clock.now());
        let resource_version = self.status.last_sync_resource_version();
        if decision.action == Action::Retry && ended.outcome == Outcome::Ended {
            tracing::debug!(%resource_version, phase = ?ended.phase, events = ended.events, reason = decision.reason, "asking again");
        } else {
            tracing::info!(%resource_version, phase = ?ended.phase, action = ?decision.action, reason = decision.reason, "recovering");
        }
        decision
    }

    /// Decides what follows `ended` and carries out its waiting part.
    pub(crate) async fn recover(
        &mut self,
        ended: Ended,
        retry: &mut RetryState,
        backoff: &mut Backoff,
        cancel: &CancellationToken,
    ) -> Next {
        let decision = self.decide(ended, retry);
        match decision.action {
            Action::Retry => Next::AskAgain,
            Action::RetryAtLatest => {
                self.resource_version_unavailable = true;
                Next::AskAgain
            }
            Action::BackOffAndRetry { at_least } => {
                if self.back_off(backoff, cancel, at_least).await {
                    Next::AskAgain
                } else {
                    Next::Cancelled
                }
            }
            Action::Relist => Next::EndAttempt,
            Action::FallBackToList => Next::FallBackToList,
        }
    }

    /// Replaces the store with a sync's result and records the sync at
    /// `resource_version` by `mode`, announced first (see the body). A
    /// saved state whose resume was refused goes in first, in the same
    /// step, so the store's handlers are told about it
    /// and then, by this replace, about what changed since (objects
    /// deleted meanwhile become tombstones), as if the process had never
    /// stopped. A refusal is returned, for the caller to report.
    pub(crate) fn replace_store(
        &mut self,
        objects: Vec<Arc<K>>,
        resource_version: &str,
        mode: ReflectorMode,
    ) -> Result<(), StoreError> {
        // "Synced" is one fact: the status shows this sync's
        // resourceVersion and mode before the store can report it synced
        // (an informer's queue does as soon as its task pops the replace),
        // so whoever sees the cache synced also sees both. The waitable
        // resourceVersion moves only once the store has the state. A
        // replace the store refuses puts the status back.
        let before = self.status.announce_sync(resource_version, mode);
        let replaced = match self.refused_resume.take() {
            // A saved state whose resume was refused goes in first, in
            // the same step, prepared as every object the store receives.
            Some(refused) => refused
                .objects
                .into_iter()
                .map(|object| self.store.prepare(object, Arrival::Listed))
                .collect::<Result<Vec<_>, _>>()
                .and_then(|saved| {
                    self.store.replace_after(
                        (saved, &refused.resource_version),
                        objects,
                        resource_version,
                    )
                }),
            None => self.store.replace(objects, resource_version),
        };
        if let Err(error) = replaced {
            self.status.restore(before);
            return Err(error);
        }
        let mode_changed = before.mode() != mode;
        self.status.synced(resource_version, mode);
        self.resource_version_unavailable = false;
        if mode_changed {
            tracing::info!(%mode, "synced; mode in use");
        }
        let counter = match mode {
            ReflectorMode::WatchList => &self.status.counters().watch_lists,
            ReflectorMode::Resumed => &self.status.counters().resumes,
            ReflectorMode::ListWatch | ReflectorMode::NotSynced => &self.status.counters().lists,
        };
        Counters::bump(counter);
        Ok(())
    }

    /// Waits the backoff's next step (at least `at_least`); `false` if
    /// cancelled meanwhile.
    pub(crate) async fn back_off(
        &self,
        backoff: &mut Backoff,
        cancel: &CancellationToken,
        at_least: Option<Duration>,
    ) -> bool {
        let delay = backoff.next_delay().max(at_least.unwrap_or_default());
        Counters::bump(&self.status.counters().backoffs);
        tracing::debug!(?delay, "backing off");
        tokio::select! {
            () = cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }

    /// Records and hands out an error.
    pub(crate) fn report(&self, error: Error) {
        Counters::bump(&self.status.counters().errors);
        let expired = error
            .list_watch_error()
            .is_some_and(clientgo_listwatch::Error::is_expired_or_gone);
        if expired {
            tracing::info!(%error, "resourceVersion expired");
        } else {
            tracing::warn!(%error, "list or watch error");
        }
        if let Some(handler) = &self.options.watch_error_handler {
            handler(&error);
        }
        self.status.set_last_error(error);
    }

    /// The random server-side timeout for the next watch, in whole
    /// seconds within [min, 2 × min).
    pub(crate) fn watch_timeout_seconds(&mut self) -> u64 {
        let min = self.options.effective_min_watch_timeout().as_secs_f64();
        let fraction = self.random.fraction();
        (min + fraction * min) as u64
    }

    /// The last synced resourceVersion ("" before the first sync).
    pub(crate) fn last_sync_resource_version(&self) -> String {
        self.status.last_sync_resource_version()
    }

    /// The resourceVersion to relist at (client-go's
    /// `relistResourceVersion`): "" when the last one is unavailable (a
    /// consistent read), "0" before the first sync (any cached state),
    /// else the last synced one (not older than it).
    pub(crate) fn relist_resource_version(&self) -> String {
        if self.resource_version_unavailable {
            return String::new();
        }
        let last = self.last_sync_resource_version();
        if last.is_empty() { "0".into() } else { last }
    }

    /// The resourceVersion a watch-list restarts from: "" when the last
    /// one is unavailable, else the last synced one (which may be "").
    pub(crate) fn rewatch_resource_version(&self) -> String {
        if self.resource_version_unavailable {
            return String::new();
        }
        self.last_sync_resource_version()
    }
}
