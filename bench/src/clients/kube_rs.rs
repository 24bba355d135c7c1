//! kube-rs 5: `watcher` → `default_backoff` → `reflect` into a reflector
//! store, the stream polled by a task that counts applied events.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clientgo_testing::process_memory::rss_mib;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};

use super::{Baseline, CacheClient, ClientPlan, measure, replicaset_reads};
use crate::{BoxError, EventClock, Figures};

pub(super) async fn run(plan: &ClientPlan, streaming: bool) -> Result<Figures, BoxError> {
    let config = crate::real_server::kube_config(&plan.url).await?;
    let client = kube::Client::try_from(config)?;
    let api = kube::Api::<Pod>::all(client);
    let (reader, writer) = reflector::store::<Pod>();
    let mut watcher_config = watcher::Config::default();
    if streaming {
        watcher_config = watcher_config.streaming_lists();
    }
    let clock = Arc::new(EventClock::new(plan.events));
    let syncs = Arc::new(AtomicU64::new(0));
    let baseline = Baseline::now();
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
    let store = ReflectorStore { reader, syncs };
    let measured = measure(plan, &store, &clock, started, baseline).await;
    task.abort();
    let mut figures = measured?;
    if plan.sync_only {
        return Ok(figures);
    }
    // A ReplicaSet controller's reads: the store has no index, so each
    // list filters every pod (what a kube-rs controller writes).
    let reader = &store.reader;
    figures.replicaset_reads_per_s =
        Some(replicaset_reads::reads_per_second(reader.len(), |group| {
            reader
                .state_filter(|pod| {
                    pod.metadata.namespace.as_deref() == Some(group.namespace.as_str())
                        && pod
                            .metadata
                            .labels
                            .as_ref()
                            .and_then(|labels| labels.get("app"))
                            == Some(&group.app)
                })
                .len()
        })?);
    figures.rss_after_reads_mib = Some(rss_mib());
    Ok(figures)
}

/// The reflector's store and the count of `InitDone` events seen after it.
struct ReflectorStore {
    reader: reflector::Store<Pod>,
    syncs: Arc<AtomicU64>,
}

impl CacheClient for ReflectorStore {
    fn synced(&self) -> bool {
        self.syncs() >= 1
    }

    fn cached(&self) -> usize {
        self.reader.len()
    }

    fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Acquire)
    }

    /// The reflector applies each event before passing it on.
    fn idle(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("{} pods cached, {} syncs", self.cached(), self.syncs())
    }
}
