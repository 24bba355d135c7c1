//! Every fault the server can inject, and the request log, over real HTTP.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use clientgo_apimachinery::{Status, StatusReason};
use clientgo_testing::{Corruption, TestApiServer, Verb};
use reqwest::{Client, StatusCode};
use serde_json::json;

const PODS: &str = "/api/v1/namespaces/default/pods";

async fn create(client: &Client, server: &TestApiServer, name: &str) {
    let response = client
        .post(format!("{}{PODS}", server.url()))
        .json(&json!({"metadata": {"name": name}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
}

/// Reads a watch stream to its end (or 10 s), returning the raw bytes.
async fn read_stream(mut response: reqwest::Response, stop_after_lines: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let lines = bytes.iter().filter(|b| **b == b'\n').count();
        if lines >= stop_after_lines {
            return bytes;
        }
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            Ok(Ok(Some(chunk))) => bytes.extend_from_slice(&chunk),
            Ok(Ok(None)) | Ok(Err(_)) => return bytes,
            Err(_) => panic!("the stream did not end within 10 s"),
        }
    }
}

async fn open_watch(client: &Client, server: &TestApiServer, rv: u64) -> reqwest::Response {
    let response = client
        .get(format!(
            "{}{PODS}?watch=true&resourceVersion={rv}",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response
}

#[tokio::test]
async fn failed_requests_answer_once_with_the_ordered_status_and_are_logged() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    server
        .faults()
        .fail_next(Some(Verb::List), Status::internal_error("injected"));
    server
        .faults()
        .fail_next(None, Status::too_many_requests("slow down", 3));

    // The GET is not a list: it takes the any-verb 429.
    let get = client
        .get(format!("{}{PODS}/x", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(get.headers()["retry-after"], "3");
    let status: Status = serde_json::from_slice(&get.bytes().await.unwrap()).unwrap();
    assert_eq!(status.reason, StatusReason::TooManyRequests);

    let failed = client
        .get(format!(
            "{}{PODS}?resourceVersion=0&limit=500",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let ok = client
        .get(format!("{}{PODS}", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);

    let lists = server.requests().of(Verb::List);
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[0].status, 500);
    assert_eq!(
        lists[0].list_options().resource_version.as_deref(),
        Some("0")
    );
    assert_eq!(lists[0].list_options().limit, Some(500));
    assert_eq!(lists[1].status, 200);
    assert_eq!(server.requests().count(Verb::Get), 1);
    server.requests().clear();
    assert!(server.requests().records().is_empty());
}

#[tokio::test]
async fn latency_delays_every_request() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    server.faults().set_latency(Duration::from_millis(200));
    let started = Instant::now();
    client
        .get(format!("{}/version", server.url()))
        .send()
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    server.faults().set_latency(Duration::ZERO);
}

#[tokio::test]
async fn drop_watches_now_and_after_n_events() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let rv = server.storage().current_revision();

    let watch = open_watch(&client, &server, rv).await;
    let reader = tokio::spawn(read_stream(watch, usize::MAX));
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.faults().drop_watches();
    let bytes = reader.await.unwrap();
    assert!(bytes.is_empty());

    server.faults().drop_watches_after(2);
    let watch = open_watch(&client, &server, rv).await;
    let reader = tokio::spawn(read_stream(watch, usize::MAX));
    for name in ["a", "b", "c", "d"] {
        create(&client, &server, name).await;
    }
    let bytes = reader.await.unwrap();
    let lines = bytes.iter().filter(|b| **b == b'\n').count();
    assert_eq!(lines, 2, "{}", String::from_utf8_lossy(&bytes));
}

#[tokio::test]
async fn corrupted_watch_frames() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let rv = server.storage().current_revision();

    server.faults().corrupt_next_watch(Corruption::Malformed);
    let bytes = read_stream(open_watch(&client, &server, rv).await, usize::MAX).await;
    let line = bytes.split(|b| *b == b'\n').next().unwrap();
    assert!(serde_json::from_slice::<serde_json::Value>(line).is_err());

    server.faults().corrupt_next_watch(Corruption::Truncated);
    let bytes = read_stream(open_watch(&client, &server, rv).await, usize::MAX).await;
    assert!(!bytes.is_empty());
    assert!(!bytes.contains(&b'\n'), "the frame never ends");

    server
        .faults()
        .corrupt_next_watch(Corruption::Oversized(2 * 1024 * 1024));
    let bytes = read_stream(open_watch(&client, &server, rv).await, usize::MAX).await;
    assert!(bytes.len() > 2 * 1024 * 1024);
    let event: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(event["type"], "ADDED");

    // Only the next watch is corrupted.
    create(&client, &server, "fine").await;
    let bytes = read_stream(open_watch(&client, &server, rv).await, 1).await;
    let event: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(event["object"]["metadata"]["name"], "fine");
}

#[tokio::test]
async fn stalled_watch_sends_nothing_for_a_while() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create(&client, &server, "a").await;
    server.faults().stall_next_watch(Duration::from_millis(400));
    let started = Instant::now();
    let response = client
        .get(format!(
            "{}{PODS}?watch=true&resourceVersion=0",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    let bytes = read_stream(response, 1).await;
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert!(String::from_utf8_lossy(&bytes).contains("\"ADDED\""));
}

#[tokio::test]
async fn held_watches_send_nothing_until_released_then_everything_written_meanwhile() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let from = server.storage().current_revision();
    server.faults().hold_watches();
    let watch = open_watch(&client, &server, from).await;
    let reader = tokio::spawn(read_stream(watch, 3));
    for name in ["a", "b", "c"] {
        create(&client, &server, name).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!reader.is_finished(), "a held watch sent its events");
    server.faults().release_watches();
    let bytes = reader.await.unwrap();
    let names: Vec<String> = bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let event: serde_json::Value = serde_json::from_slice(line).unwrap();
            event["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[tokio::test]
async fn restart_closes_connections_and_keeps_the_data() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create(&client, &server, "survivor").await;
    let watch = open_watch(&client, &server, server.storage().current_revision()).await;
    let reader = tokio::spawn(read_stream(watch, usize::MAX));
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.faults().restart();
    reader.await.unwrap();
    // A new connection to the same address finds the data.
    let fresh = crate::support::http_client();
    let response = fresh
        .get(format!("{}{PODS}/survivor", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn compaction_makes_old_watches_expire() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let old = server.storage().current_revision();
    create(&client, &server, "a").await;
    create(&client, &server, "b").await;
    server.compact_history();
    let bytes = read_stream(open_watch(&client, &server, old).await, usize::MAX).await;
    let event: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410);
}

#[tokio::test]
async fn deny_rules_answer_403_like_missing_rbac() {
    let pods = clientgo_apimachinery::GroupResource::new("", "pods");
    let server = TestApiServer::builder()
        .deny(Verb::List, pods.clone())
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    let listed = client
        .get(format!("{}{PODS}", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::FORBIDDEN);
    let status: Status = serde_json::from_slice(&listed.bytes().await.unwrap()).unwrap();
    assert!(status.is_forbidden());
    assert_eq!(
        status.message,
        "pods is forbidden: User \"clientgo-testing\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    // Other verbs and resources are allowed.
    create(&client, &server, "a").await;
    let configmaps = client
        .get(format!(
            "{}/api/v1/namespaces/default/configmaps",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(configmaps.status(), StatusCode::OK);
    server.deny(Verb::Watch, pods.clone());
    let watched = client
        .get(format!("{}{PODS}?watch=true", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(watched.status(), StatusCode::FORBIDDEN);
    server.allow_all();
    let listed = client
        .get(format!("{}{PODS}", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
}
