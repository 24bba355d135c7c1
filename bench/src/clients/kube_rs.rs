//! kube-rs 5: `watcher` → `default_backoff` → `reflect` into a reflector
//! store, the stream polled by a task that counts applied events.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};

use super::{ClientPlan, PHASE_TIMEOUT, SETTLE, wait_until};
use crate::protocol::{SYNCED, WATCHED, announce};
use crate::{BoxError, EventClock, Figures};
use clientgo_testing::process_memory::{high_water_mib, reset_high_water, rss_mib};

pub(super) async fn run(plan: &ClientPlan, streaming: bool) -> Result<Figures, BoxError> {
    let config = kube::Config::new(plan.url.parse::<http::Uri>()?);
    let client = kube::Client::try_from(config)?;
    let api = kube::Api::<Pod>::all(client);
    let (reader, writer) = reflector::store::<Pod>();
    let mut watcher_config = watcher::Config::default();
    if streaming {
        watcher_config = watcher_config.streaming_lists();
    }
    let clock = Arc::new(EventClock::new(plan.events));
    let syncs = Arc::new(AtomicU64::new(0));
    let mut figures = Figures {
        rss_baseline_mib: rss_mib(),
        ..Figures::default()
    };

    let started = Instant::now();
    let stream = watcher::watcher(api, watcher_config)
        .default_backoff()
        .reflect(writer);
    let task = tokio::spawn({
        let (clock, syncs) = (clock.clone(), syncs.clone());
        async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Event::InitDone) => {
                        syncs.fetch_add(1, Ordering::AcqRel);
                    }
                    Ok(Event::Apply(_)) => clock.record(),
                    _ => {}
                }
            }
        }
    });
    wait_until("the store to sync", || syncs.load(Ordering::Acquire) >= 1).await?;
    figures.sync_seconds = started.elapsed().as_secs_f64();
    let cached = reader.len();
    if cached != plan.pods {
        return Err(format!("synced with {cached} pods, expected {}", plan.pods).into());
    }
    tokio::time::sleep(SETTLE).await;
    figures.rss_synced_mib = rss_mib();
    announce(SYNCED)?;

    let watch = clock
        .wait(*PHASE_TIMEOUT)
        .await
        .ok_or("timed out waiting for the burst's events")?;
    figures.watch_seconds = watch.as_secs_f64();
    figures.rss_steady_mib = rss_mib();
    reset_high_water();
    let relist_started = Instant::now();
    announce(WATCHED)?;
    wait_until("the relist", || syncs.load(Ordering::Acquire) >= 2).await?;
    figures.relist_seconds = relist_started.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    figures.relist_peak_mib = high_water_mib();
    task.abort();
    Ok(figures)
}
