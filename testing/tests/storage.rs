//! The test server's storage: write rules, revisions, snapshots, watches.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{GroupResource, StatusReason};
use clientgo_testing::{
    EventType, ObjectKey, Preconditions, ReadAt, Storage, StorageOptions, StoredObject,
};
use serde_json::{Value, json};

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

fn key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new(pods(), namespace, name)
}

fn value(object: &StoredObject) -> Value {
    object.to_value().unwrap()
}

fn names(objects: &[Arc<StoredObject>]) -> Vec<String> {
    objects.iter().map(|o| o.key.name.clone()).collect()
}

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"nodeName": "n1"}})
}

#[test]
fn create_stamps_server_fields() {
    let storage = Storage::default();
    let before = storage.current_revision();
    let created = storage
        .create(
            &pods(),
            "default",
            json!({"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {}}),
        )
        .unwrap();
    assert_eq!(created.resource_version, before + 1);
    assert_eq!(storage.current_revision(), before + 1);
    assert_eq!(created.labels.get("app").map(String::as_str), Some("web"));
    let object = value(&created);
    let metadata = &object["metadata"];
    assert_eq!(metadata["resourceVersion"], (before + 1).to_string());
    assert_eq!(metadata["namespace"], "default");
    assert_eq!(metadata["generation"], 1);
    assert!(metadata["uid"].as_str().is_some_and(|uid| uid.len() == 36));
    assert!(
        metadata["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert_eq!(created.uid, metadata["uid"]);
}

#[test]
fn create_errors_match_the_real_server() {
    let storage = Storage::default();
    storage.create(&pods(), "default", pod("web")).unwrap();
    let exists = storage.create(&pods(), "default", pod("web")).unwrap_err();
    assert_eq!(exists.reason, StatusReason::AlreadyExists);
    assert_eq!(exists.code, 409);
    assert_eq!(exists.message, "pods \"web\" already exists");
    // The same name in another namespace is another object.
    storage.create(&pods(), "other", pod("web")).unwrap();
    let unnamed = storage
        .create(&pods(), "default", json!({"metadata": {}}))
        .unwrap_err();
    assert_eq!(unnamed.code, 422);
    assert!(unnamed.is_invalid());
    let bad = storage
        .create(&pods(), "default", json!([1, 2]))
        .unwrap_err();
    assert_eq!(bad.code, 400);
    let bad_labels = storage
        .create(
            &pods(),
            "default",
            json!({"metadata": {"name": "x", "labels": {"a": 1}}}),
        )
        .unwrap_err();
    assert_eq!(bad_labels.code, 400);
}

#[test]
fn generate_name_gets_a_unique_suffix() {
    let storage = Storage::default();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..50 {
        let created = storage
            .create(
                &pods(),
                "default",
                json!({"metadata": {"generateName": "web-"}}),
            )
            .unwrap();
        assert!(created.key.name.starts_with("web-"));
        assert_eq!(created.key.name.len(), "web-".len() + 5);
        assert!(
            seen.insert(created.key.name.clone()),
            "duplicate {}",
            created.key.name
        );
    }
}

#[test]
fn update_checks_the_resource_version_and_bumps_generation_on_spec_changes() {
    let storage = Storage::default();
    let created = storage.create(&pods(), "default", pod("web")).unwrap();
    let mut next = value(&created);
    next["metadata"]["labels"] = json!({"touched": "yes"});
    let relabelled = storage
        .update(&key("default", "web"), next.clone(), false)
        .unwrap();
    assert_eq!(
        value(&relabelled)["metadata"]["generation"],
        1,
        "metadata only"
    );

    // The body still names the old resourceVersion: stale.
    let stale = storage
        .update(&key("default", "web"), next, false)
        .unwrap_err();
    assert_eq!(stale.reason, StatusReason::Conflict);
    assert!(stale.message.contains("the object has been modified"));

    let mut changed = value(&relabelled);
    changed["spec"]["nodeName"] = json!("n2");
    let updated = storage
        .update(&key("default", "web"), changed, false)
        .unwrap();
    assert_eq!(value(&updated)["metadata"]["generation"], 2);

    // No resourceVersion: unconditional.
    let mut blind = pod("web");
    blind["spec"]["nodeName"] = json!("n3");
    let blind = storage
        .update(&key("default", "web"), blind, false)
        .unwrap();
    assert_eq!(value(&blind)["metadata"]["generation"], 3);
    assert_eq!(
        value(&blind)["metadata"]["uid"],
        value(&created)["metadata"]["uid"]
    );

    let missing = storage
        .update(&key("default", "nope"), pod("nope"), false)
        .unwrap_err();
    assert!(missing.is_not_found());
}

/// kube-apiserver compares a write with what it stores before writing: a
/// write that changes nothing keeps the resourceVersion and sends no
/// watch event (a controller applying the same state does not wake itself
/// up).
#[tokio::test]
async fn a_write_that_changes_nothing_is_not_written() {
    let storage = Arc::new(Storage::default());
    let created = storage.create(&pods(), "default", pod("web")).unwrap();
    let from = storage.current_revision();
    let mut watch = storage.watch(&pods(), Some("default"), from).unwrap();
    let same = storage
        .update(&key("default", "web"), value(&created), false)
        .unwrap();
    assert_eq!(same.resource_version, created.resource_version);
    let status_same = storage
        .update(&key("default", "web"), value(&created), true)
        .unwrap();
    assert_eq!(status_same.resource_version, created.resource_version);
    assert_eq!(storage.current_revision(), from);
    let mut changed = value(&created);
    changed["metadata"]["labels"] = json!({"touched": "yes"});
    let written = storage
        .update(&key("default", "web"), changed, false)
        .unwrap();
    assert_eq!(written.resource_version, from + 1);
    let event = tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (event.event_type, event.revision),
        (EventType::Modified, from + 1),
        "the no-op writes sent no event"
    );
}

#[test]
fn status_is_changed_only_through_the_status_subresource() {
    let storage = Storage::default();
    storage.create(&pods(), "default", pod("web")).unwrap();
    let mut with_status = pod("web");
    with_status["status"] = json!({"phase": "Running"});
    with_status["spec"]["nodeName"] = json!("ignored-by-status-update");
    let after_status = storage
        .update(&key("default", "web"), with_status.clone(), true)
        .unwrap();
    let object = value(&after_status);
    assert_eq!(object["status"]["phase"], "Running");
    assert_eq!(
        object["spec"]["nodeName"], "n1",
        "a status update leaves spec alone"
    );
    assert_eq!(object["metadata"]["generation"], 1);

    let mut main = pod("web");
    main["status"] = json!({"phase": "Failed"});
    let after_main = storage.update(&key("default", "web"), main, false).unwrap();
    assert_eq!(
        value(&after_main)["status"]["phase"],
        "Running",
        "a main update keeps status"
    );
}

#[test]
fn delete_with_preconditions_and_finalizers() {
    let storage = Storage::default();
    let created = storage.create(&pods(), "default", pod("plain")).unwrap();
    let wrong_uid = storage
        .delete(
            &key("default", "plain"),
            &Preconditions {
                uid: Some("other".into()),
                resource_version: None,
            },
        )
        .unwrap_err();
    assert_eq!(wrong_uid.reason, StatusReason::Conflict);
    assert!(
        wrong_uid
            .message
            .contains("the UID in the precondition (other) does not match the UID in record")
    );
    let wrong_rv = storage
        .delete(
            &key("default", "plain"),
            &Preconditions {
                uid: None,
                resource_version: Some("1".into()),
            },
        )
        .unwrap_err();
    assert!(
        wrong_rv
            .message
            .contains("the ResourceVersion in the precondition (1) does not match")
    );
    let deleted = storage
        .delete(
            &key("default", "plain"),
            &Preconditions {
                uid: Some(created.uid.clone()),
                resource_version: Some(created.resource_version.to_string()),
            },
        )
        .unwrap();
    assert_eq!(
        deleted.resource_version,
        storage.current_revision(),
        "the delete's revision"
    );
    assert!(storage.get(&key("default", "plain")).is_none());
    assert!(
        storage
            .delete(&key("default", "plain"), &Preconditions::default())
            .unwrap_err()
            .is_not_found()
    );

    let mut guarded = pod("guarded");
    guarded["metadata"]["finalizers"] = json!(["example.com/keep"]);
    storage.create(&pods(), "default", guarded).unwrap();
    let marked = storage
        .delete(&key("default", "guarded"), &Preconditions::default())
        .unwrap();
    let marked_value = value(&marked);
    assert!(marked_value["metadata"]["deletionTimestamp"].is_string());
    assert!(
        storage.get(&key("default", "guarded")).is_some(),
        "kept while finalizers remain"
    );
    let revision = storage.current_revision();
    let again = storage
        .delete(&key("default", "guarded"), &Preconditions::default())
        .unwrap();
    assert_eq!(
        again.resource_version, marked.resource_version,
        "marking twice writes nothing"
    );
    assert_eq!(storage.current_revision(), revision);

    let mut released = marked_value;
    released["metadata"]["finalizers"] = json!([]);
    storage
        .update(&key("default", "guarded"), released, false)
        .unwrap();
    assert!(
        storage.get(&key("default", "guarded")).is_none(),
        "the last finalizer gone: deleted"
    );
}

#[test]
fn lists_are_sorted_filtered_and_readable_at_past_revisions() {
    let storage = Storage::default();
    storage.create(&pods(), "b", pod("z")).unwrap();
    storage.create(&pods(), "a", pod("y")).unwrap();
    let configmaps = GroupResource::new("", "configmaps");
    storage
        .create(&configmaps, "a", json!({"metadata": {"name": "cm"}}))
        .unwrap();
    let at_three = storage.current_revision();
    storage.create(&pods(), "a", pod("x")).unwrap();
    let y = storage.get(&key("a", "y")).unwrap();
    let mut changed = value(&y);
    changed["spec"]["nodeName"] = json!("n9");
    storage.update(&key("a", "y"), changed, false).unwrap();
    storage
        .delete(&key("b", "z"), &Preconditions::default())
        .unwrap();

    let (latest, revision) = storage.list(&pods(), None, ReadAt::Latest).unwrap();
    assert_eq!(revision, storage.current_revision());
    assert_eq!(names(&latest), ["x", "y"]);
    let (in_a, _) = storage.list(&pods(), Some("a"), ReadAt::Latest).unwrap();
    assert_eq!(names(&in_a), ["x", "y"]);

    let (past, revision) = storage
        .list(&pods(), None, ReadAt::Exact(at_three))
        .unwrap();
    assert_eq!(revision, at_three);
    assert_eq!(names(&past), ["y", "z"], "sorted by namespace: a/y, b/z");
    assert_eq!(
        value(&past[0])["spec"]["nodeName"],
        "n1",
        "y as it was then"
    );
    assert_eq!(past[0].resource_version, y.resource_version);

    let (not_older, revision) = storage
        .list(&pods(), None, ReadAt::NotOlderThan(at_three))
        .unwrap();
    assert_eq!(revision, storage.current_revision());
    assert_eq!(names(&not_older), ["x", "y"]);
}

#[test]
fn future_and_compacted_revisions_are_refused_like_the_real_server() {
    let storage = Storage::default();
    storage.create(&pods(), "a", pod("x")).unwrap();
    let current = storage.current_revision();
    for at in [
        ReadAt::Exact(current + 5),
        ReadAt::NotOlderThan(current + 5),
    ] {
        let err = storage.list(&pods(), None, at).unwrap_err();
        assert_eq!(err.code, 504);
        assert!(err.is_too_large_resource_version(), "{err:?}");
    }
    // Two writes: a watch from `current` needs the first, which the
    // compaction to the second removes (etcd keeps the compacted revision).
    storage.create(&pods(), "a", pod("y")).unwrap();
    storage.create(&pods(), "a", pod("z")).unwrap();
    storage.compact(storage.current_revision());
    let err = storage
        .list(&pods(), None, ReadAt::Exact(current))
        .unwrap_err();
    assert!(err.is_resource_expired());
    assert_eq!(err.code, 410);
    assert!(
        err.message.starts_with("too old resource version:"),
        "{}",
        err.message
    );
    assert!(
        storage
            .watch(&pods(), None, current)
            .unwrap_err()
            .is_expired_or_gone()
    );
}

#[test]
fn history_limit_compacts_old_events() {
    let storage = Storage::new(StorageOptions::default().history_limit(3));
    let start = storage.current_revision();
    for name in ["a", "b", "c", "d", "e"] {
        storage.create(&pods(), "ns", pod(name)).unwrap();
    }
    // Two events dropped: the lowest revision held is the third.
    assert_eq!(storage.compacted_revision(), start + 3);
    assert!(storage.watch(&pods(), None, start + 1).is_err());
    assert!(storage.watch(&pods(), None, start + 2).is_ok());
    assert!(
        storage
            .list(&pods(), None, ReadAt::Exact(start + 2))
            .is_err()
    );
    assert!(
        storage
            .list(&pods(), None, ReadAt::Exact(start + 3))
            .is_ok()
    );
}

#[tokio::test]
async fn watch_replays_the_backlog_then_follows_live_events() {
    let storage = Arc::new(Storage::default());
    storage.create(&pods(), "a", pod("before")).unwrap();
    let from = storage.current_revision();
    storage.create(&pods(), "a", pod("kept-1")).unwrap();
    storage
        .create(&pods(), "b", pod("other-namespace"))
        .unwrap();
    storage
        .create(
            &GroupResource::new("", "configmaps"),
            "a",
            json!({"metadata": {"name": "cm"}}),
        )
        .unwrap();
    let mut watch = storage.watch(&pods(), Some("a"), from).unwrap();
    storage
        .delete(&key("a", "kept-1"), &Preconditions::default())
        .unwrap();
    storage.create(&pods(), "a", pod("live")).unwrap();

    let mut seen = Vec::new();
    for _ in 0..4 {
        let event = tokio::time::timeout(Duration::from_secs(5), watch.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push((
            event.event_type,
            event.object.key.name.clone(),
            event.revision,
        ));
    }
    let kinds: Vec<(EventType, &str)> = seen.iter().map(|(t, n, _)| (*t, n.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (EventType::Added, "kept-1"),
            // A pod is deleted gracefully: marked, then removed.
            (EventType::Modified, "kept-1"),
            (EventType::Deleted, "kept-1"),
            (EventType::Added, "live"),
        ]
    );
    assert!(
        seen.windows(2).all(|w| w[0].2 < w[1].2),
        "revisions increase"
    );
    // The delete's previous state is the object before it.
    assert!(seen.iter().all(|(_, _, revision)| *revision > from));
}

/// Found by the chaos soak: writers on several threads published their
/// events after releasing the storage lock, so a watch could receive
/// revision n + 1 before n and then skip n as already seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_gets_every_event_of_concurrent_writers_in_revision_order() {
    let storage = Arc::new(Storage::default());
    let from = storage.current_revision();
    let mut watch = storage.watch(&pods(), None, from).unwrap();
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let storage = Arc::clone(&storage);
            std::thread::spawn(move || {
                for index in 0..500 {
                    let name = format!("w{writer}-{index}");
                    storage.create(&pods(), "a", pod(&name)).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let mut revisions = Vec::new();
    while revisions.len() < 2_000 {
        let event = tokio::time::timeout(Duration::from_secs(5), watch.next())
            .await
            .expect("every write reaches the watch")
            .unwrap()
            .unwrap();
        revisions.push(event.revision);
    }
    assert_eq!(revisions, (from + 1..=from + 2_000).collect::<Vec<u64>>());
}

#[tokio::test]
async fn a_watcher_that_falls_too_far_behind_gets_expired() {
    let storage = Storage::new(StorageOptions::default().history_limit(2));
    let mut watch = storage
        .watch(&pods(), None, storage.current_revision())
        .unwrap();
    for name in ["a", "b", "c", "d", "e"] {
        storage.create(&pods(), "ns", pod(name)).unwrap();
    }
    let first = tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .unwrap()
        .unwrap();
    let err = first.unwrap_err();
    assert_eq!(err.code, 410);
    assert!(err.is_expired_or_gone());
}
