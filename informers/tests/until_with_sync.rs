//! `until_with_sync` (client-go's `watch.UntilWithSync`) against the test
//! server: a precondition on the synced cache, and a wait that goes on
//! through a 410 by relisting, where `until` would end.

use std::time::Duration;

use clientgo_apimachinery::{Object, Status, WatchEvent};
use clientgo_informers::watch::UntilError;
use clientgo_informers::watch::until_with_sync;
use clientgo_listwatch::ResourceListerWatcher;
use clientgo_rest::ResourceClient;
use k8s_openapi::api::core::v1::ConfigMap;

use crate::support::{client, create, seeded, update};

fn lister_watcher(server: &clientgo_testing::TestApiServer) -> ResourceListerWatcher<ConfigMap> {
    ResourceListerWatcher::new(ResourceClient::<ConfigMap>::namespaced(
        client(server),
        "default",
    ))
}

type Never = std::convert::Infallible;

#[tokio::test]
async fn a_precondition_that_holds_on_the_synced_cache_ends_the_wait_at_once() {
    let server = seeded(4).await;
    let mut conditions = 0;
    let result = until_with_sync(
        Duration::from_secs(10),
        lister_watcher(&server),
        Some(|cache: &clientgo_informers::Lister<ConfigMap>| {
            Ok::<_, Never>(cache.namespace("default").get("cm-00003").is_some())
        }),
        |_| {
            conditions += 1;
            Ok::<_, Never>(false)
        },
    )
    .await
    .unwrap();
    assert!(result.is_none(), "the precondition held");
    assert_eq!(conditions, 0, "the condition was never asked");
}

#[tokio::test]
async fn the_initial_objects_arrive_as_adds_and_a_change_as_a_modification() {
    let server = seeded(3).await;
    let writer = async {
        // Once the informer watches, the change is a modification.
        while server.requests().count(clientgo_testing::Verb::Watch) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        update(&server, "cm-00001", "ready");
    };
    let mut adds = 0;
    let waiting = until_with_sync(
        Duration::from_secs(10),
        lister_watcher(&server),
        None::<fn(&clientgo_informers::Lister<ConfigMap>) -> Result<bool, Never>>,
        |event| {
            if matches!(event, WatchEvent::Added(_)) {
                adds += 1;
            }
            Ok::<_, Never>(matches!(event, WatchEvent::Modified(object)
                if object.data.as_ref().and_then(|data| data.get("v")).map(String::as_str) == Some("ready")))
        },
    );
    let (found, ()) = tokio::join!(waiting, writer);
    let Some(WatchEvent::Modified(object)) = found.unwrap() else {
        panic!("a modification")
    };
    assert_eq!(object.name(), Some("cm-00001"));
    assert_eq!(adds, 3, "one add per object of the initial list");
}

#[tokio::test]
async fn the_wait_goes_on_through_a_410_and_times_out_when_nothing_holds() {
    let server = seeded(2).await;
    let writer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The next watch ends at once with 410: the informer relists.
        server
            .faults()
            .error_event_next_watch(Status::expired("too old resource version"));
        server.faults().drop_watches();
        tokio::time::sleep(Duration::from_millis(300)).await;
        create(&server, "after-the-relist", "web");
    };
    let waiting = until_with_sync(
        Duration::from_secs(15),
        lister_watcher(&server),
        None::<fn(&clientgo_informers::Lister<ConfigMap>) -> Result<bool, Never>>,
        |event| {
            Ok::<_, Never>(
                matches!(event, WatchEvent::Added(object) if object.name() == Some("after-the-relist")),
            )
        },
    );
    let (found, ()) = tokio::join!(waiting, writer);
    assert!(found.unwrap().is_some());
    let requests = server.requests();
    let watch_lists = requests
        .of(clientgo_testing::Verb::Watch)
        .iter()
        .filter(|request| request.list_options().send_initial_events == Some(true))
        .count();
    let listings = requests.count(clientgo_testing::Verb::List) + watch_lists;
    assert!(listings >= 2, "listed again after the 410: {listings}");

    let nothing = until_with_sync(
        Duration::from_millis(500),
        lister_watcher(&server),
        None::<fn(&clientgo_informers::Lister<ConfigMap>) -> Result<bool, Never>>,
        |_| Ok::<_, Never>(false),
    )
    .await;
    assert!(matches!(nothing, Err(UntilError::TimedOut)));
}
