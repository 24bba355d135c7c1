//! The server's scale targets, measured (ignored by default; run with
//! `cargo test --release -p clientgo-testing --test scale -- --ignored --nocapture`):
//! 50,000 realistic pods listed in pages of 500, 100,000 watch events
//! streamed, and the memory the stored objects take.
//!
//! (Its own test binary: it measures the process RSS.)

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod support;

use std::time::Instant;

use clientgo_apimachinery::GroupResource;
use clientgo_testing::{ObjectKey, TestApiServer, realistic_pod};

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run in release with --ignored --nocapture"]
async fn fifty_thousand_pods_in_pages_of_500_and_a_hundred_thousand_events() {
    const PODS: usize = 50_000;
    const EVENTS: usize = 100_000;
    let server = TestApiServer::builder()
        .history_limit(200_000)
        .start()
        .await
        .unwrap();
    let pods = GroupResource::new("", "pods");
    let before = rss_bytes();
    let mut json_bytes = 0usize;
    let started = Instant::now();
    for index in 0..PODS {
        let namespace = format!("namespace-{}", index % 10);
        let stored = server
            .storage()
            .create(&pods, &namespace, realistic_pod(index, &namespace))
            .unwrap();
        json_bytes += stored.json.len();
    }
    let seeded = started.elapsed();
    let after = rss_bytes();
    println!(
        "seeded {PODS} pods ({:.1} MB of JSON) in {:.2} s; RSS grew {:.1} MB ({:.2}x the JSON)",
        json_bytes as f64 / 1e6,
        seeded.as_secs_f64(),
        after.saturating_sub(before) as f64 / 1e6,
        after.saturating_sub(before) as f64 / json_bytes as f64
    );

    let client = support::http_client();
    let started = Instant::now();
    let mut received = 0usize;
    let mut pages = 0usize;
    let mut token: Option<String> = None;
    loop {
        let mut url = format!("{}/api/v1/pods?limit=500", server.url());
        if let Some(token) = &token {
            url.push_str(&format!("&continue={token}"));
        }
        let body = client.get(url).send().await.unwrap().bytes().await.unwrap();
        // Only the list metadata is decoded: the client's JSON parsing is not
        // what this measures.
        let page: clientgo_apimachinery::ObjectList<serde::de::IgnoredAny> =
            serde_json::from_slice(&body).unwrap();
        received += page.items.len();
        pages += 1;
        token = page.continue_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    let listed = started.elapsed();
    assert_eq!(received, PODS);
    println!(
        "listed {received} pods in {pages} pages of 500 in {:.2} s ({:.0} pods/s)",
        listed.as_secs_f64(),
        received as f64 / listed.as_secs_f64()
    );

    // Writes first (each parses and re-serializes a 5 KB pod), then a watch
    // from before them streams the 100,000 events from the history.
    let revision = server.storage().current_revision();
    let storage = std::sync::Arc::clone(server.storage());
    let started = Instant::now();
    tokio::task::spawn_blocking(move || {
        let (objects, _) = storage
            .list(
                &GroupResource::new("", "pods"),
                Some("namespace-0"),
                clientgo_testing::ReadAt::Latest,
            )
            .unwrap();
        for i in 0..EVENTS {
            let key: &ObjectKey = &objects[i % objects.len()].key;
            let mut value = storage.get(key).unwrap().to_value().unwrap();
            value["metadata"]["annotations"]["write"] = serde_json::Value::String(i.to_string());
            storage.update(key, value, false).unwrap();
        }
    })
    .await
    .unwrap();
    let written = started.elapsed();
    println!(
        "wrote {EVENTS} updates in {:.2} s ({:.0} writes/s)",
        written.as_secs_f64(),
        EVENTS as f64 / written.as_secs_f64()
    );
    let started = Instant::now();
    let mut watch = client
        .get(format!(
            "{}/api/v1/pods?watch=true&resourceVersion={revision}",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    let mut events = 0usize;
    let mut bytes = 0usize;
    while events < EVENTS {
        let chunk = watch.chunk().await.unwrap().unwrap();
        bytes += chunk.len();
        events += chunk.iter().filter(|b| **b == b'\n').count();
    }
    let streamed = started.elapsed();
    println!(
        "streamed {events} watch events ({:.0} MB) in {:.2} s ({:.0} events/s)",
        bytes as f64 / 1e6,
        streamed.as_secs_f64(),
        events as f64 / streamed.as_secs_f64()
    );
}
