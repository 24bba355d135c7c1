//! The events.k8s.io/v1 recorder against the test server: isomorphic
//! events become one Event with a series, written on refresh; a server
//! that is down never blocks the caller.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::support::eventually;
use clientgo_record::{EventType, SeriesBroadcaster, SeriesOptions, SeriesStats};
use clientgo_rest::{Config, RestClient};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;

fn pod(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some("default".into()),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}

fn stored(server: &TestApiServer) -> Vec<Event> {
    crate::support::stored(server, "events.k8s.io")
}

/// A server and a broadcaster writing to it with `options`.
async fn started(options: SeriesOptions) -> (TestApiServer, SeriesBroadcaster) {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let broadcaster = SeriesBroadcaster::start(client, options);
    (server, broadcaster)
}

#[tokio::test]
async fn isomorphic_events_become_one_event_with_a_series() {
    let (server, broadcaster) = started(SeriesOptions {
        refresh_interval: Duration::from_millis(300),
        ..SeriesOptions::default()
    })
    .await;
    let recorder = broadcaster.recorder("test-controller", "test-controller-0");
    for attempt in 0..4 {
        recorder.event(
            &pod("a"),
            None,
            EventType::Warning,
            "BackOff",
            "Restart",
            &format!("try {attempt}"),
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    recorder.event(
        &pod("a"),
        None,
        EventType::Normal,
        "Started",
        "Start",
        "started",
    );
    eventually("two events, one with a series", async || {
        let events = stored(&server);
        events.len() == 2
            && events
                .iter()
                .any(|e| e.series.as_ref().is_some_and(|s| s.count >= 2))
    })
    .await;
    // The refresh writes the count kept in memory.
    eventually("the series reaches 4", async || {
        stored(&server)
            .iter()
            .any(|e| e.series.as_ref().is_some_and(|s| s.count == 4))
    })
    .await;
    let events = stored(&server);
    let series = events.iter().find(|e| e.series.is_some()).unwrap();
    assert_eq!(series.reason.as_deref(), Some("BackOff"));
    assert_eq!(
        series.reporting_controller.as_deref(),
        Some("test-controller")
    );
    let stats: SeriesStats = broadcaster.stats();
    assert_eq!((stats.recorded, stats.created, stats.dropped), (5, 2, 0));
    broadcaster.shutdown();
}

#[tokio::test]
async fn a_series_unobserved_for_long_enough_is_finished() {
    let (server, broadcaster) = started(SeriesOptions {
        finish_after: Duration::from_millis(200),
        ..SeriesOptions::default()
    })
    .await;
    let recorder = broadcaster.recorder("test-controller", "i");
    recorder.event(
        &pod("a"),
        None,
        EventType::Normal,
        "Synced",
        "Sync",
        "first",
    );
    eventually("the first event", async || stored(&server).len() == 1).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    // Isomorphic, but the first series was finished: a new Event.
    recorder.event(
        &pod("a"),
        None,
        EventType::Normal,
        "Synced",
        "Sync",
        "again",
    );
    eventually("a second event", async || stored(&server).len() == 2).await;
    assert!(stored(&server).iter().all(|e| e.series.is_none()));
    broadcaster.shutdown();
}

#[tokio::test]
async fn a_server_that_is_down_never_blocks_the_caller() {
    let client = RestClient::new(Config::new("http://127.0.0.1:1")).unwrap();
    let broadcaster = SeriesBroadcaster::start(
        client,
        SeriesOptions {
            queue: 10,
            ..SeriesOptions::default()
        },
    );
    let recorder = broadcaster.recorder("test-controller", "i");
    let started = Instant::now();
    for i in 0..1_000 {
        recorder.event(
            &pod(&format!("p{i}")),
            None,
            EventType::Normal,
            "R",
            "A",
            "n",
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    let stats = broadcaster.stats();
    assert_eq!(stats.recorded, 1_000);
    assert!(stats.dropped > 900, "{stats:?}");
    broadcaster.shutdown();
}
