//! [`MutationCache`]: read-your-own-writes over an informer's cache
//! (client-go's `MutationCache`).

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::Object;
use clientgo_apimachinery::clock::{Clock, RealClock};
use parking_lot::Mutex;

use crate::error::StoreError;
use crate::indexer::Indexer;
use crate::key::ObjectOrTombstone;
use crate::lru_cache::LruCache;
use crate::store::Store;

/// How a [`MutationCache`] is built.
#[derive(Debug, Clone)]
pub struct MutationCacheOptions {
    ttl: Duration,
    include_adds: bool,
    max_cache_size: usize,
    clock: Arc<dyn Clock>,
}

impl Default for MutationCacheOptions {
    /// A TTL of 5 minutes, at most 100 entries, no adds, the real clock.
    fn default() -> Self {
        MutationCacheOptions {
            ttl: Duration::from_secs(5 * 60),
            include_adds: false,
            max_cache_size: 100,
            clock: Arc::new(RealClock),
        }
    }
}

impl MutationCacheOptions {
    /// How long a mutation is remembered.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Also serve objects the informer has not seen yet (your own creates).
    /// Without it a key missing from the informer's cache is reported
    /// missing, since "not seen created yet" and "deleted since" cannot be
    /// told apart.
    pub fn include_adds(mut self, include: bool) -> Self {
        self.include_adds = include;
        self
    }

    /// The most mutations remembered; the least recently used go first.
    pub fn max_cache_size(mut self, size: usize) -> Self {
        self.max_cache_size = size.max(1);
        self
    }

    /// The clock for the TTL (tests pass a fake one).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

enum Remembered<K> {
    /// An object this process wrote.
    Object(Arc<K>),
    /// The informer saw this key deleted: a later mutation of the same
    /// object (same UID, or not newer) must not bring it back.
    Deleted {
        uid: Option<String>,
        resource_version: Option<u64>,
    },
}

struct Entry<K> {
    remembered: Remembered<K>,
    expires: Instant,
}

/// The remembered entries: at most `max_cache_size`, least recently used
/// out first, each forgotten once its TTL passes.
struct Lru<K> {
    entries: LruCache<Entry<K>>,
}

impl<K> Lru<K> {
    fn get(&mut self, key: &str, now: Instant) -> Option<&Remembered<K>> {
        if self.entries.peek(key)?.expires <= now {
            self.entries.remove(key);
            return None;
        }
        self.entries.get(key).map(|entry| &entry.remembered)
    }

    fn insert(&mut self, key: String, remembered: Remembered<K>, expires: Instant) {
        self.entries.insert(
            key,
            Entry {
                remembered,
                expires,
            },
            1,
        );
    }

    fn remove(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// Keys from least to most recently used.
    fn keys(&self) -> Vec<String> {
        self.entries.keys().map(str::to_string).collect()
    }
}

/// A short-lived overlay of objects this process wrote, layered over an
/// informer's [`Indexer`], so a controller reads its own writes before the
/// watch delivers them.
///
/// Reads return whichever is newer, the cached object or the remembered
/// write, comparing resourceVersions as integers (the API server's are);
/// an older remembered write is forgotten. Feed the informer's events to
/// [`on_add_or_update`](Self::on_add_or_update) and
/// [`on_delete`](Self::on_delete) to forget writes the cache has caught up
/// with and to stop late writes from resurrecting deleted objects.
///
/// A resourceVersion that is not an integer is a
/// [`StoreError::NonIntegerResourceVersion`] (client-go panics).
///
/// **Locking.** One mutex guards the overlay; the indexer is read while it
/// is held (lock order: mutation cache, then indexer).
pub struct MutationCache<K> {
    backing: Arc<Indexer<K>>,
    options: MutationCacheOptions,
    lru: Mutex<Lru<K>>,
}

impl<K> fmt::Debug for MutationCache<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutationCache")
            .field("remembered", &self.lru.lock().entries.len())
            .field("options", &self.options)
            .finish()
    }
}

fn integer_resource_version<K: Object>(key: &str, object: &K) -> Result<Option<u64>, StoreError> {
    match object.resource_version() {
        None | Some("") => Ok(None),
        Some(rv) => {
            rv.parse::<u64>()
                .map(Some)
                .map_err(|_| StoreError::NonIntegerResourceVersion {
                    key: key.to_string(),
                    resource_version: rv.to_string(),
                })
        }
    }
}

impl<K: Object + Send + Sync + 'static> MutationCache<K> {
    /// An overlay over `backing`.
    pub fn new(backing: Arc<Indexer<K>>, options: MutationCacheOptions) -> Self {
        let entries = LruCache::new(options.max_cache_size);
        MutationCache {
            backing,
            options,
            lru: Mutex::new(Lru { entries }),
        }
    }

    /// The newer of `backing` and the remembered write for `key`; forgets
    /// the write when the cache has caught up.
    fn newer(&self, lru: &mut Lru<K>, key: &str, backing: Arc<K>) -> Result<Arc<K>, StoreError> {
        let now = self.options.clock.now();
        let Some(Remembered::Object(mutated)) = lru.get(key, now) else {
            return Ok(backing);
        };
        let mutated = Arc::clone(mutated);
        let backing_rv = integer_resource_version(key, &*backing)?;
        let mutated_rv = integer_resource_version(key, &*mutated)?;
        if backing_rv >= mutated_rv {
            lru.remove(key);
            return Ok(backing);
        }
        Ok(mutated)
    }

    /// The object under `key`: the cache's, or a newer write of ours.
    pub fn get_by_key(&self, key: &str) -> Result<Option<Arc<K>>, StoreError> {
        let mut lru = self.lru.lock();
        match self.backing.get_by_key(key) {
            Some(backing) => self.newer(&mut lru, key, backing).map(Some),
            None if self.options.include_adds => {
                let now = self.options.clock.now();
                Ok(match lru.get(key, now) {
                    Some(Remembered::Object(object)) => Some(Arc::clone(object)),
                    _ => None,
                })
            }
            None => Ok(None),
        }
    }

    /// The objects indexed under `value`, each the newer of cached and
    /// written; with `include_adds`, also our writes not yet cached whose
    /// index values include `value`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        let keys = self.backing.index_keys(index_name, value)?;
        let mut lru = self.lru.lock();
        let mut result = Vec::with_capacity(keys.len());
        let mut seen: HashSet<&str> = HashSet::with_capacity(keys.len());
        for key in &keys {
            seen.insert(key);
            if let Some(backing) = self.backing.get_by_key(key) {
                result.push(self.newer(&mut lru, key, backing)?);
            }
        }
        if self.options.include_adds {
            let indexers = self.backing.indexers();
            let Some(index_func) = indexers.get(index_name) else {
                return Ok(result);
            };
            let now = self.options.clock.now();
            for key in lru.keys() {
                if seen.contains(key.as_str()) {
                    continue;
                }
                let Some(Remembered::Object(object)) = lru.get(&key, now) else {
                    continue;
                };
                let object = Arc::clone(object);
                if index_func(&object).is_ok_and(|values| values.iter().any(|v| v == value)) {
                    result.push(object);
                }
            }
        }
        Ok(result)
    }

    /// Remembers an object this process wrote (the API server's response).
    /// Ignored when an even newer write is remembered, or when the informer
    /// already saw this object deleted (same UID, or not newer than the
    /// deletion).
    pub fn mutation(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = self.backing.key_of(&object)?;
        let object_rv = integer_resource_version(&key, &*object)?;
        let mut lru = self.lru.lock();
        let now = self.options.clock.now();
        match lru.get(&key, now) {
            Some(Remembered::Object(existing)) => {
                let existing_rv = integer_resource_version(&key, &**existing)?;
                if object_rv < existing_rv {
                    return Ok(());
                }
            }
            Some(Remembered::Deleted {
                uid,
                resource_version,
            }) => {
                let same_uid = uid.is_some() && uid.as_deref() == object.uid();
                if same_uid || object_rv <= *resource_version {
                    return Ok(());
                }
            }
            None => {}
        }
        lru.insert(key, Remembered::Object(object), now + self.options.ttl);
        Ok(())
    }

    /// The informer added or updated `object`: forget a remembered write it
    /// has caught up with.
    pub fn on_add_or_update(&self, object: &K) -> Result<(), StoreError> {
        let key = self.backing.key_of(object)?;
        let object_rv = integer_resource_version(&key, object)?;
        let mut lru = self.lru.lock();
        let now = self.options.clock.now();
        if let Some(Remembered::Object(mutated)) = lru.get(&key, now)
            && object_rv >= integer_resource_version(&key, &**mutated)?
        {
            lru.remove(&key);
        }
        Ok(())
    }

    /// The informer saw `object` deleted: forget a remembered write of the
    /// same object (same UID, or not newer), and remember the deletion so a
    /// late write cannot bring it back.
    pub fn on_delete(&self, object: &ObjectOrTombstone<K>) -> Result<(), StoreError> {
        let key = object.key(self.backing.key_func())?;
        let mut lru = self.lru.lock();
        let now = self.options.clock.now();
        let Some(deleted) = object.object() else {
            lru.remove(&key);
            return Ok(());
        };
        let deleted_rv = integer_resource_version(&key, &**deleted)?;
        if let Some(Remembered::Object(mutated)) = lru.get(&key, now) {
            let same_uid = deleted.uid().is_some() && deleted.uid() == mutated.uid();
            if same_uid || deleted_rv >= integer_resource_version(&key, &**mutated)? {
                lru.remove(&key);
            }
        }
        if !matches!(lru.get(&key, now), Some(Remembered::Object(_))) {
            lru.insert(
                key,
                Remembered::Deleted {
                    uid: deleted.uid().map(str::to_string),
                    resource_version: deleted_rv,
                },
                now + self.options.ttl,
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::NAMESPACE_INDEX;
    use crate::indexer::IndexerOptions;
    use crate::store::ReflectorStore;
    use clientgo_apimachinery::clock::FakeClock;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn object(name: &str, rv: &str, uid: &str) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("ns".into()),
                name: Some(name.into()),
                resource_version: Some(rv.into()),
                uid: Some(uid.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn rv_of(object: &Option<Arc<ConfigMap>>) -> Option<String> {
        object
            .as_ref()
            .and_then(|o| o.metadata.resource_version.clone())
    }

    fn setup(options: MutationCacheOptions) -> (Arc<Indexer<ConfigMap>>, MutationCache<ConfigMap>) {
        let indexer = Arc::new(Indexer::new(IndexerOptions::default().namespace_index()));
        let cache = MutationCache::new(Arc::clone(&indexer), options);
        (indexer, cache)
    }

    #[test]
    fn returns_the_newer_of_cache_and_mutation() {
        let (indexer, cache) = setup(MutationCacheOptions::default());
        indexer.add(object("a", "5", "u")).unwrap();
        cache.mutation(object("a", "7", "u")).unwrap();
        assert_eq!(
            rv_of(&cache.get_by_key("ns/a").unwrap()).as_deref(),
            Some("7")
        );
        // The informer catches up: the cached object wins and the write is forgotten.
        indexer.update(object("a", "7", "u")).unwrap();
        assert_eq!(
            rv_of(&cache.get_by_key("ns/a").unwrap()).as_deref(),
            Some("7")
        );
        assert!(cache.lru.lock().entries.is_empty());
    }

    #[test]
    fn older_mutations_are_ignored() {
        let (indexer, cache) = setup(MutationCacheOptions::default());
        indexer.add(object("a", "5", "u")).unwrap();
        cache.mutation(object("a", "9", "u")).unwrap();
        cache.mutation(object("a", "8", "u")).unwrap();
        assert_eq!(
            rv_of(&cache.get_by_key("ns/a").unwrap()).as_deref(),
            Some("9")
        );
    }

    #[test]
    fn adds_are_served_only_with_include_adds() {
        let (_, cache) = setup(MutationCacheOptions::default());
        cache.mutation(object("new", "3", "u")).unwrap();
        assert!(cache.get_by_key("ns/new").unwrap().is_none());
        let (_, cache) = setup(MutationCacheOptions::default().include_adds(true));
        cache.mutation(object("new", "3", "u")).unwrap();
        assert!(cache.get_by_key("ns/new").unwrap().is_some());
        assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 1);
        assert!(cache.by_index(NAMESPACE_INDEX, "other").unwrap().is_empty());
    }

    #[test]
    fn by_index_prefers_newer_mutations() {
        let (indexer, cache) = setup(MutationCacheOptions::default());
        indexer.add(object("a", "1", "u")).unwrap();
        indexer.add(object("b", "1", "v")).unwrap();
        cache.mutation(object("a", "4", "u")).unwrap();
        let mut rvs: Vec<String> = cache
            .by_index(NAMESPACE_INDEX, "ns")
            .unwrap()
            .iter()
            .map(|o| o.metadata.resource_version.clone().unwrap())
            .collect();
        rvs.sort();
        assert_eq!(rvs, ["1", "4"]);
    }

    #[test]
    fn mutations_expire_after_the_ttl() {
        let clock = Arc::new(FakeClock::new());
        let (indexer, cache) = setup(
            MutationCacheOptions::default()
                .ttl(Duration::from_secs(60))
                .clock(clock.clone()),
        );
        indexer.add(object("a", "1", "u")).unwrap();
        cache.mutation(object("a", "2", "u")).unwrap();
        clock.step(Duration::from_secs(61));
        assert_eq!(
            rv_of(&cache.get_by_key("ns/a").unwrap()).as_deref(),
            Some("1")
        );
    }

    #[test]
    fn size_is_bounded_least_recently_used_first() {
        let (indexer, cache) = setup(MutationCacheOptions::default().max_cache_size(2));
        for name in ["a", "b", "c"] {
            indexer.add(object(name, "1", name)).unwrap();
        }
        cache.mutation(object("a", "2", "a")).unwrap();
        cache.mutation(object("b", "2", "b")).unwrap();
        // Reading "a" makes "b" the least recently used.
        let _ = cache.get_by_key("ns/a").unwrap();
        cache.mutation(object("c", "2", "c")).unwrap();
        assert_eq!(
            rv_of(&cache.get_by_key("ns/a").unwrap()).as_deref(),
            Some("2")
        );
        assert_eq!(
            rv_of(&cache.get_by_key("ns/b").unwrap()).as_deref(),
            Some("1")
        );
        assert_eq!(
            rv_of(&cache.get_by_key("ns/c").unwrap()).as_deref(),
            Some("2")
        );
    }

    #[test]
    fn informer_events_forget_caught_up_writes() {
        let (indexer, cache) = setup(MutationCacheOptions::default());
        indexer.add(object("a", "1", "u")).unwrap();
        cache.mutation(object("a", "5", "u")).unwrap();
        cache.on_add_or_update(&*object("a", "4", "u")).unwrap();
        assert_eq!(cache.lru.lock().entries.len(), 1, "not caught up yet");
        cache.on_add_or_update(&*object("a", "5", "u")).unwrap();
        assert!(cache.lru.lock().entries.is_empty());
    }

    #[test]
    fn deletion_tombstones_stop_late_writes_from_resurrecting() {
        let (indexer, cache) = setup(MutationCacheOptions::default().include_adds(true));
        indexer.add(object("a", "1", "u")).unwrap();
        cache.mutation(object("a", "3", "u")).unwrap();
        indexer.delete(object("a", "4", "u").into()).unwrap();
        cache.on_delete(&object("a", "4", "u").into()).unwrap();
        assert!(cache.get_by_key("ns/a").unwrap().is_none());
        // A late response for the same object (same UID) is ignored...
        cache.mutation(object("a", "6", "u")).unwrap();
        assert!(cache.get_by_key("ns/a").unwrap().is_none());
        // ...and so is an older one of another object.
        cache.mutation(object("a", "2", "other")).unwrap();
        assert!(cache.get_by_key("ns/a").unwrap().is_none());
        // A newer object re-created under the name is remembered.
        cache.mutation(object("a", "9", "new")).unwrap();
        assert_eq!(
            rv_of(&cache.get_by_key("ns/a").unwrap()).as_deref(),
            Some("9")
        );
    }

    #[test]
    fn non_integer_resource_versions_are_typed_errors() {
        let (indexer, cache) = setup(MutationCacheOptions::default());
        indexer.add(object("a", "abc", "u")).unwrap();
        cache.mutation(object("a", "5", "u")).unwrap();
        let err = cache.get_by_key("ns/a").unwrap_err();
        assert_eq!(
            err,
            StoreError::NonIntegerResourceVersion {
                key: "ns/a".into(),
                resource_version: "abc".into()
            }
        );
        assert!(cache.mutation(object("b", "x1", "u")).is_err());
    }
}
