//! The test server against a real kube-apiserver 1.36.2: the requests
//! recorded in `../shared/fixtures/real-apiserver-1.36/` are sent to a test
//! server holding the same objects, and its answers are compared with the
//! recordings for what a client can observe: the status code, the
//! content type, the framing (the `k8s\0` envelope and its kind; a
//! protobuf watch's bare `WatchEvent` frames), which fields are present
//! (list items without `kind`, watch objects with it, a Status's fields)
//! and the sequence of watch events. Skips cleanly when `../shared` is
//! absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::collections::BTreeSet;

use clientgo_apimachinery::{GroupResource, Unknown};
use clientgo_testing::{RecordedAnswer, TestApiServer};
use serde_json::{Value, json};

const NAMESPACE: &str = "/api/v1/namespaces/fixtures";
const JSON: &str = "application/json";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A test server holding what the recordings' namespace held: three pods
/// `pod-1..3` labelled `app=fixture,index=N` and a config map `cm-1`.
async fn fixture_server() -> TestApiServer {
    let server = TestApiServer::builder().start().await.unwrap();
    for index in 1..=3 {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("pod-{index}"), "labels": {"app": "fixture", "index": index.to_string()}},
            "spec": {"containers": [{"name": format!("pod-{index}"), "image": "registry.k8s.io/pause:3.10"}]},
        });
        server
            .storage()
            .create(&GroupResource::new("", "pods"), "fixtures", pod)
            .unwrap();
    }
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-1"}, "data": {"a": "b"}});
    server
        .storage()
        .create(
            &GroupResource::new("", "configmaps"),
            "fixtures",
            config_map,
        )
        .unwrap();
    server
}

/// The test server's answer: code, content type and body.
async fn ask(server: &TestApiServer, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    let response = crate::support::http_client()
        .get(format!("{}{path}", server.url()))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    let code = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_string())
        .unwrap_or_default();
    (code, content_type, response.bytes().await.unwrap().to_vec())
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .map(|object| object.keys().cloned().collect())
        .unwrap_or_default()
}

/// What a client can observe of a JSON body: its top-level fields, its
/// kind, a list's metadata fields and whether its items name their type,
/// a Status's reason and code.
///
/// Of a single object only its kind and type fields: the test server does
/// not yet fill a pod's `status` or record `managedFields` on its own
/// writes as the real one does (the objects of these tests are seeded
/// straight into its storage).
fn json_shape(body: &[u8]) -> Value {
    value_shape(&serde_json::from_slice(body).unwrap())
}

/// [`json_shape`] of a value already parsed.
fn value_shape(value: &Value) -> Value {
    let kind = value["kind"].as_str().unwrap_or_default();
    if kind != "Status" && !kind.ends_with("List") {
        return json!({"kind": kind, "apiVersion": value["apiVersion"]});
    }
    let items_typed = value["items"].as_array().map(|items| {
        items
            .iter()
            .any(|item| item.get("kind").is_some() || item.get("apiVersion").is_some())
    });
    json!({
        "fields": keys(value),
        "kind": value["kind"],
        "metadata": keys(&value["metadata"]),
        "items named with their type": items_typed,
        "reason": value["reason"],
        "code": value["code"],
        "details": keys(&value["details"]),
    })
}

/// The `k8s\0` envelope's apiVersion and kind of a protobuf body.
fn envelope_shape(body: &[u8]) -> (String, String) {
    let envelope = Unknown::decode(body).unwrap();
    (envelope.api_version.to_string(), envelope.kind.to_string())
}

/// Sends `path` to the test server as the recording `name` was asked
/// (`.pb`: for protobuf), checks that it answers with the recording's
/// status and content type, and returns the content type, its body and
/// the recorded one.
async fn beside_recording(
    server: &TestApiServer,
    dir: &std::path::Path,
    path: &str,
    name: &str,
) -> (String, Vec<u8>, Vec<u8>) {
    let recorded = RecordedAnswer::read(dir, name).unwrap();
    let accept = if name.ends_with(".pb") {
        PROTOBUF
    } else {
        JSON
    };
    let (code, content_type, body) = ask(server, path, accept).await;
    let what = format!("{name} ({path})");
    assert_eq!(code, recorded.code, "{what}: status");
    assert_eq!(
        content_type,
        recorded.header("content-type").unwrap_or_default(),
        "{what}: content type"
    );
    (content_type, body, recorded.body)
}

/// Sends `path` as each recording `NAME.json` / `NAME.pb` was asked and
/// compares the answers.
async fn compare(server: &TestApiServer, name: &str, path: &str) {
    let Some(dir) = RecordedAnswer::directory() else {
        eprintln!("skipped: ../shared/fixtures/real-apiserver-1.36 is absent");
        return;
    };
    for encoding in ["json", "pb"] {
        let name = format!("{name}.{encoding}");
        let (content_type, body, recorded) = beside_recording(server, &dir, path, &name).await;
        let what = format!("{name} ({path})");
        if content_type.starts_with(JSON) {
            assert_eq!(json_shape(&body), json_shape(&recorded), "{what}: fields");
        } else if content_type == PROTOBUF {
            assert_eq!(
                envelope_shape(&body),
                envelope_shape(&recorded),
                "{what}: envelope"
            );
        } else {
            assert_eq!(body, recorded, "{what}: body");
        }
    }
}

#[tokio::test]
async fn lists_gets_and_errors_answer_as_the_real_server() {
    let server = fixture_server().await;
    for (name, path) in [
        (
            "list-pods-rv0",
            format!("{NAMESPACE}/pods?resourceVersion=0"),
        ),
        ("list-pods-limit2", format!("{NAMESPACE}/pods?limit=2")),
        ("list-configmaps", format!("{NAMESPACE}/configmaps")),
        ("get-pod", format!("{NAMESPACE}/pods/pod-1")),
        ("get-pod-404", format!("{NAMESPACE}/pods/missing")),
        ("list-unknown-resource-404", format!("{NAMESPACE}/nopes")),
        (
            "list-unserved-group-404",
            "/apis/nope.example.com/v1/things".to_string(),
        ),
        (
            "list-pods-future-rv",
            format!("{NAMESPACE}/pods?resourceVersion=99999999&resourceVersionMatch=NotOlderThan"),
        ),
    ] {
        compare(&server, name, &path).await;
    }
}

/// A watch's events as a client sees them: the type, and for objects
/// whether they name their type; periodic bookmarks left out.
fn json_events(body: &[u8]) -> Vec<(String, bool, BTreeSet<String>)> {
    body.split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let event: Value = serde_json::from_slice(line).unwrap();
            let object = &event["object"];
            let annotations = keys(&object["metadata"]["annotations"]);
            (
                event["type"].as_str().unwrap().to_string(),
                object.get("kind").is_some() && object.get("apiVersion").is_some(),
                annotations,
            )
        })
        .filter(|(event_type, _, annotations)| event_type != "BOOKMARK" || !annotations.is_empty())
        .collect()
}

/// A protobuf watch's frames: each a bare `WatchEvent` (its first byte is
/// field 1's key, never the envelope's `k`), as its type and its object's
/// envelope kind; periodic bookmarks left out.
fn protobuf_events(mut body: &[u8]) -> Vec<(String, String)> {
    let mut events = Vec::new();
    while body.len() >= 4 {
        let length = u32::from_be_bytes(body[..4].try_into().unwrap()) as usize;
        let frame = &body[4..4 + length];
        body = &body[4 + length..];
        assert_eq!(frame[0], 0x0a, "a bare WatchEvent starts with its type");
        let type_length = usize::from(frame[1]);
        let event_type = String::from_utf8(frame[2..2 + type_length].to_vec()).unwrap();
        // Field 2 (the RawExtension), then its field 1 (raw): two
        // length-delimited headers before the object's envelope.
        let mut rest = &frame[2 + type_length..];
        for _ in 0..2 {
            assert_eq!(rest[0] & 7, 2, "length-delimited");
            let mut index = 1;
            while rest[index] & 0x80 != 0 {
                index += 1;
            }
            rest = &rest[index + 1..];
        }
        let (_, kind) = envelope_shape(rest);
        events.push((event_type, kind));
    }
    // Periodic bookmarks come as time passes; the initial-events-end one
    // is the first bookmark of a watch-list.
    let mut seen_bookmark = false;
    events.retain(|(event_type, _)| {
        if event_type != "BOOKMARK" {
            return true;
        }
        let first = !seen_bookmark;
        seen_bookmark = true;
        first
    });
    events
}

#[tokio::test]
async fn a_watch_list_and_a_compacted_watch_frame_as_the_real_server() {
    let Some(dir) = RecordedAnswer::directory() else {
        eprintln!("skipped: ../shared/fixtures/real-apiserver-1.36 is absent");
        return;
    };
    let server = fixture_server().await;
    let watch_list = format!(
        "{NAMESPACE}/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    // Only the initial events: the recording's later changes were made
    // while it was open.
    let (_, body, recorded) =
        beside_recording(&server, &dir, &watch_list, "watchlist-pods.json").await;
    assert_eq!(json_events(&body), json_events(&recorded)[..4]);
    let (_, body, recorded) =
        beside_recording(&server, &dir, &watch_list, "watchlist-pods.pb").await;
    assert_eq!(protobuf_events(&body), protobuf_events(&recorded)[..4]);

    // A watch from a resourceVersion the history no longer holds: one
    // ERROR event with a 410 Status, then the end.
    server.compact_history();
    let too_old = format!("{NAMESPACE}/pods?watch=true&resourceVersion=1&timeoutSeconds=1");
    let (_, body, recorded) =
        beside_recording(&server, &dir, &too_old, "watch-pods-too-old-410.json").await;
    assert_eq!(json_events(&body), json_events(&recorded));
    let error_status = |body: &[u8]| {
        let first = body.split(|byte| *byte == b'\n').next().unwrap();
        let event: Value = serde_json::from_slice(first).unwrap();
        value_shape(&event["object"])
    };
    assert_eq!(error_status(&body), error_status(&recorded));
    let (_, body, recorded) =
        beside_recording(&server, &dir, &too_old, "watch-pods-too-old-410.pb").await;
    assert_eq!(protobuf_events(&body), protobuf_events(&recorded));
}

/// The resources of an aggregated discovery document, by group, version
/// and plural: what a client reads of each (kind, scope, singular name,
/// short names, categories, subresources).
fn aggregated_resources(
    document: &Value,
) -> std::collections::BTreeMap<(String, String, String), Value> {
    let mut resources = std::collections::BTreeMap::new();
    for group in document["items"].as_array().into_iter().flatten() {
        let name = group["metadata"]["name"].as_str().unwrap_or_default();
        for version in group["versions"].as_array().into_iter().flatten() {
            let version_name = version["version"].as_str().unwrap_or_default();
            for resource in version["resources"].as_array().into_iter().flatten() {
                let subresources: BTreeSet<String> = resource["subresources"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|sub| sub["subresource"].as_str())
                    .filter(|sub| ["status", "scale"].contains(sub))
                    .map(str::to_string)
                    .collect();
                let seen = json!({
                    "kind": resource["responseKind"]["kind"],
                    "scope": resource["scope"],
                    "singularResource": resource["singularResource"],
                    "shortNames": resource["shortNames"],
                    "categories": resource["categories"],
                    "subresources": subresources,
                });
                let plural = resource["resource"].as_str().unwrap_or_default();
                resources.insert(
                    (
                        name.to_string(),
                        version_name.to_string(),
                        plural.to_string(),
                    ),
                    seen,
                );
            }
        }
    }
    resources
}

#[tokio::test]
async fn aggregated_discovery_answers_as_the_real_server() {
    let Some(dir) = RecordedAnswer::directory() else {
        eprintln!("skipped: ../shared/fixtures/real-apiserver-1.36 is absent");
        return;
    };
    let recorded = RecordedAnswer::read(&dir, "discovery-aggregated.json").unwrap();
    let server = TestApiServer::builder().start().await.unwrap();
    let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let (code, content_type, body) = ask(&server, "/apis", accept).await;
    assert_eq!(code, 200);
    assert_eq!(Some(content_type.as_str()), recorded.header("content-type"));
    let ours: Value = serde_json::from_slice(&body).unwrap();
    let theirs: Value = serde_json::from_slice(&recorded.body).unwrap();
    assert_eq!(ours["kind"], theirs["kind"]);
    assert_eq!(ours["apiVersion"], theirs["apiVersion"]);
    let ours = aggregated_resources(&ours);
    let theirs = aggregated_resources(&theirs);
    let mut compared = 0;
    for (key, seen) in &ours {
        // Versions the real server no longer serves (none today) or types
        // it had not enabled are not compared.
        let Some(recorded) = theirs.get(key) else {
            continue;
        };
        assert_eq!(seen, recorded, "{key:?}");
        compared += 1;
    }
    assert!(compared >= 30, "only {compared} resources in common");

    // The core group, and the legacy answer to a plain Accept.
    let (_, content_type, body) = ask(&server, "/api", accept).await;
    assert_eq!(Some(content_type.as_str()), recorded.header("content-type"));
    let core = aggregated_resources(&serde_json::from_slice(&body).unwrap());
    assert_eq!(
        core[&(String::new(), "v1".to_string(), "pods".to_string())]["shortNames"],
        json!(["po"])
    );
    let (_, content_type, body) = ask(&server, "/apis", JSON).await;
    assert_eq!(content_type, JSON);
    let legacy: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(legacy["kind"], "APIGroupList");
}

/// A server holding eight pods `p-1..8` in namespace `shards`, as the
/// sharding recordings' namespace held, with the gate on or off.
async fn shards_server(gate: bool) -> TestApiServer {
    let server = TestApiServer::builder()
        .sharded_list_and_watch(gate)
        .start()
        .await
        .unwrap();
    for index in 1..=8 {
        let pod = json!({
            "metadata": {"name": format!("p-{index}"), "labels": {"app": "shard"}},
            "spec": {"containers": [{"name": format!("p-{index}"), "image": "registry.k8s.io/pause:3.10"}]},
        });
        server
            .storage()
            .create(&GroupResource::new("", "pods"), "shards", pod)
            .unwrap();
    }
    server
}

fn shard_path(selector: &str) -> String {
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("shardSelector", selector)
        .finish();
    format!("/api/v1/namespaces/shards/pods?{query}")
}

const SHARD_0: &str = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const SHARD_1: &str =
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

fn pod_names(body: &[u8]) -> BTreeSet<String> {
    let list: Value = serde_json::from_slice(body).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pod| pod["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn shard_selectors_are_applied_echoed_and_refused_as_the_real_server() {
    let Some(dir) = RecordedAnswer::directory() else {
        eprintln!("skipped: ../shared/fixtures/real-apiserver-1.36 is absent");
        return;
    };
    let on = shards_server(true).await;
    let off = shards_server(false).await;
    let either = format!("{SHARD_0} || {SHARD_1}");
    let short = "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')";
    let by_name = "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')";
    let cases = [
        ("list-pods-shard0", SHARD_0, &on),
        ("list-pods-shard1", SHARD_1, &on),
        ("list-pods-shard-either", either.as_str(), &on),
        (
            "list-pods-shard-gate-off",
            "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
            &off,
        ),
        ("list-pods-shard-short-hex-500", short, &on),
        ("list-pods-shard-bad-field-500", by_name, &on),
    ];
    let mut shards = Vec::new();
    for (name, selector, server) in cases {
        let path = shard_path(selector);
        let (_, body, recorded) =
            beside_recording(server, &dir, &path, &format!("{name}.json")).await;
        assert_eq!(json_shape(&body), json_shape(&recorded), "{name}: fields");
        let ours: Value = serde_json::from_slice(&body).unwrap();
        let theirs: Value = serde_json::from_slice(&recorded).unwrap();
        // The echo is the selector as sent; a refusal is worded as the
        // real server words it.
        assert_eq!(
            ours["metadata"]["shardInfo"], theirs["metadata"]["shardInfo"],
            "{name}: shardInfo"
        );
        assert_eq!(ours["message"], theirs["message"], "{name}: message");
        if name == "list-pods-shard0" || name == "list-pods-shard1" {
            shards.push(pod_names(&body));
        }
        if name.ends_with("either") || name.ends_with("gate-off") {
            assert_eq!(pod_names(&body).len(), 8, "{name}");
        }
    }
    // The two halves split the eight pods.
    assert!(shards[0].is_disjoint(&shards[1]));
    assert_eq!(shards[0].len() + shards[1].len(), 8);
    // Protobuf lists carry the echo as ListMeta field 5 (the envelope
    // compared as every other list).
    compare(&on, "list-pods-shard0", &shard_path(SHARD_0)).await;
    compare(&on, "list-pods-shard1", &shard_path(SHARD_1)).await;
}

#[tokio::test]
async fn a_sharded_watch_sends_only_its_shards_events() {
    let Some(dir) = RecordedAnswer::directory() else {
        eprintln!("skipped: ../shared/fixtures/real-apiserver-1.36 is absent");
        return;
    };
    let server = shards_server(true).await;
    let (_, _, listed) = ask(&server, &shard_path(SHARD_1), JSON).await;
    let in_shard = pod_names(&listed);
    let list: Value =
        serde_json::from_slice(&ask(&server, "/api/v1/namespaces/shards/pods", JSON).await.2)
            .unwrap();
    let revision = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    // Every pod relabelled, as when the recording was made.
    for index in 1..=8 {
        server
            .storage()
            .modify(
                &clientgo_testing::ObjectKey::new(
                    GroupResource::new("", "pods"),
                    "shards",
                    format!("p-{index}"),
                ),
                |pod| pod["metadata"]["labels"]["round"] = json!("json"),
            )
            .unwrap();
    }
    let path = format!(
        "{}&watch=true&resourceVersion={revision}&timeoutSeconds=1",
        shard_path(SHARD_1)
    );
    let (code, _, body) = ask(&server, &path, JSON).await;
    assert_eq!(code, 200);
    let events = json_events(&body);
    let recorded = json_events(
        &RecordedAnswer::read(&dir, "watch-pods-shard1.json")
            .unwrap()
            .body,
    );
    assert_eq!(events.len(), in_shard.len());
    // The same kinds of events, with the same fields, as the recording.
    assert_eq!(
        events
            .iter()
            .map(|(kind, ..)| kind.clone())
            .collect::<BTreeSet<_>>(),
        recorded
            .iter()
            .map(|(kind, ..)| kind.clone())
            .collect::<BTreeSet<_>>()
    );
}
