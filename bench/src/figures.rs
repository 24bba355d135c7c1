//! [`Figures`]: what one client process measured in one run.

use serde::{Deserialize, Serialize};

/// One run of one client, as it reports it on its `result` line. Memory is
/// in MiB of RSS; times in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The client's name ([`ClientKind::name`](crate::clients::ClientKind::name)).
    pub client: String,
    /// Objects the server holds (and the cache held once synced).
    pub pods: usize,
    /// From the start of the first request to a synced cache.
    pub sync_seconds: f64,
    /// RSS before the first request (runtime and HTTP client built).
    pub rss_baseline_mib: f64,
    /// The client's CPU time (user and system, all threads) from the
    /// start of its first request to the moment it sees its cache synced
    /// (deliveries to handlers still under way are not in it); `None` for
    /// `limit`.
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// The server's CPU time over the same sync (its processes', filled by
    /// the orchestrator: the test server's, or kube-apiserver's and etcd's).
    #[serde(default)]
    pub server_cpu_seconds: Option<f64>,
    /// RSS once synced and settled (the watch open, handlers idle).
    pub rss_synced_mib: f64,
    /// How much of the RSS growth from the baseline to synced is
    /// file-backed pages: the program's code paged in as the sync first
    /// runs it (a few MiB, whatever the number of objects), not memory
    /// allocated.
    #[serde(default)]
    pub rss_file_growth_mib: Option<f64>,
    /// Watch events applied in the burst.
    pub events: u64,
    /// From the first to the last event of the burst.
    pub watch_seconds: f64,
    /// RSS after the burst, just before the forced relist: the steady state.
    pub rss_steady_mib: f64,
    /// The RSS high-water mark during the relist.
    pub relist_peak_mib: f64,
    /// From the relist order to a cache replaced and handlers idle.
    pub relist_seconds: f64,
    /// Warm restart (clients that save their cache): from the start of a
    /// new informer over the saved snapshot to a synced cache.
    #[serde(default)]
    pub restart_seconds: Option<f64>,
    /// Lists and watch-lists the restarted informer made (0 when it
    /// resumed).
    #[serde(default)]
    pub restart_listings: Option<u64>,
    /// The snapshot's size on disk, in MiB.
    #[serde(default)]
    pub snapshot_mib: Option<f64>,
    /// How long writing the snapshot took (reading the cache included), in
    /// seconds.
    #[serde(default)]
    pub snapshot_write_seconds: Option<f64>,
    /// A lister `get` of a key not read before, in microseconds (a decode
    /// in compact storage).
    #[serde(default)]
    pub lister_get_miss_us: Option<f64>,
    /// The same `get` again, in microseconds.
    #[serde(default)]
    pub lister_get_hit_us: Option<f64>,
    /// A lister `list()` of every object after one warm-up `list()`, in
    /// milliseconds.
    #[serde(default)]
    pub lister_list_ms: Option<f64>,
    /// A ReplicaSet controller's reads: lists of one group of pods (by
    /// namespace and label selector, N / 100 pods) from the cache, cycling
    /// over the 100 groups, per second.
    #[serde(default)]
    pub replicaset_reads_per_s: Option<f64>,
    /// RSS right after the ReplicaSet reads, in MiB: the synced cache plus
    /// what reads leave behind (the lister's decode cache, at most its
    /// budget, and anything else they keep).
    #[serde(default)]
    pub rss_after_reads_mib: Option<f64>,
    /// The bytes the informer's cache keeps (`cache_bytes`: entries and
    /// their parsed metadata, without allocator overhead), read with
    /// [`rss_synced_mib`](Self::rss_synced_mib), in MiB.
    #[serde(default)]
    pub cache_mib: Option<f64>,
}

impl Figures {
    /// RSS the cache added per object, in KiB.
    pub fn kib_per_object(&self) -> f64 {
        (self.rss_synced_mib - self.rss_baseline_mib) * 1024.0 / self.pods.max(1) as f64
    }

    /// A ReplicaSet read's time per pod it returned, in microseconds.
    pub fn replicaset_us_per_pod(&self) -> Option<f64> {
        let reads = self.replicaset_reads_per_s.filter(|reads| *reads > 0.0)?;
        let per_group = self.pods as f64 / crate::clients::REPLICASET_GROUPS as f64;
        Some(1e6 / (reads * per_group))
    }

    /// RSS the process grew by once synced, over the bytes its cache
    /// keeps: 1.0 is the physical floor.
    pub fn rss_over_cache(&self) -> Option<f64> {
        let cache = self.cache_mib.filter(|mib| *mib > 0.0)?;
        Some((self.rss_synced_mib - self.rss_baseline_mib) / cache)
    }

    /// [`rss_over_cache`](Self::rss_over_cache) without the file-backed
    /// growth: the memory the process allocated over the bytes its cache
    /// keeps.
    pub fn anon_over_cache(&self) -> Option<f64> {
        let cache = self.cache_mib.filter(|mib| *mib > 0.0)?;
        let file = self.rss_file_growth_mib?;
        Some((self.rss_synced_mib - self.rss_baseline_mib - file) / cache)
    }

    /// Watch events applied per second.
    pub fn events_per_second(&self) -> f64 {
        if self.watch_seconds > 0.0 {
            self.events.saturating_sub(1) as f64 / self.watch_seconds
        } else {
            f64::NAN
        }
    }

    /// The warm restart's time to synced over the cold sync's; NaN when
    /// not measured.
    pub fn restart_ratio(&self) -> f64 {
        self.restart_seconds
            .map_or(f64::NAN, |warm| warm / self.sync_seconds)
    }

    /// The relist's peak RSS over the steady state.
    pub fn relist_peak_ratio(&self) -> f64 {
        self.relist_peak_mib / self.rss_steady_mib
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_figures() {
        let figures = Figures {
            pods: 1024,
            rss_baseline_mib: 10.0,
            rss_synced_mib: 30.0,
            events: 1001,
            watch_seconds: 0.5,
            rss_steady_mib: 40.0,
            relist_peak_mib: 52.0,
            ..Figures::default()
        };
        assert_eq!(figures.kib_per_object(), 20.0);
        assert_eq!(figures.events_per_second(), 2000.0);
        assert_eq!(figures.relist_peak_ratio(), 1.3);
    }
}
