//! `events`: client-go's `tools/record`. An `EventBroadcaster` sends the
//! events its recorders make to the API server; identical events are
//! counted on one `Event` object (a patch) instead of creating new ones.
//! The example records three events about a pod, two of them identical,
//! and reads back the `Event` objects they became.

use std::time::Duration;

use clientgo::apimachinery::{GroupResource, ListOptions};
use clientgo::record::{BroadcasterOptions, EventBroadcaster, EventType};
use clientgo::rest::ResourceClient;
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, SeededResource, run_main, say,
};
use k8s_openapi::api::core::v1::{Event, ObjectReference, Pod};

/// Records events about a pod and reads them back.
#[derive(Debug, clap::Parser)]
#[command(name = "events", version)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("events", run)
}

async fn run(flags: Flags) -> Result<(), Failure> {
    let seed = EmbeddedOptions::default().with(SeededResource::pods(1, 0.0));
    let connection = Connection::open(&flags.common, seed).await?;
    let pods = match &flags.common.namespace {
        Some(namespace) => ResourceClient::<Pod>::namespaced(connection.client.clone(), namespace),
        None => ResourceClient::<Pod>::all(connection.client.clone()),
    };
    let listed = pods
        .list(&ListOptions::default())
        .await
        .map_err(|error| error.to_string())?;
    let pod = listed
        .items
        .first()
        .ok_or("no pod to record events about")?;
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let regarding = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(namespace.clone()),
        name: Some(name.clone()),
        uid: pod.metadata.uid.clone(),
        ..ObjectReference::default()
    };

    let broadcaster = EventBroadcaster::new(BroadcasterOptions::default());
    broadcaster.start_recording_to_sink(connection.client.clone());
    let recorder = broadcaster.recorder("clientgo-events-example");
    recorder.event(
        &regarding,
        EventType::Normal,
        "Checked",
        "the pod looks fine",
    );
    recorder.event(
        &regarding,
        EventType::Normal,
        "Checked",
        "the pod looks fine",
    );
    recorder.event(
        &regarding,
        EventType::Warning,
        "Slow",
        "the pod took long to answer",
    );
    // Events are sent in the background; wait until the sink has them.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut stats = broadcaster.stats();
    while stats.created + stats.patched < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        stats = broadcaster.stats();
    }
    say!(
        "recorded {}, created {}, patched {} (identical events counted on one object)",
        stats.recorded,
        stats.created,
        stats.patched
    );
    broadcaster.shutdown();

    let events = ResourceClient::<Event>::namespaced(connection.client.clone(), &namespace)
        .list(&ListOptions::default())
        .await
        .map_err(|error| format!("cannot list {}: {error}", GroupResource::new("", "events")))?;
    for event in &events.items {
        if event.involved_object.name.as_deref() != Some(name.as_str()) {
            continue;
        }
        say!(
            "event {} {}: {} (count {})",
            event.type_.as_deref().unwrap_or_default(),
            event.reason.as_deref().unwrap_or_default(),
            event.message.as_deref().unwrap_or_default(),
            event.count.unwrap_or(1)
        );
    }
    Ok(())
}
