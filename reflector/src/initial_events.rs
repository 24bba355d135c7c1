//! The two syncs that build the store's state from a watch stream instead
//! of a list, and the one accumulator they share:
//!
//! - **watch-list** (client-go's `watchList`): `sendInitialEvents=true`
//!   streams every object as an ADDED event, then an initial-events-end
//!   bookmark;
//! - **resume** (warm restart, not in client-go): a watch from a saved
//!   state's resourceVersion replays every change since, and the replay
//!   is folded into the saved objects. The API server's watch semantics
//!   make it safe: a watch from resourceVersion R either sends every
//!   change after R, in order, or answers 410 Gone (R was compacted away),
//!   and then the reflector lists as it would have anyway.
//!
//! Both gather the events into an [`InitialState`] (one object per key), replace
//! the store once with it, and keep the same stream as the live watch, so
//! the store's handlers see what a fresh list would have given them: one
//! add per object that exists now. How either ends is decided by the one
//! recovery table (`recovery.rs`).

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiObject, ListOptions, Object, ResourceVersionMatch, WatchEvent};
use clientgo_listwatch::{IdleTimer, ListerWatcher, Next as StreamNext};
use clientgo_store::{Arrival, ArrivalOrder, Indexers, ThreadSafeStore};
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::error::Error;
use crate::recovery::{Ended, Outcome, Phase, RetryState};
use crate::reflector::{Next, Reflector, Synced};
use crate::resume_point::ResumePoint;
use crate::stats::Counters;
use crate::status::ReflectorMode;

/// While gathering the initial events, a progress line is logged this
/// often.
const PROGRESS_LOG: Duration = Duration::from_secs(10);

/// When a stream's initial events are complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Until {
    /// At the initial-events-end bookmark (watch-list); the stream ending
    /// before it is a failure.
    InitialEventsEnd,
    /// At any bookmark, the stream's end, once it has been quiet for the
    /// duration (resume: the server replays what it has at once), or
    /// [`RESUME_SETTLE_LIMIT`] times the duration after the watch opened.
    Settled(Duration),
}

/// A resume's gathering ends at the latest this many quiet periods after
/// its watch opened.
const RESUME_SETTLE_LIMIT: u32 = 20;

/// When a resume's wait for its next event ends: after `quiet`, or at
/// `settle_by`, whichever is first; `None` when neither is within what
/// the clock can hold (no limit).
fn settle_deadline(
    quiet: Duration,
    settle_by: Option<tokio::time::Instant>,
) -> Option<tokio::time::Instant> {
    let quiet_by = tokio::time::Instant::now().checked_add(quiet);
    match (quiet_by, settle_by) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A state being gathered from watch events, and the resourceVersion it
/// reflects.
///
/// While every event so far added an object (a watch-list's initial
/// events, where the server sends each object once), the objects are
/// kept in an [`ArrivalOrder`], which builds no table until the end.
/// The first change or removal (a resume's replay; a watch-list whose
/// initial events carry one) moves them into a store by their own key
/// (without indexes, so no key string is built per event), where the
/// rest of the events fold in.
/// Either way the store's replace receives one object per key, the last,
/// so its handlers see one add per object.
struct InitialState<K> {
    /// The objects in arrival order, while there is no `by_key`.
    arrived: ArrivalOrder<K>,
    by_key: Option<ThreadSafeStore<K>>,
    resource_version: String,
}

impl<K: Object + Send + Sync + 'static> InitialState<K> {
    /// Empty, at `resource_version`.
    fn new(resource_version: &str) -> Self {
        InitialState {
            arrived: ArrivalOrder::new(),
            by_key: None,
            resource_version: resource_version.to_string(),
        }
    }

    /// How many objects are gathered (an object added twice counts twice
    /// until a change or removal arrives).
    fn len(&self) -> usize {
        self.by_key
            .as_ref()
            .map_or(self.arrived.len(), ThreadSafeStore::len)
    }

    /// Adds an object of the state at the starting resourceVersion (one
    /// per key).
    fn seed(&mut self, object: Arc<K>) {
        self.arrived.push(object);
    }

    /// Adds an object that was not in the state.
    fn add(&mut self, object: Arc<K>) {
        self.moved_to(&*object);
        match &self.by_key {
            Some(by_key) => insert(by_key, object),
            None => self.arrived.push(object),
        }
    }

    /// Adds or replaces an object.
    fn upsert(&mut self, object: Arc<K>) {
        self.moved_to(&*object);
        insert(self.by_key(), object);
    }

    fn remove(&mut self, object: &K) {
        self.moved_to(object);
        self.by_key().delete_own(object);
    }

    /// The store by key, made from the objects that arrived so far.
    fn by_key(&mut self) -> &ThreadSafeStore<K> {
        self.by_key.get_or_insert_with(|| {
            let by_key = ThreadSafeStore::new(Indexers::new());
            for object in std::mem::take(&mut self.arrived).into_arrived() {
                insert(&by_key, object);
            }
            by_key
        })
    }

    /// Every object gathered, one per key, for the store's replace.
    fn into_objects(self) -> Vec<Arc<K>> {
        match self.by_key {
            Some(by_key) => by_key.into_objects(),
            None => self.arrived.into_last_of_each_key(),
        }
    }

    fn moved_to(&mut self, object: &K) {
        if let Some(version) = object.resource_version().filter(|rv| !rv.is_empty()) {
            version.clone_into(&mut self.resource_version);
        }
    }
}

/// Stores `object` under its own key in `store`.
fn insert<K: Object + Send + Sync + 'static>(store: &ThreadSafeStore<K>, object: Arc<K>) {
    // A store without indexes refuses nothing.
    if let Err(error) = store.add_own(object) {
        tracing::error!(%error, "an indexless store refused an object");
    }
}

/// How one gathering ended when it did not complete: the phase, how, and
/// after how many events.
type Unfinished = (Phase, Outcome, u64);

impl<K, L> Reflector<K, L>
where
    K: ApiObject,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Syncs with a watch-list request, asking again as the recovery table
    /// says until the initial-events-end bookmark arrives, the server
    /// refuses watch-list, or `cancel` fires.
    pub(crate) async fn watch_list(
        &mut self,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> Synced<L::Watch> {
        let mut retry = RetryState::new(Duration::ZERO);
        loop {
            if cancel.is_cancelled() {
                return Synced::Stopped;
            }
            let from = self.rewatch_resource_version();
            let mut options = ListOptions::default()
                .resource_version_match(ResourceVersionMatch::NotOlderThan)
                .send_initial_events(true)
                .allow_watch_bookmarks(true)
                .timeout_seconds(self.watch_timeout_seconds());
            if !from.is_empty() {
                options = options.resource_version(&from);
            }
            let gathered = self
                .sync_from_stream(&options, &[], Until::InitialEventsEnd, cancel)
                .await;
            let ended = match gathered {
                Some(Ok(live)) => return Synced::Live(live),
                Some(Err(ended)) => ended,
                None => return Synced::Stopped,
            };
            match self.recover(ended, &mut retry, backoff, cancel).await {
                Next::AskAgain => {}
                Next::FallBackToList => {
                    Counters::bump(&self.status.counters().watch_list_fallbacks);
                    return Synced::FallBack;
                }
                Next::EndAttempt | Next::Cancelled => return Synced::Stopped,
            }
        }
    }

    /// Resumes from `point`: opens a watch at its resourceVersion (never a
    /// list or watch-list), folds the replay into the saved objects until
    /// the stream settles, then replaces the store once with the result.
    /// The recovery table decides a failure: a lost resourceVersion falls
    /// back to a list (with the saved state delivered first, so objects
    /// deleted meanwhile become tombstones), anything else ends the
    /// attempt, and the next one resumes again.
    pub(crate) async fn resume(
        &mut self,
        point: &ResumePoint<K>,
        cancel: &CancellationToken,
        backoff: &mut Backoff,
    ) -> Synced<L::Watch> {
        let from = point.resource_version.as_str();
        let options = ListOptions::default()
            .resource_version(from)
            .allow_watch_bookmarks(true)
            .timeout_seconds(self.watch_timeout_seconds());
        let until = Until::Settled(self.options.resume_settle);
        let ended = match self
            .sync_from_stream(&options, &point.objects, until, cancel)
            .await
        {
            Some(Ok(live)) => return Synced::Live(live),
            Some(Err(ended)) => ended,
            None => return Synced::Stopped,
        };
        let mut retry = RetryState::new(Duration::ZERO);
        match self.recover(ended, &mut retry, backoff, cancel).await {
            Next::FallBackToList => {
                tracing::info!(
                    resource_version = from,
                    "the saved state's resourceVersion is gone; listing"
                );
                Synced::FallBack
            }
            Next::AskAgain | Next::EndAttempt | Next::Cancelled => Synced::Stopped,
        }
    }

    /// Syncs from a watch opened with `options`: starts from `saved` (each
    /// prepared by the store, as every object the store receives is), folds
    /// the stream's initial events in until `until`, and replaces the store
    /// with the result. The stream, to go on as the live watch; or how it
    /// ended (reported), for the recovery table; `None` when cancelled.
    async fn sync_from_stream(
        &mut self,
        options: &ListOptions,
        saved: &[Arc<K>],
        until: Until,
        cancel: &CancellationToken,
    ) -> Option<Result<L::Watch, Ended>> {
        let started = self.options.clock.now();
        let at_latest = options
            .resource_version
            .as_deref()
            .is_none_or(str::is_empty);
        let gathered = self.gather(options, saved, until, cancel).await?;
        Some(gathered.map_err(|(phase, outcome, events)| Ended {
            phase,
            outcome,
            lasted: self.options.clock.since(started),
            events,
            at_latest,
        }))
    }

    /// [`sync_from_stream`](Self::sync_from_stream)'s work: the stream;
    /// or how it ended (reported), with the phase and the events it
    /// carried; `None` when cancelled.
    async fn gather(
        &mut self,
        options: &ListOptions,
        saved: &[Arc<K>],
        until: Until,
        cancel: &CancellationToken,
    ) -> Option<Result<L::Watch, Unfinished>> {
        let (open_phase, phase, mode) = match until {
            Until::InitialEventsEnd => (
                Phase::OpenWatchList,
                Phase::WatchList,
                ReflectorMode::WatchList,
            ),
            Until::Settled(_) => (Phase::Resume, Phase::Resume, ReflectorMode::Resumed),
        };
        let watch_list = until == Until::InitialEventsEnd;
        let from = options.resource_version.clone().unwrap_or_default();
        let mut state = InitialState::new(&from);
        for object in saved {
            let Some(object) = self.prepared(Arc::clone(object), Arrival::Listed) else {
                return Some(Err((open_phase, Outcome::StoreRefused, 0)));
            };
            state.seed(object);
        }
        let mut live = match self.open(options, cancel).await? {
            Ok(live) => live,
            Err(outcome) => return Some(Err((open_phase, outcome, 0))),
        };
        let started = self.options.clock.now();
        // A resume also settles this long after the watch opened, even
        // while events keep coming: on a cluster that changes more often
        // than the quiet period the replay would otherwise never end. The
        // state gathered by then is as consistent as a later one; the
        // rest of the replay arrives as live events.
        // (`None`: past what the clock can hold, so no limit.)
        let settle_by = match until {
            Until::Settled(quiet) => {
                tokio::time::Instant::now().checked_add(quiet.saturating_mul(RESUME_SETTLE_LIMIT))
            }
            Until::InitialEventsEnd => None,
        };
        let mut events = 0;
        let mut idle = IdleTimer::new();
        let mut progress_log =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_LOG, PROGRESS_LOG);
        loop {
            let idle_timeout = self.stream_idle_timeout();
            let next = tokio::select! {
                () = cancel.cancelled() => return None,
                _ = progress_log.tick() => {
                    tracing::info!(
                        objects = state.len(),
                        waited = ?self.options.clock.since(started),
                        ?mode,
                        "still gathering the initial events"
                    );
                    continue;
                }
                next = async {
                    match until {
                        Until::InitialEventsEnd => idle.next(&mut live, idle_timeout).await,
                        Until::Settled(quiet) => match settle_deadline(quiet, settle_by) {
                            Some(deadline) => tokio::time::timeout_at(deadline, idle.next(&mut live, idle_timeout)).await,
                            None => Ok(idle.next(&mut live, idle_timeout).await),
                        }
                            .unwrap_or(StreamNext::Ended),
                    }
                } => next,
            };
            let event = match next {
                StreamNext::Event(event) => event,
                StreamNext::Ended if watch_list => {
                    tracing::info!(
                        objects = state.len(),
                        "watch-list ended before its initial-events-end bookmark"
                    );
                    return Some(Err((phase, Outcome::Ended, events)));
                }
                // Quiet, or closed: what the server had to replay arrived.
                StreamNext::Ended => break,
                StreamNext::Idle => return Some(Err((phase, self.idle_watch(), events))),
                StreamNext::Failed(error) => {
                    return Some(Err((
                        phase,
                        self.watch_failed(&from, watch_list, error),
                        events,
                    )));
                }
            };
            events += 1;
            let added = matches!(event, WatchEvent::Added(_));
            match event {
                WatchEvent::Added(object)
                | WatchEvent::Modified(object)
                | WatchEvent::Deleted(object)
                    if self.is_other_type(&object) => {}
                WatchEvent::Added(object) | WatchEvent::Modified(object) => {
                    // Prepared as it arrives, as a list's objects are: a
                    // relist by watch-list holds no second copy of what
                    // the cache holds unchanged. A resume's replay is
                    // changes.
                    let arrival = if watch_list {
                        Arrival::Listed
                    } else {
                        Arrival::Changed
                    };
                    let Some(object) = self.prepared(Arc::new(object), arrival) else {
                        return Some(Err((phase, Outcome::StoreRefused, events)));
                    };
                    if watch_list && added {
                        state.add(object);
                    } else {
                        state.upsert(object);
                    }
                }
                WatchEvent::Deleted(object) => state.remove(&object),
                WatchEvent::Bookmark(bookmark) => {
                    let end = bookmark.is_initial_events_end();
                    if !end {
                        self.saw_periodic_bookmark();
                    }
                    if end || !watch_list {
                        // The server has sent everything up to it.
                        state.resource_version = bookmark.resource_version().to_string();
                        break;
                    }
                }
                WatchEvent::Error(status) => {
                    let error = clientgo_listwatch::Error::WatchStatus {
                        url: self.name().to_string(),
                        status: Box::new(status),
                    };
                    return Some(Err((
                        phase,
                        self.watch_failed(&from, watch_list, error),
                        events,
                    )));
                }
            }
        }
        let count = state.len();
        let resource_version = std::mem::take(&mut state.resource_version);
        let objects = state.into_objects();
        if let Err(source) = self.replace_store(objects, &resource_version, mode) {
            self.report(Error::Store {
                resource: self.name().to_string(),
                operation: "replace",
                source,
            });
            return Some(Err((phase, Outcome::StoreRefused, events)));
        }
        tracing::info!(
            from,
            %resource_version,
            objects = count,
            events,
            elapsed = ?self.options.clock.since(started),
            %mode,
            "synced from a watch stream without listing; the stream continues as the watch"
        );
        Some(Ok(live))
    }

    /// The store's [`prepare`](clientgo_store::ReflectorStore::prepare)
    /// of `object`; `None` (reported) when the store refuses it.
    pub(crate) fn prepared(&self, object: Arc<K>, arrival: Arrival) -> Option<Arc<K>> {
        self.store
            .prepare(object, arrival)
            .map_err(|source| {
                self.report(Error::Store {
                    resource: self.name().to_string(),
                    operation: "prepare",
                    source,
                });
            })
            .ok()
    }
}

#[cfg(test)]
mod settle_tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_resume_waits_for_quiet_or_the_limit_and_never_overflows() {
        let now = tokio::time::Instant::now();
        let second = Duration::from_secs(1);
        let rows = [
            (
                "quiet first",
                second,
                Some(now + 2 * second),
                Some(now + second),
            ),
            (
                "the limit first",
                3 * second,
                Some(now + 2 * second),
                Some(now + 2 * second),
            ),
            ("no limit", second, None, Some(now + second)),
            (
                "quiet past the clock",
                Duration::MAX,
                Some(now + second),
                Some(now + second),
            ),
            ("neither holds", Duration::MAX, None, None),
        ];
        for (name, quiet, settle_by, expected) in rows {
            assert_eq!(settle_deadline(quiet, settle_by), expected, "{name}");
        }
    }
}

#[cfg(test)]
mod initial_state_tests {
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    /// One step of a gathering.
    enum Step {
        Seed(&'static str, &'static str),
        Add(&'static str, &'static str),
        Upsert(&'static str, &'static str),
        Remove(&'static str),
    }

    /// A row: its name, the steps, the objects gathered (name and
    /// resourceVersion), and the resourceVersion reached.
    type Row = (
        &'static str,
        Vec<Step>,
        &'static [(&'static str, &'static str)],
        &'static str,
    );

    fn pod(name: &str, version: &str) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("ns".to_string()),
                resource_version: Some(version.to_string()),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
    }

    /// The objects gathered, as the store's replace receives them:
    /// `(name, resourceVersion)`, sorted.
    fn gathered(state: InitialState<Pod>) -> Vec<(String, String)> {
        let mut held: Vec<_> = state
            .into_objects()
            .iter()
            .map(|p| {
                let name = p.metadata.name.clone().unwrap_or_default();
                (
                    name,
                    p.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect();
        held.sort();
        held
    }

    #[test]
    fn a_gathering_holds_what_a_map_by_key_would() {
        use Step::*;
        let rows: [Row; 6] = [
            (
                "adds only",
                vec![Add("x", "1"), Add("y", "2")],
                &[("x", "1"), ("y", "2")],
                "2",
            ),
            (
                "a key added twice",
                vec![Add("x", "1"), Add("y", "2"), Add("x", "3")],
                &[("x", "3"), ("y", "2")],
                "3",
            ),
            (
                "a change among adds",
                vec![Add("x", "1"), Upsert("x", "2"), Add("y", "3")],
                &[("x", "2"), ("y", "3")],
                "3",
            ),
            (
                "a removal among adds",
                vec![Add("x", "1"), Add("y", "2"), Remove("x"), Add("z", "4")],
                &[("y", "2"), ("z", "4")],
                "4",
            ),
            (
                "a resume's replay",
                vec![
                    Seed("x", "1"),
                    Seed("y", "1"),
                    Upsert("x", "5"),
                    Remove("y"),
                    Upsert("z", "7"),
                ],
                &[("x", "5"), ("z", "7")],
                "7",
            ),
            ("nothing", vec![], &[], "0"),
        ];
        for (name, steps, expected, version) in rows {
            let mut state = InitialState::new("0");
            for step in steps {
                match step {
                    Seed(n, v) => state.seed(pod(n, v)),
                    Add(n, v) => state.add(pod(n, v)),
                    Upsert(n, v) => state.upsert(pod(n, v)),
                    Remove(n) => {
                        // A removal's object carries the version it was removed at.
                        let at =
                            (state.resource_version.parse::<u32>().unwrap_or(0) + 1).to_string();
                        state.remove(&pod(n, &at));
                    }
                }
            }
            assert_eq!(state.resource_version, version, "{name}");
            assert!(
                state.by_key.is_none() || state.arrived.is_empty(),
                "{name}: nothing left in arrival order once folded by key"
            );
            let only_adds = name != "a change among adds"
                && name != "a removal among adds"
                && name != "a resume's replay";
            assert_eq!(
                state.by_key.is_none(),
                only_adds,
                "{name}: kept in arrival order"
            );
            let expected: Vec<(String, String)> = expected
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            assert_eq!(gathered(state), expected, "{name}");
        }
    }
}
