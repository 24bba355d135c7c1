//! Aggregated discovery, its memory and disk caches and the RESTMapper
//! against clientgo-testing's server (which answers aggregated discovery
//! as the recorded kube-apiserver 1.36 does).

use std::time::Duration;

use clientgo_apimachinery::{GroupVersionKind, GroupVersionResource};
use clientgo_rest::{
    Config, CreateOptions, Discovery, ResourceClient, RestClient,
    discovery::{
        CachedDiscovery, DEFAULT_DISCOVERY_CACHE_TTL, DeferredRestMapper, MapperError, RestMapper,
    },
};
use clientgo_testing::TestApiServer;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

/// `group/version/plural` (`/v1/pods` for the core group).
fn path_of(resource: &clientgo_rest::discovery::DiscoveredResource) -> String {
    let api = &resource.resource;
    format!("{}/{}/{}", api.group(), api.version(), api.plural())
}

fn client(server: &TestApiServer) -> RestClient {
    RestClient::new(Config::new(server.url())).unwrap()
}

/// Discovery requests: `/api`, `/apis` and group versions.
fn discovery_requests(server: &TestApiServer) -> Vec<String> {
    server
        .requests()
        .records()
        .into_iter()
        .filter(|record| record.path.starts_with("/api"))
        .map(|record| record.path)
        .collect()
}

async fn create_crd(client: &RestClient, plural: &str, kind: &str) {
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.stable.example.com")},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "shortNames": ["ct"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .unwrap();
    ResourceClient::<CustomResourceDefinition>::all(client.clone())
        .create(&CreateOptions::default(), &crd)
        .await
        .unwrap();
}

#[tokio::test]
async fn aggregated_discovery_reads_everything_in_two_requests() {
    let server = TestApiServer::builder().start().await.unwrap();
    let discovery = Discovery::new(client(&server))
        .discover_all()
        .await
        .unwrap();
    assert_eq!(discovery_requests(&server), ["/api", "/apis"]);
    assert_eq!(discovery.groups[0].name, "", "the core group first");
    let pods = discovery
        .find(&GroupVersionResource::new("", "v1", "pods"))
        .unwrap();
    assert_eq!(pods.short_names, ["po"]);
    assert_eq!(pods.categories, ["all"]);
    let deployments = discovery
        .find(&GroupVersionResource::new("apps", "v1", "deployments"))
        .unwrap();
    assert!(deployments.subresources.contains(&"scale".to_string()));
}

#[tokio::test]
async fn a_server_without_aggregated_discovery_is_walked_group_by_group_to_the_same_answer() {
    let old = TestApiServer::builder()
        .aggregated_discovery(false)
        .start()
        .await
        .unwrap();
    let walked = Discovery::new(client(&old)).discover_all().await.unwrap();
    let requests = discovery_requests(&old);
    assert!(
        requests.len() > 10,
        "one request per group version: {requests:?}"
    );

    let new = TestApiServer::builder().start().await.unwrap();
    let aggregated = Discovery::new(client(&new)).discover_all().await.unwrap();
    let names = |discovery: &clientgo_rest::discovery::ApiDiscovery| {
        let mut names: Vec<String> = discovery
            .resources()
            .map(|(resource, _)| resource.resource.group_version_resource().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&walked), names(&aggregated));
    let pods = GroupVersionResource::new("", "v1", "pods");
    assert_eq!(walked.find(&pods), aggregated.find(&pods));
}

#[tokio::test]
async fn the_disk_cache_has_kubectls_layout_and_spares_the_next_process_every_request() {
    let server = TestApiServer::builder().start().await.unwrap();
    let dir = crate::support::TempDir::new("discovery");
    let first =
        CachedDiscovery::with_disk(client(&server), dir.path(), DEFAULT_DISCOVERY_CACHE_TTL);
    first.discovery().await.unwrap();
    first.discovery().await.unwrap();
    assert_eq!(first.stats().fetches, 1, "memory serves the second");
    let host = format!("127.0.0.1_{}", server.address().port());
    let root = dir.path().join(&host);
    assert_eq!(first.disk_dir(), Some(root.as_path()));
    for file in [
        "servergroups.json",
        "v1/serverresources.json",
        "apps/v1/serverresources.json",
    ] {
        assert!(root.join(file).is_file(), "{file}");
    }
    let groups: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("servergroups.json")).unwrap()).unwrap();
    assert_eq!(
        groups["groups"][0]["name"], "",
        "kubectl's file starts with the core group"
    );

    server.requests().clear();
    let next = CachedDiscovery::with_disk(client(&server), dir.path(), DEFAULT_DISCOVERY_CACHE_TTL);
    let read = next.discovery().await.unwrap();
    assert_eq!(next.stats().disk_reads, 1);
    assert!(discovery_requests(&server).is_empty(), "no request");
    assert_eq!(*read, *first.discovery().await.unwrap());

    // A torn file (a writer that crashed) is a miss, read again and
    // rewritten.
    let resources = root.join("apps/v1/serverresources.json");
    let bytes = std::fs::read(&resources).unwrap();
    std::fs::write(&resources, &bytes[..bytes.len() / 2]).unwrap();
    let after_tear =
        CachedDiscovery::with_disk(client(&server), dir.path(), DEFAULT_DISCOVERY_CACHE_TTL);
    after_tear.discovery().await.unwrap();
    assert_eq!(
        (after_tear.stats().disk_misses, after_tear.stats().fetches),
        (1, 1)
    );
    assert_eq!(std::fs::read(&resources).unwrap(), bytes, "rewritten whole");

    // Files older than the time to live are stale.
    let stale = CachedDiscovery::with_disk(client(&server), dir.path(), Duration::ZERO);
    stale.discovery().await.unwrap();
    assert_eq!(stale.stats().fetches, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_never_leave_a_file_a_reader_cannot_use() {
    let server = TestApiServer::builder().start().await.unwrap();
    let dir = crate::support::TempDir::new("discovery");
    let mut writers = Vec::new();
    for _ in 0..6 {
        let cache =
            CachedDiscovery::with_disk(client(&server), dir.path(), DEFAULT_DISCOVERY_CACHE_TTL);
        writers.push(tokio::spawn(async move {
            for _ in 0..5 {
                cache.invalidate();
                cache.discovery().await.unwrap();
            }
        }));
    }
    let reader_dir = dir.path().to_path_buf();
    let reader_client = client(&server);
    let reader = tokio::spawn(async move {
        let (mut used, mut missed_after_use) = (0, 0);
        for _ in 0..30 {
            let cache = CachedDiscovery::with_disk(
                reader_client.clone(),
                &reader_dir,
                DEFAULT_DISCOVERY_CACHE_TTL,
            );
            cache.discovery().await.unwrap();
            if used > 0 {
                // Once the files exist, a reader never finds one torn.
                missed_after_use += cache.stats().disk_misses;
            }
            used += cache.stats().disk_reads;
            tokio::task::yield_now().await;
        }
        (used, missed_after_use)
    });
    for writer in writers {
        writer.await.unwrap();
    }
    let (used, missed_after_use) = reader.await.unwrap();
    assert_eq!(missed_after_use, 0, "no torn or missing file once written");
    let last = CachedDiscovery::with_disk(client(&server), dir.path(), DEFAULT_DISCOVERY_CACHE_TTL);
    last.discovery().await.unwrap();
    assert_eq!(
        last.stats().disk_reads,
        1,
        "the files are whole after the race"
    );
    assert!(
        used > 0,
        "the reader used the disk cache while writers wrote"
    );
    let leftovers: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|path| path.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn the_mapper_resolves_what_kubectl_accepts() {
    let server = TestApiServer::builder().start().await.unwrap();
    let discovery = CachedDiscovery::new(client(&server));
    let mapper = RestMapper::new(discovery.discovery().await.unwrap());
    for (argument, expected) in [
        ("pods", "/v1/pods"),
        ("pod", "/v1/pods"),
        ("po", "/v1/pods"),
        ("Pod", "/v1/pods"),
        ("deploy", "apps/v1/deployments"),
        ("deployments.apps", "apps/v1/deployments"),
        ("deploy.v1.apps", "apps/v1/deployments"),
        ("events", "/v1/events"),
        ("ev", "/v1/events"),
        ("events.events.k8s.io", "events.k8s.io/v1/events"),
        ("crds", "apiextensions.k8s.io/v1/customresourcedefinitions"),
    ] {
        let found = mapper.resource_for(argument).unwrap();
        assert_eq!(path_of(&found), expected, "{argument}");
    }
    assert!(matches!(
        mapper.resource_for("nopes"),
        Err(MapperError::NoMatch { .. })
    ));
    assert!(matches!(
        mapper.resource_for("pods.nope.example.com"),
        Err(MapperError::NoMatch { .. })
    ));

    let deployment = mapper
        .mapping(&GroupVersionKind::new("apps", "", "Deployment"))
        .unwrap();
    assert_eq!(deployment.resource.plural(), "deployments");
    assert!(
        mapper
            .mapping(&GroupVersionKind::new("apps", "v9", "Deployment"))
            .is_err()
    );

    let all: Vec<String> = mapper
        .category("all")
        .iter()
        .map(|resource| resource.resource.plural().to_string())
        .collect();
    for expected in ["pods", "services", "deployments", "statefulsets", "jobs"] {
        assert!(all.contains(&expected.to_string()), "{expected} in {all:?}");
    }
    assert!(!all.contains(&"configmaps".to_string()));
}

#[tokio::test]
async fn the_deferred_mapper_asks_again_once_for_a_resource_installed_since() {
    let server = TestApiServer::builder().start().await.unwrap();
    let client = client(&server);
    let discovery = CachedDiscovery::new(client.clone());
    let mapper = DeferredRestMapper::new(discovery.clone());
    mapper.resource_for("pods").await.unwrap();
    assert_eq!(discovery.stats().fetches, 1);

    create_crd(&client, "crontabs", "CronTab").await;
    let found = mapper.resource_for("ct").await.unwrap();
    assert_eq!(path_of(&found), "stable.example.com/v1/crontabs");
    assert_eq!(discovery.stats().fetches, 2, "refreshed once");
    let missing = mapper.resource_for("still-nothing").await;
    assert!(matches!(missing, Err(MapperError::NoMatch { .. })));
    assert_eq!(
        discovery.stats().fetches,
        2,
        "a second miss within the interval does not ask the server again"
    );
    let eager = DeferredRestMapper::new(discovery.clone()).min_refresh_interval(Duration::ZERO);
    assert!(eager.resource_for("still-nothing").await.is_err());
    assert_eq!(
        discovery.stats().fetches,
        3,
        "one refresh per miss, not a loop"
    );

    // A 404 for a resource the cache lists invalidates it.
    let crontabs = GroupVersionResource::new("stable.example.com", "v1", "crontabs");
    assert!(discovery.invalidate_if_known(&crontabs));
    assert!(!discovery.invalidate_if_known(&GroupVersionResource::new("", "v1", "nopes")));
    discovery.discovery().await.unwrap();
    assert_eq!(discovery.stats().fetches, 4);
}
