//! What kube-apiserver 1.36 does by default, and the test server with it:
//! HTTP/2 stream limits, list items without type fields, bookmarks from a
//! watch cache (and none without one), resourceVersion "0" lists in one
//! page, graceful pod deletion, plain-text 404s and 429s, the pod status
//! strategy, and one frame per watch event.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::support::Events;
use clientgo_apimachinery::{ApiResource, DynamicObject, ObjectList, WatchEvent};
use clientgo_testing::{
    DEFAULT_BOOKMARK_INTERVAL, DEFAULT_HTTP2_MAX_STREAMS, Failure, TestApiServer, Verb,
};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

async fn create_pods(client: &Client, server: &TestApiServer, count: usize) {
    for index in 0..count {
        let response = client
            .post(format!("{}{PODS}", server.url()))
            .json(&pod(&format!("pod-{index}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
    }
}

async fn get_value(client: &Client, url: String) -> Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

/// A GET of `path` on `server`.
async fn get(client: &Client, server: &TestApiServer, path: &str) -> reqwest::Response {
    client
        .get(format!("{}{path}", server.url()))
        .send()
        .await
        .unwrap()
}

/// PUTs `object` to the status subresource of the object at `url`.
async fn put_status(client: &Client, url: &str, object: &Value) -> Value {
    let response = client.put(format!("{url}/status")).json(object).send();
    response.await.unwrap().json().await.unwrap()
}

/// A response's `Content-Type`.
fn content_type(response: &reqwest::Response) -> String {
    response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string()
}

/// Opens a watch of the collection at `path` from `query` (after
/// `watch=true&`).
async fn watch(client: &Client, server: &TestApiServer, path: &str, query: &str) -> Events {
    Events::open(client, format!("{}{path}?watch=true&{query}", server.url())).await
}

/// Opens a watch of pods from now, with bookmarks allowed, and checks
/// that nothing at all arrives within `wait`.
async fn assert_silent_watch(client: &Client, server: &TestApiServer, wait: Duration) {
    let rv = server.storage().current_revision();
    let path = format!("{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true");
    let mut response = get(client, server, &path).await;
    let chunk = tokio::time::timeout(wait, response.chunk()).await;
    assert!(chunk.is_err(), "nothing within {wait:?}: {chunk:?}");
}

/// A client that speaks HTTP/2 without TLS, sharing one connection.
fn h2_client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder().http2_prior_knowledge().build().unwrap()
}

/// Opens `count` watches on `client` and keeps them open.
async fn open_watches(
    client: &Client,
    server: &TestApiServer,
    count: usize,
) -> Vec<reqwest::Response> {
    let mut watches = Vec::new();
    for _ in 0..count {
        let response = client
            .get(format!(
                "{}{PODS}?watch=true&resourceVersion=1",
                server.url()
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        watches.push(response);
    }
    watches
}

/// Whether a GET on `client` is answered within a second.
async fn answered_within_a_second(client: &Client, server: &TestApiServer) -> bool {
    let get = client.get(format!("{}/version", server.url())).send();
    tokio::time::timeout(Duration::from_secs(1), get)
        .await
        .is_ok()
}

#[tokio::test]
async fn one_http2_connection_carries_at_most_the_advertised_streams() {
    assert_eq!(DEFAULT_HTTP2_MAX_STREAMS, 100);
    let server = TestApiServer::builder()
        .http2_max_concurrent_streams(3)
        .start()
        .await
        .unwrap();
    let client = h2_client();
    let watches = open_watches(&client, &server, 2).await;
    assert!(answered_within_a_second(&client, &server).await);
    let third = open_watches(&client, &server, 1).await;
    // Three streams are open: a client that queues on the one connection
    // (as reqwest does) waits as long as they stay open.
    assert!(!answered_within_a_second(&client, &server).await);
    drop(third);
    assert!(answered_within_a_second(&client, &server).await);
    drop(watches);

    let server = TestApiServer::builder().start().await.unwrap();
    let client = h2_client();
    let mut watches = open_watches(&client, &server, 99).await;
    assert!(answered_within_a_second(&client, &server).await);
    watches.extend(open_watches(&client, &server, 1).await);
    assert!(!answered_within_a_second(&client, &server).await);
}

#[tokio::test]
async fn list_items_of_built_in_types_carry_no_kind_or_api_version() {
    let server = TestApiServer::builder()
        .resource(ApiResource::namespaced(
            clientgo_apimachinery::GroupVersionKind::new("example.com", "v1", "Widget"),
            "widgets",
        ))
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    create_pods(&client, &server, 2).await;
    let list = get_value(&client, format!("{}{PODS}", server.url())).await;
    assert_eq!(list["kind"], "PodList");
    assert_eq!(list["apiVersion"], "v1");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    for item in items {
        assert_eq!(item.get("kind"), None, "{item}");
        assert_eq!(item.get("apiVersion"), None, "{item}");
        assert_eq!(item["spec"]["containers"][0]["image"], "nginx");
    }
    // A single object, a watch event and a metadata-only list keep them.
    let one = get_value(&client, format!("{}{PODS}/pod-0", server.url())).await;
    assert_eq!(
        (one["kind"].as_str(), one["apiVersion"].as_str()),
        (Some("Pod"), Some("v1"))
    );
    let mut events = watch(&client, &server, PODS, "resourceVersion=0").await;
    match events.next().await.unwrap() {
        WatchEvent::Added(pod) => assert_eq!(pod.kind.as_deref(), Some("Pod")),
        other => panic!("expected ADDED, got {other:?}"),
    }
    let metadata: Value = client
        .get(format!("{}{PODS}", server.url()))
        .header(
            "accept",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["items"][0]["kind"], "PartialObjectMetadata");
    // Custom resources keep them.
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let response = client
        .post(format!("{}{widgets}", server.url()))
        .json(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let list = get_value(&client, format!("{}{widgets}", server.url())).await;
    assert_eq!(list["items"][0]["kind"], "Widget");
    assert_eq!(list["items"][0]["apiVersion"], "example.com/v1");
}

#[tokio::test]
async fn bookmarks_come_from_the_watch_cache_about_once_a_minute() {
    assert_eq!(DEFAULT_BOOKMARK_INTERVAL, Duration::from_secs(60));
    let client = crate::support::http_client();
    // The default: no bookmark in the first seconds of a watch.
    let server = TestApiServer::builder().start().await.unwrap();
    assert_silent_watch(&client, &server, Duration::from_secs(2)).await;

    // A shorter interval: the first bookmark one interval after the start.
    let server = TestApiServer::builder()
        .bookmark_interval(Duration::from_millis(300))
        .start()
        .await
        .unwrap();
    let rv = server.storage().current_revision();
    let started = Instant::now();
    let mut events = watch(
        &client,
        &server,
        PODS,
        &format!("resourceVersion={rv}&allowWatchBookmarks=true"),
    )
    .await;
    assert!(matches!(events.next().await, Some(WatchEvent::Bookmark(_))));
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn without_a_watch_cache_there_are_no_bookmarks_and_compacted_watches_get_410() {
    let server = TestApiServer::builder()
        .watch_cache(false)
        .bookmark_interval(Duration::from_millis(50))
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    create_pods(&client, &server, 1).await;
    let rv = server.storage().current_revision();
    assert_silent_watch(&client, &server, Duration::from_secs(1)).await;

    // Two writes: the watch from `rv` needs the first, which the
    // compaction to the second removes.
    client
        .delete(format!("{}{PODS}/pod-0", server.url()))
        .send()
        .await
        .unwrap();
    create_pods(&client, &server, 1).await;
    server.compact_history();
    let mut events = watch(&client, &server, PODS, &format!("resourceVersion={rv}")).await;
    match events.next().await.unwrap() {
        WatchEvent::Error(status) => assert_eq!(status.code, 410),
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
}

#[tokio::test]
async fn lists_at_resource_version_zero_ignore_the_limit() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create_pods(&client, &server, 3).await;
    let list = |query: &'static str| {
        let client = client.clone();
        let url = format!("{}{PODS}?{query}", server.url());
        async move {
            client
                .get(url)
                .send()
                .await
                .unwrap()
                .json::<ObjectList<DynamicObject>>()
                .await
                .unwrap()
        }
    };
    let cached = list("resourceVersion=0&limit=1").await;
    assert_eq!(cached.items.len(), 3);
    assert_eq!(cached.metadata.continue_.as_deref().unwrap_or_default(), "");
    let paged = list("limit=1").await;
    assert_eq!(paged.items.len(), 1);
    assert!(
        paged
            .metadata
            .continue_
            .is_some_and(|token| !token.is_empty())
    );

    // Without a watch cache the list at "0" comes from etcd, in pages.
    let etcd = TestApiServer::builder()
        .watch_cache(false)
        .start()
        .await
        .unwrap();
    create_pods(&client, &etcd, 3).await;
    let page: ObjectList<DynamicObject> = client
        .get(format!("{}{PODS}?resourceVersion=0&limit=1", etcd.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
}

#[tokio::test]
async fn deleting_a_pod_sends_modified_with_a_deletion_timestamp_then_deleted() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create_pods(&client, &server, 1).await;
    let configmaps = "/api/v1/namespaces/default/configmaps";
    client
        .post(format!("{}{configmaps}", server.url()))
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
        .send()
        .await
        .unwrap();
    let rv = server.storage().current_revision();
    let mut pods = watch(&client, &server, PODS, &format!("resourceVersion={rv}")).await;
    let mut maps = watch(
        &client,
        &server,
        configmaps,
        &format!("resourceVersion={rv}"),
    )
    .await;
    for path in [format!("{PODS}/pod-0"), format!("{configmaps}/c")] {
        let response = client
            .delete(format!("{}{path}", server.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    match pods.next().await.unwrap() {
        WatchEvent::Modified(pod) => {
            assert!(pod.metadata.deletion_timestamp.is_some());
            assert_eq!(pod.metadata.deletion_grace_period_seconds, Some(0));
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    assert!(matches!(pods.next().await, Some(WatchEvent::Deleted(_))));
    // Other kinds go at once.
    assert!(matches!(maps.next().await, Some(WatchEvent::Deleted(_))));
}

#[tokio::test]
async fn paths_nothing_serves_get_the_plain_text_404() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    for path in [
        "/apis/nothing.example.com/v1/widgets",
        "/apis/nothing.example.com/v1",
        "/apis/apps/v9/deployments",
        "/api/v2/pods",
        "/no/such/path",
    ] {
        let response = get(&client, &server, path).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let content_type = content_type(&response);
        assert!(
            content_type.starts_with("text/plain"),
            "{path}: {content_type}"
        );
        assert_eq!(
            response.text().await.unwrap(),
            "404 page not found\n",
            "{path}"
        );
    }
    // An unknown resource of a served group version is a Status.
    let response = get(&client, &server, "/apis/apps/v1/widgets").await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let status: clientgo_apimachinery::Status = response.json().await.unwrap();
    assert!(status.is_not_found());
}

async fn assert_real_too_many_requests(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "1");
    let content_type = content_type(&response);
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    assert_eq!(
        response.text().await.unwrap(),
        "Too many requests, please try again later.\n"
    );
}

#[tokio::test]
async fn requests_over_the_in_flight_limit_get_a_plain_text_429() {
    let server = TestApiServer::builder()
        .max_requests_in_flight(Some(1))
        .start()
        .await
        .unwrap();
    server.faults().set_latency(Duration::from_millis(500));
    let client = crate::support::http_client();
    let url = format!("{}{PODS}", server.url());
    let (first, second) = tokio::join!(client.get(&url).send(), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        client.get(&url).send().await
    });
    assert_eq!(first.unwrap().status(), StatusCode::OK);
    assert_real_too_many_requests(second.unwrap()).await;
    // Watches are long-running: never counted, never refused.
    server.faults().set_latency(Duration::ZERO);
    let _watches = open_watches(&client, &server, 3).await;
    assert_eq!(
        client.get(&url).send().await.unwrap().status(),
        StatusCode::OK
    );
    // The fault that imitates it answers the same.
    server
        .faults()
        .fail_next_with(Some(Verb::List), Failure::too_many_requests());
    assert_real_too_many_requests(client.get(&url).send().await.unwrap()).await;
}

#[tokio::test]
async fn pod_status_updates_keep_label_changes_and_reset_only_spec_and_owners() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create_pods(&client, &server, 1).await;
    let url = format!("{}{PODS}/pod-0", server.url());
    let mut pod = get_value(&client, url.clone()).await;
    pod["metadata"]["labels"]["phase"] = json!("running");
    pod["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}]);
    pod["spec"]["containers"][0]["image"] = json!("changed");
    pod["status"] = json!({"phase": "Running"});
    let updated = put_status(&client, &url, &pod).await;
    assert_eq!(updated["status"]["phase"], "Running");
    assert_eq!(updated["metadata"]["labels"]["phase"], "running");
    assert_eq!(updated["metadata"].get("ownerReferences"), None);
    assert_eq!(updated["spec"]["containers"][0]["image"], "nginx");

    // Other resources' status updates change only status.
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    client
        .post(format!("{}{deployments}", server.url()))
        .json(&json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}}))
        .send()
        .await
        .unwrap();
    let url = format!("{}{deployments}/d", server.url());
    let mut deployment = get_value(&client, url.clone()).await;
    deployment["metadata"]["labels"] = json!({"changed": "yes"});
    deployment["status"] = json!({"replicas": 1});
    let updated = put_status(&client, &url, &deployment).await;
    assert_eq!(updated["status"]["replicas"], 1);
    assert_eq!(updated["metadata"].get("labels"), None);
}

/// Reads one chunk of an HTTP/1.1 chunked body: `None` at its end.
async fn read_chunk<R: tokio::io::AsyncBufRead + Unpin>(reader: &mut R) -> Option<Vec<u8>> {
    let mut size_line = String::new();
    reader.read_line(&mut size_line).await.unwrap();
    let size = usize::from_str_radix(size_line.trim(), 16).unwrap();
    if size == 0 {
        return None;
    }
    let mut chunk = vec![0; size + 2];
    reader.read_exact(&mut chunk).await.unwrap();
    chunk.truncate(size);
    Some(chunk)
}

#[tokio::test]
async fn every_watch_event_is_its_own_frame() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create_pods(&client, &server, 20).await;
    let stream = tokio::net::TcpStream::connect(server.address())
        .await
        .unwrap();
    let mut reader = BufReader::new(stream);
    // A watch-list: 20 initial events, then the end bookmark.
    let request = format!(
        "GET {PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true HTTP/1.1\r\nhost: {}\r\n\r\n",
        server.address()
    );
    reader
        .get_mut()
        .write_all(request.as_bytes())
        .await
        .unwrap();
    let mut header = String::new();
    loop {
        header.clear();
        reader.read_line(&mut header).await.unwrap();
        if header == "\r\n" {
            break;
        }
    }
    for index in 0..21 {
        let chunk = tokio::time::timeout(Duration::from_secs(5), read_chunk(&mut reader))
            .await
            .unwrap()
            .unwrap();
        let newlines = chunk.iter().filter(|b| **b == b'\n').count();
        assert_eq!(newlines, 1, "chunk {index} holds one event");
        assert!(chunk.ends_with(b"}\n"), "chunk {index} ends with its event");
        let event: WatchEvent<DynamicObject> = serde_json::from_slice(&chunk).unwrap();
        if index == 20 {
            assert!(matches!(event, WatchEvent::Bookmark(b) if b.is_initial_events_end()));
        }
    }
}
