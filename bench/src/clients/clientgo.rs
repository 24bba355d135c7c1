//! clientgo-rs: a SharedIndexInformer for pods from the factory, with a
//! handler that counts updates: the defaults (compact storage) with a
//! metadata or a typed handler, decoded storage, or explicit `Compact<Pod>`
//! types; then, for the defaults, timed lister reads.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::{
    ApiObject, Compact, CompactBody, Json, LabelSelector, Lz4, Object, Protobuf,
};
use clientgo_informers::ReflectorOptions;
use clientgo_informers::{
    InformerFactoryOptions, MetadataView, ResourceEventHandlerFuncs, SharedIndexInformer,
    SharedInformerFactory, SnapshotOptions, Storage, TypedResource,
};
use clientgo_rest::{ContentType, RestClient};
use clientgo_testing::REALISTIC_POD_APPS;
use clientgo_testing::process_memory::rss_mib;
use k8s_openapi::api::core::v1::Pod;
use tokio_util::sync::CancellationToken;

use super::{Baseline, CacheClient, ClientPlan, REPLICASET_GROUPS, measure, replicaset_reads};
use crate::{BoxError, EventClock, Figures};

/// What the handler of the defaults reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handler {
    /// Keys only, through a metadata handler.
    Metadata,
    /// Whole pods, through a handler of `Pod` that reads the spec.
    Typed,
}

/// How the informer lists and what it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Every default (the content type and factory options as they come)
    /// but the storage, the handler and whether to watch-list.
    Defaults {
        handler: Handler,
        storage: Storage,
        watch_list: bool,
    },
    /// List (pages of 500) then watch.
    List,
    /// The same, asking for uncompressed pages.
    NoGzip,
    /// Watch-list.
    WatchList,
    /// List then watch, with `keep_managed_fields(false)`.
    Strip,
    /// `Compact<Pod>` with `keep_managed_fields(false)` and a handler reading
    /// metadata only; list then watch, or watch-list; the JSON kept as is
    /// or LZ4-compressed (`Compact<Pod, Lz4>`).
    Compact { watch_list: bool, lz4: bool },
    /// `Compact<Pod>` with `keep_managed_fields(false)` and a handler of whole
    /// pods (decoding each entry), list then watch.
    CompactTyped,
    /// Full pods asking for protobuf; list then watch, or watch-list.
    Protobuf { watch_list: bool },
    /// `Compact<Pod, Protobuf>` asking for protobuf, as
    /// [`Compact`](Mode::Compact) otherwise; list then watch.
    CompactProtobuf,
}

pub(super) async fn run(plan: &ClientPlan, mode: Mode) -> Result<Figures, BoxError> {
    let content_type = match mode {
        Mode::Protobuf { .. } | Mode::CompactProtobuf => ContentType::Protobuf,
        Mode::Defaults { .. } => ContentType::default(),
        _ => ContentType::Json,
    };
    let rest = RestClient::new(
        crate::real_server::clientgo_config(&plan.url)?
            .content_type(content_type)
            .disable_compression(mode == Mode::NoGzip),
    )?;
    let watch_list = matches!(
        mode,
        Mode::WatchList
            | Mode::Compact {
                watch_list: true,
                ..
            }
            | Mode::Protobuf { watch_list: true }
    );
    let strip = matches!(
        mode,
        Mode::Strip | Mode::Compact { .. } | Mode::CompactTyped | Mode::CompactProtobuf
    );
    let mut options = match mode {
        Mode::Defaults {
            storage,
            watch_list,
            ..
        } => InformerFactoryOptions::default()
            .storage(storage)
            .reflector(ReflectorOptions::default().use_watch_list(watch_list)),
        // The rows measured before compact storage became the default
        // keep decoded objects.
        _ => InformerFactoryOptions::default()
            .storage(Storage::Decoded)
            .reflector(ReflectorOptions::default().use_watch_list(watch_list))
            .keep_managed_fields(!strip),
    };
    // Errors are expected once (the forced relist's 410); anything else is
    // worth seeing next to the figures.
    options = options.watch_error_handler(|error| eprintln!("clientgo: {error}"));
    // Compact clients save their cache when they stop and go through a
    // warm restart after the other phases.
    let snapshot_dir = std::env::temp_dir().join(format!("clientgo-bench-{}", std::process::id()));
    if matches!(
        mode,
        Mode::Compact { .. } | Mode::CompactTyped | Mode::CompactProtobuf
    ) {
        options = options.snapshot(
            SnapshotOptions::new(&snapshot_dir)
                .interval(Duration::ZERO)
                .entry_type::<Compact<Pod, Json>>()
                .entry_type::<Compact<Pod, Lz4>>()
                .entry_type::<Compact<Pod, Protobuf>>(),
        );
    }
    let factory = SharedInformerFactory::with_options(rest.clone(), options.clone());
    let restart = Restart { rest, options };
    let clock = Arc::new(EventClock::new(plan.events));
    let counter = {
        let clock = clock.clone();
        move || clock.record()
    };
    match mode {
        Mode::Defaults { handler, .. } => {
            let informer = factory.core().v1().pods().informer();
            match handler {
                Handler::Metadata => informer.add_metadata_event_handler(
                    ResourceEventHandlerFuncs::<MetadataView>::new().on_update(move |_, new| {
                        // What a key-enqueueing controller reads.
                        std::hint::black_box(new.key());
                        counter();
                    }),
                )?,
                Handler::Typed => informer.add_event_handler(
                    ResourceEventHandlerFuncs::<Pod>::new().on_update(move |_, new| {
                        std::hint::black_box(new.spec.as_ref().map(|spec| spec.containers.len()));
                        counter();
                    }),
                )?,
            };
            let lister = informer.lister();
            let mut figures = measured(plan, &factory, informer, &clock).await?;
            if !plan.sync_only {
                lister_reads(&lister, &mut figures)?;
            }
            Ok(figures)
        }
        Mode::List | Mode::NoGzip | Mode::WatchList | Mode::Strip | Mode::Protobuf { .. } => {
            let informer = factory.core().v1().pods().informer();
            informer.add_event_handler(
                ResourceEventHandlerFuncs::<Pod>::new().on_update(move |_, _| counter()),
            )?;
            measured(plan, &factory, informer, &clock).await
        }
        Mode::Compact { lz4: false, .. } => {
            let figures = compact::<Json>(plan, &factory, &clock, counter).await;
            restart.after::<Compact<Pod, Json>>(figures, plan).await
        }
        Mode::Compact { lz4: true, .. } => {
            let figures = compact::<Lz4>(plan, &factory, &clock, counter).await;
            restart.after::<Compact<Pod, Lz4>>(figures, plan).await
        }
        Mode::CompactProtobuf => {
            let figures = compact::<Protobuf>(plan, &factory, &clock, counter).await;
            restart.after::<Compact<Pod, Protobuf>>(figures, plan).await
        }
        Mode::CompactTyped => {
            let informer = factory.informer_for::<Compact<Pod>>();
            informer.add_event_handler(
                ResourceEventHandlerFuncs::<Compact<Pod>>::new().on_update(move |old, new| {
                    // Both sides decoded, as a handler of whole pods is
                    // given them.
                    std::hint::black_box(old.decode().ok());
                    let pod = new.decode().ok();
                    std::hint::black_box(
                        pod.map(|pod| pod.spec.as_ref().map(|spec| spec.containers.len())),
                    );
                    counter();
                }),
            )?;
            let figures = measured(plan, &factory, informer, &clock).await;
            restart.after::<Compact<Pod>>(figures, plan).await
        }
    }
    .inspect(|_| {
        let _ = std::fs::remove_dir_all(&snapshot_dir);
    })
}

/// The largest cache whose every pod the lister phase lists: `list()`
/// decodes each pod it returns (about 10 KiB each, held together), which
/// at a million pods is more memory than the machine has.
const LIST_ALL_MAX: usize = 100_000;

/// Times lister reads of the synced cache: `get` of 1,000 keys never
/// read (misses of the decode cache in compact storage), the same again
/// (hits), a ReplicaSet controller's lists of one group each
/// ([`replicaset_reads`](super::replicaset_reads)), and `list()` of
/// everything after one untimed `list()`, for caches of up to
/// [`LIST_ALL_MAX`] pods.
fn lister_reads(
    lister: &clientgo_informers::Lister<Pod>,
    figures: &mut Figures,
) -> Result<(), BoxError> {
    let keys: Vec<String> = lister.keys().into_iter().take(1_000).collect();
    let read = |keys: &[String]| {
        let started = Instant::now();
        for key in keys {
            std::hint::black_box(lister.get_by_key(key));
        }
        started.elapsed().as_secs_f64() * 1e6 / keys.len().max(1) as f64
    };
    figures.lister_get_miss_us = Some(read(&keys));
    figures.lister_get_hit_us = Some(read(&keys));
    let selectors = (0..REPLICASET_GROUPS)
        .map(|index| LabelSelector::parse(&format!("app=app-{}", index % REALISTIC_POD_APPS)))
        .collect::<Result<Vec<_>, _>>()?;
    figures.replicaset_reads_per_s =
        Some(replicaset_reads::reads_per_second(lister.len(), |group| {
            lister
                .namespace(group.namespace.as_str())
                .list(&selectors[group.index])
                .len()
        })?);
    figures.rss_after_reads_mib = Some(rss_mib());
    if lister.len() > LIST_ALL_MAX {
        return Ok(());
    }
    let everything = LabelSelector::everything();
    std::hint::black_box(lister.list(&everything).len());
    let started = Instant::now();
    std::hint::black_box(lister.list(&everything).len());
    figures.lister_list_ms = Some(started.elapsed().as_secs_f64() * 1e3);
    Ok(())
}

/// The warm-restart phase: a new factory with the same options (and so
/// the same snapshot directory) after the measured one stopped and saved
/// its cache.
struct Restart {
    rest: RestClient,
    options: InformerFactoryOptions,
}

impl Restart {
    /// Adds the warm restart's figures to `figures`: the snapshot written
    /// when the first informer stopped, and the time a new informer takes
    /// to sync from it.
    async fn after<K>(
        &self,
        figures: Result<Figures, BoxError>,
        plan: &ClientPlan,
    ) -> Result<Figures, BoxError>
    where
        K: TypedResource,
    {
        let mut figures = figures?;
        if plan.sync_only {
            return Ok(figures);
        }
        let factory = SharedInformerFactory::with_options(self.rest.clone(), self.options.clone());
        let informer = factory.informer_for::<K>();
        let started = Instant::now();
        let stop = CancellationToken::new();
        factory.start(&stop);
        super::wait_until("the restarted cache to sync", || informer.has_synced()).await?;
        figures.restart_seconds = Some(started.elapsed().as_secs_f64());
        let cached = informer.stats().cached;
        if cached != plan.pods {
            return Err(format!("restarted with {cached} pods, expected {}", plan.pods).into());
        }
        let stats = informer.stats().reflector;
        figures.restart_listings = Some(stats.lists + stats.watch_lists);
        stop.cancel();
        factory.shutdown().await;
        // The restarted informer saved again when it stopped: the same
        // cache, so the same cost as the first save.
        let saved = informer.snapshot_stats();
        figures.snapshot_mib = Some(saved.last_bytes as f64 / (1024.0 * 1024.0));
        figures.snapshot_write_seconds = Some(saved.last_write_micros as f64 / 1e6);
        Ok(figures)
    }
}

/// `Compact<Pod, B>` with a handler reading metadata only, as a
/// key-enqueueing controller.
async fn compact<B: CompactBody>(
    plan: &ClientPlan,
    factory: &SharedInformerFactory,
    clock: &EventClock,
    counter: impl Fn() + Send + Sync + 'static,
) -> Result<Figures, BoxError> {
    let informer = factory.informer_for::<Compact<Pod, B>>();
    informer.add_event_handler(
        ResourceEventHandlerFuncs::<Compact<Pod, B>>::new().on_update(move |_, new| {
            // What a key-enqueueing controller reads.
            std::hint::black_box((new.namespace(), new.name()));
            counter();
        }),
    )?;
    measured(plan, factory, informer, clock).await
}

/// Starts the factory and measures `informer` through the phases.
async fn measured<K>(
    plan: &ClientPlan,
    factory: &SharedInformerFactory,
    informer: SharedIndexInformer<K>,
    clock: &EventClock,
) -> Result<Figures, BoxError>
where
    K: ApiObject,
{
    let baseline = Baseline::now();
    let started = Instant::now();
    let stop = CancellationToken::new();
    factory.start(&stop);
    let measured = measure(plan, &Informer(informer), clock, started, baseline).await;
    stop.cancel();
    factory.shutdown().await;
    measured
}

struct Informer<K>(SharedIndexInformer<K>);

impl<K> CacheClient for Informer<K>
where
    K: ApiObject,
{
    fn synced(&self) -> bool {
        self.0.has_synced()
    }

    fn cached(&self) -> usize {
        self.0.stats().cached
    }

    fn syncs(&self) -> u64 {
        let stats = self.0.stats().reflector;
        stats.lists + stats.watch_lists
    }

    fn idle(&self) -> bool {
        self.0.stats().queued == 0
    }

    fn describe(&self) -> String {
        format!(
            "{:?}; last error: {:?}",
            self.0.stats(),
            self.0.last_error()
        )
    }
    fn cache_bytes(&self) -> Option<usize> {
        // Decoded storage's `cache_bytes` is an estimate (the objects'
        // JSON length), not bytes kept: no ratio is made of it.
        (self.0.storage() != Storage::Decoded).then(|| self.0.cache_bytes())
    }
}
