//! The scale, eviction and log subresources against clientgo-testing's
//! server: a scale client resolving names through discovery, evictions
//! refused by a PodDisruptionBudget with a typed error, and logs read
//! whole, cut, and followed as they are written.

use std::time::Duration;

use clientgo_apimachinery::GroupResource;
use clientgo_rest::{
    Config, ResourceClient, RestClient,
    api::{EvictionError, LogLines, LogOptions},
    discovery::{CachedDiscovery, DeferredRestMapper, MapperError},
    scale::{ScaleClient, ScaleError},
};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

fn client(server: &TestApiServer) -> RestClient {
    RestClient::new(Config::new(server.url())).unwrap()
}

fn create(server: &TestApiServer, group: &str, plural: &str, object: serde_json::Value) {
    server
        .storage()
        .create(&GroupResource::new(group, plural), "default", object)
        .unwrap();
}

fn pod(server: &TestApiServer, name: &str, containers: &[&str]) {
    let containers: Vec<_> = containers
        .iter()
        .map(|name| json!({"name": name, "image": "busybox"}))
        .collect();
    create(
        server,
        "",
        "pods",
        json!({"metadata": {"name": name, "labels": {"app": "web"}}, "spec": {"containers": containers}}),
    );
}

fn scale_client(server: &TestApiServer) -> ScaleClient {
    let client = client(server);
    ScaleClient::new(
        client.clone(),
        DeferredRestMapper::new(CachedDiscovery::new(client)),
    )
}

#[tokio::test]
async fn the_scale_client_reads_and_sets_replicas_through_discovery() {
    let server = TestApiServer::builder().start().await.unwrap();
    create(
        &server,
        "apps",
        "deployments",
        json!({"metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {}}}),
    );
    let scales = scale_client(&server);
    let scale = scales.get("deploy", Some("default"), "web").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|spec| spec.replicas), Some(2));
    assert_eq!(
        scale
            .status
            .as_ref()
            .and_then(|status| status.selector.clone())
            .as_deref(),
        Some("app=web")
    );

    let scaled = scales
        .scale_to("deployments.apps", Some("default"), "web", 5)
        .await
        .unwrap();
    assert_eq!(scaled.spec.and_then(|spec| spec.replicas), Some(5));
    let stored = server
        .storage()
        .get(&clientgo_testing::ObjectKey::new(
            GroupResource::new("apps", "deployments"),
            "default",
            "web",
        ))
        .unwrap()
        .to_value()
        .unwrap();
    assert_eq!(stored["spec"]["replicas"], 5);

    // The Scale read before the change is stale now.
    let conflict = scales
        .update("deploy", Some("default"), &scale)
        .await
        .unwrap_err();
    assert!(
        matches!(&conflict, ScaleError::Request(error) if error.is_conflict()),
        "{conflict}"
    );

    let not_scalable = scales
        .get("configmaps", Some("default"), "web")
        .await
        .unwrap_err();
    assert!(
        matches!(not_scalable, ScaleError::NotScalable { .. }),
        "{not_scalable}"
    );
    let unknown = scales
        .get("nopes", Some("default"), "web")
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, ScaleError::Mapping(MapperError::NoMatch { .. })),
        "{unknown}"
    );
}

#[tokio::test]
async fn an_eviction_a_budget_forbids_is_a_typed_error_with_its_retry() {
    let server = TestApiServer::builder().start().await.unwrap();
    for name in ["web-1", "web-2", "web-3"] {
        pod(&server, name, &["app"]);
    }
    create(
        &server,
        "policy",
        "poddisruptionbudgets",
        json!({"metadata": {"name": "web-budget"}, "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    let pods = ResourceClient::<Pod>::namespaced(client(&server), "default");
    let dry_run = clientgo_rest::DeleteOptions {
        dry_run: vec!["All".to_string()],
        ..Default::default()
    };
    pods.evict("web-1", Some(&dry_run)).await.unwrap();
    assert!(
        pods.get_optional("web-1").await.unwrap().is_some(),
        "a dry run deletes nothing"
    );
    pods.evict("web-1", None).await.unwrap();
    assert!(
        pods.get_optional("web-1").await.unwrap().is_none(),
        "evicted"
    );

    let refused = pods.evict("web-2", None).await.unwrap_err();
    let EvictionError::DisruptionBudget {
        status,
        retry_after,
    } = &refused
    else {
        panic!("a budget refusal: {refused}")
    };
    assert_eq!(status.code, 429);
    assert_eq!(
        *retry_after,
        Duration::from_secs(5),
        "kubectl's wait when the server gives none"
    );
    let cause = &status.details.as_ref().unwrap().causes[0];
    assert_eq!(cause.reason, "DisruptionBudget");
    assert!(
        cause
            .message
            .contains("web-budget needs 2 healthy pods and has 2"),
        "{}",
        cause.message
    );
    assert!(
        refused.to_string().contains("disruption budget"),
        "{refused}"
    );
    assert!(pods.get_optional("web-2").await.unwrap().is_some(), "kept");

    let gone = pods.evict("web-1", None).await.unwrap_err();
    assert!(
        matches!(&gone, EvictionError::Request(error) if error.is_not_found()),
        "{gone}"
    );
}

#[tokio::test]
async fn logs_are_read_whole_cut_and_by_container() {
    let server = TestApiServer::builder().start().await.unwrap();
    pod(&server, "web", &["app"]);
    pod(&server, "two", &["app", "sidecar"]);
    server
        .pod_logs()
        .append("default", "web", "app", "one\ntwo\nthree");
    let pods = ResourceClient::<Pod>::namespaced(client(&server), "default");

    assert_eq!(
        pods.logs("web", &LogOptions::default()).await.unwrap(),
        "one\ntwo\nthree\n"
    );
    assert_eq!(
        pods.logs("web", &LogOptions::default().tail_lines(2))
            .await
            .unwrap(),
        "two\nthree\n"
    );
    assert_eq!(
        pods.logs("web", &LogOptions::default().limit_bytes(5))
            .await
            .unwrap(),
        "one\nt"
    );
    let stamped = pods
        .logs("web", &LogOptions::default().timestamps(true))
        .await
        .unwrap();
    let first = stamped.lines().next().unwrap();
    assert!(first.ends_with("Z one") && first.len() > 30, "{first}");

    let no_previous = pods
        .logs("web", &LogOptions::default().previous(true))
        .await
        .unwrap_err();
    assert_eq!(no_previous.status().map(|status| status.code), Some(400));
    server
        .pod_logs()
        .set_previous("default", "web", "app", "before the restart");
    assert_eq!(
        pods.logs("web", &LogOptions::default().previous(true))
            .await
            .unwrap(),
        "before the restart\n"
    );

    let ambiguous = pods.logs("two", &LogOptions::default()).await.unwrap_err();
    assert!(
        ambiguous
            .to_string()
            .contains("choose one of: [app sidecar]"),
        "{ambiguous}"
    );
    server
        .pod_logs()
        .append("default", "two", "sidecar", "from the sidecar");
    assert_eq!(
        pods.logs("two", &LogOptions::default().container("sidecar"))
            .await
            .unwrap(),
        "from the sidecar\n"
    );
    let missing = pods.logs("nope", &LogOptions::default()).await.unwrap_err();
    assert!(missing.is_not_found());
}

async fn next(lines: &mut LogLines) -> Option<String> {
    tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .expect("a line within 5 s")
        .unwrap()
}

#[tokio::test]
async fn a_followed_log_delivers_lines_as_written_and_ends_with_the_pod() {
    let server = TestApiServer::builder().start().await.unwrap();
    pod(&server, "web", &["app"]);
    server.pod_logs().append("default", "web", "app", "started");
    let pods = ResourceClient::<Pod>::namespaced(client(&server), "default");
    let stream = tokio::time::timeout(
        Duration::from_secs(5),
        pods.log_stream("web", &LogOptions::default().follow(true)),
    )
    .await
    .expect("the answer's headers within 5 s")
    .unwrap();
    let mut lines = LogLines::new(stream);
    assert_eq!(next(&mut lines).await.as_deref(), Some("started"));
    server
        .pod_logs()
        .append("default", "web", "app", "working\nstill working");
    assert_eq!(next(&mut lines).await.as_deref(), Some("working"));
    assert_eq!(next(&mut lines).await.as_deref(), Some("still working"));
    pods.delete("web", &Default::default()).await.unwrap();
    assert_eq!(next(&mut lines).await, None, "the stream ends with the pod");
}
