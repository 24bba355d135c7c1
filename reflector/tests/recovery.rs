//! The reflector against clientgo-testing's server over loopback: each test
//! injects one fault, then checks that the store ends equal to the server
//! (keys and resourceVersions) and, through the server's request log, the
//! exact requests the reflector made to get there.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::*;
use clientgo_apimachinery::{ResourceVersionMatch, Status};
use clientgo_reflector::{Error, ReflectorMode};
use clientgo_store::{DeltaFifo, DeltaFifoOptions, DeltaType, Queue, ReflectorStore};
use clientgo_testing::{Corruption, RequestRecord, TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;

fn list_watch() -> clientgo_reflector::ReflectorOptions {
    fast_options().use_watch_list(false)
}

fn watches(server: &TestApiServer) -> Vec<RequestRecord> {
    server.requests().of(Verb::Watch)
}

fn lists(server: &TestApiServer) -> Vec<RequestRecord> {
    server.requests().of(Verb::List)
}

fn rv_of(record: &RequestRecord) -> Option<String> {
    record.list_options().resource_version
}

/// Syncs, then waits until the first watch is open and has carried one
/// event (so dropping it is not a "very short watch").
async fn synced_and_watching(
    server: &TestApiServer,
    running: &Running,
    cache: &dyn clientgo_store::Store<ConfigMap>,
) {
    converge(server, cache).await;
    eventually("a watch is open", async || !watches(server).is_empty()).await;
    create(server, "first-event");
    converge(server, cache).await;
    let _ = running;
}

#[tokio::test]
async fn lists_2345_objects_at_rv_0_then_watches_from_the_list() {
    // With a watch cache the real server answers a list at "0" in one page
    // whatever the limit; without one (etcd) it pages it.
    for watch_cache in [true, false] {
        lists_then_watches(watch_cache).await;
    }
}

async fn lists_then_watches(watch_cache: bool) {
    let server = seeded(TestApiServer::builder().watch_cache(watch_cache), 2345).await;
    let revision = server.storage().current_revision().to_string();
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), list_watch());
    converge(&server, &*cache).await;

    let pages = lists(&server);
    let expected_pages = if watch_cache { 1 } else { 5 };
    assert_eq!(pages.len(), expected_pages, "watch cache {watch_cache}");
    let first = pages[0].list_options();
    assert_eq!(first.resource_version.as_deref(), Some("0"));
    assert_eq!(first.limit, Some(500));
    for page in &pages[1..] {
        let options = page.list_options();
        assert_eq!(options.limit, Some(500));
        assert!(options.continue_token.is_some());
        assert_eq!(options.resource_version, None);
    }
    eventually("a watch is open", async || !watches(&server).is_empty()).await;
    let watch = watches(&server)[0].list_options();
    assert_eq!(watch.resource_version.as_deref(), Some(revision.as_str()));
    assert!(watch.allow_watch_bookmarks);
    assert_eq!(watch.send_initial_events, None);
    assert_eq!(watch.resource_version_match, None, "never sent on a watch");
    let timeout = watch.timeout_seconds.unwrap();
    assert!((300..600).contains(&timeout), "timeoutSeconds {timeout}");
    assert_eq!(running.reflector.last_sync_resource_version(), revision);
    assert_eq!(running.reflector.mode(), ReflectorMode::ListWatch);

    // Events flow. A later relist at the last resourceVersion is paginated
    // only if the list at "0" came back in pages (client-go's rule: a
    // server that answered it whole has a watch cache to answer from).
    update(&server, "cm-00001", "changed");
    create(&server, "new");
    converge(&server, &*cache).await;
    server.requests().clear();
    server
        .faults()
        .fail_next(Some(Verb::Watch), Status::internal_error("injected"));
    server.faults().drop_watches();
    eventually("a relist", async || lists(&server).len() == expected_pages).await;
    converge(&server, &*cache).await;
    let relist = lists(&server)[0].list_options();
    let last = server.storage().current_revision().to_string();
    assert_eq!(relist.resource_version.as_deref(), Some(last.as_str()));
    assert_eq!(relist.limit, (!watch_cache).then_some(500));
    running.stop().await;
}

#[tokio::test]
async fn a_dropped_watch_is_resumed_from_the_last_resource_version_without_a_relist() {
    let server = seeded(TestApiServer::builder(), 20).await;
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), list_watch());
    synced_and_watching(&server, &running, &*cache).await;
    let last = running.reflector.last_sync_resource_version();
    assert_eq!(last, server.storage().current_revision().to_string());

    server.faults().drop_watches();
    eventually("a second watch", async || watches(&server).len() == 2).await;
    update(&server, "cm-00003", "after");
    delete(&server, "cm-00004");
    create(&server, "after-drop");
    converge(&server, &*cache).await;

    assert_eq!(lists(&server).len(), 1, "no relist");
    let rewatch = &watches(&server)[1];
    assert_eq!(rv_of(rewatch).as_deref(), Some(last.as_str()));
    let stats = running.reflector.stats();
    assert_eq!(stats.lists, 1);
    assert_eq!(stats.rewatches, 1);
    assert!(running.reflector.last_error().is_none());
    running.stop().await;
}

#[tokio::test]
async fn a_410_opening_the_watch_relists_at_the_last_resource_version() {
    let server = seeded(TestApiServer::builder(), 10).await;
    let cache = cache();
    let errors = Arc::new(AtomicUsize::new(0));
    let options = list_watch().watch_error_handler({
        let errors = Arc::clone(&errors);
        move |_| {
            errors.fetch_add(1, Ordering::SeqCst);
        }
    });
    server
        .faults()
        .fail_next(Some(Verb::Watch), Status::gone("too old resource version"));
    let running = Running::start(lister(&server, |c| c), cache.clone(), options);
    let synced_at = server.storage().current_revision().to_string();
    eventually("a relist", async || lists(&server).len() == 2).await;
    create(&server, "later");
    converge(&server, &*cache).await;

    let lists = lists(&server);
    assert_eq!(rv_of(&lists[0]).as_deref(), Some("0"));
    assert_eq!(rv_of(&lists[1]).as_deref(), Some(synced_at.as_str()));
    assert_eq!(
        lists[1].list_options().limit,
        None,
        "unpaginated at a synced RV"
    );
    let watches = watches(&server);
    assert_eq!(watches[0].status, 410);
    assert_eq!(rv_of(&watches[1]).as_deref(), Some(synced_at.as_str()));
    assert_eq!(errors.load(Ordering::SeqCst), 1);
    running.stop().await;
}

#[tokio::test]
async fn a_410_on_a_relist_at_a_resource_version_relists_at_once_at_the_latest_state() {
    let server = seeded(TestApiServer::builder(), 10).await;
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), list_watch());
    synced_and_watching(&server, &running, &*cache).await;
    let last = running.reflector.last_sync_resource_version();
    server.requests().clear();

    // The watch is refused (a relist follows), and so is the relist at the
    // last resourceVersion.
    server
        .faults()
        .fail_next(Some(Verb::Watch), Status::internal_error("injected"));
    server.faults().fail_next(
        Some(Verb::List),
        Status::expired("too old resource version"),
    );
    server.faults().drop_watches();
    eventually("two lists", async || lists(&server).len() == 2).await;
    create(&server, "later");
    converge(&server, &*cache).await;

    let lists = lists(&server);
    assert_eq!(lists.len(), 2);
    assert_eq!(rv_of(&lists[0]).as_deref(), Some(last.as_str()));
    assert_eq!(lists[0].status, 410);
    assert_eq!(
        lists[1].list_options().resource_version,
        None,
        "a consistent read"
    );
    assert_eq!(
        lists[1].list_options().limit,
        None,
        "the same page size as the failed list"
    );
    let watches = watches(&server);
    assert_eq!(watches[0].status, 500);
    assert_eq!(rv_of(&watches[0]).as_deref(), Some(last.as_str()));
    let current = running.reflector.last_sync_resource_version();
    assert_eq!(current, server.storage().current_revision().to_string());
    running.stop().await;
}

#[tokio::test]
async fn changes_and_compaction_while_disconnected_end_in_a_410_event_and_a_relist() {
    let server = seeded(TestApiServer::builder(), 10).await;
    let fifo = Arc::new(DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default()));
    let running = Running::start(lister(&server, |c| c), fifo.clone(), list_watch());
    eventually("a watch is open", async || !watches(&server).is_empty()).await;
    create(&server, "first-event");
    eventually("the first event is queued", async || fifo.len() == 11).await;
    let last = running.reflector.last_sync_resource_version();

    // The re-watch waits in the server while objects change and history is
    // compacted past its resourceVersion: it starts with a 410 ERROR event.
    server.faults().set_latency(Duration::from_millis(500));
    server.faults().drop_watches();
    eventually("the re-watch is in flight", async || {
        running.reflector.stats().rewatches == 1
    })
    .await;
    delete(&server, "cm-00001");
    delete(&server, "cm-00002");
    update(&server, "cm-00003", "changed");
    create(&server, "created-while-down");
    server.compact_history();
    eventually("a relist", async || lists(&server).len() == 2).await;
    server.faults().set_latency(Duration::ZERO);
    eventually("the relist is applied", async || {
        running.reflector.last_sync_resource_version()
            == server.storage().current_revision().to_string()
    })
    .await;

    let lists = lists(&server);
    assert_eq!(
        rv_of(&lists[1]).as_deref(),
        Some(last.as_str()),
        "relist at the last RV"
    );
    let watches = watches(&server);
    assert_eq!(rv_of(&watches[1]).as_deref(), Some(last.as_str()));
    let error = running.reflector.last_error();
    assert!(error.is_none(), "cleared by the relist: {error:?}");
    running.stop().await;

    // The deletes missed while down come out as DeletedFinalStateUnknown.
    let mut final_state = std::collections::BTreeMap::new();
    let mut tombstones = Vec::new();
    while !fifo.is_empty() {
        fifo.pop(|deltas, _| {
            let last = deltas.last().unwrap();
            let key = match last {
                clientgo_store::Delta::Deleted(target) => {
                    if let clientgo_store::ObjectOrTombstone::Tombstone(tombstone) = target {
                        tombstones.push(tombstone.key.clone());
                    }
                    None
                }
                other => other.object().map(|o| {
                    (
                        format!("default/{}", o.metadata.name.as_deref().unwrap()),
                        o.metadata.resource_version.clone().unwrap(),
                    )
                }),
            };
            if let Some((key, rv)) = key {
                final_state.insert(key, rv);
            }
            assert!(
                deltas
                    .iter()
                    .all(|d| d.delta_type() != DeltaType::ReplacedAll)
            );
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
    }
    tombstones.sort();
    assert_eq!(tombstones, ["default/cm-00001", "default/cm-00002"]);
    assert_eq!(final_state, server_state(&server));
}

#[tokio::test]
async fn a_429_with_retry_after_opening_the_watch_backs_off_and_rewatches_without_a_relist() {
    let server = seeded(TestApiServer::builder(), 10).await;
    let cache = cache();
    server
        .faults()
        .fail_next(Some(Verb::Watch), Status::too_many_requests("slow down", 1));
    // No retries in the REST layer: the reflector's own rule is under test.
    let running = Running::start(
        lister(&server, |c| c.max_retries(0)),
        cache.clone(),
        list_watch(),
    );
    eventually("a second watch", async || watches(&server).len() == 2).await;
    create(&server, "later");
    converge(&server, &*cache).await;

    assert_eq!(lists(&server).len(), 1, "no relist");
    let watches = watches(&server);
    assert_eq!(watches[0].status, 429);
    assert_eq!(rv_of(&watches[0]), rv_of(&watches[1]));
    let error = running.reflector.stats();
    assert_eq!(error.rewatches, 1);
    assert_eq!(error.backoffs, 1);
    assert_eq!(
        running
            .reflector
            .last_error()
            .unwrap()
            .status()
            .unwrap()
            .code,
        429
    );
    running.stop().await;
}

async fn corrupted_watch(corruption: Corruption, expect_relist: bool) {
    let server = seeded(TestApiServer::builder(), 10).await;
    let cache = cache();
    server.faults().corrupt_next_watch(corruption);
    let lister = lister(&server, |c| c).max_frame_bytes(64 * 1024);
    let running = Running::start(lister, cache.clone(), list_watch());
    eventually("a second watch", async || watches(&server).len() == 2).await;
    update(&server, "cm-00001", "after");
    create(&server, "later");
    converge(&server, &*cache).await;

    let lists = lists(&server);
    let watches = watches(&server);
    let synced_at = rv_of(&watches[0]);
    assert_eq!(
        lists.len(),
        if expect_relist { 2 } else { 1 },
        "{corruption:?}"
    );
    if expect_relist {
        assert_eq!(rv_of(&lists[1]), synced_at, "relist at the last RV");
    }
    assert_eq!(rv_of(&watches[1]), synced_at, "from the last good RV");
    let error = running.reflector.last_error();
    if !expect_relist {
        let error = error.expect("the frame error is kept");
        assert!(
            error.list_watch_error().unwrap().frame_error().is_some(),
            "{error}"
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn a_malformed_frame_restarts_the_watch_from_the_last_good_resource_version() {
    corrupted_watch(Corruption::Malformed, false).await;
}

#[tokio::test]
async fn a_truncated_frame_restarts_the_watch_from_the_last_good_resource_version() {
    corrupted_watch(Corruption::Truncated, false).await;
}

#[tokio::test]
async fn an_oversized_frame_relists() {
    corrupted_watch(Corruption::Oversized(100 * 1024), true).await;
}

#[tokio::test]
async fn a_stalled_watch_is_ended_by_the_idle_timeout_and_resumed() {
    // Bookmarks every 50 ms keep healthy watches well inside the 300 ms
    // idle timeout; only the stalled one sends nothing.
    let server = seeded(
        TestApiServer::builder().bookmark_interval(Duration::from_millis(50)),
        10,
    )
    .await;
    let cache = cache();
    let options = list_watch().watch_idle_timeout(Duration::from_millis(300));
    let running = Running::start(lister(&server, |c| c), cache.clone(), options);
    // The idle timeout applies once the server has shown it sends
    // bookmarks.
    eventually("a bookmark", async || {
        running.reflector.stats().bookmarks > 0
    })
    .await;
    server.faults().stall_next_watch(Duration::from_secs(60));
    server.faults().drop_watches();
    let started = tokio::time::Instant::now();
    eventually("a third watch", async || watches(&server).len() == 3).await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not the stall's 60 s"
    );
    create(&server, "later");
    converge(&server, &*cache).await;

    assert_eq!(lists(&server).len(), 1, "no relist");
    let watches = watches(&server);
    assert_eq!(rv_of(&watches[1]), rv_of(&watches[2]));
    let stats = running.reflector.stats();
    assert_eq!(stats.idle_timeouts, 1);
    assert!(matches!(
        running.reflector.last_error().as_deref(),
        Some(Error::IdleWatch { .. })
    ));
    running.stop().await;
}

/// Found against a real kube-apiserver: a server without a watch cache
/// sends no bookmarks, and the idle timeout restarted every quiet watch,
/// which then got 410 once its resourceVersion was compacted, so every
/// informer relisted every two minutes.
#[tokio::test]
async fn without_bookmarks_a_quiet_watch_is_never_restarted() {
    for watch_list in [false, true] {
        let server = seeded(TestApiServer::builder().watch_cache(false), 5).await;
        let cache = cache();
        let options = fast_options()
            .use_watch_list(watch_list)
            .watch_idle_timeout(Duration::from_millis(200));
        let running = Running::start(lister(&server, |c| c), cache.clone(), options);
        converge(&server, &*cache).await;
        eventually("a watch is open", async || !watches(&server).is_empty()).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let stats = running.reflector.stats();
        assert_eq!(stats.idle_timeouts, 0, "watch-list {watch_list}");
        assert_eq!(watches(&server).len(), 1, "watch-list {watch_list}");
        // The quiet watch still carries what happens later.
        create(&server, "later");
        converge(&server, &*cache).await;
        assert_eq!(lists(&server).len(), usize::from(!watch_list));
        running.stop().await;
    }
}

#[tokio::test]
async fn a_server_restart_is_survived_without_a_relist() {
    let server = seeded(TestApiServer::builder(), 10).await;
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), list_watch());
    synced_and_watching(&server, &running, &*cache).await;
    let last = running.reflector.last_sync_resource_version();

    server.faults().restart();
    update(&server, "cm-00002", "during-restart");
    eventually("a second watch", async || watches(&server).len() == 2).await;
    create(&server, "after-restart");
    converge(&server, &*cache).await;

    assert_eq!(lists(&server).len(), 1, "no relist");
    assert_eq!(rv_of(&watches(&server)[1]).as_deref(), Some(last.as_str()));
    running.stop().await;
}

#[tokio::test]
async fn watch_list_streams_the_state_and_keeps_the_stream_as_the_watch() {
    let server = seeded(TestApiServer::builder(), 300).await;
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), fast_options());
    converge(&server, &*cache).await;
    assert_eq!(running.reflector.mode(), ReflectorMode::WatchList);
    update(&server, "cm-00007", "live");
    delete(&server, "cm-00008");
    create(&server, "live");
    converge(&server, &*cache).await;

    assert!(lists(&server).is_empty(), "no list at all");
    let watches = watches(&server);
    assert_eq!(watches.len(), 1, "one stream for the state and the changes");
    let options = watches[0].list_options();
    assert_eq!(options.send_initial_events, Some(true));
    assert_eq!(
        options.resource_version_match,
        Some(ResourceVersionMatch::NotOlderThan)
    );
    assert!(options.allow_watch_bookmarks);
    assert_eq!(
        options.resource_version, None,
        "the first is a consistent read"
    );
    assert_eq!(options.limit, None);
    let stats = running.reflector.stats();
    assert_eq!((stats.watch_lists, stats.lists), (1, 0));
    running.stop().await;
}

#[tokio::test]
async fn watch_list_refused_by_the_server_falls_back_to_list_and_watch() {
    let server = seeded(TestApiServer::builder().watch_list(false), 30).await;
    let cache = cache();
    let reported = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let options = fast_options().watch_error_handler({
        let reported = Arc::clone(&reported);
        move |error| reported.lock().push(error.to_string())
    });
    let running = Running::start(lister(&server, |c| c), cache.clone(), options);
    converge(&server, &*cache).await;
    eventually("a plain watch", async || watches(&server).len() == 2).await;
    create(&server, "later");
    converge(&server, &*cache).await;

    assert_eq!(running.reflector.mode(), ReflectorMode::ListWatch);
    let watches = watches(&server);
    assert_eq!(watches[0].status, 422);
    assert_eq!(watches[0].list_options().send_initial_events, Some(true));
    assert_eq!(watches[1].list_options().send_initial_events, None);
    let lists = lists(&server);
    assert_eq!(lists.len(), 1);
    assert_eq!(rv_of(&lists[0]).as_deref(), Some("0"));
    assert_eq!(lists[0].list_options().limit, Some(500));
    assert_eq!(running.reflector.stats().watch_list_fallbacks, 1);
    let reported = reported.lock().clone();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].contains("watch-list"), "{reported:?}");
    assert!(
        running.reflector.last_error().is_none(),
        "cleared by the list"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_403_is_kept_as_the_last_error_until_a_list_succeeds() {
    let server = seeded(TestApiServer::builder().deny(Verb::List, config_maps()), 5).await;
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), list_watch());
    eventually("an error", async || {
        running.reflector.last_error().is_some()
    })
    .await;
    let error = running.reflector.last_error().unwrap();
    assert_eq!(error.status().unwrap().code, 403, "{error}");
    assert!(error.to_string().contains("forbidden"), "{error}");

    server.allow_all();
    converge(&server, &*cache).await;
    eventually("the error is cleared", async || {
        running.reflector.last_error().is_none()
    })
    .await;
    running.stop().await;
}

#[tokio::test]
async fn wait_for_resource_version_returns_once_a_write_is_in_the_store() {
    let server = seeded(TestApiServer::builder(), 5).await;
    let cache = cache();
    let running = Running::start(lister(&server, |c| c), cache.clone(), fast_options());
    let written = create(&server, "mine");
    tokio::time::timeout(
        PATIENCE,
        running.reflector.wait_for_resource_version(&written),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(
        clientgo_store::Store::get_by_key(&*cache, "default/mine").is_some(),
        "read your write"
    );
    let reflector = running.reflector.clone();
    running.stop().await;
    let error = reflector
        .wait_for_resource_version("999999999")
        .await
        .unwrap_err();
    assert!(matches!(error, clientgo_reflector::WaitError::Stopped(_)));
}

/// A real cache whose replaces and resyncs a test observes: each replace
/// is reported with its resourceVersion before it is applied.
struct ObservedStore {
    inner: Arc<clientgo_store::Indexer<ConfigMap>>,
    on_replace: Box<dyn Fn(&str) + Send + Sync>,
    resyncs: AtomicUsize,
}

impl ObservedStore {
    fn new(on_replace: impl Fn(&str) + Send + Sync + 'static) -> Self {
        ObservedStore {
            inner: cache(),
            on_replace: Box::new(on_replace),
            resyncs: AtomicUsize::new(0),
        }
    }
}

impl ReflectorStore<ConfigMap> for ObservedStore {
    fn add(&self, object: Arc<ConfigMap>) -> Result<(), clientgo_store::StoreError> {
        self.inner.add(object)
    }
    fn update(&self, object: Arc<ConfigMap>) -> Result<(), clientgo_store::StoreError> {
        self.inner.update(object)
    }
    fn delete(
        &self,
        object: clientgo_store::ObjectOrTombstone<ConfigMap>,
    ) -> Result<(), clientgo_store::StoreError> {
        self.inner.delete(object)
    }
    fn replace(
        &self,
        objects: Vec<Arc<ConfigMap>>,
        resource_version: &str,
    ) -> Result<(), clientgo_store::StoreError> {
        (self.on_replace)(resource_version);
        self.inner.replace(objects, resource_version)
    }
    fn resync(&self) -> Result<(), clientgo_store::StoreError> {
        self.resyncs.fetch_add(1, Ordering::SeqCst);
        self.inner.resync()
    }
}

#[tokio::test]
async fn resync_ticks_ask_should_resync_and_resync_the_store() {
    let server = seeded(TestApiServer::builder(), 5).await;
    let store = Arc::new(ObservedStore::new(|_| {}));
    let asked = Arc::new(AtomicUsize::new(0));
    let options = fast_options()
        .resync_period(Duration::from_millis(50))
        .should_resync({
            let asked = Arc::clone(&asked);
            // Every other tick.
            move || asked.fetch_add(1, Ordering::SeqCst) % 2 == 1
        });
    let running = Running::start(lister(&server, |c| c), store.clone(), options);
    eventually("four ticks", async || asked.load(Ordering::SeqCst) >= 4).await;
    running.stop().await;
    let asked = asked.load(Ordering::SeqCst);
    let resyncs = store.resyncs.load(Ordering::SeqCst);
    assert_eq!(resyncs, asked / 2, "asked {asked}, resynced {resyncs}");
    converge(&server, &*store.inner).await;
    assert_eq!(
        lists(&server).len() + watches(&server).len(),
        1,
        "resync sends nothing"
    );
}

#[tokio::test]
async fn a_relist_reuses_the_stores_unchanged_objects() {
    let server = seeded(TestApiServer::builder(), 20).await;
    let cache = cache();
    let options = list_watch();
    let running = Running::start(lister(&server, |c| c), cache.clone(), options);
    synced_and_watching(&server, &running, &*cache).await;
    let unchanged = clientgo_store::Store::get_by_key(&*cache, "default/cm-00001").unwrap();
    let to_change = clientgo_store::Store::get_by_key(&*cache, "default/cm-00002").unwrap();

    // The watch is refused, so the reflector relists; one object changes
    // meanwhile.
    server
        .faults()
        .fail_next(Some(Verb::Watch), Status::internal_error("injected"));
    server.faults().set_latency(Duration::from_millis(300));
    server.faults().drop_watches();
    update(&server, "cm-00002", "changed");
    server.faults().set_latency(Duration::ZERO);
    eventually("a relist", async || running.reflector.stats().lists == 2).await;
    converge(&server, &*cache).await;

    let changed = assert_known_object_reused(&*cache, &unchanged, &to_change);
    assert_ne!(
        changed.metadata.resource_version,
        to_change.metadata.resource_version
    );
    running.stop().await;
}

#[tokio::test]
async fn a_watch_list_relist_reuses_the_stores_unchanged_objects_too() {
    let server = seeded(TestApiServer::builder().watch_list(true), 20).await;
    let cache = cache();
    let options = crate::support::fast_options().use_watch_list(true);
    let running = Running::start(lister(&server, |c| c), cache.clone(), options);
    eventually("a watch-list", async || {
        running.reflector.stats().watch_lists == 1
    })
    .await;
    converge(&server, &*cache).await;
    let unchanged = clientgo_store::Store::get_by_key(&*cache, "default/cm-00001").unwrap();
    let to_change = clientgo_store::Store::get_by_key(&*cache, "default/cm-00002").unwrap();

    // The re-watch meets 410 Gone (two writes, then the history is
    // compacted while watches are held), so the reflector watch-lists
    // again.
    server.faults().hold_watches();
    server.faults().drop_watches();
    update(&server, "cm-00002", "changed");
    update(&server, "cm-00003", "changed");
    server.compact_history();
    server.faults().release_watches();
    eventually("a second watch-list", async || {
        running.reflector.stats().watch_lists == 2
    })
    .await;
    converge(&server, &*cache).await;

    assert_known_object_reused(&*cache, &unchanged, &to_change);
    running.stop().await;
}

/// After a relist: `default/cm-00001`, unchanged, is still the cache's
/// same `Arc`; `default/cm-00002` is a new object. Returns the latter.
fn assert_known_object_reused(
    cache: &dyn clientgo_store::Store<ConfigMap>,
    unchanged: &Arc<ConfigMap>,
    to_change: &Arc<ConfigMap>,
) -> Arc<ConfigMap> {
    let after = cache.get_by_key("default/cm-00001").unwrap();
    assert!(Arc::ptr_eq(unchanged, &after), "the known object is reused");
    let changed = cache.get_by_key("default/cm-00002").unwrap();
    assert!(!Arc::ptr_eq(to_change, &changed));
    changed
}

/// client-go's reflector skips a watch event of an unexpected type and
/// applies the rest; ours ended the stream as malformed and re-watched.
#[tokio::test]
async fn a_watch_event_of_another_kind_is_skipped_and_the_watch_goes_on() {
    for watch_list in [false, true] {
        let server = seeded(TestApiServer::builder(), 3).await;
        let cache = cache();
        server.faults().foreign_event_next_watch();
        let options = fast_options().use_watch_list(watch_list);
        let running = Running::start(lister(&server, |c| c), cache.clone(), options);
        converge(&server, &*cache).await;
        create(&server, "after");
        converge(&server, &*cache).await;
        assert_eq!(
            watches(&server).len(),
            1,
            "the watch went on (watch-list {watch_list})"
        );
        assert!(
            store_state(&*cache)
                .keys()
                .all(|key| !key.contains("foreign"))
        );
        running.stop().await;
    }
}

/// One way of breaking a watch-list, ordered from the test server.
type Breakage = (&'static str, fn(&TestApiServer));

/// The wire issue: a watch-list that fails in a way client-go does not
/// retry (anything but 429 and a refused connection) lists instead for
/// that round, and the store syncs; it used to back off and ask for
/// watch-list again, forever. In JSON and in protobuf, each way the test
/// server can break it. (A stream cut inside a frame is client-go's clean
/// close: see the next test.)
#[tokio::test]
async fn a_broken_watch_list_falls_back_to_a_list_and_syncs() {
    let breakages: [Breakage; 4] = [
        ("a 500 answer", |server| {
            server
                .faults()
                .fail_next(Some(Verb::Watch), Status::internal_error("boom"))
        }),
        ("an ERROR event", |server| {
            server
                .faults()
                .error_event_next_watch(Status::internal_error("boom"))
        }),
        ("a malformed frame", |server| {
            server.faults().corrupt_next_watch(Corruption::Malformed)
        }),
        ("a frame over the limit", |server| {
            server
                .faults()
                .corrupt_next_watch(Corruption::Oversized(100 * 1024))
        }),
    ];
    for protobuf in [false, true] {
        for (what, breakage) in breakages {
            let what = format!("{what} (protobuf {protobuf})");
            let server = seeded(TestApiServer::builder(), 10).await;
            let cache = cache();
            breakage(&server);
            let lister = lister(&server, |config| {
                if protobuf {
                    config
                } else {
                    config.content_type(clientgo_rest::ContentType::Json)
                }
            })
            .max_frame_bytes(64 * 1024);
            let running = Running::start(lister, cache.clone(), fast_options());
            converge(&server, &*cache).await;
            create(&server, "later");
            converge(&server, &*cache).await;

            let stats = running.reflector.stats();
            assert_eq!(stats.watch_list_fallbacks, 1, "{what}");
            assert_eq!((stats.watch_lists, stats.lists), (0, 1), "{what}");
            assert_eq!(running.reflector.mode(), ReflectorMode::ListWatch, "{what}");
            let watches = watches(&server);
            assert_eq!(
                watches[0].list_options().send_initial_events,
                Some(true),
                "{what}"
            );
            assert_eq!(
                watches[1].list_options().send_initial_events,
                None,
                "{what}: a plain watch after the list"
            );
            assert_eq!(lists(&server).len(), 1, "{what}");
            running.stop().await;
        }
    }
}

/// client-go's stream watcher takes a stream cut inside a frame (an
/// unexpected EOF) for a clean close: a watch-list cut so after its
/// initial events is asked for again, not turned into a list.
#[tokio::test]
async fn a_watch_list_cut_mid_stream_is_asked_for_again() {
    for protobuf in [false, true] {
        let server = seeded(TestApiServer::builder(), 10).await;
        let cache = cache();
        server.faults().corrupt_next_watch(Corruption::Truncated);
        let lister = lister(&server, |config| {
            if protobuf {
                config
            } else {
                config.content_type(clientgo_rest::ContentType::Json)
            }
        });
        let running = Running::start(lister, cache.clone(), fast_options());
        converge(&server, &*cache).await;
        let stats = running.reflector.stats();
        assert_eq!(
            (stats.watch_list_fallbacks, stats.lists, stats.watch_lists),
            (0, 0, 1),
            "protobuf {protobuf}"
        );
        assert_eq!(running.reflector.mode(), ReflectorMode::WatchList);
        assert_eq!(watches(&server).len(), 2, "asked again once");
        running.stop().await;
    }
}

/// "Synced" is one fact: by the time the store hears of a sync (and an
/// informer's queue may report itself synced), the status already shows
/// that sync's resourceVersion and mode. They used to be recorded after
/// the replace, so a waiter woken by the store could read `""` and
/// `NotSynced`.
#[tokio::test]
async fn the_status_shows_a_sync_before_the_store_hears_of_it() {
    for (use_watch_list, mode) in [
        (true, ReflectorMode::WatchList),
        (false, ReflectorMode::ListWatch),
    ] {
        let server = seeded(TestApiServer::builder(), 3).await;
        // What the status shows as each replace reaches the store.
        let status = Arc::new(std::sync::OnceLock::<clientgo_reflector::ReflectorStatus>::new());
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let store = Arc::new(ObservedStore::new({
            let (status, seen) = (Arc::clone(&status), Arc::clone(&seen));
            move |replaced_at| {
                if let Some(status) = status.get() {
                    seen.lock().push((
                        replaced_at.to_string(),
                        status.last_sync_resource_version(),
                        status.mode(),
                    ));
                }
            }
        }));
        let reflector = clientgo_reflector::Reflector::new(
            lister(&server, |c| c),
            Arc::clone(&store) as Arc<dyn ReflectorStore<ConfigMap>>,
            fast_options().use_watch_list(use_watch_list),
        );
        status.set(reflector.status()).unwrap();
        let cancel = tokio_util::sync::CancellationToken::new();
        let task = tokio::spawn(reflector.run(cancel.clone()));
        converge(&server, &*store.inner).await;
        cancel.cancel();
        task.await.unwrap();
        let seen = seen.lock().clone();
        assert!(!seen.is_empty(), "watch-list {use_watch_list}: no replace");
        for (replaced_at, shown, shown_mode) in seen {
            assert_eq!(shown, replaced_at, "watch-list {use_watch_list}");
            assert_eq!(shown_mode, mode, "watch-list {use_watch_list}");
        }
    }
}
