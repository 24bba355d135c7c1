//! clientgo-rs: a SharedIndexInformer for pods from the factory, with a
//! handler that counts updates.

use std::sync::Arc;
use std::time::Instant;

use clientgo_informers::{
    InformerFactoryOptions, ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory,
};
use clientgo_rest::{Config, RestClient};
use clientgo_testing::process_memory::rss_mib;
use k8s_openapi::api::core::v1::Pod;
use tokio_util::sync::CancellationToken;

use super::{CacheClient, ClientPlan, measure};
use crate::{BoxError, EventClock, Figures};

/// How the informer lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// List (pages of 500) then watch.
    List,
    /// Watch-list.
    WatchList,
    /// List then watch, with `strip_managed_fields`.
    Strip,
}

pub(super) async fn run(plan: &ClientPlan, mode: Mode) -> Result<Figures, BoxError> {
    let rest = RestClient::new(Config::new(&plan.url))?;
    let mut options = InformerFactoryOptions::default().use_watch_list(mode == Mode::WatchList);
    if mode == Mode::Strip {
        options = options.strip_managed_fields(true);
    }
    let factory = SharedInformerFactory::with_options(rest, options);
    let informer = factory.core().v1().pods().informer();
    let clock = Arc::new(EventClock::new(plan.events));
    informer.add_event_handler(ResourceEventHandlerFuncs::new().on_update({
        let clock = clock.clone();
        move |_, _| clock.record()
    }))?;
    // Errors are expected once (the forced relist's 410); anything else is
    // worth seeing next to the figures.
    informer.set_watch_error_handler(|error| eprintln!("clientgo: {error}"))?;
    let rss_baseline_mib = rss_mib();
    let started = Instant::now();
    let stop = CancellationToken::new();
    factory.start(&stop);
    let measured = measure(plan, &Informer(informer), &clock, started, rss_baseline_mib).await;
    stop.cancel();
    factory.shutdown().await;
    measured
}

struct Informer(SharedIndexInformer<Pod>);

impl CacheClient for Informer {
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
}
