//! The reflector driven by clientgo-listwatch's in-memory `FakeListerWatcher`
//! (client-go's `FakeControllerSource`): no HTTP, so these tests pin the
//! reflector's own decisions (which request follows which ending) through
//! the transport-free watch seam.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::Status;
use clientgo_listwatch::FakeListerWatcher;
use clientgo_reflector::{
    BackoffOptions, Reflector, ReflectorMode, ReflectorOptions, ReflectorStatus,
};
use clientgo_store::{Indexer, IndexerOptions, Store};
use clientgo_testing::eventually;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio_util::sync::CancellationToken;

fn config_map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        data: Some([("value".to_string(), value.to_string())].into()),
        ..ConfigMap::default()
    }
}

fn options() -> ReflectorOptions {
    ReflectorOptions::default().backoff(
        BackoffOptions::default()
            .initial(Duration::from_millis(5))
            .cap(Duration::from_millis(20)),
    )
}

/// Key → value of the `value` entry.
fn state(objects: impl IntoIterator<Item = Arc<ConfigMap>>) -> BTreeMap<String, String> {
    objects
        .into_iter()
        .map(|object| {
            let name = object.metadata.name.clone().unwrap_or_default();
            let value = object
                .data
                .as_ref()
                .and_then(|data| data.get("value").cloned())
                .unwrap_or_default();
            (name, value)
        })
        .collect()
}

fn source_state(source: &FakeListerWatcher<ConfigMap>) -> BTreeMap<String, String> {
    state(source.objects().into_iter().map(Arc::new))
}

struct Running {
    reflector: ReflectorStatus,
    cache: Arc<Indexer<ConfigMap>>,
    source: FakeListerWatcher<ConfigMap>,
    cancel: CancellationToken,
}

impl Running {
    fn start(source: FakeListerWatcher<ConfigMap>, options: ReflectorOptions) -> Self {
        let cache = Arc::new(Indexer::<ConfigMap>::new(IndexerOptions::default()));
        let reflector = Reflector::new(source.clone(), cache.clone(), options);
        let status = reflector.status();
        let cancel = CancellationToken::new();
        tokio::spawn(reflector.run(cancel.clone()));
        Running {
            reflector: status,
            cache,
            source,
            cancel,
        }
    }

    async fn converged(&self) {
        eventually("the cache equals the source", async || {
            state(self.cache.list()) == source_state(&self.source)
                && self.reflector.last_sync_resource_version() == self.source.resource_version()
        })
        .await;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[tokio::test]
async fn watch_list_syncs_from_memory_then_applies_changes() {
    let source = FakeListerWatcher::new();
    for index in 0..50 {
        source.add(config_map(&format!("cm-{index}"), "a"));
    }
    let running = Running::start(source.clone(), options());
    running.converged().await;
    assert_eq!(running.reflector.mode(), ReflectorMode::WatchList);
    assert_eq!((source.lists(), source.watches()), (0, 1));

    source.modify(config_map("cm-3", "b"));
    let gone = source.delete(&config_map("cm-4", "")).unwrap();
    source.add(config_map("new", "c"));
    running.converged().await;
    assert!(running.cache.get(&gone).unwrap().is_none());
    assert_eq!(
        source.watches(),
        1,
        "the watch-list's stream goes on as the watch"
    );
}

#[tokio::test]
async fn list_and_watch_when_watch_list_is_not_served() {
    let source = FakeListerWatcher::new().watch_list_supported(false);
    source.add(config_map("before", "a"));
    let running = Running::start(source.clone(), options());
    running.converged().await;
    assert_eq!(running.reflector.mode(), ReflectorMode::ListWatch);
    source.add(config_map("after", "b"));
    running.converged().await;
    assert_eq!((source.lists(), source.watches()), (1, 1));
}

/// A list+watch reflector whose watch has carried an event and lasted over
/// a second, so its end is not a "very short watch".
async fn listed_and_watching() -> (FakeListerWatcher<ConfigMap>, Running) {
    let source = FakeListerWatcher::new().watch_list_supported(false);
    source.add(config_map("a", "1"));
    let running = Running::start(source.clone(), options());
    running.converged().await;
    source.modify(config_map("a", "2"));
    running.converged().await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    (source, running)
}

#[tokio::test]
async fn a_closed_watch_resumes_from_the_last_resource_version_without_relisting() {
    let (source, running) = listed_and_watching().await;
    source.close_watches();
    eventually("a second watch", async || source.watches() == 2).await;
    source.modify(config_map("a", "3"));
    running.converged().await;
    assert_eq!(source.lists(), 1, "no relist after a clean close");
    assert_eq!(running.reflector.stats().rewatches, 1);
}

#[tokio::test]
async fn an_expired_watch_relists() {
    let source = FakeListerWatcher::new().watch_list_supported(false);
    source.add(config_map("a", "1"));
    let running = Running::start(source.clone(), options());
    running.converged().await;

    source.fail_watches(&Status::expired("too old resource version"));
    eventually("a relist after 410", async || source.lists() == 2).await;
    source.add(config_map("b", "1"));
    running.converged().await;
    assert!(
        running
            .reflector
            .last_error()
            .is_none_or(|error| error.to_string().contains("410")),
        "the 410 is the error reported, and the relist clears it"
    );
}

#[tokio::test]
async fn changes_missed_while_disconnected_arrive_from_the_history() {
    let (source, running) = listed_and_watching().await;

    // Changes made between the close and the next watch come from the
    // history, in order.
    source.close_watches();
    source.modify(config_map("a", "3"));
    source.add(config_map("b", "1"));
    running.converged().await;
    assert_eq!(source.lists(), 1);
}

#[tokio::test]
async fn a_compacted_history_makes_the_rewatch_fail_and_the_reflector_relist() {
    let (source, running) = listed_and_watching().await;

    source.close_watches();
    source.modify(config_map("a", "3"));
    source.compact();
    running.converged().await;
    assert_eq!(source.lists(), 2, "410 on the rewatch, then a relist");
}

/// The wire issue: the reflector checks each watch event's kind itself, as
/// client-go's does, whatever stream it reads. A dynamic source that says
/// it serves config maps sends a Secret among them, in the watch-list's
/// initial events and in the watch after it: the reflector skips both and
/// counts them, and the cache holds only config maps. (Typed decoders skip
/// such events before decoding; a dynamic object decodes whatever comes,
/// so only the reflector's check keeps it out.)
#[tokio::test]
async fn the_reflector_skips_objects_of_another_kind_from_any_source() {
    use clientgo_apimachinery::DynamicObject;
    let object = |kind: &str, name: &str| DynamicObject {
        api_version: Some("v1".into()),
        kind: Some(kind.into()),
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        ..DynamicObject::default()
    };
    let source = FakeListerWatcher::<DynamicObject>::new().serves_type("v1", "ConfigMap");
    source.add(object("ConfigMap", "a"));
    source.add(object("Secret", "stray-initial"));
    let cache = Arc::new(Indexer::<DynamicObject>::new(IndexerOptions::default()));
    let reflector = Reflector::new(source.clone(), cache.clone(), ReflectorOptions::default());
    let status = reflector.status();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    eventually("synced", async || status.mode() == ReflectorMode::WatchList).await;
    source.add(object("Secret", "stray-live"));
    source.add(object("ConfigMap", "b"));
    eventually("b arrives", async || cache.list().len() >= 2).await;
    let mut names: Vec<String> = cache
        .list()
        .iter()
        .map(|o| o.metadata.name.clone().unwrap_or_default())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(status.stats().other_type_events, 2);
    cancel.cancel();
    task.await.unwrap();
}
