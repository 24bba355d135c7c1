//! The recorder: identical events counted on one Event (a PATCH) and
//! similar ones combined, on the test server and on the real
//! kube-apiserver (one body, two backends); spam dropped, and a server that
//! is down never blocks the caller, on the test server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use clientgo_apimachinery::ListOptions;
use clientgo_record::{
    BroadcasterOptions, EventBroadcaster, EventType, RecorderStats, object_reference,
};
use clientgo_rest::ResourceClient;
use clientgo_rest::{Config, RestClient};
use clientgo_testing::TestApiServer;
use clientgo_testing::envtest::{Backend, for_each_backend};
use k8s_openapi::api::core::v1::{Event, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn pod(name: &str) -> ObjectReference {
    pod_in(name, "default")
}

fn pod_in(name: &str, namespace: &str) -> ObjectReference {
    object_reference(&Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

fn broadcaster(server: &TestApiServer) -> EventBroadcaster {
    broadcaster_to(RestClient::new(Config::new(server.url())).unwrap())
}

fn broadcaster_to(client: RestClient) -> EventBroadcaster {
    let broadcaster = EventBroadcaster::new(BroadcasterOptions {
        retry_interval: Duration::from_millis(20),
        ..BroadcasterOptions::default()
    });
    broadcaster.start_recording_to_sink(client);
    broadcaster
}

/// The core/v1 Events of `namespace`, read through the API.
async fn listed_events(backend: &Backend, namespace: &str) -> Vec<Event> {
    ResourceClient::<Event>::namespaced(backend.client().unwrap(), namespace)
        .list(&ListOptions::default())
        .await
        .unwrap()
        .items
}

async fn until(
    broadcaster: &EventBroadcaster,
    done: impl Fn(&RecorderStats) -> bool,
) -> RecorderStats {
    crate::support::eventually("the recorder's counters", async || {
        done(&broadcaster.stats())
    })
    .await;
    broadcaster.stats()
}

fn stored_events(server: &TestApiServer) -> Vec<Event> {
    crate::support::stored(server, "")
}

#[tokio::test]
async fn identical_events_are_counted_on_one_event() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("events").await.unwrap();
        let broadcaster = broadcaster_to(backend.client().unwrap());
        let recorder = broadcaster.recorder("test-controller");
        for sent in 1..=3 {
            recorder.event(
                &pod_in("a", &namespace),
                EventType::Normal,
                "Pulled",
                "image pulled",
            );
            // One at a time, as a controller would: each is written before
            // the next is correlated.
            until(&broadcaster, |s| s.created + s.patched == sent).await;
        }
        let stats = until(&broadcaster, |s| s.created + s.patched == 3).await;
        assert_eq!((stats.created, stats.patched), (1, 2));
        let events = listed_events(&backend, &namespace).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].count, Some(3));
        assert_eq!(events[0].involved_object.name.as_deref(), Some("a"));
        assert_eq!(
            events[0].source.as_ref().unwrap().component.as_deref(),
            Some("test-controller")
        );
    })
    .await;
}

#[tokio::test]
async fn ten_similar_events_become_one_combined_event() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("similar").await.unwrap();
        let broadcaster = broadcaster_to(backend.client().unwrap());
        let recorder = broadcaster.recorder("test-controller");
        for attempt in 0..12u64 {
            recorder.event(
                &pod_in("a", &namespace),
                EventType::Warning,
                "Failed",
                &format!("attempt {attempt}"),
            );
            until(&broadcaster, |s| s.created + s.patched == attempt + 1).await;
        }
        until(&broadcaster, |s| s.created + s.patched == 12).await;
        let events = listed_events(&backend, &namespace).await;
        let combined: Vec<&Event> = events
            .iter()
            .filter(|e| {
                e.message
                    .as_deref()
                    .unwrap_or_default()
                    .starts_with("(combined from similar events)")
            })
            .collect();
        assert_eq!(events.len(), 10, "nine alone and one combined");
        assert_eq!(combined.len(), 1);
        assert_eq!(combined[0].count, Some(3));
    })
    .await;
}

#[tokio::test]
async fn the_spam_filter_lets_25_through_per_object() {
    let server = TestApiServer::builder().start().await.unwrap();
    let broadcaster = broadcaster(&server);
    let recorder = broadcaster.recorder("test-controller");
    for i in 0..30 {
        recorder.event(&pod("a"), EventType::Normal, &format!("Reason{i}"), "m");
    }
    let stats = until(&broadcaster, |s| s.created + s.skipped == 30).await;
    assert_eq!((stats.created, stats.skipped), (25, 5));
    assert_eq!(stored_events(&server).len(), 25);
}

#[tokio::test]
async fn a_server_that_is_down_never_blocks_the_caller() {
    let broadcaster = EventBroadcaster::new(BroadcasterOptions {
        queue: 10,
        tries: 2,
        retry_interval: Duration::from_millis(20),
        ..BroadcasterOptions::default()
    });
    // Nothing listens on port 1.
    broadcaster
        .start_recording_to_sink(RestClient::new(Config::new("http://127.0.0.1:1")).unwrap());
    broadcaster.start_logging();
    let recorder = broadcaster.recorder("test-controller");
    let started = Instant::now();
    for i in 0..2_000 {
        recorder.event(&pod(&format!("p{i}")), EventType::Normal, "R", "m");
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "recording took {:?}",
        started.elapsed()
    );
    let stats = broadcaster.stats();
    assert_eq!(stats.recorded, 2_000);
    assert!(stats.dropped > 1_000, "full queues drop: {stats:?}");
    // What was queued is tried and given up, counted.
    until(&broadcaster, |s| s.failed >= 1).await;
    broadcaster.shutdown();
}
