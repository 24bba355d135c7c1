//! Patch types, deletecollection, and metadata-only answers over HTTP.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use clientgo_apimachinery::{
    DynamicObject, Object, PARTIAL_OBJECT_METADATA_ACCEPT, PARTIAL_OBJECT_METADATA_LIST_ACCEPT,
    PartialObjectMetadataList, Status,
};
use clientgo_testing::TestApiServer;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// GETs a URL and decodes the JSON answer.
async fn get_json<T: serde::de::DeserializeOwned>(client: &Client, url: String) -> T {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

async fn create(client: &Client, server: &TestApiServer, name: &str, labels: &Value) {
    let response = client
        .post(format!("{}{PODS}", server.url()))
        .json(&json!({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "labels": labels},
                      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
}

async fn patch(
    client: &Client,
    server: &TestApiServer,
    path: &str,
    content_type: &str,
    body: &Value,
) -> reqwest::Response {
    client
        .patch(format!("{}{path}", server.url()))
        .header("content-type", content_type)
        .body(serde_json::to_vec(body).unwrap())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn merge_json_and_strategic_patches() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create(&client, &server, "web", &json!({"app": "web", "old": "x"})).await;

    let merged: DynamicObject = patch(
        &client,
        &server,
        &format!("{PODS}/web"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"tier": "front", "old": null}}}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(merged.labels().get("tier"), Some("front"));
    assert!(!merged.labels().contains_key("old"));
    assert_eq!(merged.labels().get("app"), Some("web"));

    let json_patched: DynamicObject = patch(
        &client,
        &server,
        &format!("{PODS}/web"),
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"}]),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        json_patched.data["spec"]["containers"][0]["image"],
        "nginx:2"
    );
    assert_eq!(json_patched.generation(), Some(2));

    let strategic = patch(
        &client,
        &server,
        &format!("{PODS}/web"),
        "application/strategic-merge-patch+json",
        &json!({"metadata": {"annotations": {"note": "hi"}}}),
    )
    .await;
    assert_eq!(strategic.status(), StatusCode::OK);

    let failed_test = patch(
        &client,
        &server,
        &format!("{PODS}/web"),
        "application/json-patch+json",
        &json!([{"op": "test", "path": "/metadata/name", "value": "other"}]),
    )
    .await;
    assert_eq!(failed_test.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let stale = patch(
        &client,
        &server,
        &format!("{PODS}/web"),
        "application/merge-patch+json",
        &json!({"metadata": {"resourceVersion": "1"}}),
    )
    .await;
    assert_eq!(stale.status(), StatusCode::CONFLICT);

    let unsupported = patch(
        &client,
        &server,
        &format!("{PODS}/web"),
        "text/plain",
        &json!({}),
    )
    .await;
    assert_eq!(unsupported.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let status: Status = serde_json::from_slice(&unsupported.bytes().await.unwrap()).unwrap();
    assert!(status.is_unsupported_media_type());

    let missing = patch(
        &client,
        &server,
        &format!("{PODS}/nope"),
        "application/merge-patch+json",
        &json!({}),
    )
    .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn status_patches_change_only_status_and_apply_creates() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create(&client, &server, "web", &json!({})).await;
    let patched: DynamicObject = patch(
        &client,
        &server,
        &format!("{PODS}/web/status"),
        "application/merge-patch+json",
        &json!({"status": {"phase": "Running"}, "spec": {"nodeName": "ignored"}}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(patched.data["status"]["phase"], "Running");
    assert!(patched.data["spec"].get("nodeName").is_none());

    // An apply names its field manager (kube-apiserver's 422 otherwise).
    let body =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "applied"}, "spec": {}});
    let unnamed = patch(
        &client,
        &server,
        &format!("{PODS}/applied"),
        "application/apply-patch+yaml",
        &body,
    )
    .await;
    assert_eq!(unnamed.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let applied = patch(
        &client,
        &server,
        &format!("{PODS}/applied?fieldManager=tester"),
        "application/apply-patch+yaml",
        &body,
    )
    .await;
    assert_eq!(applied.status(), StatusCode::CREATED);
    let reapplied = patch(
        &client,
        &server,
        &format!("{PODS}/applied?fieldManager=tester"),
        "application/apply-patch+yaml",
        &json!({"metadata": {"labels": {"applied": "twice"}}}),
    )
    .await;
    assert_eq!(reapplied.status(), StatusCode::OK);
}

#[tokio::test]
async fn delete_collection_honours_selectors() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create(&client, &server, "a", &json!({"app": "web"})).await;
    create(&client, &server, "b", &json!({"app": "web"})).await;
    create(&client, &server, "c", &json!({"app": "db"})).await;
    let deleted: Value = client
        .delete(format!("{}{PODS}?labelSelector=app%3Dweb", server.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(deleted["kind"], "PodList");
    assert_eq!(deleted["items"].as_array().unwrap().len(), 2);
    let left: Value = get_json(&client, format!("{}{PODS}", server.url())).await;
    let names: Vec<&str> = left["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c"]);
}

#[tokio::test]
async fn metadata_only_answers_for_get_list_and_watch() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    create(&client, &server, "web", &json!({"app": "web"})).await;

    let one: Value = client
        .get(format!("{}{PODS}/web", server.url()))
        .header("accept", PARTIAL_OBJECT_METADATA_ACCEPT)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(one["kind"], "PartialObjectMetadata");
    assert_eq!(one["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(one["metadata"]["labels"]["app"], "web");
    assert!(one.get("spec").is_none());

    let list: PartialObjectMetadataList = client
        .get(format!("{}{PODS}", server.url()))
        .header("accept", PARTIAL_OBJECT_METADATA_LIST_ACCEPT)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.kind.as_deref(), Some("PartialObjectMetadataList"));
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].name(), Some("web"));

    let mut watch = client
        .get(format!(
            "{}{PODS}?watch=true&resourceVersion=0",
            server.url()
        ))
        .header("accept", PARTIAL_OBJECT_METADATA_ACCEPT)
        .send()
        .await
        .unwrap();
    let chunk = tokio::time::timeout(Duration::from_secs(5), watch.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let event: Value = serde_json::from_slice(&chunk).unwrap();
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
    assert!(event["object"].get("spec").is_none());
}

/// Appliers racing for one field: the first write wins it, every other
/// apply of another value is a conflict naming it, none lost or doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_appliers_of_one_field_conflict_with_the_winner() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = crate::support::http_client();
    let applies = (0..8).map(|index| {
        let (client, url) = (client.clone(), server.url());
        async move {
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "raced"}, "data": {"k": index.to_string()}});
            let response = client
                .patch(format!(
                    "{url}/api/v1/namespaces/default/configmaps/raced?fieldManager=m{index}"
                ))
                .header("content-type", "application/apply-patch+yaml")
                .body(serde_json::to_vec(&body).unwrap())
                .send()
                .await
                .unwrap();
            let code = response.status();
            (index, code, response.json::<Value>().await.unwrap())
        }
    });
    let answers = futures_util::future::join_all(applies).await;
    let winners: Vec<usize> = answers
        .iter()
        .filter(|(_, code, _)| code.is_success())
        .map(|(index, _, _)| *index)
        .collect();
    assert_eq!(winners.len(), 1, "{answers:?}");
    let winner = winners[0];
    for (_, code, body) in answers.iter().filter(|(index, _, _)| *index != winner) {
        assert_eq!(*code, StatusCode::CONFLICT, "{body}");
        let status: Status = serde_json::from_value(body.clone()).unwrap();
        assert_eq!(
            status.message,
            format!("Apply failed with 1 conflict: conflict with \"m{winner}\": .data.k")
        );
        assert!(status.has_cause("FieldManagerConflict"), "{body}");
    }
    let stored: Value = get_json(
        &client,
        format!(
            "{}/api/v1/namespaces/default/configmaps/raced",
            server.url()
        ),
    )
    .await;
    assert_eq!(stored["data"]["k"], winner.to_string());
}
