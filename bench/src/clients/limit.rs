//! `limit`: what a naive client costs at least. Pages of 500 are fetched
//! and decoded with serde_json into k8s-openapi's `List<Pod>` one after
//! the other on one thread (no overlap of fetching and decoding), and kept
//! in a hash map by namespace and name; the watch is read chunk by chunk,
//! cut at newlines and each line decoded into `WatchEvent<Pod>`. A 410 in
//! the watch relists into a new map that replaces the old one.

use std::collections::HashMap;
use std::time::Instant;

use k8s_openapi::List;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::WatchEvent;

use super::ClientPlan;
use crate::protocol::{SYNCED, WATCHED, announce};
use crate::{BoxError, EventClock, Figures};
use clientgo_testing::process_memory::{high_water_mib, reset_high_water, rss_mib};

type Cache = HashMap<(String, String), Pod>;

fn key(pod: &Pod) -> (String, String) {
    (
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone().unwrap_or_default(),
    )
}

fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// Lists every pod in pages of 500; returns the cache and the list's
/// resourceVersion.
async fn list(http: &reqwest::Client, url: &str) -> Result<(Cache, String), BoxError> {
    let mut cache = Cache::new();
    let mut next: Option<String> = None;
    loop {
        let mut page_url = format!("{url}/api/v1/pods?limit=500");
        if let Some(token) = &next {
            page_url.push_str("&continue=");
            page_url.push_str(&encode(token));
        }
        let body = http
            .get(&page_url)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        let page: List<Pod> = serde_json::from_slice(&body)?;
        for pod in page.items {
            cache.insert(key(&pod), pod);
        }
        next = page.metadata.continue_.filter(|token| !token.is_empty());
        if next.is_none() {
            let resource_version = page.metadata.resource_version.unwrap_or_default();
            return Ok((cache, resource_version));
        }
    }
}

pub(super) async fn run(plan: &ClientPlan) -> Result<Figures, BoxError> {
    // reqwest is built with rustls and no default crypto provider (as
    // clientgo-rest uses it); install ring's, as clientgo-rest does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build()?;
    let clock = EventClock::new(plan.events);
    let mut figures = Figures {
        rss_baseline_mib: rss_mib(),
        ..Figures::default()
    };
    let started = Instant::now();
    let (mut cache, mut resource_version) = list(&http, &plan.url).await?;
    figures.sync_seconds = started.elapsed().as_secs_f64();
    if cache.len() != plan.pods {
        return Err(format!("synced with {} pods, expected {}", cache.len(), plan.pods).into());
    }
    figures.rss_synced_mib = rss_mib();
    announce(SYNCED)?;

    let mut relist_started = None;
    loop {
        let watch_url = format!(
            "{}/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion={}",
            plan.url,
            encode(&resource_version)
        );
        let mut response = http.get(&watch_url).send().await?.error_for_status()?;
        let mut buffer: Vec<u8> = Vec::new();
        let mut gone = false;
        'stream: while let Some(chunk) = response.chunk().await? {
            buffer.extend_from_slice(&chunk);
            let mut start = 0;
            while let Some(end) = buffer[start..].iter().position(|byte| *byte == b'\n') {
                let line = &buffer[start..start + end];
                start += end + 1;
                match serde_json::from_slice::<WatchEvent<Pod>>(line)? {
                    WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                        resource_version =
                            pod.metadata.resource_version.clone().unwrap_or_default();
                        cache.insert(key(&pod), pod);
                        clock.record();
                    }
                    WatchEvent::Deleted(pod) => {
                        resource_version =
                            pod.metadata.resource_version.clone().unwrap_or_default();
                        cache.remove(&key(&pod));
                    }
                    WatchEvent::Bookmark {
                        resource_version: bookmark,
                        ..
                    } => resource_version = bookmark,
                    WatchEvent::ErrorStatus(status) if status.code == Some(410) => {
                        gone = true;
                        break 'stream;
                    }
                    WatchEvent::ErrorStatus(status) => {
                        return Err(format!("watch error: {:?}", status.message).into());
                    }
                    WatchEvent::ErrorOther(_) => return Err("watch error".into()),
                }
                if relist_started.is_none() && clock.count() >= plan.events {
                    let watch = clock
                        .wait(std::time::Duration::ZERO)
                        .await
                        .ok_or("the clock missed its last event")?;
                    figures.watch_seconds = watch.as_secs_f64();
                    figures.rss_steady_mib = rss_mib();
                    reset_high_water();
                    relist_started = Some(Instant::now());
                    announce(WATCHED)?;
                }
            }
            buffer.drain(..start);
        }
        if gone {
            // The naive relist: a whole new cache, then a swap.
            let (fresh, fresh_version) = list(&http, &plan.url).await?;
            cache = fresh;
            resource_version = fresh_version;
            if let Some(relist_started) = relist_started {
                figures.relist_seconds = relist_started.elapsed().as_secs_f64();
                figures.relist_peak_mib = high_water_mib();
                drop(cache);
                return Ok(figures);
            }
        }
    }
}
