//! [`Reflector`]: keeps a store in step with one resource on the API
//! server: the struct, its accessors and its run loop. The list, watch and
//! watch-list phases live in `list.rs`, `watch.rs` and `watch_list.rs`.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clientgo_apimachinery::Object;
use clientgo_listwatch::ListerWatcher;
use clientgo_store::ReflectorStore;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::backoff::{Backoff, Random};
use crate::error::Error;
use crate::options::ReflectorOptions;
use crate::recovery::{self, Action, Decision, Ended, Outcome, RetryState};
use crate::resource_version::{ResourceVersionTracker, WaitError};
use crate::resume::{ResumeEnd, ResumePoint};
use crate::stats::{Counters, ReflectorStats};
use crate::watch_list::WatchListEnd;

/// What a phase's loop does once a decision's waiting is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Send its request again.
    Again,
    /// End the attempt; the run loop backs off and relists.
    Relist,
    /// Fall back from watch-list to list and watch.
    FallBack,
    /// Cancelled during a backoff.
    Cancelled,
}

/// How a reflector got its current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReflectorMode {
    /// No list or watch-list has completed yet.
    NotSynced,
    /// The last sync streamed the state as watch events (watch-list).
    WatchList,
    /// The last sync was a list (watch-list off, unsupported or failed).
    ListWatch,
    /// The last sync resumed a saved state with a watch (warm restart).
    Resumed,
}

impl fmt::Display for ReflectorMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReflectorMode::NotSynced => "not synced",
            ReflectorMode::WatchList => "watch-list",
            ReflectorMode::ListWatch => "list and watch",
            ReflectorMode::Resumed => "resumed",
        })
    }
}

/// What the run loop remembers between attempts.
#[derive(Debug)]
pub(crate) struct State {
    /// The last synced resourceVersion cannot be used (it expired, or the
    /// server had not reached it): the next list is a consistent read at
    /// "".
    pub(crate) resource_version_unavailable: bool,
    /// An RV="0" list came back in pages: the server has no watch cache,
    /// so later relists keep paginating.
    pub(crate) paginated_result: bool,
    pub(crate) mode: ReflectorMode,
}

/// Keeps a store in step with one resource: lists (or streams the state
/// with watch-list), replaces the store, then watches and applies each
/// event, recovering from every fault by re-watching or relisting as
/// client-go's Reflector does. See the crate documentation for the
/// recovery rules.
///
/// A reflector is driven by [`run`](Self::run) on one task; its accessors
/// may be called from any task meanwhile (share it in an `Arc`). It writes
/// to the store only from `run`, in the order the server sent events.
pub struct Reflector<K, L> {
    pub(crate) lister_watcher: L,
    pub(crate) store: Arc<dyn ReflectorStore<K>>,
    pub(crate) options: ReflectorOptions<K>,
    pub(crate) name: String,
    pub(crate) state: Mutex<State>,
    pub(crate) resource_version: ResourceVersionTracker,
    last_error: Mutex<Option<Arc<Error>>>,
    pub(crate) counters: Counters,
    pub(crate) random: Mutex<Random>,
    stopped: CancellationToken,
    /// Whether any watch of this reflector has received a periodic
    /// bookmark (not the watch-list's initial-events-end one): only then
    /// does a silent watch mean a dead connection, and the idle timeout
    /// apply.
    periodic_bookmarks: AtomicBool,
    /// The saved state the first sync resumes from (taken when used).
    resume: Mutex<Option<ResumePoint<K>>>,
    /// The `apiVersion` and `kind` of the watched objects: `K`'s fixed
    /// type, else the lister-watcher's. Events naming another are skipped.
    expected_type: Option<(String, String)>,
    /// A saved state whose resume was refused (410): replaced into the
    /// store just before the next sync's own replace, so that handlers
    /// hear of objects deleted meanwhile as tombstones.
    prelude: Mutex<Option<ResumePoint<K>>>,
}

impl<K, L> fmt::Debug for Reflector<K, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.name)
            .field("state", &*self.state.lock())
            .field("last_sync_resource_version", &self.resource_version.get())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<K, L> Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// A reflector that lists and watches through `lister_watcher` into
    /// `store`. Nothing happens until [`run`](Self::run).
    pub fn new(
        lister_watcher: L,
        store: Arc<dyn ReflectorStore<K>>,
        mut options: ReflectorOptions<K>,
    ) -> Self {
        let resume = options.resume_from.take();
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
            name,
            state: Mutex::new(State {
                resource_version_unavailable: false,
                paginated_result: false,
                mode: ReflectorMode::NotSynced,
            }),
            resource_version: ResourceVersionTracker::new(),
            last_error: Mutex::new(None),
            counters: Counters::default(),
            random: Mutex::new(Random::new()),
            stopped: CancellationToken::new(),
            periodic_bookmarks: AtomicBool::new(false),
            resume: Mutex::new(resume),
            prelude: Mutex::new(None),
        }
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
        Counters::bump(&self.counters.other_type_events);
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
    pub(crate) fn saw_periodic_bookmark(&self) {
        self.periodic_bookmarks.store(true, Ordering::Relaxed);
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
            .load(Ordering::Relaxed)
            .then(|| self.options.effective_idle_timeout())
    }

    /// Lists and watches until `cancel` fires, backing off after every
    /// attempt that ends (client-go's `Run`: the first attempt at once,
    /// then a wait of the backoff's next step, measured from the end of the
    /// attempt). Errors go to the watch-error handler and
    /// [`last_error`](Self::last_error); none ends the loop.
    pub async fn run(&self, cancel: CancellationToken) {
        let span = tracing::info_span!("reflector", name = %self.name);
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
        self.stopped.cancel();
    }

    /// One attempt: sync (watch-list, or list), then watch until the
    /// recovery table says to relist.
    async fn list_and_watch(
        &self,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> Result<(), Error> {
        let mut stream = None;
        let resume = self.resume.lock().take();
        if let Some(point) = resume {
            match self.resume(&point, cancel).await {
                ResumeEnd::Synced(live) => {
                    self.watch(Some(live), cancel, backoff).await;
                    return Ok(());
                }
                ResumeEnd::Expired => {
                    Counters::bump(&self.counters.resume_fallbacks);
                    tracing::info!(
                        resource_version = %point.resource_version,
                        "the saved state's resourceVersion is gone; listing"
                    );
                    *self.prelude.lock() = Some(point);
                }
                ResumeEnd::Retry => {
                    *self.resume.lock() = Some(point);
                    return Ok(());
                }
                ResumeEnd::Stopped => return Ok(()),
            }
        }
        if self.options.use_watch_list && self.lister_watcher.supports_watch_list() {
            match self.watch_list(cancel, backoff).await {
                WatchListEnd::Synced(live) => stream = Some(live),
                WatchListEnd::Stopped => return Ok(()),
                WatchListEnd::FallBack => self.list(cancel).await?,
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
        let resource_version = self.last_sync_resource_version();
        if decision.action == Action::Retry && ended.outcome == Outcome::Ended {
            tracing::debug!(%resource_version, phase = ?ended.phase, events = ended.events, reason = decision.reason, "asking again");
        } else {
            tracing::info!(%resource_version, phase = ?ended.phase, action = ?decision.action, reason = decision.reason, "recovering");
        }
        decision
    }

    /// Carries out the waiting part of `decision`.
    pub(crate) async fn follow(
        &self,
        decision: Decision,
        backoff: &mut Backoff,
        cancel: &CancellationToken,
    ) -> Step {
        match decision.action {
            Action::Retry => Step::Again,
            Action::RetryAtLatest => {
                self.set_resource_version_unavailable(true);
                Step::Again
            }
            Action::BackOffAndRetry { at_least } => {
                if self.back_off(backoff, cancel, at_least).await {
                    Step::Again
                } else {
                    Step::Cancelled
                }
            }
            Action::Relist => Step::Relist,
            Action::FallBackToList => Step::FallBack,
        }
    }

    /// Replaces the store with a sync's result. A saved state whose resume
    /// was refused goes in first, so the store's handlers are told about
    /// it and then, by this replace, about what changed since (objects
    /// deleted meanwhile become tombstones), as if the process had never
    /// stopped.
    pub(crate) fn replace_store(
        &self,
        objects: Vec<Arc<K>>,
        resource_version: &str,
    ) -> Result<(), clientgo_store::StoreError> {
        let prelude = self.prelude.lock().take();
        if let Some(prelude) = prelude {
            self.store
                .replace(prelude.objects, &prelude.resource_version)?;
        }
        self.store.replace(objects, resource_version)
    }

    /// Records a sync (a list or a watch-list's bookmark) at
    /// `resource_version`.
    pub(crate) fn synced(&self, resource_version: &str, mode: ReflectorMode) {
        self.resource_version.set(resource_version);
        self.set_resource_version_unavailable(false);
        self.clear_last_error();
        self.set_mode(mode);
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
        Counters::bump(&self.counters.backoffs);
        tracing::debug!(?delay, "backing off");
        tokio::select! {
            () = cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }

    /// Records and hands out an error.
    pub(crate) fn report(&self, error: Error) {
        Counters::bump(&self.counters.errors);
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
        *self.last_error.lock() = Some(Arc::new(error));
    }

    /// Forgets the last error after a successful sync.
    pub(crate) fn clear_last_error(&self) {
        *self.last_error.lock() = None;
    }

    /// The random server-side timeout for the next watch, in whole
    /// seconds within [min, 2 × min).
    pub(crate) fn watch_timeout_seconds(&self) -> u64 {
        let min = self.options.effective_min_watch_timeout().as_secs_f64();
        let fraction = self.random.lock().fraction();
        (min + fraction * min) as u64
    }

    /// The resourceVersion to relist at (client-go's
    /// `relistResourceVersion`): "" when the last one is unavailable (a
    /// consistent read), "0" before the first sync (any cached state),
    /// else the last synced one (not older than it).
    pub(crate) fn relist_resource_version(&self) -> String {
        if self.state.lock().resource_version_unavailable {
            return String::new();
        }
        let last = self.resource_version.get();
        if last.is_empty() { "0".into() } else { last }
    }

    /// The resourceVersion a watch-list restarts from: "" when the last
    /// one is unavailable, else the last synced one (which may be "").
    pub(crate) fn rewatch_resource_version(&self) -> String {
        if self.state.lock().resource_version_unavailable {
            return String::new();
        }
        self.resource_version.get()
    }

    pub(crate) fn set_resource_version_unavailable(&self, unavailable: bool) {
        self.state.lock().resource_version_unavailable = unavailable;
    }

    pub(crate) fn set_mode(&self, mode: ReflectorMode) {
        let previous = std::mem::replace(&mut self.state.lock().mode, mode);
        if previous != mode {
            tracing::info!(%mode, "synced; mode in use");
        }
    }

    /// The resourceVersion of the last list or event applied to the store;
    /// "" before the first sync. Not synchronised with the store: the store
    /// may already hold later events.
    pub fn last_sync_resource_version(&self) -> String {
        self.resource_version.get()
    }

    /// Waits until the reflector has applied `resource_version` or a later
    /// one (compared as integers): after a write answered with
    /// resourceVersion R, waiting for R makes the store show that write.
    /// Fails at once for a non-integer, and when the reflector stops first.
    /// Wrap it in a timeout to bound the wait.
    pub async fn wait_for_resource_version(&self, resource_version: &str) -> Result<(), WaitError> {
        tokio::select! {
            reached = self.resource_version.wait_for(resource_version) => reached,
            () = self.stopped.cancelled() => {
                // It may have been reached just before stopping.
                let last = self.resource_version.get();
                match crate::resource_version::compare_resource_versions(&last, resource_version) {
                    Some(ordering) if ordering.is_ge() => Ok(()),
                    _ => Err(WaitError::Stopped(resource_version.to_string())),
                }
            }
        }
    }

    /// How the current state was obtained.
    pub fn mode(&self) -> ReflectorMode {
        self.state.lock().mode
    }

    /// The last error since the last successful list or watch-list (so a
    /// caller waiting for a sync can say "403 Forbidden listing pods"
    /// rather than "timed out").
    pub fn last_error(&self) -> Option<Arc<Error>> {
        self.last_error.lock().clone()
    }

    /// Counters of the work done so far.
    pub fn stats(&self) -> ReflectorStats {
        self.counters.snapshot()
    }

    /// The name used in logs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The store written to.
    pub fn store(&self) -> &Arc<dyn ReflectorStore<K>> {
        &self.store
    }

    /// Whether [`run`](Self::run) has returned.
    pub fn is_stopped(&self) -> bool {
        self.stopped.is_cancelled()
    }
}
