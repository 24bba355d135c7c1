//! The chaos soak: informers of three resource types, in four factories
//! (watch-list, list+watch with managedFields stripped, watch-list
//! keeping objects compact, `Compact<K>`, all three in JSON, and one with
//! every default: protobuf, watch-list, managedFields stripped, so every
//! fault also meets the protobuf decoders), each with a
//! fast handler, a slow handler and a workqueue controller, run against a
//! server that three writers keep busy while a seeded schedule injects
//! every fault the test server knows. When the writers stop and the
//! informers settle, every cache, every handler's view and every
//! controller's last reconcile must equal the server's state. A fifth
//! factory of compact informers with snapshots is restarted like a process
//! every 8 seconds of the storm, each generation resuming from the last
//! one's snapshots (warm restart); its caches and fresh handlers must
//! converge too, and its snapshots must never be refused.
//!
//! It runs for 60 seconds; `CLIENTGO_SOAK_SECONDS` sets another duration
//! and `CLIENTGO_SOAK_SEED` another fault schedule (the seed is printed, so
//! a failing schedule can be replayed).
//!
//! (Its own test binary: it installs a panic hook and bounds the process RSS.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clientgo_apimachinery::{Compact, GroupResource, KnownScope, LabelSelector, Object, Status};
use clientgo_informers::ReflectorOptions;
use clientgo_informers::{
    InformerFactoryOptions, ObjectOrTombstone, ResourceEventHandler, SharedIndexInformer,
    SharedInformerFactory, SnapshotOptions, Storage, meta_namespace_key,
};
use clientgo_reflector::BackoffOptions;
use clientgo_rest::{Config, RestClient};
use clientgo_testing::{
    ChurnOptions, ChurnWriter, Corruption, Failure, ObjectGenerator, ReadAt, SeededRandom,
    TestApiServer, Verb, process_memory, realistic_deployment, realistic_pod,
};
use clientgo_workqueue::{QueueOptions, RateLimitingQueue, default_controller_rate_limiter};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Panics seen on any thread of this test process.
static PANICS: AtomicU64 = AtomicU64::new(0);

/// How long the informers get to converge once the writers stop
/// (`CLIENTGO_SOAK_SETTLE_SECONDS` sets another).
fn settle_time() -> Duration {
    Duration::from_secs(
        std::env::var("CLIENTGO_SOAK_SETTLE_SECONDS")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(90),
    )
}

/// Objects seeded per resource before the informers start.
const SEEDED: [(&str, usize); 3] = [("pods", 150), ("configmaps", 150), ("deployments", 60)];

fn config_map(index: usize, namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": format!("settings-{index:05}"),
            "namespace": namespace,
            "labels": {"app": format!("app-{}", index % 7)},
        },
        "data": {"index": index.to_string(), "payload": "x".repeat(200 + index % 300)},
    })
}

fn generator(resource: &str) -> ObjectGenerator {
    match resource {
        "pods" => realistic_pod,
        "deployments" => realistic_deployment,
        _ => config_map,
    }
}

fn group_resource(resource: &str) -> GroupResource {
    match resource {
        "deployments" => GroupResource::new("apps", "deployments"),
        other => GroupResource::new("", other),
    }
}

/// What one handler was told, reduced to the state it implies.
#[derive(Debug, Default)]
struct View {
    /// Key to resourceVersion of every object the handler believes exists.
    objects: BTreeMap<String, String>,
    /// Keys the handler was told were deleted.
    deleted: BTreeSet<String>,
    adds: u64,
    updates: u64,
    deletes: u64,
    tombstones: u64,
}

/// A handler keeping a [`View`]; the slow one sleeps on every call.
struct ViewHandler {
    view: Arc<Mutex<View>>,
    delay: Duration,
    delivered: Arc<AtomicU64>,
}

impl ViewHandler {
    fn pause(&self) {
        self.delivered.fetch_add(1, Ordering::Relaxed);
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
    }
}

impl<K: Object> ResourceEventHandler<K> for ViewHandler {
    fn on_add(&mut self, object: &Arc<K>, _initial: bool) {
        self.pause();
        let mut view = self.view.lock().unwrap();
        view.adds += 1;
        let key = meta_namespace_key(object.as_ref());
        view.deleted.remove(&key);
        let version = object.resource_version().unwrap_or_default().to_string();
        view.objects.insert(key, version);
    }

    fn on_update(&mut self, _old: &Arc<K>, new: &Arc<K>) {
        self.pause();
        let mut view = self.view.lock().unwrap();
        view.updates += 1;
        let version = new.resource_version().unwrap_or_default().to_string();
        view.objects
            .insert(meta_namespace_key(new.as_ref()), version);
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        self.pause();
        let mut view = self.view.lock().unwrap();
        view.deletes += 1;
        let key = match object {
            ObjectOrTombstone::Object(object) => meta_namespace_key(object.as_ref()),
            ObjectOrTombstone::Tombstone(tombstone) => {
                view.tombstones += 1;
                tombstone.key.clone()
            }
        };
        view.objects.remove(&key);
        view.deleted.insert(key);
    }
}

/// Puts `<informer>|<key>` on the controller's queue for every change.
struct Enqueuer {
    informer: String,
    queue: RateLimitingQueue<String>,
}

impl Enqueuer {
    fn add<K: Object>(&self, object: &K) {
        self.queue
            .add(format!("{}|{}", self.informer, meta_namespace_key(object)));
    }
}

impl<K: Object> ResourceEventHandler<K> for Enqueuer {
    fn on_add(&mut self, object: &Arc<K>, _initial: bool) {
        self.add(object.as_ref());
    }

    fn on_update(&mut self, _old: &Arc<K>, new: &Arc<K>) {
        self.add(new.as_ref());
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<K>) {
        match object {
            ObjectOrTombstone::Object(object) => self.add(object.as_ref()),
            ObjectOrTombstone::Tombstone(tombstone) => self
                .queue
                .add(format!("{}|{}", self.informer, tombstone.key)),
        }
    }
}

/// Objects by key: their resourceVersion and their JSON.
type ObjectStates = BTreeMap<String, (String, Value)>;

/// Reads one informer's cache for the controller: the resourceVersion
/// cached under a key, if any.
type CacheLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// One informer under test, with what its handlers saw.
struct Subject {
    /// `<factory>/<resource>`.
    name: String,
    views: [(&'static str, Arc<Mutex<View>>); 2],
    stats: Box<dyn Fn() -> clientgo_informers::InformerStats + Send + Sync>,
    snapshots: Box<dyn Fn() -> clientgo_informers::SnapshotStats + Send + Sync>,
    last_sync: Box<dyn Fn() -> String + Send + Sync>,
    /// The cache's objects as JSON values comparable with the server's.
    cached: Box<dyn Fn() -> ObjectStates + Send + Sync>,
    /// The server's objects decoded as the cache's type would hold them.
    expected: Box<dyn Fn(&TestApiServer) -> ObjectStates + Send + Sync>,
    /// Whether the controller reconciles this informer's keys.
    controlled: bool,
}

fn subject<K>(
    factory_name: &str,
    factory: &SharedInformerFactory,
    resource: &str,
    strip: bool,
    queue: Option<&RateLimitingQueue<String>>,
    lookups: &mut BTreeMap<String, CacheLookup>,
    delivered: &Arc<AtomicU64>,
) -> Subject
where
    K: SoakObject,
    K::Scope: KnownScope,
{
    let informer: SharedIndexInformer<K> = factory.informer_for::<K>();
    let name = format!("{factory_name}/{resource}");
    let fast = Arc::new(Mutex::new(View::default()));
    let slow = Arc::new(Mutex::new(View::default()));
    informer
        .add_event_handler(ViewHandler {
            view: Arc::clone(&fast),
            delay: Duration::ZERO,
            delivered: Arc::clone(delivered),
        })
        .unwrap();
    informer
        .add_event_handler(ViewHandler {
            view: Arc::clone(&slow),
            delay: Duration::from_millis(2),
            delivered: Arc::clone(delivered),
        })
        .unwrap();
    if let Some(queue) = queue {
        informer
            .add_event_handler(Enqueuer {
                informer: name.clone(),
                queue: queue.clone(),
            })
            .unwrap();
    }
    let cache = informer.lister();
    lookups.insert(
        name.clone(),
        Arc::new(move |key: &str| {
            cache
                .get_by_key(key)
                .map(|object| object.resource_version().unwrap_or_default().to_string())
        }),
    );
    let lister = informer.lister();
    let stats_informer = informer.clone();
    let snapshot_informer = informer.clone();
    let resource_name = resource.to_string();
    Subject {
        name,
        views: [("fast", fast), ("slow", slow)],
        stats: Box::new(move || stats_informer.stats()),
        snapshots: Box::new(move || snapshot_informer.snapshot_stats()),
        last_sync: Box::new(move || informer.last_sync_resource_version()),
        cached: Box::new(move || {
            lister
                .list(&LabelSelector::everything())
                .iter()
                .map(|object| {
                    (
                        meta_namespace_key(object.as_ref()),
                        (
                            object.resource_version().unwrap_or_default().to_string(),
                            serde_json::to_value(object.as_ref()).unwrap(),
                        ),
                    )
                })
                .collect()
        }),
        expected: Box::new(move |server: &TestApiServer| {
            let (objects, _) = server
                .storage()
                .list(&group_resource(&resource_name), None, ReadAt::Latest)
                .unwrap();
            objects
                .iter()
                .map(|stored| {
                    let mut object: K = serde_json::from_slice(&stored.json).unwrap();
                    if strip {
                        object.meta_mut().managed_fields = None;
                    }
                    (
                        format!("{}/{}", stored.key.namespace, stored.key.name),
                        (
                            stored.resource_version.to_string(),
                            serde_json::to_value(&object).unwrap(),
                        ),
                    )
                })
                .collect()
        }),
        controlled: queue.is_some(),
    }
}

/// What an informer of the soak caches: a typed object, whole or compact.
trait SoakObject:
    k8s_openapi::Resource + Object + DeserializeOwned + serde::Serialize + Clone + Send + Sync + 'static
{
}

impl<K> SoakObject for K where
    K: k8s_openapi::Resource
        + Object
        + DeserializeOwned
        + serde::Serialize
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// Where the subjects of one factory go.
struct SubjectSink<'a> {
    factory_name: &'a str,
    factory: &'a SharedInformerFactory,
    strip: bool,
    /// The controller's queue; `None` for informers it does not watch.
    queue: Option<&'a RateLimitingQueue<String>>,
    lookups: &'a mut BTreeMap<String, CacheLookup>,
    delivered: &'a Arc<AtomicU64>,
    subjects: &'a mut Vec<Subject>,
}

impl SubjectSink<'_> {
    fn add<K>(&mut self, resource: &str)
    where
        K: SoakObject,
        K::Scope: KnownScope,
    {
        let subject = subject::<K>(
            self.factory_name,
            self.factory,
            resource,
            self.strip,
            self.queue,
            self.lookups,
            self.delivered,
        );
        self.subjects.push(subject);
    }
}

/// How far an informer is from the server: keys missing from the cache,
/// keys the server no longer has, older resourceVersions, other contents.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Difference {
    missing: usize,
    extra: usize,
    stale: usize,
    different: usize,
}

impl Difference {
    fn total(&self) -> usize {
        self.missing + self.extra + self.stale + self.different
    }
}

fn difference(
    expected: &ObjectStates,
    actual: &BTreeMap<String, (String, Option<Value>)>,
) -> Difference {
    let mut difference = Difference::default();
    for (key, (version, value)) in expected {
        match actual.get(key) {
            None => difference.missing += 1,
            Some((cached_version, _)) if cached_version != version => difference.stale += 1,
            Some((_, Some(cached))) if cached != value => difference.different += 1,
            Some(_) => {}
        }
    }
    difference.extra = actual.keys().filter(|k| !expected.contains_key(*k)).count();
    difference
}

/// Every check of one informer, as (what, difference) pairs.
fn checks(
    subject: &Subject,
    server: &TestApiServer,
    reconciled: &BTreeMap<String, Option<String>>,
) -> Vec<(String, Difference)> {
    let expected = (subject.expected)(server);
    let cached: BTreeMap<String, (String, Option<Value>)> = (subject.cached)()
        .into_iter()
        .map(|(key, (version, value))| (key, (version, Some(value))))
        .collect();
    let mut results = vec![("cache".to_string(), difference(&expected, &cached))];
    for (handler, view) in &subject.views {
        let view = view.lock().unwrap();
        let seen: BTreeMap<String, (String, Option<Value>)> = view
            .objects
            .iter()
            .map(|(key, version)| (key.clone(), (version.clone(), None)))
            .collect();
        results.push((format!("{handler} handler"), difference(&expected, &seen)));
    }
    // The controller's last reconcile of every key must have read the
    // server's final state: the object at its last resourceVersion, or
    // nothing for a key its handlers saw deleted.
    let prefix = format!("{}|", subject.name);
    let controller: BTreeMap<String, (String, Option<Value>)> = reconciled
        .iter()
        .filter_map(|(key, version)| {
            let key = key.strip_prefix(&prefix)?;
            version
                .clone()
                .map(|version| (key.to_string(), (version, None)))
        })
        .collect();
    if subject.controlled {
        results.push(("controller".to_string(), difference(&expected, &controller)));
    }
    results
}

/// How often the soak restarts its warm-restart factory.
const WARM_RESTART_EVERY: Duration = Duration::from_secs(8);

/// How often the storm prints the process's RSS and the informers' own
/// counters: the memory curve.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);

/// The soak's restarted factory: compact informers of every resource with
/// snapshots, replaced by a new generation (a new factory over the same
/// snapshot directory) at each restart. Its handlers start afresh with
/// each generation, as a new process's would; the controller does not
/// watch it.
struct WarmRestarts {
    client: RestClient,
    options: InformerFactoryOptions,
    stop: CancellationToken,
    delivered: Arc<AtomicU64>,
    current: Option<(SharedInformerFactory, CancellationToken)>,
    restarts: u64,
    /// Counts of generations already stopped: (resumed, fell back,
    /// refused).
    earlier: (u64, u64, u64),
}

const WARM: &str = "warm-restart";

impl WarmRestarts {
    /// Generations over `client`, saving in `dir`, stopped by `stop` at the
    /// latest.
    fn new(
        client: &RestClient,
        backoff: BackoffOptions,
        dir: &std::path::Path,
        stop: &CancellationToken,
        delivered: &Arc<AtomicU64>,
    ) -> Self {
        WarmRestarts {
            client: client.clone(),
            options: InformerFactoryOptions::default()
                .keep_managed_fields(true)
                .reflector(ReflectorOptions::default().backoff(backoff))
                .snapshot(
                    SnapshotOptions::new(dir)
                        .interval(Duration::from_secs(2))
                        .entry_type::<Compact<Pod>>()
                        .entry_type::<Compact<ConfigMap>>()
                        .entry_type::<Compact<Deployment>>(),
                ),
            stop: stop.clone(),
            delivered: Arc::clone(delivered),
            current: None,
            restarts: 0,
            earlier: (0, 0, 0),
        }
    }

    /// Stops the running generation (which saves its snapshots) and starts
    /// the next one.
    async fn restart(&mut self, subjects: &mut Vec<Subject>) {
        if let Some((factory, generation)) = self.current.take() {
            let counts = (
                self.resumed(subjects),
                self.fell_back(subjects),
                self.refused(subjects),
            );
            self.earlier = counts;
            generation.cancel();
            factory.shutdown().await;
            subjects.retain(|subject| !subject.name.starts_with(WARM));
            self.restarts += 1;
        }
        let factory =
            SharedInformerFactory::with_options(self.client.clone(), self.options.clone());
        let mut lookups = BTreeMap::new();
        let mut sink = SubjectSink {
            factory_name: WARM,
            factory: &factory,
            strip: false,
            queue: None,
            lookups: &mut lookups,
            delivered: &self.delivered,
            subjects,
        };
        sink.add::<Compact<Pod>>("pods");
        sink.add::<Compact<ConfigMap>>("configmaps");
        sink.add::<Compact<Deployment>>("deployments");
        let generation = self.stop.child_token();
        factory.start(&generation);
        self.current = Some((factory, generation));
    }

    fn current_stats(
        subjects: &[Subject],
    ) -> impl Iterator<Item = clientgo_informers::InformerStats> + '_ {
        subjects
            .iter()
            .filter(|subject| subject.name.starts_with(WARM))
            .map(|subject| (subject.stats)())
    }

    fn resumed(&self, subjects: &[Subject]) -> u64 {
        self.earlier.0
            + Self::current_stats(subjects)
                .map(|stats| stats.reflector.resumes)
                .sum::<u64>()
    }

    fn fell_back(&self, subjects: &[Subject]) -> u64 {
        self.earlier.1
            + Self::current_stats(subjects)
                .map(|stats| stats.reflector.resume_fallbacks)
                .sum::<u64>()
    }

    fn refused(&self, subjects: &[Subject]) -> u64 {
        self.earlier.2
            + subjects
                .iter()
                .filter(|subject| subject.name.starts_with(WARM))
                .map(|subject| (subject.snapshots)().rejected)
                .sum::<u64>()
    }

    async fn stop(&mut self) {
        if let Some((factory, generation)) = self.current.take() {
            generation.cancel();
            factory.shutdown().await;
        }
    }
}

fn soak_seconds() -> u64 {
    std::env::var("CLIENTGO_SOAK_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(60)
}

fn soak_seed() -> u64 {
    std::env::var("CLIENTGO_SOAK_SEED")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(0x5eed_c0ff_ee00_0012)
}

/// The fault kinds to inject: all 14, or the comma-separated numbers in
/// `CLIENTGO_SOAK_FAULTS` (to replay a failure with fewer kinds).
fn fault_kinds() -> Vec<u64> {
    std::env::var("CLIENTGO_SOAK_FAULTS")
        .ok()
        .map(|value| {
            value
                .split(',')
                .filter_map(|kind| kind.trim().parse().ok())
                .collect()
        })
        .filter(|kinds: &Vec<u64>| !kinds.is_empty())
        .unwrap_or_else(|| (0..14).collect())
}

/// Injects one fault of a kind picked by `random` from `kinds`; returns
/// its name.
async fn inject(server: &TestApiServer, random: &mut SeededRandom, kinds: &[u64]) -> &'static str {
    let faults = server.faults();
    faults.set_latency(Duration::ZERO);
    match kinds[random.below(kinds.len() as u64) as usize] {
        0 => {
            faults.drop_watches();
            "watch dropped"
        }
        1 => {
            // Watches that start now wait; writes go on; the history is
            // compacted past every client's resourceVersion; the re-watch
            // then meets a 410 in its stream.
            faults.hold_watches();
            faults.drop_watches();
            tokio::time::sleep(Duration::from_millis(150)).await;
            server.compact_history();
            faults.release_watches();
            "410 in a watch stream (compaction while away)"
        }
        2 => {
            faults.fail_next(Some(Verb::Watch), Status::gone("too old resource version"));
            faults.drop_watches();
            "410 answering a watch"
        }
        3 => {
            faults.fail_next(Some(Verb::List), Status::gone("too old resource version"));
            faults.drop_watches();
            "410 answering a list"
        }
        4 => {
            faults.fail_next(None, Status::too_many_requests("slow down", 1));
            faults.drop_watches();
            "429 with Retry-After"
        }
        5 => {
            faults.fail_next_with(
                None,
                Failure::Raw {
                    code: 503,
                    content_type: "text/html".to_string(),
                    body: "<html><body>503 Service Unavailable</body></html>".to_string(),
                    retry_after: Some("1".to_string()),
                },
            );
            faults.drop_watches();
            "503 HTML page with Retry-After"
        }
        6 => {
            faults.fail_next(None, Status::internal_error("etcd is on fire"));
            faults.drop_watches();
            "500 Status"
        }
        7 => {
            faults.corrupt_next_watch(Corruption::Malformed);
            faults.drop_watches();
            "malformed watch frame"
        }
        8 => {
            faults.corrupt_next_watch(Corruption::Truncated);
            faults.drop_watches();
            "truncated watch frame"
        }
        9 => {
            faults.corrupt_next_watch(Corruption::Oversized(17 << 20));
            faults.drop_watches();
            "oversized watch frame (17 MiB)"
        }
        10 => {
            faults.stall_next_watch(Duration::from_secs(2));
            faults.drop_watches();
            "stalled watch (2 s)"
        }
        11 => {
            server.compact_history();
            "compaction"
        }
        12 => {
            faults.restart();
            "server restart"
        }
        13 => {
            faults.set_latency(Duration::from_millis(100));
            "100 ms latency"
        }
        _ => "none (a calm second)",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_handlers_and_controllers_converge_through_a_storm_of_faults() {
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous_hook(info);
    }));
    let seconds = soak_seconds();
    let seed = soak_seed();
    println!("chaos soak: {seconds} s, seed {seed} (CLIENTGO_SOAK_SECONDS, CLIENTGO_SOAK_SEED)");

    let server = TestApiServer::builder().start().await.unwrap();
    let mut first_index = BTreeMap::new();
    for (resource, count) in SEEDED {
        let make = generator(resource);
        for index in 0..count {
            let namespace = format!("namespace-{}", index % 5);
            server
                .storage()
                .create(
                    &group_resource(resource),
                    &namespace,
                    make(index, &namespace),
                )
                .unwrap();
        }
        first_index.insert(resource, count);
    }
    let rss_before_informers = process_memory::rss_mib();

    let client = RestClient::new(Config::new(server.url())).unwrap();
    let json_client =
        RestClient::new(Config::new(server.url()).content_type(clientgo_rest::ContentType::Json))
            .unwrap();
    // Backoffs shorter than client-go's (800 ms doubling to 30 s), so a
    // fault every second does not keep an informer in backoff for the
    // whole run; the recovery paths are the same.
    let backoff = BackoffOptions::default()
        .initial(Duration::from_millis(50))
        .cap(Duration::from_secs(2));
    // The first three factories ask for JSON (the JSON decoders); the
    // second keeps decoded objects (`Storage::Decoded`), the others the
    // default compact entries; the last takes every default (protobuf,
    // watch-list, managedFields stripped, compact storage).
    let factories = [
        (
            "watch-list",
            false,
            SharedInformerFactory::with_options(
                json_client.clone(),
                InformerFactoryOptions::default()
                    .keep_managed_fields(true)
                    .reflector(ReflectorOptions::default().backoff(backoff)),
            ),
        ),
        (
            "decoded-list-watch-strip",
            true,
            SharedInformerFactory::with_options(
                json_client.clone(),
                InformerFactoryOptions::default()
                    .storage(Storage::Decoded)
                    .reflector(
                        ReflectorOptions::default()
                            .use_watch_list(false)
                            .backoff(backoff),
                    )
                    .keep_managed_fields(false),
            ),
        ),
        (
            "compact",
            false,
            SharedInformerFactory::with_options(
                json_client.clone(),
                InformerFactoryOptions::default()
                    .keep_managed_fields(true)
                    .reflector(ReflectorOptions::default().backoff(backoff)),
            ),
        ),
        // Every fault also meets the protobuf decoders, framed as
        // kube-apiserver frames a protobuf watch.
        (
            "defaults-protobuf-watch-list",
            true,
            SharedInformerFactory::with_options(
                client.clone(),
                InformerFactoryOptions::default()
                    .reflector(ReflectorOptions::default().backoff(backoff)),
            ),
        ),
    ];

    let queue: RateLimitingQueue<String> = RateLimitingQueue::new(
        Arc::new(default_controller_rate_limiter()),
        QueueOptions::default().name("soak"),
    );
    let delivered = Arc::new(AtomicU64::new(0));
    let mut lookups = BTreeMap::new();
    let mut subjects = Vec::new();
    for (name, strip, factory) in &factories {
        let mut soak = SubjectSink {
            factory_name: name,
            factory,
            strip: *strip,
            queue: Some(&queue),
            lookups: &mut lookups,
            delivered: &delivered,
            subjects: &mut subjects,
        };
        if *name == "compact" {
            // The same informers keeping objects compact: JSON and
            // metadata, decoded when the checks serialize them.
            soak.add::<Compact<Pod>>("pods");
            soak.add::<Compact<ConfigMap>>("configmaps");
            soak.add::<Compact<Deployment>>("deployments");
        } else {
            soak.add::<Pod>("pods");
            soak.add::<ConfigMap>("configmaps");
            soak.add::<Deployment>("deployments");
        }
    }

    // The controller: two workers reconcile keys from the caches, never
    // from the server, recording what they read.
    let reconciled: Arc<Mutex<BTreeMap<String, Option<String>>>> = Arc::default();
    let reconciles = Arc::new(AtomicU64::new(0));
    let lookups = Arc::new(lookups);
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let queue = queue.clone();
            let lookups = Arc::clone(&lookups);
            let reconciled = Arc::clone(&reconciled);
            let reconciles = Arc::clone(&reconciles);
            tokio::spawn(async move {
                while let Some(item) = queue.get().await {
                    if let Some((informer, key)) = item.split_once('|') {
                        let version = lookups.get(informer).and_then(|lookup| lookup(key));
                        reconciled.lock().unwrap().insert(item.clone(), version);
                        reconciles.fetch_add(1, Ordering::Relaxed);
                    }
                    queue.forget(&item);
                    queue.done(&item);
                }
            })
        })
        .collect();

    let stop = CancellationToken::new();
    for (_, _, factory) in &factories {
        factory.start(&stop);
        let synced = factory.wait_for_cache_sync(Duration::from_secs(30)).await;
        assert!(synced.is_ok(), "initial sync: {synced:?}");
    }
    // Compact informers restarted like a process every few seconds of the
    // storm, each generation resuming from the last one's snapshot.
    let snapshot_dir = tempfile::tempdir().unwrap();
    let mut warm = WarmRestarts::new(&client, backoff, snapshot_dir.path(), &stop, &delivered);
    warm.restart(&mut subjects).await;
    let rss_synced = process_memory::rss_mib();

    let writers: Vec<(&str, ChurnWriter)> = SEEDED
        .iter()
        .enumerate()
        .map(|(position, (resource, _))| {
            let options = ChurnOptions {
                seed: seed.wrapping_add(position as u64 + 1),
                ..ChurnOptions::default()
                    .rate(30.0)
                    .namespaces(5)
                    .first_index(first_index[resource])
            };
            (
                *resource,
                ChurnWriter::start(
                    Arc::clone(server.storage()),
                    group_resource(resource),
                    generator(resource),
                    options,
                ),
            )
        })
        .collect();

    // The storm.
    let started = Instant::now();
    let mut random = SeededRandom::new(seed);
    let kinds = fault_kinds();
    let mut faults: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut rss_peak = rss_synced;
    let mut last_restart = Instant::now();
    // The memory curve: RSS and the caches' own counters every
    // `SAMPLE_EVERY`, so a growth with time shows as a slope
    // (RELIABILITY.md has the curve).
    let mut last_sample = Instant::now();
    while started.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_millis(300 + random.below(900))).await;
        *faults
            .entry(inject(&server, &mut random, &kinds).await)
            .or_default() += 1;
        rss_peak = rss_peak.max(process_memory::rss_mib());
        if last_sample.elapsed() >= SAMPLE_EVERY {
            last_sample = Instant::now();
            // Counters only: reading the caches through their listers
            // would fill the decode caches this curve watches.
            // The test server logs every request (a test's evidence of
            // what a client asked). The soak reads none of it: cleared
            // here, or it grows with every re-watch and relist (0.02 to
            // 0.04 MiB/s of this curve, RELIABILITY.md).
            server.requests().clear();
            let stats: Vec<_> = subjects.iter().map(|s| (s.stats)()).collect();
            let cached: usize = stats.iter().map(|s| s.cached).sum();
            let decoded_mib = stats.iter().map(|s| s.decodes.held_bytes).sum::<usize>() as f64
                / (1024.0 * 1024.0);
            let syncs: u64 = stats
                .iter()
                .map(|s| s.reflector.lists + s.reflector.watch_lists)
                .sum();
            let rewatches: u64 = stats.iter().map(|s| s.reflector.rewatches).sum();
            println!(
                "  t={:>4} s: RSS {:.0} MiB, {cached} objects cached, {decoded_mib:.1} MiB of \
                 decodes kept, {syncs} syncs and {rewatches} re-watches by the current \
                 informers, {} faults so far",
                started.elapsed().as_secs(),
                process_memory::rss_mib(),
                faults.values().sum::<u64>()
            );
        }
        if last_restart.elapsed() >= WARM_RESTART_EVERY {
            warm.restart(&mut subjects).await;
            last_restart = Instant::now();
        }
    }
    server.faults().set_latency(Duration::ZERO);
    server.faults().release_watches();
    let mut writes = BTreeMap::new();
    for (resource, writer) in writers {
        writes.insert(resource, writer.stop().await);
    }
    let storm = started.elapsed();

    // Settle: poll every check until all pass or time runs out.
    let settle_started = Instant::now();
    let final_checks = loop {
        let reconciled_now = reconciled.lock().unwrap().clone();
        let results: Vec<(String, Vec<(String, Difference)>)> = subjects
            .iter()
            .map(|subject| {
                (
                    subject.name.clone(),
                    checks(subject, &server, &reconciled_now),
                )
            })
            .collect();
        let converged = results
            .iter()
            .all(|(_, checks)| checks.iter().all(|(_, d)| d.total() == 0))
            && queue.is_empty();
        if converged || settle_started.elapsed() > settle_time() {
            break results;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let settled_in = settle_started.elapsed();
    let rss_end = process_memory::rss_mib();
    // The memory bound: what the process held before the informers, 48
    // KiB per cached object (a realistic pod costs about 40 KiB decoded),
    // the server's event history, and 96 MiB for the runtime, the
    // decoders' buffers and what the allocator keeps once freed. The
    // server keeps the last `history_limit` events, each with its
    // object's JSON and, once a protobuf watcher was sent it, its
    // protobuf (counted as as much again); the average event is estimated
    // from each resource's objects and writes. A leak per event or per
    // relist crosses it within the run (with every relist leaking its list
    // a 180 s run ended 77 MiB over it: RELIABILITY.md).
    let cached_objects: usize = subjects.iter().map(|s| (s.cached)().len()).sum();
    let (written, written_bytes) =
        writes
            .iter()
            .fold((0u64, 0.0f64), |(n, b), (resource, counts)| {
                let (objects, _) = server
                    .storage()
                    .list(&group_resource(resource), None, ReadAt::Latest)
                    .unwrap();
                let bytes: usize = objects.iter().map(|o| o.json.len()).sum();
                let average = bytes as f64 / objects.len().max(1) as f64;
                (n + counts.total(), b + average * counts.total() as f64)
            });
    let kept_share = (server.storage().history_limit() as f64 / written.max(1) as f64).min(1.0);
    let history_mib = 2.0 * written_bytes * kept_share / (1024.0 * 1024.0);
    let memory_bound =
        rss_before_informers + cached_objects as f64 * 48.0 / 1024.0 + history_mib + 96.0;

    // Every key a handler saw and the server no longer has must have been
    // seen deleted by that handler (a delete or a tombstone).
    let mut deletes_unseen = Vec::new();
    for subject in &subjects {
        let expected = (subject.expected)(&server);
        for (handler, view) in &subject.views {
            let view = view.lock().unwrap();
            for key in &view.deleted {
                assert!(
                    !view.objects.contains_key(key),
                    "{}: {handler} handler holds deleted {key}",
                    subject.name
                );
            }
            let unseen = view
                .objects
                .keys()
                .filter(|key| !expected.contains_key(*key))
                .count();
            if unseen > 0 {
                deletes_unseen.push(format!("{} {handler}: {unseen}", subject.name));
            }
        }
    }

    // The figures.
    let objects: usize = subjects
        .iter()
        .filter(|s| s.name.starts_with("watch-list/"))
        .map(|s| (s.expected)(&server).len())
        .sum();
    println!("\nchaos soak figures");
    println!(
        "  storm: {:.1} s; settled in {:.1} s",
        storm.as_secs_f64(),
        settled_in.as_secs_f64()
    );
    println!("  faults injected: {}", faults.values().sum::<u64>());
    for (kind, count) in &faults {
        println!("    {count:>4}  {kind}");
    }
    for (resource, counts) in &writes {
        println!(
            "  server writes, {resource}: {} creates, {} updates, {} deletes",
            counts.creates, counts.updates, counts.deletes
        );
    }
    println!(
        "  {:<30} {:>6} {:>6} {:>8} {:>7} {:>7} {:>7} {:>7} {:>6}",
        "informer", "lists", "wlists", "rewatch", "errors", "adds", "updates", "deletes", "tombs"
    );
    let mut total_relists = 0;
    let mut total_rewatches = 0;
    for subject in &subjects {
        let stats = (subject.stats)();
        let view = subject.views[0].1.lock().unwrap();
        total_relists += stats.reflector.lists + stats.reflector.watch_lists;
        total_rewatches += stats.reflector.rewatches;
        println!(
            "  {:<30} {:>6} {:>6} {:>8} {:>7} {:>7} {:>7} {:>7} {:>6}",
            subject.name,
            stats.reflector.lists,
            stats.reflector.watch_lists,
            stats.reflector.rewatches,
            stats.reflector.errors,
            view.adds,
            view.updates,
            view.deletes,
            view.tombstones
        );
    }
    let lost: usize = final_checks
        .iter()
        .flat_map(|(_, checks)| checks.iter())
        .filter(|(what, _)| what == "cache")
        .map(|(_, d)| d.total())
        .sum();
    println!(
        "  relists {total_relists}, re-watches {total_rewatches}, handler notifications {}, reconciles {}",
        delivered.load(Ordering::Relaxed),
        reconciles.load(Ordering::Relaxed)
    );
    println!(
        "  invariant checks: {} informers x (cache, fast handler, slow handler, controller)",
        subjects.len()
    );
    println!(
        "  RSS: {rss_before_informers:.0} MiB before the informers, {rss_synced:.0} MiB synced, peak {rss_peak:.0} MiB, {rss_end:.0} MiB at the end; {objects} objects per factory"
    );
    println!(
        "  memory bound: {memory_bound:.0} MiB ({cached_objects} cached objects, {history_mib:.0} MiB of server history)"
    );
    println!(
        "  warm restarts: {} ({} resumed from a snapshot, {} fell back to a list on 410, {} snapshots refused)",
        warm.restarts,
        warm.resumed(&subjects),
        warm.fell_back(&subjects),
        warm.refused(&subjects)
    );
    println!("  objects lost: {lost}");
    println!("  panics: {}", PANICS.load(Ordering::SeqCst));

    let mut failures: Vec<String> = final_checks
        .iter()
        .flat_map(|(name, checks)| {
            checks
                .iter()
                .filter(|(_, d)| d.total() > 0)
                .map(move |(what, d)| format!("{name} {what}: {d:?}"))
        })
        .collect();
    // Name a few keys of every cache that differs, to start the hunt.
    for subject in &subjects {
        let expected = (subject.expected)(&server);
        let cached = (subject.cached)();
        let mut examples = Vec::new();
        for key in expected.keys().chain(cached.keys()) {
            let server_version = expected.get(key).map(|(v, _)| v.as_str());
            let cached_version = cached.get(key).map(|(v, _)| v.as_str());
            if server_version != cached_version && examples.len() < 5 {
                examples.push(format!(
                    "{key}: server {server_version:?}, cache {cached_version:?}"
                ));
            }
        }
        if !examples.is_empty() {
            failures.push(format!(
                "{} (synced to {}, server at {}): {}",
                subject.name,
                (subject.last_sync)(),
                server.storage().current_revision(),
                examples.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty() && queue.is_empty(),
        "not converged after {:?} (queue {}):\n{}",
        settle_time(),
        queue.len(),
        failures.join("\n")
    );
    assert!(deletes_unseen.is_empty(), "{deletes_unseen:?}");
    assert_eq!(
        warm.refused(&subjects),
        0,
        "our own snapshots must read back"
    );
    if warm.restarts > 1 {
        assert!(
            warm.resumed(&subjects) + warm.fell_back(&subjects) > 0,
            "restarted informers never used their snapshots"
        );
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a thread panicked");
    assert!(
        rss_end < memory_bound,
        "RSS {rss_end:.0} MiB at the end is over the bound of {memory_bound:.0} MiB"
    );

    stop.cancel();
    for (_, _, factory) in &factories {
        factory.shutdown().await;
    }
    warm.stop().await;
    queue.shut_down();
    for worker in workers {
        worker.await.unwrap();
    }
}
