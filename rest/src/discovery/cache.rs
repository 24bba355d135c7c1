//! [`CachedDiscovery`]: discovery kept in memory and, optionally, on disk
//! in kubectl's layout (client-go's `memory.MemCacheClient` and
//! `disk.CachedDiscoveryClient`).
//!
//! **On disk**, under `<dir>/<host>` (the server's host and port with every
//! character other than letters, digits, `_`, `/`, `.`, `(` and `)` turned
//! into `_`, as kubectl names it under `~/.kube/cache/discovery`):
//! `servergroups.json` (the group list, the core group `""` first) and
//! `<group>/<version>/serverresources.json` (`v1/serverresources.json` for
//! the core group). A file as old as the time to live (6 hours by
//! default, kubectl's) or older is stale; a missing, stale or unreadable file (torn
//! by a writer that crashed, or not JSON) makes the whole cache a miss,
//! read from the server again and rewritten. Each file is written to a
//! file of its own beside it and renamed over it, so concurrent writers
//! (two kubectl or controller processes) never leave a mix, and a reader
//! sees either the old file or the new one. (Each file is whole; two
//! writers racing may leave one's group list beside the other's resource
//! lists, both read from the same server.) A group or version name that
//! is not a plain DNS label or subdomain is never made a path: such a
//! server's discovery is kept in memory only.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use clientgo_apimachinery::GroupVersionResource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
use parking_lot::Mutex;

use crate::client::error::Error;
use crate::client::rest_client::RestClient;
use crate::discovery::aggregated::ApiDiscovery;
use crate::discovery::discovery_client::Discovery;

/// kubectl's time to live of its discovery cache.
pub const DEFAULT_DISCOVERY_CACHE_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// Counters of a [`CachedDiscovery`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DiscoveryCacheStats {
    /// Answers read from the server.
    pub fetches: u64,
    /// Answers read from the disk cache.
    pub disk_reads: u64,
    /// Disk caches found unusable (missing a file, stale, unreadable).
    pub disk_misses: u64,
    /// Writes to disk that failed (logged; the answer is used anyway).
    pub disk_write_errors: u64,
}

/// Discovery kept until [`invalidate`](Self::invalidate)d: in memory
/// always, on disk too when made [`with_disk`](Self::with_disk).
///
/// Cheap to clone (clones share the cache). Concurrent callers of
/// [`discovery`](Self::discovery) wait for one fetch.
#[derive(Clone)]
pub struct CachedDiscovery {
    inner: Arc<Inner>,
}

struct Inner {
    discovery: Discovery,
    disk: Option<DiskCache>,
    memory: Mutex<Option<Arc<ApiDiscovery>>>,
    /// Held while fetching, so one fetch serves every waiter.
    fetching: tokio::sync::Mutex<()>,
    /// Set by `invalidate`: the next read skips the disk, as client-go's;
    /// cleared by a successful fetch from the server.
    invalidated: std::sync::atomic::AtomicBool,
    /// Bumped by `invalidate`, so a fetch that was under way when it was
    /// called does not keep its older answer.
    generation: AtomicU64,
    fetches: AtomicU64,
    disk_reads: AtomicU64,
    disk_misses: AtomicU64,
    disk_write_errors: AtomicU64,
}

impl std::fmt::Debug for CachedDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedDiscovery")
            .field("disk", &self.inner.disk.as_ref().map(|disk| &disk.dir))
            .finish_non_exhaustive()
    }
}

impl CachedDiscovery {
    /// Discovery of `client`'s server, kept in memory.
    pub fn new(client: RestClient) -> Self {
        Self::make(client, None)
    }

    /// Discovery kept in memory and under `dir` (kubectl's is
    /// `~/.kube/cache/discovery`), files older than `ttl` being stale.
    pub fn with_disk(client: RestClient, dir: impl AsRef<Path>, ttl: Duration) -> Self {
        let dir = dir.as_ref().join(host_dir(client.base_url()));
        Self::make(client, Some(DiskCache { dir, ttl }))
    }

    fn make(client: RestClient, disk: Option<DiskCache>) -> Self {
        CachedDiscovery {
            inner: Arc::new(Inner {
                discovery: Discovery::new(client),
                disk,
                memory: Mutex::new(None),
                fetching: tokio::sync::Mutex::new(()),
                invalidated: std::sync::atomic::AtomicBool::new(false),
                generation: AtomicU64::new(0),
                fetches: AtomicU64::new(0),
                disk_reads: AtomicU64::new(0),
                disk_misses: AtomicU64::new(0),
                disk_write_errors: AtomicU64::new(0),
            }),
        }
    }

    /// The directory of this server's disk cache, if any.
    pub fn disk_dir(&self) -> Option<&Path> {
        self.inner.disk.as_ref().map(|disk| disk.dir.as_path())
    }

    /// The server's discovery: from memory, else from a fresh disk cache,
    /// else from the server ([`Discovery::discover_all`]), which is then
    /// kept in memory and written to disk.
    pub async fn discovery(&self) -> Result<Arc<ApiDiscovery>, Error> {
        if let Some(kept) = self.inner.memory.lock().clone() {
            return Ok(kept);
        }
        let _fetching = self.inner.fetching.lock().await;
        if let Some(kept) = self.inner.memory.lock().clone() {
            return Ok(kept);
        }
        let generation = self.inner.generation.load(Ordering::SeqCst);
        let skip_disk = self.inner.invalidated.load(Ordering::SeqCst);
        if let Some(disk) = &self.inner.disk
            && !skip_disk
        {
            let disk = disk.clone();
            let read = tokio::task::spawn_blocking(move || disk.read()).await;
            match read {
                Ok(Ok(discovery)) => {
                    self.inner.disk_reads.fetch_add(1, Ordering::Relaxed);
                    return Ok(self.keep(Arc::new(discovery), generation));
                }
                Ok(Err(why)) => {
                    self.inner.disk_misses.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(why, "discovery cache on disk not used");
                }
                Err(error) => {
                    self.inner.disk_misses.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%error, "reading the discovery cache failed");
                }
            }
        }
        let discovery = Arc::new(self.inner.discovery.discover_all().await?);
        self.inner.fetches.fetch_add(1, Ordering::Relaxed);
        if self.inner.generation.load(Ordering::SeqCst) == generation {
            self.inner.invalidated.store(false, Ordering::SeqCst);
        }
        if let Some(disk) = &self.inner.disk {
            let (disk, written) = (disk.clone(), Arc::clone(&discovery));
            let wrote = tokio::task::spawn_blocking(move || disk.write(&written)).await;
            if !matches!(wrote, Ok(Ok(()))) {
                self.inner.disk_write_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(?wrote, "could not write the discovery cache");
            }
        }
        Ok(self.keep(discovery, generation))
    }

    /// Keeps `discovery` unless the cache was invalidated since the read
    /// began (the caller still gets it: it was current when asked for).
    fn keep(&self, discovery: Arc<ApiDiscovery>, generation: u64) -> Arc<ApiDiscovery> {
        let mut memory = self.inner.memory.lock();
        if self.inner.generation.load(Ordering::SeqCst) == generation {
            *memory = Some(Arc::clone(&discovery));
        }
        discovery
    }

    /// Forgets what is kept: the next [`discovery`](Self::discovery) asks
    /// the server, and rewrites the disk cache.
    pub fn invalidate(&self) {
        let mut memory = self.inner.memory.lock();
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        self.inner.invalidated.store(true, Ordering::SeqCst);
        *memory = None;
    }

    /// Invalidates the cache when it lists `gvr`, for a caller that just
    /// got a 404 for it: the resource went away (a CRD deleted), so what
    /// is kept is stale. Returns whether it did.
    pub fn invalidate_if_known(&self, gvr: &GroupVersionResource) -> bool {
        let known = self
            .inner
            .memory
            .lock()
            .as_ref()
            .is_some_and(|kept| kept.find(gvr).is_some());
        if known {
            self.invalidate();
        }
        known
    }

    /// The cache's counters.
    pub fn stats(&self) -> DiscoveryCacheStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        DiscoveryCacheStats {
            fetches: read(&self.inner.fetches),
            disk_reads: read(&self.inner.disk_reads),
            disk_misses: read(&self.inner.disk_misses),
            disk_write_errors: read(&self.inner.disk_write_errors),
        }
    }
}

/// kubectl's directory name for a server (see the module documentation).
fn host_dir(base_url: &str) -> String {
    let schemeless = base_url
        .strip_prefix("https://")
        .or_else(|| base_url.strip_prefix("http://"))
        .unwrap_or(base_url)
        .trim_end_matches('/');
    schemeless
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '(' | ')') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One server's discovery files.
#[derive(Debug, Clone)]
struct DiskCache {
    dir: PathBuf,
    ttl: Duration,
}

/// Gives each temporary file a name of its own within the process.
static TEMPORARY: AtomicU64 = AtomicU64::new(0);

impl DiskCache {
    fn groups_file(&self) -> PathBuf {
        self.dir.join("servergroups.json")
    }

    /// The file of a group version; an error for a name that is not a
    /// plain path segment (a hostile server's `..` or `/etc`).
    fn resources_file(&self, group_version: &str) -> Result<PathBuf, String> {
        let plain = |part: &str| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-'))
        };
        let parts: Vec<&str> = group_version.split('/').collect();
        if parts.len() > 2 || !parts.iter().all(|part| plain(part)) {
            return Err(format!(
                "group version {group_version:?} is not a safe path; not cached on disk"
            ));
        }
        Ok(self.dir.join(group_version).join("serverresources.json"))
    }

    /// The cache, when every file is there, fresh and readable; else why
    /// not.
    fn read(&self) -> Result<ApiDiscovery, String> {
        let groups: APIGroupList = self.read_file(&self.groups_file())?;
        let mut lists = Vec::new();
        for group in &groups.groups {
            for version in &group.versions {
                let list: APIResourceList =
                    self.read_file(&self.resources_file(&version.group_version)?)?;
                lists.push(list);
            }
        }
        Ok(ApiDiscovery::from_legacy(&groups, &lists))
    }

    fn read_file<T: serde::de::DeserializeOwned>(&self, path: &Path) -> Result<T, String> {
        let describe = |why: &dyn std::fmt::Display| format!("{}: {why}", path.display());
        let modified = std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .map_err(|error| describe(&error))?;
        let age = SystemTime::now()
            .duration_since(modified)
            .unwrap_or(Duration::ZERO);
        if age >= self.ttl {
            return Err(describe(&format_args!("stale ({} s old)", age.as_secs())));
        }
        let bytes = std::fs::read(path).map_err(|error| describe(&error))?;
        serde_json::from_slice(&bytes).map_err(|error| describe(&error))
    }

    fn write(&self, discovery: &ApiDiscovery) -> std::io::Result<()> {
        let (groups, lists) = discovery.to_legacy();
        for list in &lists {
            let path = self
                .resources_file(&list.group_version)
                .map_err(std::io::Error::other)?;
            write_atomically(&path, list)?;
        }
        // The group list last: a reader that finds it finds the rest.
        write_atomically(&self.groups_file(), &groups)
    }
}

/// Writes `value` as JSON to a file beside `path` and renames it over
/// `path`.
fn write_atomically(path: &Path, value: &impl serde::Serialize) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    let mut temporary = path.as_os_str().to_os_string();
    temporary.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        TEMPORARY.fetch_add(1, Ordering::Relaxed)
    ));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_group_versions_become_paths() {
        let disk = DiskCache {
            dir: PathBuf::from("/cache/host"),
            ttl: DEFAULT_DISCOVERY_CACHE_TTL,
        };
        assert_eq!(
            disk.resources_file("apps/v1").unwrap(),
            PathBuf::from("/cache/host/apps/v1/serverresources.json")
        );
        assert!(disk.resources_file("v1").is_ok());
        for hostile in [
            "../v1",
            "/etc/v1",
            "apps/../../x",
            "a/b/c",
            "",
            "apps/",
            "ap ps/v1",
        ] {
            assert!(disk.resources_file(hostile).is_err(), "{hostile:?}");
        }
    }

    #[test]
    fn the_host_directory_is_kubectls() {
        for (url, dir) in [
            ("https://127.0.0.1:6443", "127.0.0.1_6443"),
            ("http://localhost:8080/", "localhost_8080"),
            ("https://api.example.com", "api.example.com"),
            ("https://[::1]:6443", "___1__6443"),
        ] {
            assert_eq!(host_dir(url), dir, "{url}");
        }
    }
}
