//! The test server over real HTTP on loopback, checked with a plain client:
//! verbs and Status answers, list paging and resourceVersion rules,
//! selectors, and watches.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::Events;

use std::time::Duration;

use clientgo_apimachinery::{DynamicObject, Object, ObjectList, Status, StatusReason, WatchEvent};
use clientgo_testing::TestApiServer;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// GETs a URL and decodes the JSON answer.
async fn get_json<T: serde::de::DeserializeOwned>(client: &Client, url: String) -> T {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

#[allow(clippy::needless_pass_by_value)] // `json!` literals read best inline
fn pod(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": {"containers": []}})
}

async fn post(
    client: &Client,
    server: &TestApiServer,
    path: &str,
    body: &Value,
) -> reqwest::Response {
    client
        .post(format!("{}{path}", server.url()))
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn status_of(response: reqwest::Response) -> Status {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

async fn list(
    client: &Client,
    server: &TestApiServer,
    query: &str,
) -> Result<ObjectList<DynamicObject>, Status> {
    let response = client
        .get(format!("{}{PODS}?{query}", server.url()))
        .send()
        .await
        .unwrap();
    let ok = response.status().is_success();
    let bytes = response.bytes().await.unwrap();
    if ok {
        Ok(serde_json::from_slice(&bytes).unwrap())
    } else {
        Err(serde_json::from_slice(&bytes).unwrap())
    }
}

fn names(list: &ObjectList<DynamicObject>) -> Vec<String> {
    list.items
        .iter()
        .map(|o| o.name().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn create_get_update_delete_with_real_status_answers() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();

    let created = post(&client, &server, PODS, &pod("web", json!({"app": "web"}))).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: DynamicObject = created.json().await.unwrap();
    assert_eq!(created.namespace(), Some("default"));
    let rv = created.resource_version().unwrap().to_string();

    let again = post(&client, &server, PODS, &pod("web", json!({}))).await;
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let status = status_of(again).await;
    assert_eq!(status.reason, StatusReason::AlreadyExists);

    let fetched: DynamicObject = get_json(&client, format!("{}{PODS}/web", server.url())).await;
    assert_eq!(fetched.resource_version(), Some(rv.as_str()));

    let mut stale = serde_json::to_value(&fetched).unwrap();
    stale["metadata"]["resourceVersion"] = json!("1");
    let conflict = client
        .put(format!("{}{PODS}/web", server.url()))
        .json(&stale)
        .send()
        .await
        .unwrap();
    assert_eq!(conflict.status(), StatusCode::CONFLICT);
    assert!(status_of(conflict).await.is_conflict());

    let mut status_update = serde_json::to_value(&fetched).unwrap();
    status_update["status"] = json!({"phase": "Running"});
    let updated: DynamicObject = client
        .put(format!("{}{PODS}/web/status", server.url()))
        .json(&status_update)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(updated.data["status"]["phase"], "Running");

    let deleted = client
        .delete(format!("{}{PODS}/web", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    let gone = client
        .get(format!("{}{PODS}/web", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let status = status_of(gone).await;
    assert!(status.is_not_found());
    assert_eq!(status.message, "pods \"web\" not found");
}

#[tokio::test]
async fn bad_requests_unknown_resources_and_wrong_methods() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let bad_body = client
        .post(format!("{}{PODS}", server.url()))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_body.status(), StatusCode::BAD_REQUEST);
    assert!(status_of(bad_body).await.is_bad_request());

    let unknown = client
        .get(format!("{}/apis/example.com/v1/widgets", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    let wrong_method = client
        .post(format!("{}{PODS}/web", server.url()))
        .json(&pod("web", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_method.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(status_of(wrong_method).await.is_method_not_supported());

    let bad_selector = list(&client, &server, "labelSelector=a%20in%20b")
        .await
        .unwrap_err();
    assert_eq!(bad_selector.code, 400);
    // Pods select on spec.nodeName and a few more; not on any field.
    let unsupported_field = list(&client, &server, "fieldSelector=spec.hostname%3Dx")
        .await
        .unwrap_err();
    assert!(
        unsupported_field
            .message
            .contains("field label not supported")
    );

    let version: Value = get_json(&client, format!("{}/version", server.url())).await;
    assert_eq!(version["major"], "1");
    let health = client
        .get(format!("{}/healthz", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
}

#[tokio::test]
async fn paging_follows_a_consistent_snapshot() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    for i in 0..25 {
        post(
            &client,
            &server,
            PODS,
            &pod(&format!("pod-{i:02}"), json!({})),
        )
        .await;
    }
    let first = list(&client, &server, "limit=10").await.unwrap();
    assert_eq!(first.items.len(), 10);
    assert_eq!(first.remaining_item_count(), Some(15));
    let snapshot_rv = first.resource_version().unwrap().to_string();
    // Writes between pages do not show up in the rest of the list.
    post(&client, &server, PODS, &pod("pod-99-late", json!({}))).await;
    client
        .delete(format!("{}{PODS}/pod-20", server.url()))
        .send()
        .await
        .unwrap();
    let mut all = names(&first);
    let mut token = first.continue_token().map(str::to_string);
    while let Some(next) = token {
        let page = list(&client, &server, &format!("limit=10&continue={next}"))
            .await
            .unwrap();
        assert_eq!(page.resource_version(), Some(snapshot_rv.as_str()));
        all.extend(names(&page));
        token = page.continue_token().map(str::to_string);
    }
    let expected: Vec<String> = (0..25).map(|i| format!("pod-{i:02}")).collect();
    assert_eq!(all, expected);
}

#[tokio::test]
async fn resource_version_rules_for_lists() {
    let server = TestApiServer::builder()
        .history_limit(5)
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    post(&client, &server, PODS, &pod("a", json!({}))).await;
    let at_a = server.storage().current_revision();
    post(&client, &server, PODS, &pod("b", json!({}))).await;

    let exact = list(
        &client,
        &server,
        &format!("resourceVersion={at_a}&resourceVersionMatch=Exact"),
    )
    .await
    .unwrap();
    assert_eq!(names(&exact), ["a"]);
    let latest = list(&client, &server, "resourceVersion=0").await.unwrap();
    assert_eq!(names(&latest), ["a", "b"]);

    let future = at_a + 100;
    let too_large = list(
        &client,
        &server,
        &format!("resourceVersion={future}&resourceVersionMatch=NotOlderThan"),
    )
    .await
    .unwrap_err();
    assert_eq!(too_large.code, 504);
    assert!(too_large.is_too_large_resource_version());

    // A continue token whose snapshot is compacted away.
    for i in 0..3 {
        post(&client, &server, PODS, &pod(&format!("c{i}"), json!({}))).await;
    }
    let page = list(&client, &server, "limit=1").await.unwrap();
    let token = page.continue_token().unwrap().to_string();
    for i in 0..10 {
        post(&client, &server, PODS, &pod(&format!("d{i}"), json!({}))).await;
    }
    let expired = list(&client, &server, &format!("limit=1&continue={token}"))
        .await
        .unwrap_err();
    assert_eq!(expired.code, 410);
    assert!(expired.is_resource_expired());
    assert!(
        expired
            .message
            .starts_with("The provided continue parameter is too old")
    );
    let compacted = list(
        &client,
        &server,
        &format!("resourceVersion={at_a}&resourceVersionMatch=Exact"),
    )
    .await
    .unwrap_err();
    assert_eq!(compacted.code, 410);
}

#[tokio::test]
async fn selectors_filter_lists() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    post(
        &client,
        &server,
        PODS,
        &pod("web-1", json!({"app": "web", "tier": "front"})),
    )
    .await;
    post(&client, &server, PODS, &pod("web-2", json!({"app": "web"}))).await;
    post(&client, &server, PODS, &pod("db", json!({"app": "db"}))).await;
    let web = list(&client, &server, "labelSelector=app%3Dweb")
        .await
        .unwrap();
    assert_eq!(names(&web), ["web-1", "web-2"]);
    let not_front = list(&client, &server, "labelSelector=app%3Dweb%2C%21tier")
        .await
        .unwrap();
    assert_eq!(names(&not_front), ["web-2"]);
    let by_name = list(&client, &server, "fieldSelector=metadata.name%3Ddb")
        .await
        .unwrap();
    assert_eq!(names(&by_name), ["db"]);
}

fn describe(event: &WatchEvent<DynamicObject>) -> String {
    match event {
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.resource_version()),
        WatchEvent::Error(s) => format!("ERROR {}", s.code),
        other => format!(
            "{} {}",
            other.type_name(),
            other.object().and_then(|o| o.name()).unwrap_or_default()
        ),
    }
}

#[tokio::test]
async fn watch_from_zero_replays_then_follows() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    post(&client, &server, PODS, &pod("existing", json!({}))).await;
    let mut events = Events::open(
        &client,
        format!("{}{PODS}?watch=true&resourceVersion=0", server.url()),
    )
    .await;
    assert_eq!(
        describe(&events.next_change().await.unwrap()),
        "ADDED existing"
    );
    post(&client, &server, PODS, &pod("new", json!({}))).await;
    client
        .delete(format!("{}{PODS}/existing", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(describe(&events.next_change().await.unwrap()), "ADDED new");
    // A pod's deletion is graceful: marked first, then gone.
    assert_eq!(
        describe(&events.next_change().await.unwrap()),
        "MODIFIED existing"
    );
    assert_eq!(
        describe(&events.next_change().await.unwrap()),
        "DELETED existing"
    );
}

#[tokio::test]
async fn watch_from_a_resource_version_sends_only_later_events() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    post(&client, &server, PODS, &pod("before", json!({}))).await;
    let rv = server.storage().current_revision();
    post(&client, &server, PODS, &pod("after", json!({}))).await;
    let mut events = Events::open(
        &client,
        format!("{}{PODS}?watch=1&resourceVersion={rv}", server.url()),
    )
    .await;
    assert_eq!(
        describe(&events.next_change().await.unwrap()),
        "ADDED after"
    );
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_an_error_event() {
    let server = TestApiServer::builder()
        .history_limit(2)
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    let rv = server.storage().current_revision();
    for i in 0..5 {
        post(&client, &server, PODS, &pod(&format!("p{i}"), json!({}))).await;
    }
    let mut events = Events::open(
        &client,
        format!("{}{PODS}?watch=true&resourceVersion={rv}", server.url()),
    )
    .await;
    match events.next().await.unwrap() {
        WatchEvent::Error(status) => {
            assert_eq!(status.code, 410);
            assert!(status.is_expired_or_gone());
        }
        other => panic!("expected ERROR, got {}", describe(&other)),
    }
    assert!(
        events.next().await.is_none(),
        "the stream ends after the error"
    );
}

#[tokio::test]
async fn bookmarks_timeout_and_watch_list() {
    let server = TestApiServer::builder()
        .bookmark_interval(Duration::from_millis(50))
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    post(&client, &server, PODS, &pod("a", json!({}))).await;
    let rv = server.storage().current_revision();

    let mut events = Events::open(
        &client,
        format!(
            "{}{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1",
            server.url()
        ),
    )
    .await;
    match events.next().await.unwrap() {
        WatchEvent::Bookmark(bookmark) => {
            assert_eq!(bookmark.resource_version(), rv.to_string());
            assert!(!bookmark.is_initial_events_end());
        }
        other => panic!("expected a bookmark, got {}", describe(&other)),
    }
    let started = std::time::Instant::now();
    while events.next().await.is_some() {}
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "timeoutSeconds ended the stream"
    );

    let mut watch_list = Events::open(
        &client,
        format!(
            "{}{PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
            server.url()
        ),
    )
    .await;
    assert_eq!(describe(&watch_list.next().await.unwrap()), "ADDED a");
    match watch_list.next().await.unwrap() {
        WatchEvent::Bookmark(bookmark) => {
            assert!(bookmark.is_initial_events_end());
            assert_eq!(bookmark.resource_version(), rv.to_string());
        }
        other => panic!(
            "expected the initial-events-end bookmark, got {}",
            describe(&other)
        ),
    }
    post(&client, &server, PODS, &pod("b", json!({}))).await;
    assert_eq!(
        describe(&watch_list.next_change().await.unwrap()),
        "ADDED b"
    );
}

#[tokio::test]
async fn label_selected_watches_see_objects_enter_and_leave() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let rv = server.storage().current_revision();
    let mut events = Events::open(
        &client,
        format!(
            "{}{PODS}?watch=true&resourceVersion={rv}&labelSelector=app%3Dweb",
            server.url()
        ),
    )
    .await;
    post(&client, &server, PODS, &pod("x", json!({"app": "db"}))).await;
    let created: DynamicObject = get_json(&client, format!("{}{PODS}/x", server.url())).await;
    let mut relabelled = serde_json::to_value(&created).unwrap();
    relabelled["metadata"]["labels"] = json!({"app": "web"});
    let moved_in: DynamicObject = client
        .put(format!("{}{PODS}/x", server.url()))
        .json(&relabelled)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut out = serde_json::to_value(&moved_in).unwrap();
    out["metadata"]["labels"] = json!({"app": "cache"});
    client
        .put(format!("{}{PODS}/x", server.url()))
        .json(&out)
        .send()
        .await
        .unwrap();
    assert_eq!(describe(&events.next_change().await.unwrap()), "ADDED x");
    assert_eq!(describe(&events.next_change().await.unwrap()), "DELETED x");
}

#[tokio::test]
async fn discovery_documents() {
    let spec = br#"{"swagger":"2.0","info":{"title":"Kubernetes","version":"v1.36.0"}}"#.to_vec();
    let server = TestApiServer::builder()
        .openapi_v2(spec.clone())
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    let get = |path: &'static str| {
        let client = client.clone();
        let url = format!("{}{path}", server.url());
        async move { client.get(url).send().await.unwrap() }
    };
    let api: Value = get("/api").await.json().await.unwrap();
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"][0], "v1");
    let apis: Value = get("/apis").await.json().await.unwrap();
    assert_eq!(apis["kind"], "APIGroupList");
    let apps = apis["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "apps")
        .unwrap()
        .clone();
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
    let apps_v1: Value = get("/apis/apps/v1").await.json().await.unwrap();
    assert_eq!(apps_v1["groupVersion"], "apps/v1");
    let deployments = apps_v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments")
        .unwrap()
        .clone();
    assert_eq!(deployments["kind"], "Deployment");
    assert_eq!(deployments["namespaced"], true);
    assert!(
        deployments["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("watch"))
    );
    let core: Value = get("/api/v1").await.json().await.unwrap();
    let nodes = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "nodes")
        .unwrap()
        .clone();
    assert_eq!(nodes["namespaced"], false);
    assert_eq!(
        get("/apis/nothing.example.com/v1").await.status(),
        StatusCode::NOT_FOUND
    );
    let served = get("/openapi/v2").await.bytes().await.unwrap();
    assert_eq!(served.to_vec(), spec);
    let without = TestApiServer::builder().start().await.unwrap();
    let missing = client
        .get(format!("{}/openapi/v2", without.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn custom_resources_are_served_once_their_crd_is_created() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let before = client
        .get(format!("{}{crontabs}", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(before.status(), StatusCode::NOT_FOUND);

    let crd = clientgo_testing::custom_resource_definition(
        "stable.example.com",
        "v1",
        "CronTab",
        "crontabs",
        true,
    );
    let created = post(
        &client,
        &server,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &crd,
    )
    .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();
    assert_eq!(created["status"]["conditions"][1]["type"], "Established");

    let mut events = Events::open(
        &client,
        format!("{}{crontabs}?watch=true&resourceVersion=0", server.url()),
    )
    .await;
    let cron = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                      "metadata": {"name": "nightly"}, "spec": {"cronSpec": "0 3 * * *"}});
    let made = post(&client, &server, crontabs, &cron).await;
    assert_eq!(made.status(), StatusCode::CREATED);
    assert_eq!(
        describe(&events.next_change().await.unwrap()),
        "ADDED nightly"
    );
    let listed: Value = get_json(&client, format!("{}{crontabs}", server.url())).await;
    assert_eq!(listed["kind"], "CronTabList");
    assert_eq!(listed["items"][0]["spec"]["cronSpec"], "0 3 * * *");
    let discovered: Value = get_json(
        &client,
        format!("{}/apis/stable.example.com/v1", server.url()),
    )
    .await;
    assert_eq!(discovered["resources"][0]["name"], "crontabs");

    let invalid = post(
        &client,
        &server,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &json!({"metadata": {"name": "broken"}, "spec": {"group": "x.example.com"}}),
    )
    .await;
    assert_eq!(invalid.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let deleted = client
        .delete(format!(
            "{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    let after = client
        .get(format!("{}{crontabs}", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_server_without_watch_list_refuses_send_initial_events() {
    let server = TestApiServer::builder()
        .watch_list(false)
        .start()
        .await
        .unwrap();
    let client = crate::support::http_client();
    let refused = client
        .get(format!(
            "{}{PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let status = status_of(refused).await;
    assert!(status.is_invalid());
    assert!(
        status.message.contains("sendInitialEvents is forbidden"),
        "{}",
        status.message
    );
    // A plain watch still works.
    let plain = client
        .get(format!(
            "{}{PODS}?watch=true&resourceVersion=0&timeoutSeconds=1",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), StatusCode::OK);
    // Many built-in groups are served.
    for path in [
        "/apis/networking.k8s.io/v1/ingresses",
        "/apis/policy/v1/poddisruptionbudgets",
        "/apis/storage.k8s.io/v1/storageclasses",
        "/apis/events.k8s.io/v1/events",
    ] {
        let response = client
            .get(format!("{}{path}", server.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn pods_are_selected_by_node_and_phase_as_kube_apiserver_selects_them() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = Client::new();
    for (name, node, phase) in [
        ("a", Some("node-1"), "Running"),
        ("b", Some("node-2"), "Running"),
        ("c", None, "Pending"),
    ] {
        let mut body = pod(name, json!({}));
        if let Some(node) = node {
            body["spec"]["nodeName"] = json!(node);
        }
        body["status"] = json!({"phase": phase});
        assert!(
            post(&client, &server, PODS, &body)
                .await
                .status()
                .is_success()
        );
    }
    let names = |list: ObjectList<DynamicObject>| -> Vec<String> {
        list.items
            .iter()
            .map(|pod| pod.metadata.name.clone().unwrap_or_default())
            .collect()
    };
    let on_one = list(&client, &server, "fieldSelector=spec.nodeName%3Dnode-1")
        .await
        .unwrap();
    assert_eq!(names(on_one), ["a"]);
    // An unscheduled pod's node name reads as empty.
    let unscheduled = list(&client, &server, "fieldSelector=spec.nodeName%3D")
        .await
        .unwrap();
    assert_eq!(names(unscheduled), ["c"]);
    let running_elsewhere = list(
        &client,
        &server,
        "fieldSelector=status.phase%3DRunning,spec.nodeName!%3Dnode-1",
    )
    .await
    .unwrap();
    assert_eq!(names(running_elsewhere), ["b"]);
    // Read after defaulting: no restartPolicy is Always, no hostNetwork false.
    let defaulted = list(
        &client,
        &server,
        "fieldSelector=spec.restartPolicy%3DAlways,spec.hostNetwork%3Dfalse",
    )
    .await
    .unwrap();
    assert_eq!(names(defaulted), ["a", "b", "c"]);
}
