//! The clients compared, each run in a process of its own by
//! [`run`]: it syncs a cache of every pod, announces
//! [`SYNCED`], applies the burst of watch events
//! (announcing [`WATCHED`]), goes through the
//! forced relist, and returns its [`Figures`].

mod clientgo;
mod kube_rs;
mod limit;
mod replicaset_reads;
mod stream;

pub use replicaset_reads::GROUPS as REPLICASET_GROUPS;

use std::time::{Duration, Instant};

use clientgo_informers::Storage;
use clientgo_testing::process_cpu::cpu_seconds;
use clientgo_testing::process_memory::{high_water_mib, reset_high_water, rss_file_mib, rss_mib};

use crate::protocol::{SYNCED, WATCHED, announce};
use crate::{BoxError, EventClock, Figures};

/// How long any one phase may take before the run fails.
/// `E2E_PHASE_TIMEOUT_SECONDS` overrides it.
pub static PHASE_TIMEOUT: std::sync::LazyLock<Duration> = std::sync::LazyLock::new(|| {
    let seconds = std::env::var("E2E_PHASE_TIMEOUT_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(seconds)
});

/// How long a client waits after a sync or relist before reading memory,
/// so a watch is open and deliveries are done. Over a second, because the
/// burst starts by dropping the open watch, and a watch dropped within a
/// second with no events counts as a "very short watch", which makes
/// client-go's reflector (and ours) relist.
pub const SETTLE: Duration = Duration::from_millis(1_500);

/// A client under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// Pages of 500 fetched and decoded with serde_json into
    /// k8s-openapi's `List<Pod>` one after another on one thread, kept in a
    /// hash map; a watch decoded line by line. The bound a naive client
    /// cannot beat.
    Limit,
    /// The floor of a watch-list sync: the default informer's watch-list
    /// request read as bytes and cut into frames up to the bookmark ending
    /// the initial events; nothing decoded or kept, and no later phases.
    Stream,
    /// [`Stream`](Self::Stream) keeping each frame's bytes in an
    /// allocation of its own, read on a thread other than the main one (as
    /// a runtime's workers are, each allocating from its own glibc arena):
    /// what keeping the objects' bytes costs before any decoding.
    StreamKeep,
    /// The informer a user writes first, with no option set:
    /// `factory.core().v1().pods().informer()`, so every default
    /// (protobuf, watch-list, managedFields cut, compact storage), with a
    /// metadata handler, as a key-enqueueing controller.
    Clientgo,
    /// The same with a handler of `Pod` that reads the whole pod.
    ClientgoTyped,
    /// The same in `Storage::Decoded` (the default storage before
    /// 2026-11-25): every object decoded into a `Pod` in the cache.
    ClientgoDecoded,
    /// The defaults with a list instead of watch-list.
    ClientgoList,
    /// The defaults in `Storage::CompactLz4` (a metadata handler).
    ClientgoLz4,
    /// clientgo-rs's SharedIndexInformer in decoded storage asking for
    /// JSON, list then watch (the `clientgo` row before 2026-11-25).
    ClientgoJson,
    /// [`Clientgo`](Self::Clientgo) with `disable_compression`: pages
    /// come uncompressed (the default asks for gzip, and the server
    /// compresses each page of 500 pods, as kube-apiserver does).
    ClientgoNoGzip,
    /// The same with watch-list (a streaming initial list).
    ClientgoWatchList,
    /// The same as [`Clientgo`](Self::Clientgo) with the factory's
    /// `keep_managed_fields(false)` transform.
    ClientgoStrip,
    /// `Compact<Pod>` (JSON plus parsed metadata, decoded on demand) with
    /// `keep_managed_fields(false)` and a handler reading metadata only, as a
    /// key-enqueueing controller; list then watch.
    ClientgoCompact,
    /// The same with watch-list.
    ClientgoCompactWatchList,
    /// `Compact<Pod>` with a handler of whole pods that decodes each entry.
    ClientgoCompactTyped,
    /// [`ClientgoCompact`](Self::ClientgoCompact) with each object's JSON
    /// LZ4-compressed (`Compact<Pod, Lz4>`).
    ClientgoCompactLz4,
    /// [`Clientgo`](Self::Clientgo) asking for protobuf
    /// (`ContentType::Protobuf`): list then watch, full pods.
    ClientgoProtobuf,
    /// The same with watch-list.
    ClientgoProtobufWatchList,
    /// [`ClientgoCompact`](Self::ClientgoCompact) asking for protobuf and
    /// keeping each pod's message (`Compact<Pod, Protobuf>`): list then
    /// watch.
    ClientgoProtobufCompact,
    /// kube-rs's `watcher` with its default configuration, through
    /// `default_backoff` and `reflect` into a reflector store.
    KubeRs,
    /// The same with `watcher::Config::streaming_lists`.
    KubeRsStreaming,
}

impl ClientKind {
    /// Every client, in the order the table shows them.
    pub const ALL: [ClientKind; 21] = [
        ClientKind::Limit,
        ClientKind::Stream,
        ClientKind::StreamKeep,
        ClientKind::Clientgo,
        ClientKind::ClientgoTyped,
        ClientKind::ClientgoDecoded,
        ClientKind::ClientgoList,
        ClientKind::ClientgoLz4,
        ClientKind::ClientgoJson,
        ClientKind::ClientgoNoGzip,
        ClientKind::ClientgoWatchList,
        ClientKind::ClientgoStrip,
        ClientKind::ClientgoCompact,
        ClientKind::ClientgoCompactWatchList,
        ClientKind::ClientgoCompactTyped,
        ClientKind::ClientgoCompactLz4,
        ClientKind::ClientgoProtobuf,
        ClientKind::ClientgoProtobufWatchList,
        ClientKind::ClientgoProtobufCompact,
        ClientKind::KubeRs,
        ClientKind::KubeRsStreaming,
    ];

    /// The name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Limit => "limit",
            ClientKind::Stream => "stream",
            ClientKind::StreamKeep => "stream-keep",
            ClientKind::Clientgo => "clientgo",
            ClientKind::ClientgoTyped => "clientgo-typed",
            ClientKind::ClientgoDecoded => "clientgo-decoded",
            ClientKind::ClientgoList => "clientgo-list",
            ClientKind::ClientgoLz4 => "clientgo-lz4",
            ClientKind::ClientgoJson => "clientgo-json",
            ClientKind::ClientgoNoGzip => "clientgo-nogzip",
            ClientKind::ClientgoWatchList => "clientgo-watchlist",
            ClientKind::ClientgoStrip => "clientgo-strip",
            ClientKind::ClientgoCompact => "clientgo-compact",
            ClientKind::ClientgoCompactWatchList => "clientgo-compact-watchlist",
            ClientKind::ClientgoCompactTyped => "clientgo-compact-typed",
            ClientKind::ClientgoCompactLz4 => "clientgo-compact-lz4",
            ClientKind::ClientgoProtobuf => "clientgo-protobuf",
            ClientKind::ClientgoProtobufWatchList => "clientgo-protobuf-watchlist",
            ClientKind::ClientgoProtobufCompact => "clientgo-protobuf-compact",
            ClientKind::KubeRs => "kube-rs",
            ClientKind::KubeRsStreaming => "kube-rs-streaming",
        }
    }

    /// The client named `name`.
    pub fn from_name(name: &str) -> Option<ClientKind> {
        ClientKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// How a clientgo-rs client's informer lists and what it keeps (JSON
    /// list then watch, decoded pods, for anything else).
    fn clientgo_mode(self) -> clientgo::Mode {
        use clientgo::Mode;
        match self {
            ClientKind::ClientgoWatchList => Mode::WatchList,
            ClientKind::Clientgo => Mode::Defaults {
                handler: clientgo::Handler::Metadata,
                storage: Storage::Compact,
                watch_list: true,
            },
            ClientKind::ClientgoTyped => Mode::Defaults {
                handler: clientgo::Handler::Typed,
                storage: Storage::Compact,
                watch_list: true,
            },
            ClientKind::ClientgoDecoded => Mode::Defaults {
                handler: clientgo::Handler::Typed,
                storage: Storage::Decoded,
                watch_list: true,
            },
            ClientKind::ClientgoList => Mode::Defaults {
                handler: clientgo::Handler::Metadata,
                storage: Storage::Compact,
                watch_list: false,
            },
            ClientKind::ClientgoLz4 => Mode::Defaults {
                handler: clientgo::Handler::Metadata,
                storage: Storage::CompactLz4,
                watch_list: true,
            },
            ClientKind::ClientgoNoGzip => Mode::NoGzip,
            ClientKind::ClientgoStrip => Mode::Strip,
            ClientKind::ClientgoCompact => Mode::Compact {
                watch_list: false,
                lz4: false,
            },
            ClientKind::ClientgoCompactWatchList => Mode::Compact {
                watch_list: true,
                lz4: false,
            },
            ClientKind::ClientgoCompactLz4 => Mode::Compact {
                watch_list: false,
                lz4: true,
            },
            ClientKind::ClientgoCompactTyped => Mode::CompactTyped,
            ClientKind::ClientgoProtobuf => Mode::Protobuf { watch_list: false },
            ClientKind::ClientgoProtobufWatchList => Mode::Protobuf { watch_list: true },
            ClientKind::ClientgoProtobufCompact => Mode::CompactProtobuf,
            _ => Mode::List,
        }
    }

    /// The kube-rs configuration a clientgo-rs client is compared with: the
    /// streaming one for watch-list, the default one otherwise.
    pub fn kube_rs_counterpart(self) -> ClientKind {
        match self {
            ClientKind::ClientgoWatchList
            | ClientKind::ClientgoCompactWatchList
            | ClientKind::ClientgoProtobufWatchList
            | ClientKind::KubeRsStreaming => ClientKind::KubeRsStreaming,
            // The defaults are compared with kube-rs's defaults.
            _ => ClientKind::KubeRs,
        }
    }
}

/// What a client process is told.
#[derive(Debug, Clone)]
pub struct ClientPlan {
    /// The server's URL.
    pub url: String,
    /// Pods the server holds.
    pub pods: usize,
    /// Events in the burst.
    pub events: u64,
    /// Only the sync: the client returns its figures once synced (on a
    /// real server, which cannot hold watches or force a relist).
    pub sync_only: bool,
}

/// Runs one client to the end and returns what it measured.
pub fn run(kind: ClientKind, plan: &ClientPlan) -> Result<Figures, BoxError> {
    if kind == ClientKind::Limit && plan.url.starts_with(crate::real_server::KUBECONFIG) {
        return Err("limit speaks plain HTTP to the test server only".into());
    }
    let mut figures = match kind {
        ClientKind::Limit | ClientKind::Stream => {
            // Single-threaded by design: the stream's reader and the HTTP
            // connection's task on one thread hand each chunk over without
            // waking another thread.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            if kind == ClientKind::Stream {
                runtime.block_on(stream::run(plan, stream::Keep::Nothing))?
            } else {
                runtime.block_on(limit::run(plan))?
            }
        }
        ClientKind::StreamKeep => {
            // The same single thread, but not the main one: the main
            // thread allocates from glibc's main arena, which grows with
            // padding, where a runtime's workers grow theirs a page at a
            // time.
            let plan = plan.clone();
            std::thread::spawn(move || -> Result<Figures, String> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| error.to_string())?;
                runtime
                    .block_on(stream::run(&plan, stream::Keep::Frames))
                    .map_err(|error| error.to_string())
            })
            .join()
            .map_err(|_| "the stream-keep thread panicked")??
        }
        _ => {
            let workers = std::env::var("E2E_CLIENT_WORKERS")
                .ok()
                .and_then(|value| value.parse().ok())
                .unwrap_or(2);
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()?;
            match kind {
                ClientKind::KubeRs => runtime.block_on(kube_rs::run(plan, false))?,
                ClientKind::KubeRsStreaming => runtime.block_on(kube_rs::run(plan, true))?,
                _ => runtime.block_on(clientgo::run(plan, kind.clientgo_mode()))?,
            }
        }
    };
    figures.client = kind.name().to_string();
    figures.pods = plan.pods;
    figures.events = plan.events;
    Ok(figures)
}

/// Polls `done` every millisecond until it holds; an error naming `what`
/// after [`PHASE_TIMEOUT`].
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> Result<(), BoxError> {
    let deadline = tokio::time::Instant::now() + *PHASE_TIMEOUT;
    while !done() {
        if tokio::time::Instant::now() >= deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(())
}

/// What the shared phases ([`measure`]) read from a client that keeps a
/// cache and runs on its own tasks (clientgo-rs, kube-rs).
trait CacheClient {
    /// Whether the first sync is done.
    fn synced(&self) -> bool;
    /// Objects cached.
    fn cached(&self) -> usize;
    /// Completed syncs so far (lists, watch-lists, or kube-rs's
    /// `InitDone`s).
    fn syncs(&self) -> u64;
    /// Whether everything received is applied and delivered.
    fn idle(&self) -> bool;
    /// The client's state, for an error message.
    fn describe(&self) -> String;
    /// The bytes its cache keeps (`cache_bytes`), for clients that count
    /// them.
    fn cache_bytes(&self) -> Option<usize> {
        None
    }
}

/// The process's memory before a client's first request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Baseline {
    /// RSS, in MiB.
    rss_mib: f64,
    /// The file-backed part of it, in MiB.
    file_mib: f64,
    /// The process's CPU seconds so far.
    cpu_seconds: f64,
}

impl Baseline {
    /// Both read now.
    pub(crate) fn now() -> Self {
        Baseline {
            rss_mib: rss_mib(),
            file_mib: rss_file_mib(),
            cpu_seconds: cpu_seconds(),
        }
    }
}

/// Runs the phases after the client was started at `started` with memory
/// `baseline`: waits for the sync, announces it, times the burst on
/// `clock`, announces that, and reads the RSS high-water mark around the
/// forced relist.
async fn measure(
    plan: &ClientPlan,
    client: &impl CacheClient,
    clock: &EventClock,
    started: Instant,
    baseline: Baseline,
) -> Result<Figures, BoxError> {
    let mut figures = Figures {
        rss_baseline_mib: baseline.rss_mib,
        ..Figures::default()
    };
    wait_until("the cache to sync", || client.synced()).await?;
    figures.sync_seconds = started.elapsed().as_secs_f64();
    figures.cpu_seconds = Some(cpu_seconds() - baseline.cpu_seconds);
    let cached = client.cached();
    if cached != plan.pods {
        return Err(format!("synced with {cached} pods, expected {}", plan.pods).into());
    }
    tokio::time::sleep(SETTLE).await;
    figures.rss_synced_mib = rss_mib();
    figures.rss_file_growth_mib =
        Some(rss_file_mib() - baseline.file_mib).filter(|mib| mib.is_finite());
    // At the same moment as the RSS: reads and the burst after it change
    // what the entries keep.
    figures.cache_mib = client
        .cache_bytes()
        .map(|bytes| bytes as f64 / (1024.0 * 1024.0));
    announce(SYNCED)?;
    if plan.sync_only {
        return Ok(figures);
    }

    let Some(watch) = clock.wait(*PHASE_TIMEOUT).await else {
        return Err(format!(
            "timed out waiting for the burst's events: {} of {} applied; {}",
            clock.count(),
            plan.events,
            client.describe()
        )
        .into());
    };
    figures.watch_seconds = watch.as_secs_f64();
    figures.rss_steady_mib = rss_mib();
    let syncs_before = client.syncs();
    reset_high_water();
    let relist_started = Instant::now();
    announce(WATCHED)?;
    wait_until("the relist", || {
        client.syncs() > syncs_before && client.idle()
    })
    .await?;
    figures.relist_seconds = relist_started.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    figures.relist_peak_mib = high_water_mib();
    Ok(figures)
}
