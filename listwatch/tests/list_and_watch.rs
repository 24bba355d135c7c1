//! The pager, the ListerWatcher and the watch decoder against
//! clientgo-testing's server over loopback, with the exact requests checked
//! in the server's log.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clientgo_apimachinery::{
    ApiResource, GroupResource, ListOptions, ObjectList, ResourceVersionMatch, WatchEvent,
};
use clientgo_listwatch::{
    Error, FrameError, ListerWatcher, Pager, PagerEvent, ResourceListerWatcher, WatchStream,
};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_testing::{Corruption, TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;

fn config_maps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

async fn server_with(count: usize) -> (TestApiServer, ResourceListerWatcher<ConfigMap>) {
    let server = TestApiServer::builder().start().await.unwrap();
    for index in 0..count {
        server
            .storage()
            .create(
                &config_maps(),
                "default",
                json!({"metadata": {"name": format!("cm-{index:05}"), "labels": {"parity": if index % 2 == 0 { "even" } else { "odd" }}}, "data": {"i": index.to_string()}}),
            )
            .unwrap();
    }
    // JSON: this file exercises the JSON decoders (the hostile frames
    // below are JSON's); `protobuf_decoders.rs` and
    // `real_apiserver_answers.rs` cover protobuf.
    let client =
        RestClient::new(Config::new(server.url()).content_type(clientgo_rest::ContentType::Json))
            .unwrap();
    let lister =
        ResourceListerWatcher::new(ResourceClient::<ConfigMap>::namespaced(client, "default"));
    (server, lister)
}

#[tokio::test]
async fn pages_of_500_follow_continue_tokens_and_clear_the_resource_version() {
    let (server, lister) = server_with(2345).await;
    let revision = server.storage().current_revision().to_string();
    let options = ListOptions::default()
        .resource_version(revision.clone())
        .resource_version_match(ResourceVersionMatch::NotOlderThan);
    let list = Pager::default().list_all(lister, options).await.unwrap();
    assert_eq!(list.items.len(), 2345);
    assert_eq!(list.pages, 5);
    assert!(list.paginated);
    assert_eq!(list.resource_version, revision);
    let mut sorted: Vec<_> = list
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 2345, "no object twice");

    let requests = server.requests().of(Verb::List);
    assert_eq!(requests.len(), 5);
    let first = requests[0].list_options();
    assert_eq!(first.limit, Some(500));
    assert_eq!(first.resource_version.as_deref(), Some(revision.as_str()));
    assert_eq!(
        first.resource_version_match,
        Some(ResourceVersionMatch::NotOlderThan)
    );
    assert!(first.continue_token.is_none());
    for request in &requests[1..] {
        let options = request.list_options();
        assert_eq!(options.limit, Some(500));
        assert!(options.continue_token.is_some());
        assert!(options.resource_version.is_none(), "{options:?}");
        assert!(options.resource_version_match.is_none(), "{options:?}");
    }
}

/// A ListerWatcher that, after its first list call, writes to the server and
/// compacts its history, so the first page's continue token expires.
struct CompactAfterFirstPage {
    inner: ResourceListerWatcher<ConfigMap>,
    server: Arc<TestApiServer>,
    calls: AtomicUsize,
}

impl ListerWatcher<ConfigMap> for CompactAfterFirstPage {
    type Watch = WatchStream<ConfigMap>;

    async fn list(&self, options: &ListOptions) -> Result<ObjectList<ConfigMap>, Error> {
        let page = self.inner.list(options).await?;
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            self.server
                .storage()
                .create(
                    &config_maps(),
                    "default",
                    json!({"metadata": {"name": "late"}}),
                )
                .unwrap();
            self.server.compact_history();
        }
        Ok(page)
    }

    async fn watch(&self, options: &ListOptions) -> Result<WatchStream<ConfigMap>, Error> {
        self.inner.watch(options).await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[tokio::test]
async fn an_expired_continue_token_restarts_the_list_once_unpaginated() {
    let (server, lister) = server_with(1200).await;
    let server = Arc::new(server);
    let compacting = CompactAfterFirstPage {
        inner: lister,
        server: Arc::clone(&server),
        calls: AtomicUsize::new(0),
    };
    let mut stream = Pager::default().stream(compacting, ListOptions::default());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(match event.unwrap() {
            PagerEvent::Page(page) => page.items.len(),
            PagerEvent::Restarted => 0,
        });
    }
    // 500 from the first page, then the restart, then everything at once.
    assert_eq!(events, vec![500, 0, 1201]);
    let requests = server.requests().of(Verb::List);
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].status, 410);
    let last = requests[2].list_options();
    assert_eq!(last.limit, None, "the relist is unpaginated");
    assert!(last.continue_token.is_none());
}

#[tokio::test]
async fn list_all_after_a_restart_holds_only_the_new_list() {
    let (server, lister) = server_with(700).await;
    let server = Arc::new(server);
    let compacting = CompactAfterFirstPage {
        inner: lister,
        server: Arc::clone(&server),
        calls: AtomicUsize::new(0),
    };
    let list = Pager::default()
        .list_all(compacting, ListOptions::default())
        .await
        .unwrap();
    assert_eq!(list.items.len(), 701);
    assert_eq!(list.pages, 1);
    assert!(!list.paginated);
}

#[tokio::test]
async fn other_list_errors_end_the_listing() {
    let (server, lister) = server_with(10).await;
    server.deny(Verb::List, config_maps());
    let error = Pager::default()
        .list_all(lister, ListOptions::default())
        .await
        .unwrap_err();
    assert!(error.status().unwrap().is_forbidden(), "{error}");
}

#[tokio::test]
async fn a_watch_delivers_changes_in_order_with_bookmarks() {
    let (server, lister) = server_with(3).await;
    let list = Pager::default()
        .list_all(lister.clone(), ListOptions::default())
        .await
        .unwrap();
    let mut watch = lister
        .watch(
            &ListOptions::default()
                .resource_version(list.resource_version.clone())
                .allow_watch_bookmarks(true),
        )
        .await
        .unwrap();
    let storage = server.storage();
    storage
        .create(
            &config_maps(),
            "default",
            json!({"metadata": {"name": "new"}}),
        )
        .unwrap();
    let key = clientgo_testing::ObjectKey::new(config_maps(), "default", "cm-00001");
    storage
        .delete(&key, &clientgo_testing::Preconditions::default())
        .unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let event = tokio::time::timeout(Duration::from_secs(10), watch.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        match event {
            WatchEvent::Added(object)
            | WatchEvent::Deleted(object)
            | WatchEvent::Modified(object) => {
                seen.push(object.metadata.name.unwrap());
            }
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(status) => panic!("{status:?}"),
        }
    }
    assert_eq!(seen, vec!["new", "cm-00001"]);
    let record = server.requests().of(Verb::Watch).pop().unwrap();
    let options = record.list_options();
    assert!(options.watch && options.allow_watch_bookmarks);
    assert_eq!(options.resource_version, Some(list.resource_version));
}

#[tokio::test]
async fn a_too_old_resource_version_is_reported_as_expired() {
    let (server, lister) = server_with(2).await;
    let old = server.storage().current_revision();
    server
        .storage()
        .create(
            &config_maps(),
            "default",
            json!({"metadata": {"name": "x"}}),
        )
        .unwrap();
    server.compact_history();
    let outcome = match lister
        .watch(&ListOptions::default().resource_version((old - 1).to_string()))
        .await
    {
        Err(error) => error,
        Ok(mut watch) => watch.next().await.unwrap().unwrap_err(),
    };
    assert!(outcome.is_expired_or_gone(), "{outcome}");
}

async fn corrupted_watch_error(corruption: Corruption, max_frame_bytes: usize) -> Error {
    let (server, lister) = server_with(0).await;
    let lister = lister.max_frame_bytes(max_frame_bytes);
    server.faults().corrupt_next_watch(corruption);
    let mut watch = lister.watch(&ListOptions::default()).await.unwrap();
    server
        .storage()
        .create(
            &config_maps(),
            "default",
            json!({"metadata": {"name": "trigger"}}),
        )
        .unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), watch.next())
            .await
            .unwrap()
        {
            Some(Ok(_)) => continue,
            Some(Err(error)) => {
                assert!(watch.next().await.is_none(), "nothing after an error");
                return error;
            }
            None => panic!("the stream ended without reporting {corruption:?}"),
        }
    }
}

#[tokio::test]
async fn bad_frames_are_typed_errors() {
    let malformed = corrupted_watch_error(Corruption::Malformed, 1 << 20).await;
    assert!(
        matches!(
            &malformed,
            Error::Frame {
                source: FrameError::Malformed(_) | FrameError::NotAnObject { .. },
                ..
            }
        ),
        "{malformed}"
    );
    let truncated = corrupted_watch_error(Corruption::Truncated, 1 << 20).await;
    assert!(
        matches!(
            &truncated,
            Error::Frame {
                source: FrameError::Truncated { .. },
                ..
            }
        ),
        "{truncated}"
    );
    let oversized = corrupted_watch_error(Corruption::Oversized(2 << 20), 1 << 20).await;
    assert!(
        matches!(&oversized, Error::Frame { source: FrameError::TooLarge { limit, .. }, .. } if *limit == 1 << 20),
        "{oversized}"
    );
    assert!(
        oversized
            .to_string()
            .contains("/api/v1/namespaces/default/configmaps"),
        "{oversized}"
    );
}

/// The hostile streams of the reliability suite, with the default 16 MiB
/// frame limit: each is a typed error naming the watch, never a panic, a
/// hang or a 100 MiB buffer.
#[tokio::test]
async fn hostile_watch_streams_are_typed_errors() {
    const LIMIT: usize = 16 << 20;
    let invalid_utf8 = corrupted_watch_error(Corruption::InvalidUtf8, LIMIT).await;
    assert!(
        matches!(
            &invalid_utf8,
            Error::Frame {
                source: FrameError::Malformed(_),
                ..
            }
        ),
        "{invalid_utf8}"
    );
    for corruption in [Corruption::Oversized(100 << 20), Corruption::EndlessString] {
        let error = corrupted_watch_error(corruption, LIMIT).await;
        assert!(
            matches!(&error, Error::Frame { source: FrameError::TooLarge { limit, .. }, .. } if *limit == LIMIT),
            "{corruption:?}: {error}"
        );
        assert!(
            error
                .to_string()
                .contains("/api/v1/namespaces/default/configmaps"),
            "{error}"
        );
    }
}

/// 100,000 nested arrays in a field: a typed object ignores the field
/// without recursing; a dynamic object, which keeps every field, meets
/// serde_json's recursion limit and gets a typed error. Neither overflows
/// the stack.
#[tokio::test]
async fn deep_nesting_is_ignored_or_refused_without_overflowing_the_stack() {
    let (server, typed) = server_with(0).await;
    server
        .faults()
        .corrupt_next_watch(Corruption::DeepNesting(100_000));
    let mut watch = typed.watch(&ListOptions::default()).await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .unwrap()
        .expect("an event")
        .expect("the unknown field is skipped");
    let WatchEvent::Added(object) = event else {
        panic!("an ADDED: {event:?}");
    };
    assert_eq!(object.metadata.name.as_deref(), Some("deep"));

    let client = RestClient::new(Config::new(server.url())).unwrap();
    let dynamic =
        ResourceListerWatcher::dynamic(client, ApiResource::of::<ConfigMap>(), Some("default"));
    server
        .faults()
        .corrupt_next_watch(Corruption::DeepNesting(100_000));
    let mut watch = dynamic.watch(&ListOptions::default()).await.unwrap();
    let error = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .unwrap()
        .expect("an error")
        .expect_err("too deep to keep");
    assert!(
        matches!(
            &error,
            Error::Frame {
                source: FrameError::Malformed(_),
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("recursion"), "{error}");
}

#[tokio::test]
async fn the_tweak_applies_to_lists_and_watches() {
    let (server, lister) = server_with(10).await;
    let lister = lister.tweak_list_options(|options| {
        options.label_selector = Some("parity=even".to_string());
    });
    let list = Pager::default()
        .list_all(lister.clone(), ListOptions::default())
        .await
        .unwrap();
    assert_eq!(list.items.len(), 5);
    drop(lister.watch(&ListOptions::default()).await.unwrap());
    for record in server.requests().records() {
        assert_eq!(
            record.list_options().label_selector.as_deref(),
            Some("parity=even"),
            "{record:?}"
        );
    }
}

#[tokio::test]
async fn dynamic_and_metadata_listers_work() {
    let (server, _) = server_with(4).await;
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let resource = ApiResource::of::<ConfigMap>();
    let dynamic = ResourceListerWatcher::dynamic(client.clone(), resource.clone(), None);
    let list = Pager::default()
        .list_all(dynamic, ListOptions::default())
        .await
        .unwrap();
    assert_eq!(list.items.len(), 4);
    assert!(list.items[0].data.get("data").is_some());
    // The server sends the items of a list of a built-in type without
    // apiVersion and kind; they get the list's, as client-go's
    // unstructured decoding gives them (server-side apply of a cached
    // object needs them).
    for item in &list.items {
        assert_eq!(item.api_version.as_deref(), Some("v1"));
        assert_eq!(item.kind.as_deref(), Some("ConfigMap"));
    }
    let direct = ResourceClient::dynamic(client.clone(), resource.clone(), Some("default"))
        .list(&ListOptions::default())
        .await
        .unwrap();
    assert!(
        direct
            .items
            .iter()
            .all(|item| item.kind.as_deref() == Some("ConfigMap")
                && item.api_version.as_deref() == Some("v1"))
    );

    let metadata = ResourceListerWatcher::metadata(client, resource, Some("default"));
    let mut watch = metadata.watch(&ListOptions::default()).await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let WatchEvent::Added(object) = event else {
        panic!("an initial ADDED: {event:?}");
    };
    assert!(object.metadata.name.is_some());
}

#[tokio::test]
async fn skipping_managed_fields_decodes_everything_else_the_same() {
    use k8s_openapi::api::core::v1::Pod;
    let server = TestApiServer::builder().start().await.unwrap();
    let pods = GroupResource::new("", "pods");
    for index in 0..30 {
        server
            .storage()
            .create(
                &pods,
                "default",
                clientgo_testing::realistic_pod(index, "default"),
            )
            .unwrap();
    }
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let full = ResourceListerWatcher::new(ResourceClient::<Pod>::all(client.clone()));
    let skipping =
        ResourceListerWatcher::new(ResourceClient::<Pod>::all(client)).skip_managed_fields(true);
    let strip = |mut pod: Pod| {
        assert!(
            pod.metadata.managed_fields.is_some(),
            "the fixture has managed fields"
        );
        pod.metadata.managed_fields = None;
        pod
    };

    // Lists: the same pods, without managed fields.
    let options = ListOptions::default();
    let expected: Vec<Pod> = full
        .list(&options)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(strip)
        .collect();
    let listed = skipping.list(&options).await.unwrap().items;
    assert_eq!(listed.len(), 30);
    assert_eq!(listed, expected);

    // Watches: the same events, without managed fields.
    let from = ListOptions::default().resource_version("0");
    let mut full_watch = full.watch(&from).await.unwrap();
    let mut skipping_watch = skipping.watch(&from).await.unwrap();
    for _ in 0..30 {
        let expected = full_watch.next().await.unwrap().unwrap().map(strip);
        let decoded = skipping_watch.next().await.unwrap().unwrap();
        assert_eq!(decoded, expected);
    }
}
