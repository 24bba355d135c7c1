//! The informer's cache against a real server: relists that change
//! nothing, deletions missed while the watch was down, read-your-writes,
//! indexes added while running, transforms and the error handler.
//!
//! Written once over `Cm` and a storage: `tests/cache.rs` runs it over
//! `ConfigMap`s in the default (compact) storage, `tests/cache_decoded.rs`
//! in `Storage::Decoded`, `tests/cache_lz4.rs` in `Storage::CompactLz4`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::Cm;
use crate::support::*;
use clientgo_informers::SharedIndexInformerOptions;

/// The suite's informer options: fast backoffs, the binary's storage.
fn options() -> SharedIndexInformerOptions<Cm> {
    fast_options().storage(super::STORAGE)
}
use clientgo_apimachinery::{LabelSelector, Object, Status};
use clientgo_informers::{Error, HandlerOptions, Transform};
use clientgo_reflector::WaitError;
use clientgo_rest::{CreateOptions, ResourceClient};
use clientgo_store::{IndexFunc, IndexFuncError, Indexers};
use clientgo_testing::Verb;
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_that_changes_nothing_reaches_only_handlers_due_for_resync() {
    let server = seeded(8).await;
    let informer = informer::<Cm>(&server, options().resync_period(Duration::from_secs(1)));
    let resyncing = Recorder::default();
    let quiet = Recorder::default();
    let resyncing_registration = informer.add_event_handler(resyncing.clone()).unwrap();
    let quiet_registration = informer
        .add_event_handler_with_options(
            quiet.clone(),
            HandlerOptions::default().resync_period(Duration::ZERO),
        )
        .unwrap();
    assert_eq!(
        resyncing_registration.resync_period(),
        Duration::from_secs(1)
    );
    assert_eq!(quiet_registration.resync_period(), Duration::ZERO);
    let running = Running::start(informer.clone());
    running.synced().await;

    let due = resyncing.clone();
    eventually("a resync reaches the resyncing handler", async move || {
        due.seen().iter().filter(|s| s.is_resync()).count() >= 8
    })
    .await;

    // Force a relist: the watch is dropped and the re-watch is answered
    // 410 Gone, so the reflector lists again (nothing changed meanwhile).
    let lists_before = informer.stats().reflector.lists + informer.stats().reflector.watch_lists;
    server
        .faults()
        .fail_next(Some(Verb::Watch), Status::gone("too old resource version"));
    server.faults().drop_watches();
    let relisted = informer.clone();
    eventually("the informer relists", async move || {
        let stats = relisted.stats().reflector;
        stats.lists + stats.watch_lists > lists_before
    })
    .await;
    create(&server, "after-relist", "web");
    let quiet_done = quiet.clone();
    eventually("the quiet handler sees the new object", async move || {
        quiet_done.count() == 9
    })
    .await;

    // Each handler has its own thread: wait for the resyncing one too.
    let resyncing_done = resyncing.clone();
    eventually(
        "the resyncing handler sees the new object",
        async move || {
            resyncing_done
                .seen()
                .iter()
                .filter(|s| matches!(s, Seen::Add { .. }))
                .count()
                >= 9
        },
    )
    .await;

    let quiet_seen = quiet.seen();
    assert!(
        quiet_seen.iter().all(|s| matches!(s, Seen::Add { .. })),
        "the handler without resync got only adds, no resync or relist updates: {quiet_seen:?}"
    );
    assert_eq!(
        resyncing
            .seen()
            .iter()
            .filter(|s| matches!(s, Seen::Add { .. }))
            .count(),
        9
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_deleted_while_the_watch_was_down_arrive_as_tombstones() {
    let server = seeded(10).await;
    let informer = informer::<Cm>(&server, options());
    let recorder = Recorder::default();
    informer.add_event_handler(recorder.clone()).unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    let last_known: HashMap<String, String> = informer
        .lister()
        .list(&LabelSelector::everything())
        .into_iter()
        .filter_map(|object| {
            Some((
                object.name()?.to_string(),
                object.resource_version()?.to_string(),
            ))
        })
        .collect();

    let errors_before = informer.stats().reflector.errors;
    server.deny(Verb::Watch, config_maps());
    server.faults().drop_watches();
    // Delete only once the re-watch has been refused: an event published
    // while the dropped watch is still winding down could otherwise reach
    // the handler as a plain delete.
    let refused = informer.clone();
    eventually("the re-watch is refused", async move || {
        refused.stats().reflector.errors > errors_before
    })
    .await;
    for index in 0..3 {
        delete(&server, &format!("cm-{index:05}"));
    }
    let cache = informer.lister();
    eventually("a relist drops the deleted objects", async move || {
        cache.len() == 7
    })
    .await;
    server.allow_all();
    // The handler hears of the deletes on its own thread, after the cache.
    let notified = recorder.clone();
    eventually("the handler hears of the deletes", async move || {
        notified
            .seen()
            .iter()
            .filter(|s| matches!(s, Seen::Delete { .. }))
            .count()
            >= 3
    })
    .await;

    let deletes: Vec<Seen> = recorder
        .seen()
        .into_iter()
        .filter(|s| matches!(s, Seen::Delete { .. }))
        .collect();
    assert_eq!(deletes.len(), 3, "{deletes:?}");
    for seen in &deletes {
        let Seen::Delete {
            name,
            rv,
            tombstone,
        } = seen
        else {
            unreachable!()
        };
        assert!(
            tombstone,
            "{name} was deleted while unwatched: a DeletedFinalStateUnknown"
        );
        assert_eq!(
            rv, &last_known[name],
            "the tombstone carries the last known state"
        );
    }
    // Once watches are allowed again, live changes flow.
    create(&server, "back", "web");
    let done = recorder.clone();
    eventually("the watch resumes", async move || {
        done.seen().iter().any(|s| s.name() == "back")
    })
    .await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_can_be_read_back_from_the_cache() {
    let server = seeded(2).await;
    let informer = informer::<Cm>(&server, options());
    let running = Running::start(informer.clone());
    running.synced().await;
    let api = ResourceClient::<ConfigMap>::namespaced(client(&server), "default");
    for index in 0..5 {
        let mut object = ConfigMap::default();
        object.metadata.name = Some(format!("written-{index}"));
        let created = api
            .create(&CreateOptions::default(), &object)
            .await
            .unwrap();
        let rv = created.metadata.resource_version.unwrap();
        informer.wait_for_resource_version(&rv).await.unwrap();
        let cached = informer
            .lister()
            .namespace("default")
            .get(&format!("written-{index}"))
            .unwrap();
        assert_eq!(cached.resource_version(), Some(rv.as_str()));
    }
    assert!(!informer.last_sync_resource_version().is_empty());
    assert!(matches!(
        informer.wait_for_resource_version("not-a-number").await,
        Err(WaitError::NotComparable(_))
    ));
    let stopped = informer.clone();
    running.stop().await;
    assert!(matches!(
        stopped.wait_for_resource_version("999999999").await,
        Err(WaitError::Stopped(_))
    ));
    assert!(matches!(
        stopped.add_event_handler(Recorder::default()),
        Err(Error::Stopped { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_added_while_running_cover_existing_and_new_objects() {
    let server = seeded(10).await;
    let informer = informer::<Cm>(&server, options());
    let running = Running::start(informer.clone());
    running.synced().await;

    let by_app: IndexFunc<Cm> = Arc::new(|object: &Cm| {
        let app = object
            .labels()
            .get("app")
            .ok_or_else(|| IndexFuncError("no app label".into()))?;
        Ok(vec![app.to_string()])
    });
    informer
        .add_indexers(Indexers::from([("by-app".to_string(), by_app.clone())]))
        .unwrap();
    assert_eq!(
        informer.lister().by_index("by-app", "web").unwrap().len(),
        5
    );
    create(&server, "new-web", "web");
    let cache = informer.lister();
    eventually("the new object is indexed", async move || {
        cache
            .by_index("by-app", "web")
            .unwrap()
            .iter()
            .any(|object| object.name() == Some("new-web"))
    })
    .await;
    let conflict = informer.add_indexers(Indexers::from([("by-app".to_string(), by_app)]));
    assert!(matches!(conflict, Err(Error::Store { .. })), "{conflict:?}");
    running.stop().await;
}

/// A whole-object transform, counting its calls, that drops
/// managedFields.
fn counted_strip(calls: &Arc<AtomicUsize>) -> Transform<Cm> {
    let calls = Arc::clone(calls);
    Transform::object(move |mut object: Arc<Cm>| {
        calls.fetch_add(1, Ordering::Relaxed);
        if object.meta().managed_fields.is_some() {
            Arc::make_mut(&mut object).meta_mut().managed_fields = None;
        }
        Ok(object)
    })
}

/// The transform's rule, the same in every storage: it runs once per
/// arriving object version, before caching, and what it returns is what
/// reads get; reads never run it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transforms_and_error_handlers_are_options_of_the_informer() {
    let server = TestApiServerWithManagedFields::start().await;
    let errors = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&errors);
    let calls = Arc::new(AtomicUsize::new(0));
    let informer = informer::<Cm>(
        &server.0,
        options()
            .keep_managed_fields(true)
            .transform(counted_strip(&calls))
            .watch_error_handler(move |_| {
                counter.fetch_add(1, Ordering::Relaxed);
            }),
    );
    server
        .0
        .faults()
        .fail_next(Some(Verb::Watch), Status::internal_error("injected"));
    let running = Running::start(informer.clone());
    running.synced().await;
    assert!(
        errors.load(Ordering::Relaxed) >= 1,
        "the error handler heard of the failed watch-list"
    );
    let calls_at_sync = calls.load(Ordering::Relaxed);
    assert!(calls_at_sync >= 1, "the transform ran at ingest");
    for _ in 0..3 {
        let cached = informer
            .lister()
            .namespace("default")
            .get("managed")
            .unwrap();
        assert!(
            cached.meta().managed_fields.is_none(),
            "managedFields stripped before caching"
        );
        assert!(
            cached.meta().labels.is_some(),
            "the rest of the metadata is kept"
        );
    }
    assert_eq!(
        calls.load(Ordering::Relaxed),
        calls_at_sync,
        "reads never run the transform"
    );
    running.stop().await;
}

/// `keep_managed_fields` is the one setting for managedFields: dropped by
/// default, kept when asked, in every storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_fields_are_dropped_unless_kept() {
    let server = TestApiServerWithManagedFields::start().await;
    for keep in [false, true] {
        let informer = informer::<Cm>(&server.0, options().keep_managed_fields(keep));
        let running = Running::start(informer.clone());
        running.synced().await;
        let cached = informer
            .lister()
            .namespace("default")
            .get("managed")
            .unwrap();
        assert_eq!(cached.meta().managed_fields.is_some(), keep, "keep {keep}");
        running.stop().await;
    }
}

/// A server holding one config map with managedFields.
struct TestApiServerWithManagedFields(clientgo_testing::TestApiServer);

impl TestApiServerWithManagedFields {
    async fn start() -> Self {
        let server = seeded(0).await;
        server
            .storage()
            .create(
                &config_maps(),
                "default",
                json!({"metadata": {
                    "name": "managed",
                    "labels": {"app": "web"},
                    "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                        "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:v": {}}}}]
                }, "data": {"v": "1"}}),
            )
            .unwrap();
        TestApiServerWithManagedFields(server)
    }
}
