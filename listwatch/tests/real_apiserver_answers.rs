//! Every answer recorded from a real kube-apiserver 1.36.2
//! (`../shared/fixtures/real-apiserver-1.36/`), served again byte for byte
//! by a replay server over a real socket, its body in small pieces, and
//! read by this project's own client: lists and watches through
//! `ResourceListerWatcher` (streaming decoders, JSON and protobuf), objects
//! and errors through `ResourceClient`. Each test skips cleanly when
//! `../shared` is absent.
// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::collections::BTreeMap;

use clientgo_apimachinery::{ListOptions, Object, WatchEvent};
use clientgo_listwatch::{ListerWatcher, ResourceListerWatcher};
use clientgo_rest::{
    Config, ContentType, CreateOptions, ResourceClient, RestClient, UpdateOptions,
};
use clientgo_testing::{RecordedAnswer, ReplayServer};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};

/// Body pieces small enough to split every frame, length and varint.
const SMALL_PIECE: usize = 7;

/// The recording `name`, or `None` (with a note) when `../shared` is
/// absent.
fn recorded(name: &str) -> Option<RecordedAnswer> {
    let Some(dir) = RecordedAnswer::directory() else {
        eprintln!("skipped: ../shared/fixtures/real-apiserver-1.36 is absent");
        return None;
    };
    Some(RecordedAnswer::read(&dir, name).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// A replay server for `name` and a client of it, asking for protobuf for
/// a `.pb` recording as a client configured for protobuf does.
async fn replay(name: &str, piece: usize) -> Option<(ReplayServer, RestClient)> {
    let answer = recorded(name)?;
    let server = ReplayServer::start(answer, piece).await.unwrap();
    let content_type = if name.ends_with(".pb") {
        ContentType::Protobuf
    } else {
        ContentType::Json
    };
    let client = RestClient::new(Config::new(server.url()).content_type(content_type)).unwrap();
    Some((server, client))
}

fn pods(client: RestClient) -> ResourceListerWatcher<Pod> {
    ResourceListerWatcher::new(ResourceClient::<Pod>::namespaced(client, "fixtures"))
}

/// What a test compares of an object: name, resourceVersion, labels,
/// whether it is being deleted.
type Seen = (String, String, BTreeMap<String, String>, bool);

fn seen(object: &impl Object) -> Seen {
    (
        object.name().unwrap_or_default().to_string(),
        object.resource_version().unwrap_or_default().to_string(),
        object.labels().to_map(),
        object.deletion_timestamp().is_some(),
    )
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn fixture_pod(index: u32, resource_version: &str) -> Seen {
    (
        format!("pod-{index}"),
        resource_version.to_string(),
        labels(&[("app", "fixture"), ("index", &index.to_string())]),
        false,
    )
}

/// A list's items, resourceVersion, continue token and remaining count.
type ListSeen = (Vec<Seen>, Option<String>, Option<String>, Option<i64>);

async fn list_pods(name: &str, piece: usize) -> Option<ListSeen> {
    let (server, client) = replay(name, piece).await?;
    let list = pods(client).list(&ListOptions::default()).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    Some((
        list.items.iter().map(seen).collect(),
        list.metadata.resource_version,
        list.metadata.continue_,
        list.metadata.remaining_item_count,
    ))
}

/// A list recorded in JSON and in protobuf: the protobuf one was recorded
/// a little later (after the watches relabelled and re-created pods), so
/// the two hold the same pods, not the same versions. Returns the JSON's.
async fn list_in_both(name: &str) -> Option<ListSeen> {
    let json = list_pods(&format!("{name}.json"), SMALL_PIECE).await?;
    let protobuf = list_pods(&format!("{name}.pb"), SMALL_PIECE).await?;
    let names = |list: &ListSeen| -> Vec<String> { list.0.iter().map(|i| i.0.clone()).collect() };
    assert_eq!(names(&json), names(&protobuf), "{name}: JSON and protobuf");
    assert_eq!(
        (json.2.is_some(), json.3),
        (protobuf.2.is_some(), protobuf.3),
        "{name}: continue and remaining count"
    );
    assert!(
        protobuf.0.iter().all(|(_, rv, labels, _)| !rv.is_empty()
            && labels.get("app").is_some_and(|app| !app.is_empty()))
    );
    Some(json)
}

#[tokio::test]
async fn a_list_from_the_watch_cache() {
    let Some((items, resource_version, continue_token, remaining)) =
        list_in_both("list-pods-rv0").await
    else {
        return;
    };
    assert_eq!(
        items,
        [
            fixture_pod(1, "20564"),
            fixture_pod(2, "20565"),
            fixture_pod(3, "20566")
        ]
    );
    assert_eq!(resource_version.as_deref(), Some("20567"));
    assert_eq!((continue_token, remaining), (None, None));
}

#[tokio::test]
async fn a_chunked_list_and_its_continuation() {
    let Some((items, resource_version, continue_token, remaining)) =
        list_in_both("list-pods-limit2").await
    else {
        return;
    };
    assert_eq!(items, [fixture_pod(1, "20564"), fixture_pod(2, "20565")]);
    assert_eq!(resource_version.as_deref(), Some("20567"));
    assert!(continue_token.is_some_and(|token| !token.is_empty()));
    assert_eq!(remaining, Some(1));
    let (items, _, continue_token, _) = list_in_both("list-pods-continue").await.unwrap();
    assert_eq!(items, [fixture_pod(3, "20566")]);
    assert_eq!(continue_token, None, "the last page");
}

#[tokio::test]
async fn a_list_of_another_type() {
    for name in ["list-configmaps.json", "list-configmaps.pb"] {
        let Some((_server, client)) = replay(name, SMALL_PIECE).await else {
            return;
        };
        let lister =
            ResourceListerWatcher::new(ResourceClient::<ConfigMap>::namespaced(client, "fixtures"));
        let list = lister.list(&ListOptions::default()).await.unwrap();
        let names: Vec<_> = list.items.iter().map(|c| c.name().unwrap()).collect();
        assert_eq!(names, ["cm-1"], "{name}");
        assert!(list.metadata.resource_version.is_some(), "{name}");
    }
}

#[tokio::test]
async fn sharded_lists_read_as_plain_lists() {
    let Some((all, ..)) = list_pods("list-pods-shard-gate-off.json", SMALL_PIECE).await else {
        return;
    };
    assert_eq!(all.len(), 8);
    let (shard0, ..) = list_in_both("list-pods-shard0").await.unwrap();
    let (shard1, ..) = list_in_both("list-pods-shard1").await.unwrap();
    let (either, ..) = list_pods("list-pods-shard-either.json", SMALL_PIECE)
        .await
        .unwrap();
    assert_eq!((shard0.len(), shard1.len(), either.len()), (3, 5, 8));
    let names = |items: &[Seen]| {
        let mut names: Vec<String> = items.iter().map(|item| item.0.clone()).collect();
        names.sort();
        names
    };
    let mut union = [shard0, shard1].concat();
    union.sort();
    assert_eq!(names(&union), names(&either));
}

/// The gzip list of 10,000 real pods, decompressed and decoded as it
/// streams, in JSON and in protobuf.
#[tokio::test]
async fn a_gzip_list_of_ten_thousand_pods() {
    for name in ["list-pods-gzip.json", "list-pods-gzip.pb"] {
        let Some(answer) = recorded(name) else {
            return;
        };
        assert_eq!(answer.header("content-encoding"), Some("gzip"), "{name}");
        let Some((items, resource_version, ..)) = list_pods(name, 16 * 1024).await else {
            return;
        };
        // Every pod of the cluster: 10,000 and the fixtures' three.
        assert_eq!(items.len(), 10_003, "{name}");
        assert!(resource_version.is_some_and(|rv| !rv.is_empty()));
        assert!(
            items
                .iter()
                .all(|(name, rv, ..)| !name.is_empty() && !rv.is_empty()),
            "{name}"
        );
    }
}

/// A watch's events as a test compares them: the type, and the object
/// (or, for a bookmark, its resourceVersion and whether it ends the
/// initial events).
#[derive(Debug, Clone, PartialEq)]
enum EventSeen {
    Object(&'static str, Seen),
    Bookmark(String, bool),
}

async fn watch_pods(name: &str, piece: usize) -> Option<Vec<EventSeen>> {
    let (_server, client) = replay(name, piece).await?;
    let mut stream = pods(client).watch(&ListOptions::default()).await.unwrap();
    if name.ends_with(".pb") {
        assert!(stream.is_protobuf(), "{name}");
    }
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap_or_else(|e| panic!("{name}, pieces of {piece}: {e}"));
        events.push(match event {
            WatchEvent::Bookmark(bookmark) => EventSeen::Bookmark(
                bookmark.resource_version().to_string(),
                bookmark.is_initial_events_end(),
            ),
            other => {
                let type_name = other.type_name();
                let (WatchEvent::Added(pod) | WatchEvent::Modified(pod) | WatchEvent::Deleted(pod)) =
                    other
                else {
                    unreachable!("an ERROR is an Err");
                };
                EventSeen::Object(type_name, seen(&pod))
            }
        });
    }
    Some(events)
}

/// Each watch recording, JSON and protobuf, split into pieces of 7 bytes
/// and of 4 KiB (the same events either way). Returns the JSON's events
/// and the protobuf's shape: the protobuf watches were recorded a little
/// later, so they carry the same changes at other versions, and some
/// carry them twice.
async fn watch_in_both(name: &str) -> Option<(Vec<EventSeen>, Vec<Shape>)> {
    let json = watch_pods(&format!("{name}.json"), SMALL_PIECE).await?;
    assert_eq!(
        json,
        watch_pods(&format!("{name}.json"), 4096).await.unwrap()
    );
    let protobuf = watch_pods(&format!("{name}.pb"), SMALL_PIECE)
        .await
        .unwrap();
    assert_eq!(
        protobuf,
        watch_pods(&format!("{name}.pb"), 4096).await.unwrap()
    );
    Some((json, shape(&protobuf)))
}

/// An event's type, object name and whether it is being deleted (for a
/// bookmark: whether it ends the initial events).
type Shape = (&'static str, String, bool);

/// The events' shapes, periodic bookmarks left out (their number depends
/// on how long the watch stayed open).
fn shape(events: &[EventSeen]) -> Vec<Shape> {
    events
        .iter()
        .filter_map(|event| match event {
            EventSeen::Object(type_name, (name, _, _, deleting)) => {
                Some((*type_name, name.clone(), *deleting))
            }
            EventSeen::Bookmark(_, true) => Some(("BOOKMARK", String::new(), true)),
            EventSeen::Bookmark(_, false) => None,
        })
        .collect()
}

fn changed(resource_version: &str) -> Seen {
    let (name, _, mut labels, deleting) = fixture_pod(1, resource_version);
    labels.insert("changed".into(), "json".into());
    (name, resource_version.to_string(), labels, deleting)
}

fn deleting(resource_version: &str) -> Seen {
    (
        fixture_pod(3, resource_version).0,
        resource_version.into(),
        fixture_pod(3, "").2,
        true,
    )
}

#[tokio::test]
async fn a_watch_relabel_delete_and_recreate() {
    let Some((events, protobuf)) = watch_in_both("watch-pods").await else {
        return;
    };
    assert_eq!(protobuf, shape(&events), "protobuf");
    assert_eq!(
        events[..4],
        [
            EventSeen::Object("MODIFIED", changed("101685")),
            EventSeen::Object("MODIFIED", deleting("101686")),
            EventSeen::Object("DELETED", deleting("101687")),
            EventSeen::Object("ADDED", fixture_pod(3, "101688")),
        ],
        "MODIFIED with deletionTimestamp before DELETED"
    );
    assert!(
        events[4..]
            .iter()
            .all(|event| *event == EventSeen::Bookmark("101688".into(), false)),
        "periodic bookmarks: {:?}",
        &events[4..]
    );
}

/// The initial events, the closing bookmark, then the changes, as a
/// watch-list and a watch at resourceVersion "" both send them.
fn initial_events_then_changes(events: &[EventSeen]) {
    assert_eq!(
        events,
        [
            EventSeen::Object("ADDED", fixture_pod(1, "20564")),
            EventSeen::Object("ADDED", fixture_pod(2, "20565")),
            EventSeen::Object("ADDED", fixture_pod(3, "20566")),
            EventSeen::Bookmark("20568".into(), true),
            EventSeen::Object("MODIFIED", changed("20570")),
            EventSeen::Object("MODIFIED", deleting("20571")),
            EventSeen::Object("DELETED", deleting("20572")),
            EventSeen::Object("ADDED", fixture_pod(3, "20573")),
            EventSeen::Bookmark("20573".into(), false),
        ]
    );
}

/// A watch-list, and a watch at resourceVersion "" (which the server
/// answers byte for byte as a watch-list).
#[tokio::test]
async fn a_watch_list_and_its_closing_bookmark() {
    for name in ["watchlist-pods", "watch-pods-rv-unset"] {
        let Some((events, protobuf)) = watch_in_both(name).await else {
            return;
        };
        initial_events_then_changes(&events);
        assert_eq!(protobuf, shape(&events), "{name}: protobuf");
    }
}

#[tokio::test]
async fn a_watch_from_resource_version_1_replays_the_cached_history() {
    let Some((events, protobuf)) = watch_in_both("watch-pods-from-rv1").await else {
        return;
    };
    assert_eq!(events.len(), 7);
    assert_eq!(
        events[0],
        EventSeen::Object("ADDED", fixture_pod(1, "20564"))
    );
    assert_eq!(
        events[6],
        EventSeen::Object("ADDED", fixture_pod(3, "20573"))
    );
    // Recorded after a second round of changes: the history holds both.
    let json = shape(&events);
    assert_eq!(protobuf, [&json[..], &json[3..]].concat(), "protobuf");
}

#[tokio::test]
async fn a_sharded_watch() {
    let Some((events, protobuf)) = watch_in_both("watch-pods-shard1").await else {
        return;
    };
    // Recorded while the pods were relabelled twice: each round's five.
    let json = shape(&events);
    assert_eq!(protobuf, [&json[..], &json[..]].concat(), "protobuf");
    let modified: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            EventSeen::Object("MODIFIED", (name, ..)) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(modified, ["p-2", "p-3", "p-6", "p-7", "p-8"]);
}

/// A watch from a compacted resourceVersion: one ERROR event carrying a
/// 410 Expired Status, then the end.
#[tokio::test]
async fn a_watch_too_old_ends_with_410_expired() {
    for name in ["watch-pods-too-old-410.json", "watch-pods-too-old-410.pb"] {
        for piece in [SMALL_PIECE, 4096] {
            let Some((_server, client)) = replay(name, piece).await else {
                return;
            };
            let mut stream = pods(client).watch(&ListOptions::default()).await.unwrap();
            let error = stream.next().await.unwrap().unwrap_err();
            assert!(error.is_expired_or_gone(), "{name}: {error}");
            let status = error.status().unwrap();
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
            assert!(stream.next().await.is_none(), "{name}: the stream ends");
        }
    }
}

#[tokio::test]
async fn a_get_of_one_pod() {
    let Some((_server, client)) = replay("get-pod.json", SMALL_PIECE).await else {
        return;
    };
    let json = ResourceClient::<Pod>::namespaced(client, "fixtures")
        .get("pod-1")
        .await
        .unwrap();
    assert_eq!(seen(&json), fixture_pod(1, "20564"));
    // The protobuf body, through the protobuf codec and envelope reader.
    let answer = recorded("get-pod.pb").unwrap();
    assert_eq!(
        answer.header("content-type"),
        Some("application/vnd.kubernetes.protobuf")
    );
    let envelope = clientgo_apimachinery::Unknown::decode(&answer.body).unwrap();
    assert_eq!((envelope.api_version, envelope.kind), ("v1", "Pod"));
    let codec = clientgo_protobuf::codec::<Pod>().unwrap();
    let protobuf = (codec.decode)(envelope.raw).unwrap();
    // Recorded after pod-1 was relabelled: the same pod, a later version.
    assert_eq!(
        (protobuf.name(), protobuf.uid(), protobuf.namespace()),
        (json.name(), json.uid(), json.namespace())
    );
    assert_eq!(protobuf.spec, json.spec);
}

/// An error answer read as a `ResourceClient` call would: the Status's
/// code and reason, from JSON and from protobuf alike.
async fn rest_error(name: &str) -> Option<clientgo_rest::Error> {
    let (_server, client) = replay(name, SMALL_PIECE).await?;
    let pods = ResourceClient::<Pod>::namespaced(client, "fixtures");
    let error = if name.starts_with("put-") {
        pods.replace("pod-1", &UpdateOptions::default(), &Pod::default())
            .await
    } else if name.starts_with("post-") {
        pods.create(&CreateOptions::default(), &Pod::default())
            .await
    } else {
        pods.get("missing").await
    };
    Some(error.unwrap_err())
}

#[tokio::test]
async fn error_statuses_are_typed_errors() {
    for (name, code, reason) in [
        ("get-pod-404", 404, "NotFound"),
        ("list-unknown-resource-404", 404, "NotFound"),
        ("list-pods-403", 403, "Forbidden"),
        ("put-pod-conflict-409", 409, "Conflict"),
        ("post-configmap-exists-409", 409, "AlreadyExists"),
        ("post-pod-invalid-422", 422, "Invalid"),
    ] {
        for encoding in ["json", "pb"] {
            let name = format!("{name}.{encoding}");
            let Some(error) = rest_error(&name).await else {
                return;
            };
            let status = error.status().unwrap_or_else(|| panic!("{name}: {error}"));
            assert_eq!(
                (status.code, status.reason.as_str()),
                (code, reason),
                "{name}"
            );
            assert!(!status.message.is_empty(), "{name}");
            match code {
                404 => assert!(error.is_not_found(), "{name}"),
                409 => assert!(error.is_conflict() || reason == "AlreadyExists", "{name}"),
                422 => {
                    let causes = &status.details.as_ref().unwrap().causes;
                    assert!(!causes.is_empty(), "{name}: 422 with causes");
                    assert!(causes.iter().all(|cause| !cause.field.is_empty()), "{name}");
                }
                _ => {}
            }
        }
    }
}

/// An unserved group is answered `404 page not found` in plain text,
/// whatever was asked for: a NotFound with the text in its message.
#[tokio::test]
async fn an_unserved_group_is_a_plain_text_404() {
    for name in ["list-unserved-group-404.json", "list-unserved-group-404.pb"] {
        let Some(answer) = recorded(name) else {
            return;
        };
        assert!(
            answer
                .header("content-type")
                .unwrap()
                .starts_with("text/plain")
        );
        let error = rest_error(name).await.unwrap();
        assert!(error.is_not_found(), "{name}: {error}");
        let status = error.status().unwrap();
        assert!(status.message.contains("404 page not found"), "{status:?}");
    }
}

/// List errors as the reflector meets them: 410 Expired with a fresh
/// continue token, 504 too-large resourceVersion with Retry-After, a 500
/// for a refused shard selector.
#[tokio::test]
async fn list_errors_are_classified() {
    for encoding in ["json", "pb"] {
        let Some((_server, client)) =
            replay(&format!("list-pods-expired-410.{encoding}"), SMALL_PIECE).await
        else {
            return;
        };
        let error = pods(client)
            .list(&ListOptions::default())
            .await
            .unwrap_err();
        assert!(error.is_expired_or_gone(), "{encoding}: {error}");
        let fresh = error.status().unwrap().metadata.continue_.clone();
        assert!(fresh.is_some_and(|token| !token.is_empty()), "{encoding}");

        let (_server, client) = replay(&format!("list-pods-future-rv.{encoding}"), SMALL_PIECE)
            .await
            .unwrap();
        let error = pods(client)
            .list(&ListOptions::default())
            .await
            .unwrap_err();
        assert!(error.is_too_large_resource_version(), "{encoding}: {error}");
        assert_eq!(error.status().unwrap().retry_after_seconds(), Some(1));
    }
    for name in [
        "list-pods-shard-short-hex-500.json",
        "list-pods-shard-bad-field-500.json",
    ] {
        let (_server, client) = replay(name, SMALL_PIECE).await.unwrap();
        let error = pods(client)
            .list(&ListOptions::default())
            .await
            .unwrap_err();
        assert!(error.is_internal_error(), "{name}: {error}");
    }
}

#[tokio::test]
async fn discovery_and_version() {
    let Some((_server, client)) = replay("discovery-api-v1.json", SMALL_PIECE).await else {
        return;
    };
    let core = clientgo_apimachinery::GroupVersion {
        group: String::new(),
        version: "v1".into(),
    };
    let resources = clientgo_rest::Discovery::new(client)
        .api_resources(&core)
        .await
        .unwrap();
    let names: Vec<&str> = resources
        .resources
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert!(names.contains(&"pods") && names.contains(&"configmaps"));
    let (_server, client) = replay("version.json", SMALL_PIECE).await.unwrap();
    let version = clientgo_rest::Discovery::new(client)
        .server_version()
        .await
        .unwrap();
    assert_eq!(
        (version.major.as_str(), version.minor.as_str()),
        ("1", "36")
    );
}

/// Managed fields left out of the real server's protobuf bytes before
/// decoding (the factory's default) give the objects decoding them whole
/// and dropping them gives, in a list and in a watch.
#[tokio::test]
async fn managed_fields_are_left_out_of_protobuf_before_decoding() {
    use clientgo_listwatch::{ProtobufListDecoder, ProtobufWatchDecoder};
    let Some(list) = recorded("list-pods-rv0.pb") else {
        return;
    };
    let codec = || clientgo_protobuf::codec::<Pod>().unwrap();
    let decode_list = |skip: bool| {
        let mut decoder = ProtobufListDecoder::new(codec(), 1 << 20).skip_managed_fields(skip);
        for piece in list.body.chunks(SMALL_PIECE) {
            decoder.push(piece).unwrap();
        }
        decoder.finish().unwrap().items
    };
    assert_eq!(decode_list(true), decoded_then_cut(decode_list(false)));

    let watch = recorded("watch-pods.pb").unwrap();
    let decode_watch = |skip: bool| {
        let mut decoder = ProtobufWatchDecoder::new(codec(), 1 << 20).skip_managed_fields(skip);
        let mut pods = Vec::new();
        for piece in watch.body.chunks(SMALL_PIECE) {
            decoder.push(piece);
            while let Some(event) = decoder.next_event() {
                if let WatchEvent::Added(pod)
                | WatchEvent::Modified(pod)
                | WatchEvent::Deleted(pod) = event.unwrap()
                {
                    pods.push(pod);
                }
            }
        }
        pods
    };
    let whole = decode_watch(false);
    assert_eq!(whole.len(), 4);
    assert_eq!(decode_watch(true), decoded_then_cut(whole));
}

/// Pods decoded whole, each checked to carry managed fields, then
/// without them.
fn decoded_then_cut(mut pods: Vec<Pod>) -> Vec<Pod> {
    assert!(pods.iter().all(|pod| pod.metadata.managed_fields.is_some()));
    for pod in &mut pods {
        pod.metadata.managed_fields = None;
    }
    pods
}

/// Compact entries (what the default informer keeps) built from the
/// recorded protobuf list and watch: each decodes back to the pod the
/// typed decoder gives, managedFields included (kept as bytes in the
/// entry's body); cut, they are gone from both.
#[test]
fn compact_entries_of_the_recordings_decode_to_the_typed_pods() {
    use clientgo_apimachinery::{Compact, Protobuf};
    use clientgo_listwatch::{ProtobufListDecoder, ProtobufWatchDecoder};
    let Some(list) = recorded("list-pods-rv0.pb") else {
        return;
    };
    let typed = || clientgo_protobuf::codec::<Pod>().unwrap();
    let compact = || clientgo_protobuf::codec::<Compact<Pod, Protobuf>>().unwrap();
    let pods: Vec<Pod> = {
        let mut decoder = ProtobufListDecoder::new(typed(), 1 << 20);
        decoder.push(&list.body).unwrap();
        decoder.finish().unwrap().items
    };
    for skip in [false, true] {
        let mut decoder = ProtobufListDecoder::new(compact(), 1 << 20).skip_managed_fields(skip);
        for piece in list.body.chunks(SMALL_PIECE) {
            decoder.push(piece).unwrap();
        }
        let entries = decoder.finish().unwrap().items;
        assert_eq!(entries.len(), pods.len());
        for (entry, pod) in entries.iter().zip(&pods) {
            assert!(entry.meta().managed_fields.is_none(), "parsed without them");
            let mut expected = pod.clone();
            if skip {
                expected.metadata.managed_fields = None;
            }
            assert_eq!(*entry.decode().unwrap(), expected, "skip = {skip}");
        }
    }

    let watch = recorded("watch-pods.pb").unwrap();
    let mut typed_decoder = ProtobufWatchDecoder::new(typed(), 1 << 20);
    let mut compact_decoder = ProtobufWatchDecoder::new(compact(), 1 << 20);
    typed_decoder.push(&watch.body);
    compact_decoder.push(&watch.body);
    let mut compared = 0;
    while let Some(event) = typed_decoder.next_event() {
        let entry_event = compact_decoder.next_event().unwrap().unwrap();
        match (event.unwrap(), entry_event) {
            (WatchEvent::Added(pod), WatchEvent::Added(entry))
            | (WatchEvent::Modified(pod), WatchEvent::Modified(entry))
            | (WatchEvent::Deleted(pod), WatchEvent::Deleted(entry)) => {
                assert_eq!(*entry.decode().unwrap(), pod);
                compared += 1;
            }
            (WatchEvent::Bookmark(_), WatchEvent::Bookmark(_)) => {}
            (pod, entry) => panic!("{pod:?} against {entry:?}"),
        }
    }
    assert_eq!(compared, 4);
    assert!(compact_decoder.next_event().is_none());
}
