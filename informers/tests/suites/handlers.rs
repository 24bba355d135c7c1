//! Handlers against a real server: isolation of a slow handler, replay to
//! a late handler, bounded coalescing queues, removal, and the cache being
//! updated before any handler runs.
//!
//! Written once over `Cm` and a storage: `tests/handlers.rs` runs it over
//! `ConfigMap`s in the default (compact) storage,
//! `tests/handlers_decoded.rs` in `Storage::Decoded`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Cm;
use crate::support::*;
use clientgo_informers::SharedIndexInformerOptions;

/// The suite's informer options: fast backoffs, the binary's storage.
fn options() -> SharedIndexInformerOptions<Cm> {
    fast_options().storage(super::STORAGE)
}
use clientgo_apimachinery::Object;
use clientgo_informers::{
    HandlerOptions, HandlerQueue, ResourceEventHandlerFuncs, SharedIndexInformer,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_delays_neither_the_cache_nor_other_handlers() {
    let server = seeded(0).await;
    let informer = informer::<Cm>(&server, options());
    let gate = Gate::default();
    let slow = Recorder::gated(&gate);
    let fast = [Recorder::default(), Recorder::default()];
    let slow_registration = informer.add_event_handler(slow.clone()).unwrap();
    for recorder in &fast {
        informer.add_event_handler(recorder.clone()).unwrap();
    }
    let running = Running::start(informer.clone());
    running.synced().await;

    for index in 0..20 {
        create(&server, &format!("new-{index}"), "web");
    }
    for recorder in &fast {
        let recorder = recorder.clone();
        eventually("the fast handlers get all 20 adds", async move || {
            recorder.count() == 20
        })
        .await;
    }
    assert_eq!(informer.lister().len(), 20, "the cache kept up");
    // The slow handler is stuck on its first notification.
    assert_eq!(slow.count(), 0);
    assert_eq!(slow_registration.pending(), 20);

    let released = Instant::now();
    gate.open();
    let slow_done = slow.clone();
    eventually("the slow handler catches up", async move || {
        slow_done.count() == 20
    })
    .await;
    for recorder in &fast {
        let latest = recorder.seen_at().iter().map(|(_, at)| *at).max().unwrap();
        assert!(
            latest < released,
            "fast handlers were served before the slow one was released"
        );
        let names: Vec<String> = recorder
            .seen()
            .iter()
            .map(|s| s.name().to_string())
            .collect();
        assert_eq!(
            names,
            slow.seen()
                .iter()
                .map(|s| s.name().to_string())
                .collect::<Vec<_>>()
        );
    }
    assert!(slow.seen_at().iter().all(|(_, at)| *at >= released));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_handler_gets_the_cache_once_before_live_events_and_syncs_after() {
    let server = seeded(50).await;
    let informer = informer::<Cm>(&server, options());
    let running = Running::start(informer.clone());
    running.synced().await;

    let gate = Gate::default();
    let late = Recorder::gated(&gate);
    let registration = informer.add_event_handler(late.clone()).unwrap();
    for index in 0..5 {
        create(&server, &format!("live-{index}"), "db");
    }
    let cache = informer.lister();
    eventually("the cache has the live objects", async move || {
        cache.len() == 55
    })
    .await;
    assert!(
        !registration.has_synced(),
        "not synced while the replay is undelivered"
    );
    assert!(informer.has_synced());

    gate.open();
    let synced = registration.clone();
    eventually("the late handler syncs", async move || synced.has_synced()).await;
    let done = late.clone();
    eventually("the live adds arrive", async move || done.count() == 55).await;

    let seen = late.seen();
    let replayed: Vec<&Seen> = seen.iter().take(50).collect();
    assert!(
        replayed
            .iter()
            .all(|s| matches!(s, Seen::Add { initial: true, .. }))
    );
    let names: BTreeSet<&str> = replayed.iter().map(|s| s.name()).collect();
    assert_eq!(names.len(), 50, "each cached object exactly once");
    assert!(names.iter().all(|name| name.starts_with("cm-")));
    assert!(seen[50..].iter().all(|s| matches!(s, Seen::Add { initial: false, .. })
        && s.name().starts_with("live-")));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coalescing_queue_stays_bounded_under_a_stuck_handler_and_keeps_deletes() {
    let server = seeded(10).await;
    let informer = informer::<Cm>(&server, options());
    let gate = Gate::default();
    let bounded = Recorder::gated(&gate);
    let unbounded = Recorder::gated(&gate);
    let bounded_registration = informer
        .add_event_handler_with_options(
            bounded.clone(),
            HandlerOptions::default()
                .name("bounded")
                .queue(HandlerQueue::Coalescing),
        )
        .unwrap();
    let unbounded_registration = informer
        .add_event_handler_with_options(
            unbounded.clone(),
            HandlerOptions::default().name("unbounded"),
        )
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;

    let mut latest = std::collections::BTreeMap::new();
    for round in 1..=100 {
        for index in 0..10 {
            let name = format!("cm-{index:05}");
            latest.insert(name.clone(), update(&server, &name, &round.to_string()));
        }
    }
    for index in 0..3 {
        delete(&server, &format!("cm-{index:05}"));
    }
    let last_rv = server.storage().current_revision().to_string();
    informer.wait_for_resource_version(&last_rv).await.unwrap();

    // 10 initial adds + 1000 updates + 3 deletes were distributed. The
    // stuck handlers hold at most one notification in hand.
    let unbounded_pending = unbounded_registration.pending();
    let bounded_pending = bounded_registration.pending();
    println!("pending: unbounded {unbounded_pending}, coalescing {bounded_pending}");
    assert!(unbounded_pending >= 1012, "{unbounded_pending}");
    assert!(
        bounded_pending <= 11,
        "at most one per key plus one in hand: {bounded_pending}"
    );
    assert!(bounded_registration.stats().coalesced >= 1000);

    gate.open();
    let done = bounded_registration.clone();
    eventually("the coalescing handler drains", async move || {
        done.pending() == 0
    })
    .await;
    let seen = bounded.seen();
    for index in 0..3 {
        let name = format!("cm-{index:05}");
        assert!(
            seen.iter()
                .any(|s| matches!(s, Seen::Delete { name: n, tombstone: false, .. } if *n == name)),
            "the delete of {name} was kept"
        );
    }
    for index in 3..10 {
        let name = format!("cm-{index:05}");
        let object = bounded.last_object(&name).unwrap();
        assert_eq!(object.resource_version(), Some(latest[&name].as_str()));
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_read_the_cache_already_updated_and_share_its_objects() {
    let server = seeded(3).await;
    let informer = informer::<Cm>(&server, options());
    let observations: Arc<Mutex<Vec<String>>> = Arc::default();
    let lister = informer.lister();
    let record = Arc::clone(&observations);
    let record_delete = Arc::clone(&observations);
    let delete_lister = informer.lister();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::<Cm>::new()
                .on_add(move |object, _| {
                    let name = object.name().unwrap_or_default().to_string();
                    let cached = lister.namespace("default").get(&name).unwrap();
                    let same = Arc::ptr_eq(&cached, object);
                    record
                        .lock()
                        .unwrap()
                        .push(format!("add {name} shared={same}"));
                })
                .on_delete(move |object| {
                    let name = object
                        .object()
                        .and_then(|o| o.name().map(str::to_string))
                        .unwrap_or_default();
                    let gone = delete_lister.namespace("default").get(&name).is_none();
                    record_delete
                        .lock()
                        .unwrap()
                        .push(format!("delete {name} gone={gone}"));
                }),
        )
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    create(&server, "extra", "web");
    // The cache changes before a handler hears of it, but may change again
    // before a slow handler thread runs: delete only after the adds were
    // handled, so each add finds its object still cached.
    let added = Arc::clone(&observations);
    eventually("the adds", async move || added.lock().unwrap().len() == 4).await;
    delete(&server, "cm-00000");
    let seen = Arc::clone(&observations);
    eventually("all notifications", async move || {
        seen.lock().unwrap().len() == 5
    })
    .await;
    let mut observations = observations.lock().unwrap().clone();
    observations.sort();
    assert_eq!(
        observations,
        [
            "add cm-00000 shared=true",
            "add cm-00001 shared=true",
            "add cm-00002 shared=true",
            "add extra shared=true",
            "delete cm-00000 gone=true",
        ]
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_handlers_stop_and_shutdown_waits_for_the_call_in_progress() {
    let server = seeded(0).await;
    let informer = informer::<Cm>(&server, options());
    let removed = Recorder::default();
    let kept = Recorder::default();
    let removed_registration = informer.add_event_handler(removed.clone()).unwrap();
    informer.add_event_handler(kept.clone()).unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    create(&server, "a", "web");
    let both = (removed.clone(), kept.clone());
    eventually("both see a", async move || {
        both.0.count() == 1 && both.1.count() == 1
    })
    .await;

    informer.remove_event_handler(&removed_registration);
    informer.remove_event_handler(&removed_registration);
    assert!(removed_registration.is_removed());
    create(&server, "b", "web");
    let kept_done = kept.clone();
    eventually("the kept handler sees b", async move || {
        kept_done.count() == 2
    })
    .await;
    assert_eq!(removed.count(), 1, "a removed handler gets nothing more");

    // shutdown_event_handler returns only after the handler's last call.
    let busy = Arc::new(Mutex::new(false));
    let calls = Arc::new(Mutex::new(0));
    let (busy_flag, call_count) = (Arc::clone(&busy), Arc::clone(&calls));
    let slow = informer
        .add_event_handler(ResourceEventHandlerFuncs::<Cm>::new().on_add(move |_, _| {
            *busy_flag.lock().unwrap() = true;
            std::thread::sleep(Duration::from_millis(200));
            *call_count.lock().unwrap() += 1;
            *busy_flag.lock().unwrap() = false;
        }))
        .unwrap();
    let started = Arc::clone(&busy);
    eventually("the slow handler is in a call", async move || {
        *started.lock().unwrap()
    })
    .await;
    informer.shutdown_event_handler(&slow).await;
    assert!(!*busy.lock().unwrap(), "no call in progress after shutdown");
    let calls_after = *calls.lock().unwrap();
    assert!(calls_after >= 1);
    clientgo_testing::never_within(
        "a call after the handler's shutdown",
        Duration::from_millis(300),
        async || *calls.lock().unwrap() != calls_after,
    )
    .await;

    // A registration of another informer is ignored.
    let other = SharedIndexInformer::<Cm>::from_client(
        clientgo_rest::ResourceClient::namespaced(client(&server), "default"),
        options(),
    );
    let foreign = other.add_event_handler(Recorder::default()).unwrap();
    informer.remove_event_handler(&foreign);
    assert!(!foreign.is_removed());
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_is_counted_and_keeps_receiving() {
    let server = seeded(0).await;
    let informer = informer::<Cm>(&server, options());
    let received = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&received);
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::<Cm>::new().on_add(move |o, _| {
            let name = o.name().unwrap_or_default().to_string();
            record.lock().unwrap().push(name.clone());
            assert!(name != "boom", "the handler fails on boom");
        }))
        .unwrap();
    let running = Running::start(informer.clone());
    running.synced().await;
    create(&server, "boom", "web");
    create(&server, "after", "web");
    let seen = Arc::clone(&received);
    eventually("both adds", async move || seen.lock().unwrap().len() == 2).await;
    assert_eq!(registration.stats().panics, 1);
    assert_eq!(*received.lock().unwrap(), ["boom", "after"]);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_informer_that_never_ran_ends_its_handler_threads() {
    let server = seeded(0).await;
    let alive = Arc::new(());
    let held = Arc::clone(&alive);
    let informer = informer::<Cm>(&server, options());
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::<Cm>::new().on_add(move |_, _| {
            let _ = &held;
        }))
        .unwrap();
    drop(registration);
    drop(informer);
    let watched = Arc::clone(&alive);
    eventually("the handler (and its thread) is dropped", async move || {
        Arc::strong_count(&watched) == 2
    })
    .await;
}
