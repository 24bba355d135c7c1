//! The test server held to the real kube-apiserver: the same requests on
//! both, in fresh namespaces, and what matters of each answer compared
//! (status codes, Status bodies, objects as written, managedFields,
//! resourceVersion rules, list order and pages, watch events).
//!
//! Every difference found must be one the crate documentation's table of
//! divergences lists (the `DIVERGENCES` below are that table's rows, by
//! scenario and JSON path): a new difference fails, and so does a row whose
//! difference is gone (fixed), so the table stays true.
//!
//! Its own binary: it starts the real server (skips with a notice when the
//! binaries are absent; fails when `CLIENTGO_ENVTEST_REQUIRED` is set).

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::Duration;

use clientgo_rest::{ContentType, RestClient};
use clientgo_testing::envtest::{Backend, ControlPlane};
use serde_json::{Value, json};

/// The table of divergences in clientgo-testing's crate documentation, as
/// (scenario, JSON path of the first difference under it).
const DIVERGENCES: &[(&str, &str)] = &[
    // 1. Ownership is kept beside the object, not in metadata.managedFields.
    ("create", "/body/metadata/managedFields"),
    ("merge patch", "/body/metadata/managedFields"),
    ("apply by alpha", "/body/metadata/managedFields"),
    ("apply finalizers by alpha", "/body/metadata/managedFields"),
    // 2. Lists are owned whole: a second manager's finalizer conflicts
    // where kube-apiserver merges it.
    ("apply finalizers by beta", "/"),
    // 3. Names are not validated.
    ("create with an invalid name", "/"),
    // 4. Namespaces need not exist.
    ("create in a missing namespace", "/"),
    // 5. Selector syntax errors are the project's parser's words.
    ("list with a bad label selector", "/body/message"),
];

/// One answer, reduced to what is compared.
fn answer(status: u16, body: &[u8]) -> Value {
    let body: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    json!({"status": status, "body": normalize(body)})
}

/// Values that differ by nature (uids, times, resourceVersions, generated
/// names) become their shape.
fn normalize(mut value: Value) -> Value {
    fn walk(value: &mut Value, key: Option<&str>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    walk(v, Some(k));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, key)),
            Value::String(text) => {
                *text = without_uuids(text);
                if matches!(
                    key,
                    Some("uid" | "creationTimestamp" | "resourceVersion" | "time" | "continue")
                ) && !text.is_empty()
                {
                    *text = "<set>".into();
                }
            }
            _ => {}
        }
    }
    walk(&mut value, None);
    value
}

/// `text` with every UUID (`8-4-4-4-12` hex digits) written `<uid>`.
fn without_uuids(text: &str) -> String {
    let bytes = text.as_bytes();
    let is_uuid = |at: usize| {
        bytes.len() >= at + 36
            && bytes[at..at + 36].iter().enumerate().all(|(i, b)| {
                if matches!(i, 8 | 13 | 18 | 23) {
                    *b == b'-'
                } else {
                    b.is_ascii_hexdigit()
                }
            })
    };
    let mut out = String::new();
    let mut at = 0;
    while at < bytes.len() {
        if is_uuid(at) {
            out.push_str("<uid>");
            at += 36;
        } else {
            let c = text[at..].chars().next().unwrap_or_default();
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// Each scenario's answers with the namespace's name written `<namespace>`.
fn without_namespace(
    answers: BTreeMap<&'static str, Value>,
    namespace: &str,
) -> BTreeMap<&'static str, Value> {
    answers
        .into_iter()
        .map(|(scenario, answer)| {
            let text = serde_json::to_string(&answer)
                .unwrap()
                .replace(namespace, "<namespace>");
            (scenario, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

/// The paths at which `a` and `b` first differ (one per differing
/// subtree).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let (p, q) = (
                    x.get(key).unwrap_or(&Value::Null),
                    y.get(key).unwrap_or(&Value::Null),
                );
                differences(p, q, &format!("{path}/{key}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(path.to_string()),
    }
}

/// Runs every scenario on one server; returns each scenario's answer.
async fn scenarios(backend: &Backend) -> BTreeMap<&'static str, Value> {
    let namespace = backend.create_namespace("agreement").await.unwrap();
    let client = RestClient::new(backend.config().content_type(ContentType::Json)).unwrap();
    let base = format!("/api/v1/namespaces/{namespace}/configmaps");
    let mut out = BTreeMap::new();
    let send = |method: &'static str, path: String, body: Option<(Value, &'static str)>| {
        let client = client.clone();
        async move {
            let request = match method {
                "GET" => client.get(),
                "POST" => client.post(),
                "PUT" => client.put(),
                "PATCH" => client.patch(),
                "DELETE" => client.delete(),
                _ => unreachable!(),
            };
            let mut request = request.abs_path(path).max_retries(0);
            if let Some((body, content_type)) = body {
                request = request.body(serde_json::to_vec(&body).unwrap(), content_type);
            }
            match request.send_raw().await {
                Ok(response) => (response.status, response.body.to_vec()),
                Err(clientgo_rest::Error::Api(status)) => {
                    (status.code, serde_json::to_vec(&*status).unwrap())
                }
                Err(error) => panic!("{method}: {error}"),
            }
        }
    };
    let json = "application/json";
    let apply = "application/apply-patch+yaml";
    let merge = "application/merge-patch+json";
    let config_map = |name: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "web"}}, "data": {"a": "1"}})
    };

    let (status, body) = send("GET", format!("{base}/missing"), None).await;
    out.insert("get a missing object", answer(status, &body));

    let (status, body) = send("POST", base.clone(), Some((config_map("one"), json))).await;
    out.insert("create", answer(status, &body));
    let created: Value = serde_json::from_slice(&body).unwrap();
    let first_version = created["metadata"]["resourceVersion"].clone();

    let (status, body) = send("POST", base.clone(), Some((config_map("one"), json))).await;
    out.insert("create again", answer(status, &body));

    let (status, body) = send(
        "POST",
        "/api/v1/namespaces/no-such-namespace/configmaps".into(),
        Some((config_map("one"), json)),
    )
    .await;
    out.insert("create in a missing namespace", answer(status, &body));

    let (status, body) = send("POST", base.clone(), Some((config_map("Not_A_Name"), json))).await;
    out.insert("create with an invalid name", answer(status, &body));
    // Where it was created (the test server), it goes again, so the
    // divergence does not reach the scenarios after it.
    if status == 201 {
        send("DELETE", format!("{base}/Not_A_Name"), None).await;
    }

    // A write that changes nothing keeps the resourceVersion.
    let (status, body) = send("PUT", format!("{base}/one"), Some((created.clone(), json))).await;
    let unchanged: Value = serde_json::from_slice(&body).unwrap();
    out.insert(
        "replace with no change",
        json!({"status": status, "same resourceVersion":
            unchanged["metadata"]["resourceVersion"] == first_version}),
    );

    let (status, body) = send(
        "PATCH",
        format!("{base}/one"),
        Some((json!({"data": {"b": "2"}}), merge)),
    )
    .await;
    out.insert("merge patch", answer(status, &body));

    let (status, body) = send("PUT", format!("{base}/one"), Some((created.clone(), json))).await;
    out.insert("replace at a stale resourceVersion", answer(status, &body));

    let (status, body) = send(
        "PATCH",
        format!("{base}/one?fieldManager=alpha"),
        Some((
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}, "data": {"c": "3"}}),
            apply,
        )),
    )
    .await;
    out.insert("apply by alpha", answer(status, &body));

    let (status, body) = send(
        "PATCH",
        format!("{base}/one?fieldManager=beta"),
        Some((
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}, "data": {"c": "4"}}),
            apply,
        )),
    )
    .await;
    out.insert("apply conflict by beta", answer(status, &body));

    for (manager, finalizer) in [("alpha", "example.com/alpha"), ("beta", "example.com/beta")] {
        let (status, body) = send(
            "PATCH",
            format!("{base}/one?fieldManager={manager}"),
            Some((
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "one", "finalizers": [finalizer]}}),
                apply,
            )),
        )
        .await;
        let scenario = if manager == "alpha" {
            "apply finalizers by alpha"
        } else {
            "apply finalizers by beta"
        };
        out.insert(scenario, answer(status, &body));
        let _ = scenario;
    }

    let (status, body) = send("DELETE", format!("{base}/missing"), None).await;
    out.insert("delete a missing object", answer(status, &body));
    let (status, body) = send(
        "DELETE",
        format!("{base}/one"),
        Some((json!({"preconditions": {"uid": "not-its-uid"}}), json)),
    )
    .await;
    out.insert(
        "delete with a wrong uid precondition",
        answer(status, &body),
    );

    let (status, body) = send(
        "POST",
        base.clone(),
        Some((
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}),
            json,
        )),
    )
    .await;
    let generated: Value = serde_json::from_slice(&body).unwrap();
    let name = generated["metadata"]["name"].as_str().unwrap_or_default();
    out.insert(
        "create with generateName",
        json!({"status": status, "prefix": name.starts_with("gen-"), "length": name.len()}),
    );

    // Pages of two over five more objects (and the three above), in name
    // order.
    for index in 0..5 {
        send(
            "POST",
            base.clone(),
            Some((config_map(&format!("page-{index}")), json)),
        )
        .await;
    }
    let mut pages = Vec::new();
    let mut token = String::new();
    loop {
        let mut path = format!("{base}?limit=3");
        if !token.is_empty() {
            path.push_str(&format!("&continue={token}"));
        }
        let (status, body) = send("GET", path, None).await;
        let page: Value = serde_json::from_slice(&body).unwrap();
        let names: Vec<Value> = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                let name = item["metadata"]["name"].as_str().unwrap_or_default();
                // Generated names compare by their prefix.
                Value::String(if name.starts_with("gen-") {
                    "gen-*".into()
                } else {
                    name.into()
                })
            })
            .collect();
        pages.push(json!({"status": status, "names": names,
            "remainingItemCount": page["metadata"]["remainingItemCount"],
            "continue": page["metadata"]["continue"].is_string(),
            "kind": page["kind"], "apiVersion": page["apiVersion"],
            "itemKind": page["items"][0]["kind"]}));
        token = page["metadata"]["continue"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if token.is_empty() || pages.len() > 5 {
            break;
        }
    }
    out.insert("list in pages of three", Value::Array(pages));

    let (status, body) = send("GET", format!("{base}?labelSelector=app%20in"), None).await;
    out.insert("list with a bad label selector", answer(status, &body));
    let (status, body) = send("GET", format!("{base}?fieldSelector=spec.foo%3Dbar"), None).await;
    out.insert("list with an unknown field selector", answer(status, &body));

    // A watch from the list's resourceVersion: a create, an update and a
    // delete, in order.
    let (_, body) = send("GET", base.clone(), None).await;
    let list: Value = serde_json::from_slice(&body).unwrap();
    let version = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut stream = client
        .get()
        .abs_path(format!("{base}?watch=true&resourceVersion={version}"))
        .stream()
        .await
        .unwrap();
    send("POST", base.clone(), Some((config_map("watched"), json))).await;
    send(
        "PATCH",
        format!("{base}/watched"),
        Some((json!({"data": {"z": "9"}}), merge)),
    )
    .await;
    send("DELETE", format!("{base}/watched"), None).await;
    let mut text = String::new();
    let mut events = Vec::new();
    while events.len() < 3 {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.next_chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = text.find('\n') {
            let line: String = text.drain(..=end).collect();
            let event: Value = serde_json::from_str(line.trim()).unwrap();
            events.push(json!({"type": event["type"],
                "name": event["object"]["metadata"]["name"],
                "data": event["object"]["data"]}));
        }
    }
    out.insert(
        "watch a create, an update and a delete",
        Value::Array(events),
    );
    without_namespace(out, &namespace)
}

#[tokio::test]
async fn the_test_server_answers_as_kube_apiserver_does_but_for_the_table() {
    let Some(_) = ControlPlane::shared().await.unwrap() else {
        return;
    };
    let backends = Backend::both().await;
    let test_server = scenarios(&backends[0]).await;
    let real = scenarios(&backends[1]).await;
    let mut found = Vec::new();
    for (scenario, expected) in &real {
        let mut paths = Vec::new();
        differences(&test_server[scenario], expected, "", &mut paths);
        for path in paths {
            found.push((scenario.to_string(), path));
        }
    }
    let listed = |scenario: &str, path: &str| {
        DIVERGENCES
            .iter()
            .any(|(s, prefix)| *s == scenario && path.starts_with(prefix))
    };
    assert!(!found.is_empty() || DIVERGENCES.is_empty());
    let unlisted: Vec<String> = found
        .iter()
        .filter(|(scenario, path)| !listed(scenario, path))
        .map(|(scenario, path)| {
            let pointer = |answers: &BTreeMap<&str, Value>| {
                answers[scenario.as_str()]
                    .pointer(path)
                    .cloned()
                    .unwrap_or(Value::Null)
            };
            format!(
                "{scenario} at {path}:\n  test server: {}\n  kube-apiserver: {}",
                pointer(&test_server),
                pointer(&real)
            )
        })
        .collect();
    assert!(
        unlisted.is_empty(),
        "differences the table does not list:\n{}",
        unlisted.join("\n")
    );
    let stale: Vec<&(&str, &str)> = DIVERGENCES
        .iter()
        .filter(|(scenario, prefix)| {
            !found
                .iter()
                .any(|(s, path)| s == scenario && path.starts_with(prefix))
        })
        .collect();
    assert!(
        stale.is_empty(),
        "rows of the table no difference needs any more (fixed? remove them): {stale:?}"
    );
}
