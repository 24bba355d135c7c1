//! Listing and watching on the test server and on the real kube-apiserver
//! (one body, two backends), in JSON and in protobuf: pages that follow
//! continue tokens in name order, a watch's events in order, and a
//! watch-list's initial events closed by the initial-events-end bookmark.

use clientgo_apimachinery::{ListOptions, ResourceVersionMatch, WatchEvent};
use clientgo_listwatch::{ListerWatcher, Pager, ResourceListerWatcher, WatchStream};
use clientgo_rest::{ContentType, CreateOptions, DeleteOptions, ResourceClient, RestClient};
use clientgo_testing::envtest::{Backend, for_each_backend};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;
use std::time::Duration;

const OBJECTS: usize = 25;

async fn seeded(
    backend: &Backend,
    content_type: ContentType,
) -> (ResourceClient<ConfigMap>, ResourceListerWatcher<ConfigMap>) {
    let namespace = backend.create_namespace("listwatch").await.unwrap();
    let client = RestClient::new(backend.config().content_type(content_type)).unwrap();
    let maps = ResourceClient::<ConfigMap>::namespaced(client, &namespace);
    // Created out of name order: lists come back in key order anyway.
    for index in (0..OBJECTS).rev() {
        let object: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": format!("cm-{index:02}")}}))
                .unwrap();
        maps.create(&CreateOptions::default(), &object)
            .await
            .unwrap();
    }
    (maps.clone(), ResourceListerWatcher::new(maps))
}

/// The watch's next event, within 10 s.
async fn next_event(watch: &mut WatchStream<ConfigMap>) -> WatchEvent<ConfigMap> {
    tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .expect("an event within 10 s")
        .expect("the watch goes on")
        .expect("an event, not an error")
}

fn names(items: &[ConfigMap]) -> Vec<String> {
    items
        .iter()
        .map(|item| item.metadata.name.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn pages_watches_and_watch_lists_in_json_and_protobuf() {
    for_each_backend(Backend::both().await, |backend| async move {
        for content_type in [ContentType::Json, ContentType::Protobuf] {
            let (maps, lister) = seeded(&backend, content_type).await;
            assert_eq!(
                lister.uses_protobuf(),
                content_type == ContentType::Protobuf
            );

            // Pages of 10 from the latest state: 3 pages, in name order.
            let pager = Pager {
                page_size: 10,
                ..Pager::default()
            };
            let list = pager
                .list_all(lister.clone(), ListOptions::default())
                .await
                .unwrap();
            let expected: Vec<String> = (0..OBJECTS).map(|i| format!("cm-{i:02}")).collect();
            assert_eq!(names(&list.items), expected, "{content_type:?}");
            assert_eq!((list.pages, list.paginated), (3, true));

            // A watch from the list's resourceVersion sees each change once,
            // in order.
            let options = ListOptions::default()
                .resource_version(list.resource_version.clone())
                .allow_watch_bookmarks(true);
            let mut watch = lister.watch(&options).await.unwrap();
            let mut changed = maps.get("cm-03").await.unwrap();
            changed.data = Some([("k".to_string(), "v".to_string())].into());
            maps.replace("cm-03", &Default::default(), &changed)
                .await
                .unwrap();
            maps.delete("cm-04", &DeleteOptions::default())
                .await
                .unwrap();
            let mut seen = Vec::new();
            while seen.len() < 2 {
                match next_event(&mut watch).await {
                    WatchEvent::Modified(object) => {
                        seen.push(format!("MODIFIED {}", names(&[object])[0]))
                    }
                    WatchEvent::Deleted(object) => {
                        seen.push(format!("DELETED {}", names(&[object])[0]))
                    }
                    WatchEvent::Bookmark(_) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert_eq!(
                seen,
                ["MODIFIED cm-03", "DELETED cm-04"],
                "{content_type:?}"
            );

            // A watch-list: every object as ADDED, then the bookmark that
            // ends the initial events, at a resourceVersion at least the
            // delete's.
            let options = ListOptions::default()
                .send_initial_events(true)
                .resource_version_match(ResourceVersionMatch::NotOlderThan)
                .allow_watch_bookmarks(true);
            let mut watch = lister.watch(&options).await.unwrap();
            let mut added = Vec::new();
            let end = loop {
                match next_event(&mut watch).await {
                    WatchEvent::Added(object) => added.extend(names(&[object])),
                    WatchEvent::Bookmark(bookmark) => break bookmark,
                    other => panic!("unexpected {other:?}"),
                }
            };
            added.sort();
            assert_eq!(added.len(), OBJECTS - 1);
            assert_eq!(
                end.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true"),
                "{content_type:?}"
            );
            let rv: u64 = end.metadata.resource_version.parse().unwrap();
            assert!(rv >= list.resource_version.parse::<u64>().unwrap());
        }
    })
    .await;
}
