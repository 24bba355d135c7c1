//! clientgo-rs: a SharedIndexInformer for pods from the factory, with a
//! handler that counts updates.

use std::sync::Arc;
use std::time::Instant;

use clientgo_informers::{
    InformerFactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory,
};
use clientgo_rest::{Config, RestClient};
use tokio_util::sync::CancellationToken;

use super::{ClientPlan, PHASE_TIMEOUT, SETTLE, wait_until};
use crate::protocol::{SYNCED, WATCHED, announce};
use crate::{BoxError, EventClock, Figures};
use clientgo_testing::process_memory::{high_water_mib, reset_high_water, rss_mib};

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
    let mut options = InformerFactoryOptions::default().with_watch_list(mode == Mode::WatchList);
    if mode == Mode::Strip {
        options = options.with_strip_managed_fields();
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
    let mut figures = Figures {
        rss_baseline_mib: rss_mib(),
        ..Figures::default()
    };

    let started = Instant::now();
    let stop = CancellationToken::new();
    factory.start(&stop);
    wait_until("the informer to sync", || informer.has_synced()).await?;
    figures.sync_seconds = started.elapsed().as_secs_f64();
    let cached = informer.stats().cached;
    if cached != plan.pods {
        return Err(format!("synced with {cached} pods, expected {}", plan.pods).into());
    }
    tokio::time::sleep(SETTLE).await;
    figures.rss_synced_mib = rss_mib();
    announce(SYNCED)?;

    let Some(watch) = clock.wait(*PHASE_TIMEOUT).await else {
        return Err(format!(
            "timed out waiting for the burst's events: {} of {} applied; {:?}; last error: {:?}",
            clock.count(),
            plan.events,
            informer.stats(),
            informer.last_error()
        )
        .into());
    };
    figures.watch_seconds = watch.as_secs_f64();
    figures.rss_steady_mib = rss_mib();
    let lists = |informer: &clientgo_informers::SharedIndexInformer<_>| {
        let stats = informer.stats();
        stats.reflector.lists + stats.reflector.watch_lists
    };
    let lists_before = lists(&informer);
    reset_high_water();
    let relist_started = Instant::now();
    announce(WATCHED)?;
    wait_until("the relist", || {
        lists(&informer) > lists_before && informer.stats().queued == 0
    })
    .await?;
    figures.relist_seconds = relist_started.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    figures.relist_peak_mib = high_water_mib();
    stop.cancel();
    factory.shutdown().await;
    Ok(figures)
}
