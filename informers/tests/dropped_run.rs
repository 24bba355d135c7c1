//! An informer whose `run` future is dropped (a `select!`, a timeout, an
//! aborted task) stops: before, its reflector ran on, detached, listing and
//! watching into a queue nobody popped.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::*;
use clientgo_informers::{InformerSynced, SyncWaitOptions, wait_for_cache_sync};
use clientgo_reflector::WaitError;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_run_future_stops_every_request() {
    let server = seeded(5).await;
    let informer = informer::<k8s_openapi::api::core::v1::ConfigMap>(&server, fast_options());
    let recorder = Recorder::default();
    let _registration = informer.add_event_handler(recorder.clone()).unwrap();
    let never = CancellationToken::new();
    let run = informer.run(never.clone());
    let synced: [&dyn InformerSynced; 1] = [&informer];
    tokio::select! {
        () = run => panic!("the informer returned while its token was not cancelled"),
        synced = wait_for_cache_sync(&synced, SyncWaitOptions::default()) => synced.unwrap(),
    }
    // The run future was dropped at the end of the select.
    assert!(informer.is_stopped(), "a dropped run stops the informer");
    let unreached = tokio::time::timeout(
        Duration::from_secs(5),
        informer.wait_for_resource_version("999999999"),
    )
    .await
    .expect("a wait for a resourceVersion ends when the run is dropped");
    assert!(
        matches!(unreached, Err(WaitError::Stopped(_))),
        "{unreached:?}"
    );
    let before = server.requests().records().len();
    // A live reflector would re-watch after this, and relist after the
    // compaction.
    server.faults().drop_watches();
    server.compact_history();
    create(&server, "after-the-drop", "web");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = server.requests().records();
    assert_eq!(
        after.len(),
        before,
        "no request after the drop: {:?}",
        &after[before..]
    );
    assert!(
        recorder
            .seen()
            .iter()
            .all(|seen| seen.name() != "after-the-drop")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_factory_stops_its_informers() {
    use clientgo_informers::SharedInformerFactory;
    use k8s_openapi::api::core::v1::ConfigMap;
    let server = seeded(5).await;
    let factory = SharedInformerFactory::new(client(&server), Duration::ZERO);
    let informer = factory.informer_for::<ConfigMap>();
    let stop = start_and_sync(&factory).await;
    drop(factory);
    eventually("the informer stops", async || informer.is_stopped()).await;
    let before = server.requests().records().len();
    server.faults().drop_watches();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        server.requests().records().len(),
        before,
        "no request after the drop"
    );
    assert!(!stop.is_cancelled(), "the caller's token is left alone");
}

/// A registration used to hold a strong handle on its informer, so a
/// handler that captured its own registration kept the informer, and so
/// itself, alive forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_holding_its_own_registration_does_not_keep_the_informer_alive() {
    use clientgo_informers::{ResourceEventHandlerFuncs, ResourceEventHandlerRegistration};
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::{Arc, Mutex};
    let server = seeded(3).await;
    let informer = informer::<ConfigMap>(&server, fast_options());
    let own: Arc<Mutex<Option<ResourceEventHandlerRegistration<ConfigMap>>>> = Arc::default();
    let handler = ResourceEventHandlerFuncs::<ConfigMap>::new().on_add({
        let own = Arc::clone(&own);
        move |_, _| {
            let _still_there = own.lock().unwrap().as_ref().map(|r| r.is_removed());
        }
    });
    let registration = informer.add_event_handler(handler).unwrap();
    *own.lock().unwrap() = Some(registration.clone());
    assert!(registration.informer().is_some());
    drop(informer);
    assert!(registration.informer().is_none(), "the informer is gone");
    eventually("the handler is closed", async || registration.is_removed()).await;
    assert!(!registration.has_synced());
}
