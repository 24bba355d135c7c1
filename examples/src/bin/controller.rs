//! `controller`: client-go's workqueue controller, in Rust.
//!
//! A shared informer factory watches pods through the generated typed
//! accessor (`factory.core().v1().pods()`); its handlers put each changed
//! pod's `namespace/name` key on a rate-limited work queue; N workers take
//! keys, reconcile them from the lister (never from the API server), forget
//! a key on success and retry it with the rate limiter's backoff on
//! failure, up to a maximum number of retries. Ctrl-C (or `--duration`)
//! stops the intake, lets the workers finish what they hold, and prints a
//! summary. Without a cluster it runs against an embedded API server kept
//! busy by a background writer, and checks at the end that its cache
//! equals the server's state.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo::apimachinery::random::Random;
use clientgo::apimachinery::{GroupResource, LabelSelector};
use clientgo::informers::{
    InformerFactoryOptions, Lister, MetadataView, ObjectOrTombstone, ResourceEventHandlerFuncs,
    SharedInformerFactory, SnapshotOptions, split_meta_namespace_key,
};
use clientgo::leaderelection::{Callbacks, LeaderElectionConfig, LeaseLock};
use clientgo::record::{BroadcasterOptions, EventBroadcaster, EventRecorder, EventType};
use clientgo::testing::ReadAt;
use clientgo::workqueue::{QueueOptions, RateLimitingQueue, default_controller_rate_limiter};
use clientgo_examples::{
    Campaign, CommonFlags, Connection, EmbeddedOptions, Failure, MetricsServer, Progress,
    SeededResource, print_table, run_main, say, start_and_sync,
};
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use tokio_util::sync::CancellationToken;

/// A client-go style workqueue controller over pods.
///
/// Runs against the cluster of your kubeconfig (or the pod's service
/// account); with neither, against an embedded API server with 1,000
/// realistic pods, a background writer and a watch drop every 7 seconds.
#[derive(Debug, clap::Parser)]
#[command(name = "controller", version)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
    /// Reconcile workers
    #[arg(long, value_name = "N", default_value_t = 2)]
    workers: usize,
    /// Retries of a failing key before it is dropped
    #[arg(long, value_name = "N", default_value_t = 5)]
    max_retries: usize,
    /// Make P% of reconcile attempts fail, to watch the retries
    #[arg(long, value_name = "P", default_value_t = 0)]
    fail_percent: u64,
    /// With the embedded server: pods to seed
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pods: usize,
    /// With the embedded server: writes per second
    #[arg(long, value_name = "RATE", default_value_t = 100.0)]
    churn: f64,
    /// Run only while holding the Lease clientgo-controller in the namespace
    /// (--namespace, else default); identity: the host name and a random
    /// suffix. Losing the lease ends the run
    #[arg(long)]
    leader_elect: bool,
    /// With --leader-elect: list and watch while waiting for the lease, so
    /// a takeover starts with a synced cache instead of a list
    /// (controller-runtime's warm replicas); the workers still start only
    /// once this replica leads
    #[arg(long, requires = "leader_elect")]
    warm_standby: bool,
    /// The lease's duration in seconds (renew deadline and retry period
    /// scale with it as client-go's 15/10/2)
    #[arg(long, value_name = "SECONDS", default_value_t = 15.0, value_parser = clientgo_examples::arguments::positive_seconds)]
    lease_duration: f64,
    /// Serve Prometheus metrics (client-go's REST client and workqueue
    /// families) at http://ADDR/metrics, such as 127.0.0.1:8080 (port 0
    /// picks a free one)
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<std::net::SocketAddr>,
    /// Save the cache there every minute and on exit, and at the next start
    /// resume from it with a watch instead of a list (warm restart; only
    /// against the same cluster)
    #[arg(long, value_name = "DIR")]
    snapshot_dir: Option<String>,
}

/// Registers client-go's REST client and workqueue metric families as the
/// process's defaults, and the informer families for the factory, and
/// serves them all at `address`.
async fn serve_metrics(
    address: std::net::SocketAddr,
) -> Result<
    (
        MetricsServer,
        std::sync::Arc<clientgo::informers::PrometheusInformerMetrics>,
    ),
    Failure,
> {
    let registry = prometheus::Registry::new();
    let informers = clientgo::informers::PrometheusInformerMetrics::register(&registry)
        .map_err(|error| format!("cannot register the informer metrics: {error}"))?;
    let rest = clientgo::rest::metrics::PrometheusRequestMetrics::register(&registry)
        .map_err(|error| format!("cannot register the REST client metrics: {error}"))?;
    clientgo::rest::metrics::set_default_request_metrics(std::sync::Arc::new(rest));
    let queues = clientgo::workqueue::PrometheusMetricsProvider::new(&registry)
        .map_err(|error| format!("cannot register the workqueue metrics: {error}"))?;
    clientgo::workqueue::set_default_metrics_provider(std::sync::Arc::new(queues));
    let server = MetricsServer::start(address, registry).await?;
    say!("metrics at http://{}/metrics", server.address);
    Ok((server, std::sync::Arc::new(informers)))
}

/// Counters shared by the handlers, the workers and the progress line.
#[derive(Debug, Default)]
struct Counters {
    adds: AtomicU64,
    updates: AtomicU64,
    deletes: AtomicU64,
    reconciled: AtomicU64,
    retries: AtomicU64,
    dropped: AtomicU64,
}

impl Counters {
    fn events(&self) -> u64 {
        self.adds.load(Ordering::Relaxed)
            + self.updates.load(Ordering::Relaxed)
            + self.deletes.load(Ordering::Relaxed)
    }
}

/// What the workers were told.
#[derive(Debug, Clone)]
struct Settings {
    max_retries: usize,
    fail_percent: u64,
}

fn main() -> std::process::ExitCode {
    run_main("controller", run)
}

async fn run(arguments: Flags) -> Result<(), Failure> {
    // From the start: a SIGTERM before the loop must not kill the
    // process outright.
    let _ = clientgo_examples::shutdown();
    let flags = arguments.common;
    let workers = arguments.workers;
    let settings = Settings {
        max_retries: arguments.max_retries,
        fail_percent: arguments.fail_percent,
    };
    let seed_pods = arguments.pods;
    let churn = arguments.churn;
    let snapshot_dir = arguments.snapshot_dir;
    let leader_elect = arguments.leader_elect;
    let warm_standby = arguments.warm_standby;
    let lease_seconds = arguments.lease_duration;
    if workers == 0 || settings.fail_percent > 100 {
        return Err(Failure::Usage(
            "--workers must be at least 1 and --fail-percent at most 100".into(),
        ));
    }
    // Metrics first: clients and queues report to the defaults set when
    // they are built.
    let metrics = match arguments.metrics_addr {
        Some(address) => Some(serve_metrics(address).await?),
        None => None,
    };

    let mut connection = Connection::open(
        &flags,
        EmbeddedOptions {
            namespaces: 10,
            ..EmbeddedOptions::default()
        }
        .with(SeededResource::pods(seed_pods, churn))
        .drop_watches_every(Duration::from_secs(7)),
    )
    .await?;

    // With --leader-elect, nothing starts before this replica leads (with
    // --warm-standby, only the workers wait).
    let mut leadership = if leader_elect && !warm_standby {
        Some(Leadership::campaign(&connection, flags.namespace.as_deref(), lease_seconds).await?)
    } else {
        None
    };
    // Reconciles that exhaust their retries are reported as Warning events.
    let events = EventBroadcaster::new(BroadcasterOptions::default());
    events.start_recording_to_sink(connection.client.clone());
    let recorder = events.recorder("clientgo-controller");

    let mut options = InformerFactoryOptions::default();
    if let Some(namespace) = &flags.namespace {
        options = options.namespace(namespace.clone());
    }
    if let Some(dir) = &snapshot_dir {
        options = options.snapshot(SnapshotOptions::new(dir));
    }
    if let Some((_, informer_metrics)) = &metrics {
        options = options.metrics(informer_metrics.clone());
    }
    let factory = SharedInformerFactory::with_options(connection.client.clone(), options);
    // The default storage keeps each pod as the bytes it arrived in plus
    // its parsed metadata. The handlers read keys only, so nothing is
    // decoded for them; the workers read `Pod`s from the lister, decoded
    // on demand through its decode cache.
    let informer = factory.core().v1().pods().informer();
    let lister = informer.lister();

    let queue: RateLimitingQueue<String> = RateLimitingQueue::new(
        Arc::new(default_controller_rate_limiter()),
        QueueOptions::default().name("pods"),
    );
    let counters = Arc::new(Counters::default());
    informer
        .add_metadata_event_handler(handlers(&queue, &counters))
        .map_err(|error| format!("cannot add the event handler: {error}"))?;

    let started = Instant::now();
    let _stop = start_and_sync(&factory).await?;
    say!(
        "synced {} pods in {:.2} s; {workers} workers reconciling",
        informer.stats().cached,
        started.elapsed().as_secs_f64()
    );
    if leader_elect && warm_standby {
        say!("standing by with a synced cache");
        let waited = Instant::now();
        leadership = Some(
            Leadership::campaign(&connection, flags.namespace.as_deref(), lease_seconds).await?,
        );
        say!(
            "leading after {:.1} s: the workers start on a warm cache ({} pods)",
            waited.elapsed().as_secs_f64(),
            informer.stats().cached
        );
    }

    let worker_tasks: Vec<_> = (0..workers)
        .map(|_| {
            tokio::spawn(worker(
                queue.clone(),
                lister.clone(),
                settings.clone(),
                Arc::clone(&counters),
                recorder.clone(),
            ))
        })
        .collect();

    // Run until the duration ends or SIGTERM/SIGINT, redrawing the status
    // line.
    let deadline = connection.duration.map(|d| tokio::time::Instant::now() + d);
    let mut progress = Progress::new();
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    let mut rate = EventRate::default();
    let leading = leadership
        .as_ref()
        .map_or_else(CancellationToken::new, |leadership| {
            leadership.leading.clone()
        });
    let ended = loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = clientgo_examples::shutdown().cancelled_owned() => break "stopped by a signal",
            () = leading.cancelled() => break "leadership lost",
        }
        if deadline.is_some_and(|deadline| tokio::time::Instant::now() >= deadline) {
            break "time is up";
        }
        let stats = informer.stats();
        progress.show(&format!(
            "cached {} | events {:.0}/s | queue {} | reconciled {} | retries {} | dropped {} | watch restarts {}",
            stats.cached,
            rate.per_second(counters.events()),
            queue.len(),
            counters.reconciled.load(Ordering::Relaxed),
            counters.retries.load(Ordering::Relaxed),
            counters.dropped.load(Ordering::Relaxed),
            stats.reflector.rewatches,
        ));
    };
    progress.finish();
    say!("{ended}; draining the queue");

    // Stop the writes first, so the cache can be compared with a server
    // that holds still; then drain: workers finish the keys they hold and
    // the ones waiting, while the informer keeps running.
    let writes = match connection.embedded.as_mut() {
        Some(embedded) => Some(embedded.quiesce().await),
        None => None,
    };
    let cache_check = match &connection.embedded {
        Some(embedded) => Some(compare_with_server(embedded.server(), &lister).await),
        None => None,
    };
    queue.shut_down_with_drain().await;
    for task in worker_tasks {
        let _ = task.await;
    }
    let cache_bytes = informer.cache_bytes();
    let decodes = informer.stats().decodes;
    factory.shutdown().await;
    let leader_row = match leadership {
        Some(leadership) => Some(leadership.step_down().await),
        None => None,
    };
    let event_stats = events.stats();
    // After the shutdown: the informer saved its cache as it stopped.
    let stats = informer.stats();
    let snapshots = informer.snapshot_stats();

    let elapsed = progress.elapsed().as_secs_f64();
    let mut rows = vec![
        ("run time", format!("{elapsed:.1} s")),
        ("pods cached", stats.cached.to_string()),
        (
            "cache memory (compact: bytes + metadata)",
            format!(
                "{:.1} MiB, {:.1} KiB per pod",
                cache_bytes as f64 / (1024.0 * 1024.0),
                cache_bytes as f64 / 1024.0 / stats.cached.max(1) as f64
            ),
        ),
        (
            "lister reads (decode cache hits / misses)",
            format!(
                "{} ({} / {})",
                decodes.hits + decodes.misses,
                decodes.hits,
                decodes.misses
            ),
        ),
        (
            "events",
            format!(
                "{} ({} adds, {} updates, {} deletes)",
                counters.events(),
                counters.adds.load(Ordering::Relaxed),
                counters.updates.load(Ordering::Relaxed),
                counters.deletes.load(Ordering::Relaxed)
            ),
        ),
        (
            "reconciles",
            counters.reconciled.load(Ordering::Relaxed).to_string(),
        ),
        (
            "retries",
            counters.retries.load(Ordering::Relaxed).to_string(),
        ),
        (
            "dropped after max retries",
            counters.dropped.load(Ordering::Relaxed).to_string(),
        ),
        (
            "lists / watch-lists / watches / re-watches",
            format!(
                "{} / {} / {} / {}",
                stats.reflector.lists,
                stats.reflector.watch_lists,
                stats.reflector.watches,
                stats.reflector.rewatches
            ),
        ),
    ];
    if let Some(leader_row) = leader_row {
        rows.push(("leader election", leader_row));
    }
    rows.push((
        "events (recorded / written / dropped)",
        format!(
            "{} / {} / {}",
            event_stats.recorded,
            event_stats.created + event_stats.patched,
            event_stats.dropped + event_stats.failed + event_stats.skipped
        ),
    ));
    if snapshot_dir.is_some() {
        rows.push((
            "snapshot loaded / refused / written (last size)",
            format!(
                "{} / {} / {} ({:.1} MiB){}",
                snapshots.loaded,
                snapshots.rejected,
                snapshots.written,
                snapshots.last_bytes as f64 / (1024.0 * 1024.0),
                if stats.reflector.resumes > 0 {
                    "; resumed without listing"
                } else {
                    ""
                }
            ),
        ));
    }
    if let Some(writes) = writes {
        rows.push((
            "server writes",
            format!(
                "{} ({} creates, {} updates, {} deletes)",
                writes.total(),
                writes.creates,
                writes.updates,
                writes.deletes
            ),
        ));
    }
    if let Some(embedded) = &connection.embedded {
        rows.push((
            "watches dropped by the server",
            embedded.watch_drops().to_string(),
        ));
    }
    if let Some(check) = &cache_check {
        rows.push((
            "cache check",
            match check {
                Ok(count) => format!("OK: all {count} pods match the server"),
                Err(problem) => format!("FAILED: {problem}"),
            },
        ));
    }
    print_table("summary", &rows);
    match cache_check {
        Some(Err(problem)) => Err(Failure::Run(format!(
            "the cache differs from the server: {problem}"
        ))),
        _ if ended == "leadership lost" => Err(Failure::Run(
            "leadership lost: another replica leads now".into(),
        )),
        _ => Ok(()),
    }
}

/// This replica's part in the leader election (`--leader-elect`).
struct Leadership {
    identity: String,
    /// Cancelled when this replica stops leading.
    leading: CancellationToken,
    /// The election; ending it releases the lease.
    campaign: Campaign,
}

impl Leadership {
    /// Campaigns for the lease and returns once this replica leads (or
    /// fails on Ctrl-C first).
    async fn campaign(
        connection: &Connection,
        namespace: Option<&str>,
        lease_seconds: f64,
    ) -> Result<Leadership, Failure> {
        let host = std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "controller".to_string());
        let suffix = Random::new().next_u64() as u32;
        let identity = format!("{host}-{suffix:08x}");
        let namespace = namespace.unwrap_or("default");
        let lease = Duration::from_secs_f64(lease_seconds);
        // client-go's 15 s / 10 s / 2 s, scaled.
        let config = LeaderElectionConfig::default()
            .lease_duration(lease)
            .renew_deadline(lease.mul_f64(2.0 / 3.0))
            .retry_period(lease.mul_f64(2.0 / 15.0))
            .release_on_cancel(true);
        let (started, mut on_started) = tokio::sync::mpsc::unbounded_channel::<CancellationToken>();
        let callbacks = Callbacks::new()
            .on_started_leading(move |leading| {
                let _ = started.send(leading);
            })
            .on_new_leader(|holder| say!("the leader is {holder}"));
        let lock = LeaseLock::new(
            connection.client.clone(),
            namespace,
            "clientgo-controller",
            identity.clone(),
        );
        let campaign = Campaign::start(lock, config, callbacks)?;
        say!("waiting to lead as {identity} (lease {namespace}/clientgo-controller)");
        let leading = tokio::select! {
            leading = on_started.recv() => leading,
            () = clientgo_examples::shutdown().cancelled_owned() => None,
        };
        let Some(leading) = leading else {
            campaign.end().await;
            return Err(Failure::Run("interrupted before leading".into()));
        };
        say!("leading as {identity}");
        Ok(Leadership {
            identity,
            leading,
            campaign,
        })
    }

    /// Ends the election, releasing the lease if still held; the summary's
    /// line.
    async fn step_down(self) -> String {
        let lost = self.leading.is_cancelled();
        let stats = self.campaign.end().await.stats();
        format!(
            "{} ({}; {} leader changes seen)",
            self.identity,
            if lost {
                "lost the lease"
            } else {
                "released the lease"
            },
            stats.transitions_observed
        )
    }
}

/// Metadata handlers (nothing decoded) that count events and enqueue the
/// changed pod's key.
fn handlers(
    queue: &RateLimitingQueue<String>,
    counters: &Arc<Counters>,
) -> ResourceEventHandlerFuncs<MetadataView> {
    let (add_queue, update_queue, delete_queue) = (queue.clone(), queue.clone(), queue.clone());
    let (add_counters, update_counters, delete_counters) = (
        Arc::clone(counters),
        Arc::clone(counters),
        Arc::clone(counters),
    );
    ResourceEventHandlerFuncs::new()
        .on_add(move |pod: &Arc<MetadataView>, _initial| {
            add_counters.adds.fetch_add(1, Ordering::Relaxed);
            add_queue.add(pod.key());
        })
        .on_update(move |_old: &Arc<MetadataView>, new: &Arc<MetadataView>| {
            update_counters.updates.fetch_add(1, Ordering::Relaxed);
            update_queue.add(new.key());
        })
        .on_delete(move |deleted: &ObjectOrTombstone<MetadataView>| {
            delete_counters.deletes.fetch_add(1, Ordering::Relaxed);
            // A tombstone (a delete seen only by a relist) carries the key.
            match deleted {
                ObjectOrTombstone::Object(pod) => delete_queue.add(pod.key()),
                ObjectOrTombstone::Tombstone(tombstone) => delete_queue.add(tombstone.key.clone()),
            }
        })
}

/// One worker: takes keys until the queue shuts down.
async fn worker(
    queue: RateLimitingQueue<String>,
    lister: Lister<Pod>,
    settings: Settings,
    counters: Arc<Counters>,
    recorder: EventRecorder,
) {
    while let Some(key) = queue.get().await {
        let attempt = queue.num_requeues(&key);
        match reconcile(&lister, &key, attempt, settings.fail_percent) {
            Ok(()) => {
                counters.reconciled.fetch_add(1, Ordering::Relaxed);
                queue.forget(&key);
            }
            Err(_) if attempt < settings.max_retries => {
                counters.retries.fetch_add(1, Ordering::Relaxed);
                queue.add_rate_limited(key.clone());
            }
            Err(problem) => {
                counters.dropped.fetch_add(1, Ordering::Relaxed);
                say!("dropping {key} after {attempt} retries: {problem}");
                if let Ok((namespace, name)) = split_meta_namespace_key(&key) {
                    let pod = ObjectReference {
                        api_version: Some("v1".into()),
                        kind: Some("Pod".into()),
                        namespace: Some(namespace.to_string()),
                        name: Some(name.to_string()),
                        ..ObjectReference::default()
                    };
                    recorder.event(
                        &pod,
                        EventType::Warning,
                        "ReconcileFailed",
                        &format!("dropped after {attempt} retries: {problem}"),
                    );
                }
                queue.forget(&key);
            }
        }
        queue.done(&key);
    }
}

/// The reconcile: read the pod from the cache and act on its state. A
/// real controller would compare desired and actual state and write; this
/// one checks what it reads, and fails `fail_percent` of its attempts on
/// purpose (the same keys on the same attempts every run).
fn reconcile(
    lister: &Lister<Pod>,
    key: &str,
    attempt: usize,
    fail_percent: u64,
) -> Result<(), String> {
    if fail_percent > 0 && fnv1a(key, attempt) % 100 < fail_percent {
        return Err("injected failure".to_string());
    }
    let (namespace, name) = split_meta_namespace_key(key).map_err(|error| error.to_string())?;
    // `try_get`, not `get`: a cached pod that no longer decodes is an
    // error to retry, not a deletion.
    match lister.namespace(namespace).try_get(name) {
        // Deleted since it was queued: nothing left to do.
        Ok(None) => Ok(()),
        Err(error) => Err(error.to_string()),
        Ok(Some(pod)) if pod.metadata.name.as_deref() != Some(name) => Err(format!(
            "the cache returned {:?} for {key}",
            pod.metadata.name
        )),
        Ok(Some(_)) => Ok(()),
    }
}

/// FNV-1a over the key and the attempt number.
fn fnv1a(key: &str, attempt: usize) -> u64 {
    key.bytes()
        .chain(attempt.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Events per second over the last second or so.
#[derive(Debug, Default)]
struct EventRate {
    last: Option<(Instant, u64)>,
    rate: f64,
}

impl EventRate {
    fn per_second(&mut self, events: u64) -> f64 {
        let now = Instant::now();
        match self.last {
            Some((then, before)) if now.duration_since(then) >= Duration::from_secs(1) => {
                self.rate = (events - before) as f64 / now.duration_since(then).as_secs_f64();
                self.last = Some((now, events));
            }
            Some(_) => {}
            None => self.last = Some((now, events)),
        }
        self.rate
    }
}

/// Waits (up to 15 s) until the pods in the cache are those the server
/// holds, with the same resourceVersions; the number of pods, or what
/// still differs.
async fn compare_with_server(
    server: &clientgo::testing::TestApiServer,
    lister: &Lister<Pod>,
) -> Result<usize, String> {
    let pods = GroupResource::new("", "pods");
    let give_up = Instant::now() + Duration::from_secs(15);
    loop {
        let server_state: BTreeMap<String, String> =
            match server.storage().list(&pods, None, ReadAt::Latest) {
                Ok((objects, _)) => objects
                    .iter()
                    .map(|object| {
                        (
                            format!("{}/{}", object.key.namespace, object.key.name),
                            object.resource_version.to_string(),
                        )
                    })
                    .collect(),
                Err(status) => return Err(format!("cannot list the server's pods: {status}")),
            };
        let cached: BTreeMap<String, String> = lister
            .list_metadata(&LabelSelector::everything())
            .iter()
            .map(|pod| {
                (
                    pod.key(),
                    pod.resource_version().unwrap_or_default().to_string(),
                )
            })
            .collect();
        if cached == server_state {
            return Ok(cached.len());
        }
        if Instant::now() >= give_up {
            let missing = server_state
                .keys()
                .filter(|k| !cached.contains_key(*k))
                .count();
            let extra = cached
                .keys()
                .filter(|k| !server_state.contains_key(*k))
                .count();
            let stale = server_state
                .iter()
                .filter(|(k, rv)| cached.get(*k).is_some_and(|cached_rv| cached_rv != *rv))
                .count();
            return Err(format!(
                "{missing} missing, {extra} extra, {stale} with an old resourceVersion"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
