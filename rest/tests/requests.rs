//! Verbs, patches, errors, retries, throttling, warnings, watches and
//! discovery against clientgo-testing's server over loopback.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{
    ApiResource, DynamicObject, GroupVersionResource, ListOptions, PartialObjectMetadata, Status,
};
use clientgo_rest::{
    Config, CreateOptions, DeleteOptions, Discovery, Error, Patch, PatchOptions, ResourceClient,
    RestClient, UpdateOptions, client::RequestError, config::CollectWarnings,
};
use clientgo_testing::{Failure, TestApiServer, Verb};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..ConfigMap::default()
    }
}

async fn server_and_client() -> (TestApiServer, RestClient) {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = RestClient::new(Config::new(server.url())).unwrap();
    (server, client)
}

fn data(config_map: &ConfigMap) -> BTreeMap<String, String> {
    config_map.data.clone().unwrap_or_default()
}

#[tokio::test]
async fn every_verb_round_trips() {
    let (server, client) = server_and_client().await;
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");

    let created = config_maps
        .create(&CreateOptions::default(), &config_map("app", &[("a", "1")]))
        .await
        .unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    let got = config_maps.get("app").await.unwrap();
    assert_eq!(got, created);

    let mut changed = got.clone();
    changed
        .data
        .get_or_insert_with(BTreeMap::new)
        .insert("b".to_string(), "2".to_string());
    let replaced = config_maps
        .replace("app", &UpdateOptions::default(), &changed)
        .await
        .unwrap();
    assert_eq!(data(&replaced).get("b").map(String::as_str), Some("2"));

    // A replace with the old resourceVersion is a conflict.
    let stale = config_maps
        .replace("app", &UpdateOptions::default(), &got)
        .await
        .unwrap_err();
    assert!(stale.is_conflict(), "{stale}");

    let list = config_maps.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert!(list.metadata.resource_version.is_some());

    config_maps
        .delete("app", &DeleteOptions::background())
        .await
        .unwrap();
    let missing = config_maps.get("app").await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert!(config_maps.get_optional("app").await.unwrap().is_none());

    assert_eq!(server.requests().count(Verb::Create), 1);
    assert_eq!(server.requests().count(Verb::Update), 2);
    assert_eq!(server.requests().count(Verb::Delete), 1);
}

#[tokio::test]
async fn every_patch_type_is_sent_with_its_content_type() {
    let (server, client) = server_and_client().await;
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    config_maps
        .create(&CreateOptions::default(), &config_map("p", &[("a", "1")]))
        .await
        .unwrap();

    let merged = config_maps
        .patch(
            "p",
            &PatchOptions::default(),
            &Patch::Merge(json!({"data": {"b": "2"}})),
        )
        .await
        .unwrap();
    assert_eq!(data(&merged).len(), 2);

    let json_patched = config_maps
        .patch(
            "p",
            &PatchOptions::default(),
            &Patch::Json(json!([{"op": "remove", "path": "/data/a"}])),
        )
        .await
        .unwrap();
    assert_eq!(data(&json_patched).len(), 1);

    let strategic = config_maps
        .patch(
            "p",
            &PatchOptions::default(),
            &Patch::Strategic(json!({"data": {"c": "3"}})),
        )
        .await
        .unwrap();
    assert_eq!(data(&strategic).get("c").map(String::as_str), Some("3"));

    let applied = config_maps
        .patch(
            "p",
            &PatchOptions::apply("clientgo-rest-test").force(),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "p"}, "data": {"d": "4"}
            })),
        )
        .await
        .unwrap();
    assert_eq!(data(&applied).get("d").map(String::as_str), Some("4"));

    let content_types: Vec<String> = server
        .requests()
        .of(Verb::Patch)
        .iter()
        .map(|r| r.header_values("content-type").join(","))
        .collect();
    assert_eq!(
        content_types,
        vec![
            "application/merge-patch+json",
            "application/json-patch+json",
            "application/strategic-merge-patch+json",
            "application/apply-patch+yaml"
        ]
    );
    let apply = server.requests().of(Verb::Patch).pop().unwrap();
    assert!(
        apply.query.contains("fieldManager=clientgo-rest-test"),
        "{}",
        apply.query
    );
    assert!(apply.query.contains("force=true"), "{}", apply.query);

    // Apply without a field manager is refused before sending.
    let error = config_maps
        .patch("p", &PatchOptions::default(), &Patch::Apply(json!({})))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Request(_)), "{error}");
}

#[tokio::test]
async fn status_subresource_and_preconditions() {
    let (_server, client) = server_and_client().await;
    let deployments = ResourceClient::<Deployment>::namespaced(client, "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    let created = deployments
        .create(&CreateOptions::default(), &deployment)
        .await
        .unwrap();
    let mut with_status = created.clone();
    with_status.status = Some(serde_json::from_value(json!({"readyReplicas": 2})).unwrap());
    let updated = deployments
        .replace_status("web", &UpdateOptions::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(updated.status.unwrap().ready_replicas, Some(2));
    let patched = deployments
        .patch_status(
            "web",
            &PatchOptions::default(),
            &Patch::Merge(json!({"status": {"readyReplicas": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.status.unwrap().ready_replicas, Some(1));

    // A delete whose precondition no longer holds is a conflict.
    let old_version = created.metadata.resource_version.clone().unwrap();
    let error = deployments
        .delete(
            "web",
            &DeleteOptions::foreground().if_resource_version(old_version),
        )
        .await
        .unwrap_err();
    assert!(error.is_conflict(), "{error}");
    let current = patched.metadata.resource_version.unwrap();
    deployments
        .delete(
            "web",
            &DeleteOptions::default().if_resource_version(current),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn delete_collection_honours_selectors() {
    let (_server, client) = server_and_client().await;
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    for (name, tier) in [("a", "web"), ("b", "web"), ("c", "db")] {
        let mut object = config_map(name, &[]);
        object.metadata.labels = Some([("tier".to_string(), tier.to_string())].into());
        config_maps
            .create(&CreateOptions::default(), &object)
            .await
            .unwrap();
    }
    config_maps
        .delete_collection(
            &DeleteOptions::default(),
            &ListOptions::default().label_selector("tier=web"),
        )
        .await
        .unwrap();
    let left = config_maps.list(&ListOptions::default()).await.unwrap();
    let names: Vec<_> = left
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, vec!["c"]);
}

#[tokio::test]
async fn cluster_scoped_dynamic_and_metadata_clients() {
    let (_server, client) = server_and_client().await;
    let namespaces = ResourceClient::<Namespace>::all(client.clone());
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team-a"}})).unwrap();
    namespaces
        .create(&CreateOptions::default(), &namespace)
        .await
        .unwrap();
    assert!(namespaces.get("team-a").await.is_ok());

    let resource = ApiResource::of::<ConfigMap>();
    let dynamic = ResourceClient::dynamic(client.clone(), resource.clone(), Some("team-a"));
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "dyn", "labels": {"x": "y"}}, "data": {"k": "v"}
    }))
    .unwrap();
    dynamic
        .create(&CreateOptions::default(), &object)
        .await
        .unwrap();
    let fetched = dynamic.get("dyn").await.unwrap();
    assert_eq!(fetched.data["data"]["k"], "v");

    let metadata = ResourceClient::metadata(client.clone(), resource, None);
    let list = metadata.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    let item: &PartialObjectMetadata = &list.items[0];
    assert_eq!(item.metadata.name.as_deref(), Some("dyn"));

    // Across all namespaces, one object cannot be addressed.
    let everywhere = ResourceClient::<ConfigMap>::all(client);
    let error = everywhere.get("dyn").await.unwrap_err();
    assert!(
        matches!(error, Error::Request(RequestError::InvalidPath(_))),
        "{error}"
    );
}

#[tokio::test]
async fn bad_path_segments_are_refused_before_sending() {
    let (server, client) = server_and_client().await;
    for name in ["..", "a/b", "a%2F", ""] {
        let error = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
            .get(name)
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Request(_)), "{name:?}: {error}");
    }
    let error = ResourceClient::<ConfigMap>::namespaced(client.clone(), "bad/ns")
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Request(_)), "{error}");
    let error = client
        .get()
        .resource("pods")
        .resource("pods")
        .send_raw()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("set twice"), "{error}");
    assert!(server.requests().records().is_empty());
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_until_it_succeeds() {
    let (server, client) = server_and_client().await;
    for _ in 0..2 {
        server.faults().fail_next(
            Some(Verb::List),
            Status::too_many_requests("the API server is busy", 1),
        );
    }
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let list = config_maps.list(&ListOptions::default()).await.unwrap();
    assert!(list.items.is_empty());
    let statuses: Vec<u16> = server
        .requests()
        .of(Verb::List)
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, vec![429, 429, 200]);
    assert_eq!(client.stats().retries, 2);
}

#[tokio::test]
async fn when_retries_run_out_the_last_error_is_returned() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = RestClient::new(Config::new(server.url()).max_retries(1)).unwrap();
    server
        .faults()
        .fail_next(Some(Verb::Get), Status::too_many_requests("first", 1));
    server
        .faults()
        .fail_next(Some(Verb::Get), Status::too_many_requests("second", 1));
    let error = ResourceClient::<ConfigMap>::namespaced(client, "default")
        .get("x")
        .await
        .unwrap_err();
    let status = error.status().unwrap();
    assert_eq!(status.code, 429);
    assert_eq!(status.message, "second");
    assert_eq!(server.requests().count(Verb::Get), 2);
}

#[tokio::test]
async fn a_5xx_without_retry_after_is_not_retried() {
    let (server, client) = server_and_client().await;
    server
        .faults()
        .fail_next(Some(Verb::List), Status::internal_error("etcd is sad"));
    let error = ResourceClient::<ConfigMap>::namespaced(client, "default")
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.status().unwrap().code, 500);
    assert!(error.to_string().contains("etcd is sad"), "{error}");
    assert_eq!(server.requests().count(Verb::List), 1);
}

#[tokio::test]
async fn an_html_502_from_a_proxy_becomes_a_clean_error() {
    let (server, client) = server_and_client().await;
    server.faults().fail_next_with(
        Some(Verb::List),
        Failure::Raw {
            code: 502,
            content_type: "text/html".to_string(),
            body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
                .to_string(),
            retry_after: None,
        },
    );
    let error = ResourceClient::<ConfigMap>::namespaced(client, "default")
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    let status = error.status().expect("an Api error");
    assert_eq!(status.code, 502);
    assert!(
        status.message.contains("502 Bad Gateway"),
        "{}",
        status.message
    );
    assert!(status.message.contains("text/html"), "{}", status.message);
}

#[tokio::test]
async fn a_503_html_page_with_retry_after_is_retried() {
    let (server, client) = server_and_client().await;
    server.faults().fail_next_with(
        None,
        Failure::Raw {
            code: 503,
            content_type: "text/html".to_string(),
            body: "<html>maintenance</html>".to_string(),
            retry_after: Some("1".to_string()),
        },
    );
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    config_maps.list(&ListOptions::default()).await.unwrap();
    assert_eq!(server.requests().count(Verb::List), 2);
}

#[tokio::test]
async fn a_reset_connection_is_retried_for_get_only() {
    let (server, client) = server_and_client().await;
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    server
        .faults()
        .fail_next_with(Some(Verb::List), Failure::Reset);
    config_maps.list(&ListOptions::default()).await.unwrap();
    assert_eq!(server.requests().count(Verb::List), 2);

    server
        .faults()
        .fail_next_with(Some(Verb::Create), Failure::Reset);
    let error = config_maps
        .create(&CreateOptions::default(), &config_map("once", &[]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Http { .. }), "{error}");
    assert_eq!(
        server.requests().count(Verb::Create),
        1,
        "a POST is never resent"
    );
}

#[tokio::test]
async fn warnings_reach_the_handler() {
    let server = TestApiServer::builder().start().await.unwrap();
    let warnings = Arc::new(CollectWarnings::default());
    let client =
        RestClient::new(Config::new(server.url()).warning_handler(warnings.clone())).unwrap();
    server
        .faults()
        .set_warning(Some("v1 ConfigMap is going away, \"really\"".to_string()));
    ResourceClient::<ConfigMap>::namespaced(client, "default")
        .list(&ListOptions::default())
        .await
        .unwrap();
    let received = warnings.warnings();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].code, 299);
    assert_eq!(received[0].text, "v1 ConfigMap is going away, \"really\"");
}

#[tokio::test]
async fn the_default_client_has_no_rate_limit() {
    // kubectl's old 50 QPS with a burst of 300 would hold back the last
    // 100 of these 400 requests for two seconds.
    let (_server, client) = server_and_client().await;
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for _ in 0..400 {
        config_maps.get_optional("absent").await.unwrap();
    }
    let stats = client.stats();
    assert_eq!(stats.throttled, 0, "{stats:?}");
    assert_eq!(stats.throttle_wait, Duration::ZERO, "{stats:?}");
}

#[tokio::test]
async fn requests_are_throttled_and_watches_are_not() {
    let server = TestApiServer::builder().start().await.unwrap();
    // 20 per second with a burst of 1: five requests wait four times 50 ms.
    let client = RestClient::new(Config::new(server.url()).rate_limit(20.0, 1)).unwrap();
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for _ in 0..5 {
        config_maps.list(&ListOptions::default()).await.unwrap();
    }
    let stats = client.stats();
    assert!(stats.throttled >= 3, "{stats:?}");
    assert!(
        stats.throttle_wait >= Duration::from_millis(120),
        "{stats:?}"
    );

    let before = client.stats();
    for _ in 0..5 {
        config_maps.watch(&ListOptions::default()).await.unwrap();
    }
    let after = client.stats();
    assert_eq!(after.throttled, before.throttled, "watches never wait");
    assert_eq!(server.requests().count(Verb::Watch), 5);
}

#[tokio::test]
async fn a_watch_streams_events_as_they_happen() {
    let (server, client) = server_and_client().await;
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    let list = config_maps.list(&ListOptions::default()).await.unwrap();
    let version = list.metadata.resource_version.unwrap();
    let mut stream = config_maps
        .watch(&ListOptions::default().resource_version(version))
        .await
        .unwrap();
    config_maps
        .create(&CreateOptions::default(), &config_map("watched", &[]))
        .await
        .unwrap();
    let mut received = Vec::new();
    while !String::from_utf8_lossy(&received).contains('\n') {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.next_chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        received.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(received).unwrap();
    let event: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "watched");
    let record = server.requests().of(Verb::Watch).pop().unwrap();
    assert!(record.list_options().watch);
}

#[tokio::test]
async fn discovery_finds_versions_groups_and_resources() {
    let (_server, client) = server_and_client().await;
    let discovery = Discovery::new(client);
    let version = discovery.server_version().await.unwrap();
    assert_eq!(version.major, "1");
    let resources = discovery.discover_preferred().await.unwrap();
    let pods = resources
        .iter()
        .find(|r| r.resource.plural() == "pods" && r.resource.group().is_empty())
        .unwrap();
    assert!(pods.resource.is_namespaced());
    assert!(pods.is_watchable());
    assert!(pods.subresources.iter().any(|s| s == "status"), "{pods:?}");
    let namespaces = resources
        .iter()
        .find(|r| r.resource.plural() == "namespaces")
        .unwrap();
    assert!(!namespaces.resource.is_namespaced());

    let deployments = discovery
        .resolve(&GroupVersionResource::new("apps", "v1", "deployments"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(deployments.resource.kind(), "Deployment");
    let missing = discovery
        .resolve(&GroupVersionResource::new(
            "nope.example.com",
            "v1",
            "things",
        ))
        .await
        .unwrap();
    assert!(missing.is_none());
}

#[tokio::test]
async fn a_connection_refused_is_an_http_error_naming_the_url() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let client = RestClient::new(Config::new(url.clone())).unwrap();
    let error = ResourceClient::<ConfigMap>::namespaced(client, "default")
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Http { .. }), "{error}");
    assert!(error.is_connection_refused(), "{error}");
    assert!(!error.is_too_many_requests());
    assert!(error.to_string().contains(&url), "{error}");
}

#[tokio::test]
async fn a_request_timeout_ends_a_slow_request() {
    let (server, client) = server_and_client().await;
    server.faults().set_latency(Duration::from_secs(5));
    let started = std::time::Instant::now();
    let error = client
        .get()
        .abs_path("/api/v1/namespaces/default/configmaps")
        .timeout(Duration::from_millis(200))
        .send_raw()
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let Error::Http { source, .. } = &error else {
        panic!("an HTTP error: {error}");
    };
    assert!(source.is_timeout(), "{error}");
    // The server is told the time limit too, as a query parameter.
    let url = client
        .get()
        .abs_path("/api/v1/namespaces/default/configmaps")
        .timeout(Duration::from_millis(200))
        .url()
        .unwrap();
    assert!(url.ends_with("?timeout=200ms"), "{url}");
}
