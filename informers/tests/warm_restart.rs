//! Warm restart: an informer saves its cache and a later one (a process
//! restart, played by a new informer over the same directory) resumes
//! from it with a watch instead of a list, against the test server's real
//! watch semantics (replay within the history, 410 after compaction); a
//! resume after changes also on the real kube-apiserver (one body, two
//! backends).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{Recorder, Running, Seen, create, delete, fast_options, informer, seeded};
use clientgo_apimachinery::{Compact, LabelSelector, Object};
use clientgo_informers::{
    InformerFactoryOptions, SharedIndexInformer, SharedInformerFactory, SnapshotOptions,
    SnapshotStats, Storage,
};
use clientgo_reflector::ReflectorMode;
use clientgo_rest::{CreateOptions, DeleteOptions, ResourceClient};
use clientgo_testing::envtest::{Backend, for_each_backend};
use clientgo_testing::{TestApiServer, Verb};
use k8s_openapi::api::core::v1::ConfigMap;

type Cm = Compact<ConfigMap>;

fn config_map(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "data": {"v": value}}))
        .unwrap()
}

/// Snapshot options for the tests: written only when an informer stops,
/// `Cm` informers included.
fn snapshots(dir: &Path) -> SnapshotOptions {
    SnapshotOptions::new(dir)
        .interval(Duration::ZERO)
        .entry_type::<Cm>()
}

fn snapshotting(server: &TestApiServer, options: SnapshotOptions) -> SharedIndexInformer<Cm> {
    informer::<Cm>(server, fast_options().snapshot(options))
}

/// Runs an informer until synced and stops it, which writes its snapshot.
async fn first_process(server: &TestApiServer, dir: &Path) {
    let running = Running::start(snapshotting(server, snapshots(dir)));
    running.synced().await;
    let informer = running.informer.clone();
    running.stop().await;
    assert_eq!(informer.snapshot_stats().written, 1);
}

fn names(informer: &SharedIndexInformer<Cm>) -> BTreeSet<String> {
    informer
        .lister()
        .list(&LabelSelector::everything())
        .iter()
        .map(|o| o.name().unwrap_or_default().to_string())
        .collect()
}

fn snapshot_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "snapshot"))
        .collect();
    files.sort();
    files
}

/// Requests that listed the resource: lists and watch-lists.
fn listings(server: &TestApiServer) -> usize {
    server.requests().count(Verb::List)
        + server
            .requests()
            .of(Verb::Watch)
            .iter()
            .filter(|r| r.list_options().send_initial_events == Some(true))
            .count()
}

/// Starts a second process's informer with a recorder registered before
/// start, and waits until it and the recorder have synced.
async fn second_process(
    server: &TestApiServer,
    options: SnapshotOptions,
) -> (Running<Cm>, Recorder<Cm>) {
    second_process_of(snapshotting(server, options)).await
}

/// As [`second_process`], for an informer made by the caller.
async fn second_process_of(informer: SharedIndexInformer<Cm>) -> (Running<Cm>, Recorder<Cm>) {
    let recorder = Recorder::default();
    let registration = informer.add_event_handler(recorder.clone()).unwrap();
    let running = Running::start(informer);
    running.synced().await;
    // Handlers run on their own threads: the informer's sync says the
    // store holds the state, the registration's that the handler has
    // been told it (under load the first can come well before the second).
    crate::support::eventually("the handler has the initial state", async move || {
        registration.has_synced()
    })
    .await;
    (running, recorder)
}

#[tokio::test]
async fn a_restart_with_nothing_changed_makes_no_list_request() {
    let server = seeded(40).await;
    let dir = tempfile::tempdir().unwrap();
    first_process(&server, dir.path()).await;
    let saved_at = server.storage().current_revision().to_string();
    server.requests().clear();

    let (running, recorder) = second_process(&server, snapshots(dir.path())).await;
    let informer = &running.informer;
    assert_eq!(listings(&server), 0, "no list or watch-list request");
    let watches = server.requests().of(Verb::Watch);
    assert_eq!(watches.len(), 1, "one watch: {watches:?}");
    let options = watches[0].list_options();
    assert_eq!(options.resource_version.as_deref(), Some(saved_at.as_str()));
    assert_eq!(
        options.send_initial_events, None,
        "a plain watch, not a watch-list"
    );

    assert_eq!(names(informer).len(), 40);
    let seen = recorder.seen();
    assert_eq!(seen.len(), 40, "{seen:?}");
    assert!(
        seen.iter()
            .all(|s| matches!(s, Seen::Add { initial: true, .. })),
        "one initial add per object: {seen:?}"
    );
    let stats = informer.stats();
    assert_eq!(stats.mode, ReflectorMode::Resumed);
    assert_eq!(stats.reflector.resumes, 1);
    assert_eq!(stats.reflector.lists + stats.reflector.watch_lists, 0);
    assert_eq!(informer.snapshot_stats().loaded, 1);
    running.stop().await;
}

#[tokio::test]
async fn a_restart_after_changes_delivers_what_a_list_would_have() {
    for_each_backend(Backend::both().await, |backend| async move {
        let namespace = backend.create_namespace("warm").await.unwrap();
        let api = ResourceClient::<ConfigMap>::namespaced(backend.client().unwrap(), &namespace);
        for index in 0..20 {
            api.create(
                &CreateOptions::default(),
                &config_map(&format!("cm-{index:05}"), "0"),
            )
            .await
            .unwrap();
        }
        let client = backend.client().unwrap();
        let start = |options: SnapshotOptions| {
            SharedIndexInformer::from_client(
                ResourceClient::<Cm>::namespaced(client.clone(), &namespace),
                fast_options().snapshot(options),
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let first = Running::start(start(snapshots(dir.path())));
        first.synced().await;
        let saved = first.informer.clone();
        first.stop().await;
        assert_eq!(saved.snapshot_stats().written, 1);

        api.create(&CreateOptions::default(), &config_map("cm-new", "0"))
            .await
            .unwrap();
        let mut changed = api.get("cm-00001").await.unwrap();
        changed.data = Some([("v".to_string(), "changed".to_string())].into());
        api.replace("cm-00001", &Default::default(), &changed)
            .await
            .unwrap();
        api.delete("cm-00002", &DeleteOptions::default())
            .await
            .unwrap();
        if let Some(server) = backend.test_server() {
            server.requests().clear();
        }

        let (running, recorder) = second_process_of(start(snapshots(dir.path()))).await;
        let informer = &running.informer;
        // Synced means the replay is in: no waiting.
        let cached = names(informer);
        assert!(cached.contains("cm-new") && !cached.contains("cm-00002"));
        assert_eq!(cached.len(), 20);
        let changed = informer
            .lister()
            .namespace(&namespace)
            .get("cm-00001")
            .unwrap();
        let changed = changed.decode().unwrap();
        assert_eq!(changed.data.as_ref().unwrap()["v"], "changed");

        let seen = recorder.seen();
        let added: BTreeSet<String> = seen
            .iter()
            .filter(|s| matches!(s, Seen::Add { initial: true, .. }))
            .map(|s| s.name().to_string())
            .collect();
        assert_eq!(added, cached, "initial adds of what exists now");
        assert_eq!(seen.len(), 20, "nothing else: {seen:?}");
        let stats = informer.stats();
        assert_eq!(stats.mode, ReflectorMode::Resumed);
        assert_eq!(stats.reflector.resumes, 1);
        assert_eq!(stats.reflector.lists + stats.reflector.watch_lists, 0);
        if let Some(server) = backend.test_server() {
            assert_eq!(listings(server), 0);
            assert_eq!(
                informer.last_sync_resource_version(),
                server.storage().current_revision().to_string()
            );
        }
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn a_restart_after_compaction_relists_once_and_reports_deletions_as_tombstones() {
    let server = seeded(10).await;
    let dir = tempfile::tempdir().unwrap();
    first_process(&server, dir.path()).await;
    delete(&server, "cm-00003");
    create(&server, "cm-late", "db");
    server.compact_history();

    let (running, recorder) = second_process(&server, snapshots(dir.path())).await;
    let informer = running.informer.clone();
    crate::support::eventually("the cache converges", async || {
        let cached = names(&informer);
        cached.len() == 10 && cached.contains("cm-late") && !cached.contains("cm-00003")
    })
    .await;
    let stats = informer.stats();
    assert_eq!(stats.reflector.resume_fallbacks, 1);
    assert_eq!(stats.reflector.resumes, 0);
    assert_eq!(
        stats.reflector.lists + stats.reflector.watch_lists,
        1,
        "one relist"
    );
    let recorder_done = recorder.clone();
    crate::support::eventually("the deletion is delivered", async move || {
        recorder_done
            .seen()
            .iter()
            .any(|s| matches!(s, Seen::Delete { name, tombstone: true, .. } if name == "cm-00003"))
    })
    .await;
    let seen = recorder.seen();
    let initial: BTreeSet<String> = seen
        .iter()
        .filter(|s| matches!(s, Seen::Add { initial: true, .. }))
        .map(|s| s.name().to_string())
        .collect();
    assert!(
        initial.contains("cm-00003"),
        "the saved objects come first: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|s| matches!(s, Seen::Add { name, .. } if name == "cm-late"))
    );
    running.stop().await;
}

#[tokio::test]
async fn a_damaged_old_or_foreign_snapshot_is_refused_and_the_informer_lists() {
    let server = seeded(10).await;
    let dir = tempfile::tempdir().unwrap();
    first_process(&server, dir.path()).await;
    let [path] = snapshot_files(dir.path()).try_into().unwrap();
    let valid = std::fs::read(&path).unwrap();

    // A snapshot of another informer (another transform, so another
    // source identity), renamed to this one's file.
    let other_dir = tempfile::tempdir().unwrap();
    let other = Running::start(snapshotting(
        &server,
        snapshots(other_dir.path()).transform_id("another transform"),
    ));
    other.synced().await;
    other.stop().await;
    let [other_path] = snapshot_files(other_dir.path()).try_into().unwrap();
    let foreign = std::fs::read(other_path).unwrap();

    let old_format = String::from_utf8_lossy(&valid)
        .replacen("\"formatVersion\":1", "\"formatVersion\":0", 1)
        .into_bytes();
    let mut flipped = valid.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x01;
    let cases: [(&str, Vec<u8>); 5] = [
        ("truncated", valid[..valid.len() / 3].to_vec()),
        ("a changed byte", flipped),
        ("an old format", old_format),
        ("another informer's", foreign),
        ("not a snapshot", b"garbage".to_vec()),
    ];
    for (what, bytes) in cases {
        std::fs::write(&path, &bytes).unwrap();
        server.requests().clear();
        let (running, _) = second_process(&server, snapshots(dir.path())).await;
        let informer = running.informer.clone();
        let stats = informer.snapshot_stats();
        assert_eq!((stats.loaded, stats.rejected), (0, 1), "{what}");
        assert_eq!(informer.stats().reflector.resumes, 0, "{what}");
        assert_eq!(names(&informer).len(), 10, "{what}");
        assert_eq!(listings(&server), 1, "{what}: listed instead");
        running.stop().await;
        // Stopping wrote a good snapshot over the bad one.
        assert_eq!(informer.snapshot_stats().written, 1, "{what}");
    }
}

#[tokio::test]
async fn a_crash_while_writing_leaves_the_previous_snapshot() {
    let server = seeded(10).await;
    let dir = tempfile::tempdir().unwrap();
    first_process(&server, dir.path()).await;
    let [path] = snapshot_files(dir.path()).try_into().unwrap();
    // What a writer killed halfway leaves: part of the next snapshot in
    // the temporary file, the previous one untouched.
    let mut temporary = path.clone().into_os_string();
    temporary.push(".tmp");
    let valid = std::fs::read(&path).unwrap();
    std::fs::write(&temporary, &valid[..valid.len() / 2]).unwrap();
    server.requests().clear();

    let (running, _) = second_process(&server, snapshots(dir.path())).await;
    let informer = running.informer.clone();
    assert_eq!(informer.snapshot_stats().loaded, 1);
    assert_eq!(informer.stats().reflector.resumes, 1);
    assert_eq!(listings(&server), 0);
    running.stop().await;
    assert!(
        !Path::new(&temporary).exists(),
        "the next write replaced it"
    );
}

#[tokio::test]
async fn an_entry_type_the_options_do_not_name_is_not_saved() {
    let server = seeded(3).await;
    let dir = tempfile::tempdir().unwrap();
    let unnamed = SnapshotOptions::new(dir.path()).interval(Duration::ZERO);
    let running = Running::start(snapshotting(&server, unnamed));
    running.synced().await;
    let informer = running.informer.clone();
    running.stop().await;
    assert_eq!(informer.snapshot_stats(), SnapshotStats::default());
    assert!(snapshot_files(dir.path()).is_empty(), "nothing written");
}

#[tokio::test]
async fn a_running_informer_saves_periodically() {
    let server = seeded(5).await;
    let dir = tempfile::tempdir().unwrap();
    let running = Running::start(snapshotting(
        &server,
        SnapshotOptions::new(dir.path())
            .interval(Duration::from_millis(50))
            .entry_type::<Cm>(),
    ));
    running.synced().await;
    let informer = running.informer.clone();
    crate::support::eventually("two snapshots are written", async || {
        informer.snapshot_stats().written >= 2
    })
    .await;
    let stats = informer.snapshot_stats();
    assert!(stats.last_bytes > 0);
    assert_eq!(stats.write_errors, 0);
    running.stop().await;
}

/// A factory of the `default` namespace in `storage`, saving snapshots in
/// `dir`.
fn snapshotting_factory(
    server: &TestApiServer,
    dir: &Path,
    storage: Storage,
) -> SharedInformerFactory {
    SharedInformerFactory::with_options(
        crate::support::client(server),
        InformerFactoryOptions::default()
            .namespace("default")
            .storage(storage)
            .snapshot(snapshots(dir)),
    )
}

/// Starts `factory`, waits for its sync, and shuts it down, which saves
/// every snapshotting informer's cache.
async fn sync_and_save(factory: &SharedInformerFactory) {
    let stop = crate::support::start_and_sync(factory).await;
    stop.cancel();
    factory.shutdown().await;
}

#[tokio::test]
async fn a_factory_in_decoded_storage_resumes_its_compact_informers_and_lists_the_others() {
    let server = seeded(8).await;
    let dir = tempfile::tempdir().unwrap();
    let factory = || snapshotting_factory(&server, dir.path(), Storage::Decoded);
    let first = factory();
    first.informer_for::<Cm>();
    first.informer_for::<ConfigMap>();
    sync_and_save(&first).await;
    assert_eq!(
        snapshot_files(dir.path()).len(),
        1,
        "only the compact informer saves"
    );
    server.requests().clear();

    let second = factory();
    let compact = second.informer_for::<Cm>();
    let whole = second.informer_for::<ConfigMap>();
    let stop = crate::support::start_and_sync(&second).await;
    assert_eq!(compact.stats().reflector.resumes, 1);
    assert_eq!(whole.stats().reflector.resumes, 0);
    assert_eq!(
        listings(&server),
        1,
        "only the whole-object informer listed"
    );
    assert_eq!(names(&compact).len(), 8);
    stop.cancel();
    second.shutdown().await;
}

#[tokio::test]
async fn a_factory_in_the_default_storage_resumes_its_typed_informers() {
    let server = seeded(8).await;
    let dir = tempfile::tempdir().unwrap();
    let factory = || snapshotting_factory(&server, dir.path(), Storage::Compact);
    let first = factory();
    first.informer_for::<ConfigMap>();
    sync_and_save(&first).await;
    assert_eq!(
        snapshot_files(dir.path()).len(),
        1,
        "the typed informer saves"
    );
    server.requests().clear();

    let second = factory();
    let typed = second.informer_for::<ConfigMap>();
    assert_eq!(typed.storage(), Storage::Compact);
    let stop = crate::support::start_and_sync(&second).await;
    assert_eq!(typed.stats().reflector.resumes, 1);
    assert_eq!(listings(&server), 0, "resumed, not listed");
    let cached = typed
        .lister()
        .namespace("default")
        .list(&LabelSelector::everything());
    assert_eq!(cached.len(), 8);
    stop.cancel();
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_while_the_cluster_never_goes_quiet_still_resumes() {
    let server = seeded(40).await;
    let dir = tempfile::tempdir().unwrap();
    first_process(&server, dir.path()).await;
    server.requests().clear();
    // A config map changes every 10 ms: the resumed watch is never quiet
    // for the 100 ms that ends a replay, so only the settle limit (2 s)
    // ends it.
    let storage = std::sync::Arc::clone(server.storage());
    let writing = tokio_util::sync::CancellationToken::new();
    let writer = tokio::spawn({
        let writing = writing.clone();
        async move {
            let key = clientgo_testing::ObjectKey::new(
                clientgo_apimachinery::GroupResource::new("", "configmaps"),
                "default",
                "cm-00000",
            );
            let mut writes = 0_u64;
            while !writing.is_cancelled() {
                writes += 1;
                storage
                    .modify(&key, |object| {
                        object["data"]["v"] = serde_json::json!(writes.to_string())
                    })
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            writes
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;

    let started = std::time::Instant::now();
    let (running, _recorder) = second_process(&server, snapshots(dir.path())).await;
    let took = started.elapsed();
    writing.cancel();
    assert!(writer.await.unwrap() > 20, "the writer kept writing");
    let informer = &running.informer;
    let stats = informer.stats();
    assert_eq!(stats.mode, ReflectorMode::Resumed, "{stats:?}");
    assert_eq!(informer.snapshot_stats().loaded, 1);
    assert_eq!(listings(&server), 0, "resumed, not listed");
    assert!(took < Duration::from_secs(10), "synced after {took:?}");
    assert_eq!(names(informer).len(), 40);
    running.stop().await;
}
