//! [`ExpirationCache`]: a store whose entries expire (client-go's
//! `ExpirationCache` / `NewTTLStore`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::Object;
use clientgo_apimachinery::clock::{Clock, RealClock};
use parking_lot::Mutex;

use crate::error::StoreError;
use crate::key::{KeyFunc, ObjectOrTombstone, meta_namespace_key_func};
use crate::store::{ReflectorStore, Store};

/// A stored object with the time it was stored.
#[derive(Debug)]
pub struct TimestampedEntry<K> {
    /// The object.
    pub object: Arc<K>,
    /// When it was added or last updated.
    pub timestamp: Instant,
    /// Its key.
    pub key: String,
}

/// Decides whether an entry has expired.
pub trait ExpirationPolicy<K>: Send + Sync {
    /// Whether `entry` has expired.
    fn is_expired(&self, entry: &TimestampedEntry<K>) -> bool;
}

/// Entries expire when strictly older than a TTL; a zero TTL never expires.
#[derive(Debug, Clone)]
pub struct TtlPolicy {
    ttl: Duration,
    clock: Arc<dyn Clock>,
}

impl TtlPolicy {
    /// A TTL policy on the real clock.
    pub fn new(ttl: Duration) -> Self {
        TtlPolicy::with_clock(ttl, Arc::new(RealClock))
    }

    /// A TTL policy on the given clock (tests pass a fake one).
    pub fn with_clock(ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        TtlPolicy { ttl, clock }
    }
}

impl<K> ExpirationPolicy<K> for TtlPolicy {
    /// Expired iff the TTL is non-zero and the entry is *strictly* older:
    /// an entry exactly at the TTL is still alive.
    fn is_expired(&self, entry: &TimestampedEntry<K>) -> bool {
        !self.ttl.is_zero() && self.clock.since(entry.timestamp) > self.ttl
    }
}

/// A store that forgets entries once an [`ExpirationPolicy`] says so.
///
/// Expiry is lazy: `get`, `get_by_key` and `list` check the entries they
/// touch and delete expired ones. They do so under the same lock as
/// writes, so a value written after the check began can never be deleted
/// by a stale check. `list_keys` does not check (it may name expired keys),
/// as in client-go. `update` is `add`, and refreshes the timestamp;
/// `replace` stamps every entry with one timestamp; `resync` does nothing.
pub struct ExpirationCache<K> {
    key_func: KeyFunc<K>,
    policy: Box<dyn ExpirationPolicy<K>>,
    clock: Arc<dyn Clock>,
    state: Mutex<State<K>>,
}

struct State<K> {
    items: HashMap<String, TimestampedEntry<K>>,
    resource_version: String,
}

impl<K> fmt::Debug for ExpirationCache<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpirationCache")
            .field("entries", &self.state.lock().items.len())
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> ExpirationCache<K> {
    /// A cache whose entries live `ttl` on the real clock (client-go's
    /// `NewTTLStore`).
    pub fn with_ttl(ttl: Duration) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(RealClock);
        ExpirationCache::new(
            meta_namespace_key_func(),
            Box::new(TtlPolicy::with_clock(ttl, Arc::clone(&clock))),
            clock,
        )
    }

    /// A cache with a key function, a policy, and the clock that stamps
    /// entries.
    pub fn new(
        key_func: KeyFunc<K>,
        policy: Box<dyn ExpirationPolicy<K>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        ExpirationCache {
            key_func,
            policy,
            clock,
            state: Mutex::new(State {
                items: HashMap::new(),
                resource_version: String::new(),
            }),
        }
    }

    /// The live object under `key`, deleting it if it has expired.
    fn live_locked(&self, state: &mut State<K>, key: &str) -> Option<Arc<K>> {
        let entry = state.items.get(key)?;
        if self.policy.is_expired(entry) {
            state.items.remove(key);
            return None;
        }
        Some(Arc::clone(&entry.object))
    }
}

impl<K: Object + Send + Sync + 'static> ReflectorStore<K> for ExpirationCache<K> {
    fn add(&self, object: Arc<K>) -> Result<(), StoreError> {
        let key = (self.key_func)(&object)?;
        let timestamp = self.clock.now();
        let mut state = self.state.lock();
        if let Some(rv) = object.resource_version() {
            rv.clone_into(&mut state.resource_version);
        }
        state.items.insert(
            key.clone(),
            TimestampedEntry {
                object,
                timestamp,
                key,
            },
        );
        Ok(())
    }

    fn update(&self, object: Arc<K>) -> Result<(), StoreError> {
        self.add(object)
    }

    fn delete(&self, object: ObjectOrTombstone<K>) -> Result<(), StoreError> {
        let key = object.key(&self.key_func)?;
        let mut state = self.state.lock();
        state.items.remove(&key);
        if let ObjectOrTombstone::Object(object) = &object
            && let Some(rv) = object.resource_version()
        {
            rv.clone_into(&mut state.resource_version);
        }
        Ok(())
    }

    fn replace(&self, objects: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError> {
        let timestamp = self.clock.now();
        let mut items = HashMap::with_capacity(objects.len());
        for object in objects {
            let key = (self.key_func)(&object)?;
            items.insert(
                key.clone(),
                TimestampedEntry {
                    object,
                    timestamp,
                    key,
                },
            );
        }
        let mut state = self.state.lock();
        state.items = items;
        state.resource_version = resource_version.to_string();
        Ok(())
    }

    fn resync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn bookmark(&self, resource_version: &str) -> Result<(), StoreError> {
        self.state.lock().resource_version = resource_version.to_string();
        Ok(())
    }
}

impl<K: Object + Send + Sync + 'static> Store<K> for ExpirationCache<K> {
    /// Every live object; expired ones are deleted on the way.
    fn list(&self) -> Vec<Arc<K>> {
        let mut state = self.state.lock();
        let policy = &self.policy;
        state.items.retain(|_, entry| !policy.is_expired(entry));
        state
            .items
            .values()
            .map(|entry| Arc::clone(&entry.object))
            .collect()
    }

    /// Every key, including expired ones not yet deleted.
    fn list_keys(&self) -> Vec<String> {
        self.state.lock().items.keys().cloned().collect()
    }

    fn get(&self, object: &K) -> Result<Option<Arc<K>>, StoreError> {
        let key = (self.key_func)(object)?;
        Ok(self.get_by_key(&key))
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        let mut state = self.state.lock();
        self.live_locked(&mut state, key)
    }

    fn last_store_sync_resource_version(&self) -> String {
        self.state.lock().resource_version.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::config_map;
    use clientgo_apimachinery::clock::FakeClock;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn object(name: &str) -> Arc<ConfigMap> {
        config_map(name, "1")
    }

    fn cache(ttl: Duration) -> (ExpirationCache<ConfigMap>, Arc<FakeClock>) {
        let clock = Arc::new(FakeClock::new());
        let cache = ExpirationCache::new(
            meta_namespace_key_func(),
            Box::new(TtlPolicy::with_clock(ttl, clock.clone())),
            clock.clone(),
        );
        (cache, clock)
    }

    #[test]
    fn entries_expire_only_when_strictly_older_than_the_ttl() {
        let (cache, clock) = cache(Duration::from_secs(10));
        cache.add(object("a")).unwrap();
        clock.step(Duration::from_secs(10));
        assert!(
            cache.get_by_key("a").is_some(),
            "exactly at the TTL it is alive"
        );
        clock.step(Duration::from_nanos(1));
        assert!(cache.get_by_key("a").is_none());
        assert!(cache.list_keys().is_empty(), "the expired read deleted it");
    }

    #[test]
    fn zero_ttl_never_expires() {
        let (cache, clock) = cache(Duration::ZERO);
        cache.add(object("a")).unwrap();
        clock.step(Duration::from_secs(1_000_000));
        assert!(cache.get_by_key("a").is_some());
    }

    #[test]
    fn list_filters_and_list_keys_does_not() {
        let (cache, clock) = cache(Duration::from_secs(5));
        cache.add(object("old")).unwrap();
        clock.step(Duration::from_secs(4));
        cache.add(object("new")).unwrap();
        clock.step(Duration::from_secs(2));
        let mut keys = cache.list_keys();
        keys.sort();
        assert_eq!(keys, ["new", "old"], "list_keys names the expired key");
        let listed: Vec<String> = cache
            .list()
            .iter()
            .map(|o| o.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(listed, ["new"]);
        assert_eq!(cache.list_keys(), ["new"], "list deleted the expired entry");
    }

    #[test]
    fn update_refreshes_and_replace_stamps_everything_at_once() {
        let (cache, clock) = cache(Duration::from_secs(5));
        cache.add(object("a")).unwrap();
        clock.step(Duration::from_secs(4));
        cache.update(object("a")).unwrap();
        clock.step(Duration::from_secs(4));
        assert!(
            cache.get_by_key("a").is_some(),
            "update refreshed the timestamp"
        );
        cache.replace(vec![object("x"), object("y")], "7").unwrap();
        assert!(cache.get_by_key("a").is_none());
        clock.step(Duration::from_secs(6));
        assert!(cache.list().is_empty());
        assert_eq!(cache.last_store_sync_resource_version(), "7");
    }

    #[test]
    fn delete_and_get_by_object() {
        let (cache, _) = cache(Duration::from_secs(5));
        cache.add(object("a")).unwrap();
        assert!(cache.get(&object("a")).unwrap().is_some());
        cache.delete(object("a").into()).unwrap();
        assert!(cache.get(&object("a")).unwrap().is_none());
        cache.resync().unwrap();
    }

    #[test]
    fn with_ttl_uses_the_real_clock() {
        let cache = ExpirationCache::<ConfigMap>::with_ttl(Duration::from_secs(3600));
        cache.add(object("a")).unwrap();
        assert!(cache.get_by_key("a").is_some());
    }
}
