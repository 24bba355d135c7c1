//! client-go's `tools/watch` (the retry watcher and `until`) against
//! clientgo-testing's server, whose watches are dropped and whose history
//! is compacted under them.

use std::time::Duration;

use clientgo_apimachinery::{GroupResource, Object, Status, StatusReason, WatchEvent};
use clientgo_informers::watch::{RetryWatcher, UntilError, until};
use clientgo_listwatch::ResourceListerWatcher;
use clientgo_rest::{Config, ContentType, ResourceClient, RestClient};
use clientgo_testing::{TestApiServer, Verb};
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;

fn config_maps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

async fn server() -> (TestApiServer, ResourceListerWatcher<ConfigMap>) {
    let server = TestApiServer::builder().start().await.unwrap();
    let client =
        RestClient::new(Config::new(server.url()).content_type(ContentType::Json)).unwrap();
    let lister_watcher =
        ResourceListerWatcher::new(ResourceClient::<ConfigMap>::namespaced(client, "default"));
    (server, lister_watcher)
}

fn create(server: &TestApiServer, name: &str) {
    server
        .storage()
        .create(
            &config_maps(),
            "default",
            json!({"metadata": {"name": name}}),
        )
        .unwrap();
}

fn name_of(event: &WatchEvent<ConfigMap>) -> Option<String> {
    match event {
        WatchEvent::Added(object) | WatchEvent::Modified(object) | WatchEvent::Deleted(object) => {
            object.name().map(str::to_string)
        }
        _ => None,
    }
}

/// Checks that the watcher's next item is a 410 and nothing follows it.
async fn ends_gone(watcher: &mut RetryWatcher<ConfigMap>) {
    let ended = tokio::time::timeout(Duration::from_secs(20), watcher.next())
        .await
        .expect("an item within 20 s")
        .expect("the watcher's last item")
        .expect_err("an error, not an event");
    assert!(ended.is_expired_or_gone(), "{ended}");
    assert!(watcher.next().await.is_none(), "nothing after the error");
}

async fn next_name(watcher: &mut RetryWatcher<ConfigMap>) -> String {
    let event = tokio::time::timeout(Duration::from_secs(10), watcher.next())
        .await
        .expect("an event within 10 s")
        .expect("the watcher goes on")
        .expect("an event, not an error");
    name_of(&event).expect("an object event")
}

#[tokio::test]
async fn the_retry_watcher_resumes_after_dropped_watches_without_losing_or_repeating_events() {
    let (server, lister_watcher) = server().await;
    create(&server, "before");
    let start = server.storage().current_revision().to_string();
    let mut watcher = RetryWatcher::new(lister_watcher, &start).unwrap();
    create(&server, "a");
    assert_eq!(next_name(&mut watcher).await, "a");
    let after_a = server.storage().current_revision().to_string();

    server.faults().drop_watches();
    create(&server, "b");
    create(&server, "c");
    assert_eq!(next_name(&mut watcher).await, "b");
    assert_eq!(next_name(&mut watcher).await, "c");
    server.faults().drop_watches();
    create(&server, "d");
    assert_eq!(next_name(&mut watcher).await, "d");
    // An ERROR event other than 410 is resumed from too.
    server.faults().error_event_next_watch(Status::failure(
        500,
        StatusReason::InternalError,
        "etcd hiccup",
    ));
    server.faults().drop_watches();
    create(&server, "e");
    assert_eq!(next_name(&mut watcher).await, "e");

    let watches = server.requests().of(Verb::Watch);
    assert!(
        watches.len() >= 4,
        "reopened three times: {}",
        watches.len()
    );
    let first = watches[0].list_options();
    assert_eq!(first.resource_version.as_deref(), Some(start.as_str()));
    assert!(first.allow_watch_bookmarks);
    assert_eq!(
        watches[1].list_options().resource_version.as_deref(),
        Some(after_a.as_str()),
        "resumed from the last event delivered"
    );
}

#[tokio::test]
async fn the_retry_watcher_ends_with_410_when_its_resource_version_is_compacted() {
    let (server, lister_watcher) = server().await;
    create(&server, "old");
    let old = server.storage().current_revision().to_string();
    for index in 0..5 {
        create(&server, &format!("new-{index}"));
    }
    server.compact_history();
    let mut watcher = RetryWatcher::new(lister_watcher, &old).unwrap();
    ends_gone(&mut watcher).await;
}

#[tokio::test]
async fn the_retry_watcher_refuses_a_watch_from_the_start() {
    let (_server, lister_watcher) = server().await;
    for start in ["", "0"] {
        assert!(RetryWatcher::new(lister_watcher.clone(), start).is_err());
    }
}

#[tokio::test]
async fn until_waits_through_dropped_watches_for_its_condition() {
    let (server, lister_watcher) = server().await;
    let start = server.storage().current_revision().to_string();
    let writer = async {
        for index in 0..3 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            create(&server, &format!("step-{index}"));
            server.faults().drop_watches();
        }
        create(&server, "ready");
    };
    let mut seen = Vec::new();
    let waiting = until(Duration::from_secs(20), &start, lister_watcher, |event| {
        let name = name_of(event).unwrap_or_default();
        seen.push(name.clone());
        Ok::<_, std::convert::Infallible>(name == "ready")
    });
    let (found, ()) = tokio::join!(waiting, writer);
    let found = found.unwrap();
    assert_eq!(name_of(&found).as_deref(), Some("ready"));
    assert_eq!(
        seen,
        ["step-0", "step-1", "step-2", "ready"],
        "each event once"
    );
}

#[tokio::test]
async fn until_times_out_when_the_condition_never_holds() {
    let (server, lister_watcher) = server().await;
    let start = server.storage().current_revision().to_string();
    let result = until(
        Duration::from_millis(300),
        &start,
        lister_watcher,
        |_: &WatchEvent<ConfigMap>| Ok::<_, std::convert::Infallible>(true),
    )
    .await;
    assert!(matches!(result, Err(UntilError::TimedOut)), "{result:?}");
}

/// The retry watcher on the test server and on the real kube-apiserver
/// (one body, two backends, neither with a watch cache), reaching the
/// server through a proxy the test cuts: it resumes after each cut without
/// losing or repeating an event, and ends with 410 once the history it
/// would resume from is compacted.
#[tokio::test]
async fn the_retry_watcher_resumes_through_cuts_and_ends_once_compacted_on_both_servers() {
    use clientgo_rest::{CreateOptions, Patch, PatchOptions};
    use clientgo_testing::CuttableProxy;
    use clientgo_testing::envtest::{Backend, for_each_backend};

    for_each_backend(
        Backend::both_own(&["--watch-cache=false"]).await,
        |backend| async move {
            let namespace = backend.create_namespace("retry-watcher").await.unwrap();
            let api =
                ResourceClient::<ConfigMap>::namespaced(backend.client().unwrap(), &namespace);
            let create = |name: &'static str| {
                let api = api.clone();
                async move {
                    let object: ConfigMap =
                        serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
                    api.create(&CreateOptions::default(), &object)
                        .await
                        .unwrap()
                        .metadata
                        .resource_version
                        .unwrap()
                }
            };
            let start = create("before").await;
            let proxy = CuttableProxy::start(backend.address()).await.unwrap();
            let through_proxy = RestClient::new(
                backend
                    .config_at(proxy.https_url())
                    .content_type(ContentType::Json),
            )
            .unwrap();
            let lister_watcher = ResourceListerWatcher::new(
                ResourceClient::<ConfigMap>::namespaced(through_proxy, &namespace),
            );
            let mut watcher = RetryWatcher::new(lister_watcher, &start).unwrap();
            create("a").await;
            assert_eq!(next_name(&mut watcher).await, "a");
            for round in ["b", "c"] {
                proxy.cut().await;
                create(round).await;
                api.patch(
                    round,
                    &PatchOptions::default(),
                    &Patch::Merge(json!({"data": {"round": round}})),
                )
                .await
                .unwrap();
                tokio::time::sleep(Duration::from_millis(200)).await;
                proxy.restore();
                // Its ADDED then its MODIFIED, once each.
                assert_eq!(next_name(&mut watcher).await, round);
                assert_eq!(next_name(&mut watcher).await, round);
            }
            // Two writes: the first one the watcher would need is then
            // older than the compacted revision (which etcd keeps).
            proxy.cut().await;
            create("d").await;
            create("e").await;
            backend.compact().await.unwrap();
            proxy.restore();
            ends_gone(&mut watcher).await;
        },
    )
    .await;
}
