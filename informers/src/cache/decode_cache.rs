//! [`DecodeCache`]: how an informer turns its cached entries into whole
//! objects: the decode, and a cache of recent decodes for listers,
//! bounded in bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use clientgo_apimachinery::{ApiObject, Compact, Protobuf};
use clientgo_store::{FrequencySketch, LruCache, meta_namespace_key};
use parking_lot::Mutex;

use crate::cache::stored::Stored;
use crate::cache::superseded::Superseded;

/// What the cache of an informer in compact storage keeps per object.
pub(crate) type Entry<K> = Compact<K, Protobuf>;

/// Bytes of decoded objects a lister keeps by default: 64 MiB, about
/// 2,000 decoded pods of a real cluster (estimated as
/// `DECODED_EXPANSION` times an entry's bytes).
pub const DEFAULT_DECODE_CACHE_BYTES: usize = 64 << 20;

/// Counters of an informer's decodes in compact storage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Lister reads answered from the cache of recent decodes.
    pub hits: u64,
    /// Lister reads the cache did not answer: each decoded, or shared
    /// the decode a handler holds (which the cache does not keep).
    pub misses: u64,
    /// Of those, decodes the cache's main part did not take: it was full,
    /// and a decode it would have let go was read at least as often
    /// lately. Each waits in the cache's window of recent decodes instead
    /// (an eighth of the budget), if it fits there.
    pub not_admitted: u64,
    /// Decodes for handlers (one per object per event, shared by every
    /// handler of the event while any holds it).
    pub handler_decodes: u64,
    /// Entries that did not decode (or whose transform failed): each is
    /// logged with its key, and skipped where a result was expected.
    pub errors: u64,
    /// Decoded objects the lister cache holds now.
    pub held: usize,
    /// Their estimated bytes (at most the budget).
    pub held_bytes: usize,
}

/// A decode kept for listers: valid while the entry keeps its
/// resourceVersion.
struct Kept<K> {
    resource_version: Option<String>,
    object: Arc<K>,
}

struct State<K> {
    /// The main part, weighted by estimated bytes: seven eighths of the
    /// budget.
    kept: LruCache<Kept<K>>,
    /// The window: the other eighth, the most recent decodes the main
    /// part did not take, least recently used out first.
    window: LruCache<Kept<K>>,
    /// How often each key was read lately, made at the first lister read
    /// that could be kept (never with a budget of 0).
    sketch: Option<FrequencySketch>,
    hasher: std::collections::hash_map::RandomState,
    hits: u64,
    misses: u64,
    not_admitted: u64,
}

impl<K> State<K> {
    /// Counts a lister read of `key`, hit or miss; returns its hash.
    fn seen(&mut self, key: &str) -> u64 {
        let hash = std::hash::BuildHasher::hash_one(&self.hasher, key);
        if self.kept.capacity() == 0 {
            return hash;
        }
        // Sized for the decodes held (the budget is in bytes): made for
        // four times as many once they outgrow it.
        let held = self.kept.len();
        let sketch = self
            .sketch
            .get_or_insert_with(|| FrequencySketch::new(SKETCH_SLOTS_MIN));
        if held > sketch.slots() {
            *sketch = FrequencySketch::new(held * 4);
        }
        sketch.increment(hash);
        hash
    }

    /// The decode kept under `key` if it is of `resource_version`, marked
    /// as used.
    fn hit(&mut self, key: &str, resource_version: Option<&str>) -> Option<Arc<K>> {
        let current = |kept: &&mut Kept<K>| kept.resource_version.as_deref() == resource_version;
        let kept = match self.kept.get(key).filter(current) {
            Some(kept) => Some(kept),
            None => self.window.get(key).filter(current),
        };
        kept.map(|kept| Arc::clone(&kept.object))
    }

    /// Keeps `kept` under `key` (whose hash is `hash`): in the main part
    /// if there is room, or if its key was read more often lately than
    /// each of the main part's least recently used decodes that must go to
    /// make room, which then go; otherwise in the window (if it fits),
    /// whose least recently used go. Returns what left the
    /// cache, for the caller to drop outside the lock (freeing a decoded
    /// object walks its every allocation; the window frees one such old
    /// decode per new one, rather than leaving a reader to free all of a
    /// list's decodes at once).
    fn admit(&mut self, key: &str, hash: u64, kept: Kept<K>, weight: usize) -> Vec<Kept<K>> {
        let mut gone: Vec<Kept<K>> = self.forget(key).into_iter().flatten().collect();
        let capacity = self.kept.capacity();
        let admitted = weight <= capacity
            && (weight <= capacity - self.kept.weight() || self.outweighs_victims(hash, weight));
        if !admitted && weight <= capacity {
            self.not_admitted += 1;
        }
        let part = if admitted {
            &mut self.kept
        } else {
            &mut self.window
        };
        if weight > part.capacity() {
            return gone;
        }
        while weight > part.capacity() - part.weight() {
            let Some((_, old)) = part.pop_oldest() else {
                break;
            };
            gone.push(old);
        }
        part.insert(key.to_string(), kept, weight);
        gone
    }

    /// Whether the key hashed to `hash` was read more often lately than
    /// every decode the full main part would let go to take `weight` more
    /// (least recently used first).
    fn outweighs_victims(&self, hash: u64, weight: usize) -> bool {
        let Some(sketch) = self.sketch.as_ref() else {
            return false;
        };
        let newcomer = sketch.estimate(hash);
        let mut to_free = weight - (self.kept.capacity() - self.kept.weight());
        for (victim, victim_weight) in self.kept.oldest_first() {
            if to_free == 0 {
                break;
            }
            let victim = std::hash::BuildHasher::hash_one(&self.hasher, victim);
            if sketch.estimate(victim) >= newcomer {
                return false;
            }
            to_free = to_free.saturating_sub(victim_weight);
        }
        true
    }

    /// Takes out what is kept under `key`, in either part (a key is only
    /// ever in one).
    fn forget(&mut self, key: &str) -> [Option<Kept<K>>; 2] {
        [self.kept.remove(key), self.window.remove(key)]
    }

    fn holds_any(&self) -> bool {
        !self.kept.is_empty() || !self.window.is_empty()
    }
}

/// The fewest keys a decode cache's [`FrequencySketch`] is sized for
/// (four one-byte counters a key: 4 KiB).
const SKETCH_SLOTS_MIN: usize = 1_024;

/// Turns cached entries of `S` into objects of `K`: for handlers
/// (uncached: a compact entry's own weak slot shares one decode between
/// the handlers of an event) and for listers (through a cache of up to
/// `budget` estimated bytes, each hit checked against the entry's
/// resourceVersion so a read never sees a stale decode). Entries that are
/// the objects themselves (`S` = `K`) are handed out as they are, and
/// nothing is cached or counted.
///
/// **What the cache keeps** (Caffeine's W-TinyLFU, simplified): seven
/// eighths of the budget are the main part, which takes a decode while it
/// has room and, once full, only a decode whose key was read more often
/// lately than its least recently used decode's (a [`FrequencySketch`] of
/// every lister read counts them), which then goes. A decode the main
/// part does not take goes to the window, the last eighth, least recently
/// used out first. Readers that cycle over more objects than the budget
/// holds (a controller listing each group of pods in turn) then hit on
/// the main part instead of evicting, on every miss, a decode about to be
/// read again; and the window frees the decodes they do not keep one at a
/// time, as new ones come, instead of leaving each reader to free a whole
/// list's at once.
///
/// **Locking:** one mutex over the cache and counters, held for a lookup
/// or an insert, never while decoding or freeing a decode.
pub(crate) struct DecodeCache<K, S> {
    state: Mutex<State<K>>,
    /// Counted outside the lock: handlers decode on their own threads,
    /// once per event, and must not wait for a lister's lookup.
    handler_decodes: AtomicU64,
    errors: AtomicU64,
    /// Whether the cache of decodes may hold anything: lets
    /// [`superseded`](Superseded::superseded) skip the lock and the key
    /// in an informer whose lister never decoded (the common case).
    holds_any: AtomicBool,
    _stored: std::marker::PhantomData<fn() -> S>,
}

impl<K, S> DecodeCache<K, S>
where
    K: ApiObject,
    S: Stored<K>,
{
    pub(crate) fn new(budget: usize) -> Self {
        DecodeCache {
            state: Mutex::new(State {
                kept: LruCache::new(if S::DECODES { budget - budget / 8 } else { 0 }),
                window: LruCache::new(if S::DECODES { budget / 8 } else { 0 }),
                sketch: None,
                hasher: std::collections::hash_map::RandomState::new(),
                hits: 0,
                misses: 0,
                not_admitted: 0,
            }),
            handler_decodes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            holds_any: AtomicBool::new(false),
            _stored: std::marker::PhantomData,
        }
    }

    /// The counters so far.
    pub(crate) fn stats(&self) -> DecodeStats {
        let state = self.state.lock();
        DecodeStats {
            held: state.kept.len() + state.window.len(),
            held_bytes: state.kept.weight() + state.window.weight(),
            handler_decodes: self.handler_decodes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            hits: state.hits,
            misses: state.misses,
            not_admitted: state.not_admitted,
        }
    }

    /// `entry`'s object, for a handler; `None` (logged and counted) when
    /// it does not decode.
    pub(crate) fn for_handler(&self, entry: &Arc<S>) -> Option<Arc<K>> {
        if S::DECODES {
            self.handler_decodes.fetch_add(1, Ordering::Relaxed);
        }
        self.decode(entry).map_err(|error| self.failed(&error)).ok()
    }

    /// `entry`'s object, for a lister, through the cache.
    pub(crate) fn for_lister(&self, entry: &Arc<S>) -> Result<Arc<K>, crate::Error> {
        if !S::DECODES {
            return self.decode(entry);
        }
        self.for_lister_at(entry, &meta_namespace_key(&**entry))
    }

    /// [`for_lister`](Self::for_lister) of the entry cached under `key`
    /// (a reader that looked it up by key allocates no second one).
    pub(crate) fn for_lister_at(&self, entry: &Arc<S>, key: &str) -> Result<Arc<K>, crate::Error> {
        if !S::DECODES {
            return self.decode(entry);
        }
        if entry.resource_version().is_none_or(str::is_empty) {
            // Nothing to tell versions apart by: never cached.
            self.state.lock().misses += 1;
            return self
                .decode_unshared(entry)
                .inspect_err(|error| self.failed(error));
        }
        let hash = {
            let mut state = self.state.lock();
            let hash = state.seen(key);
            match state.hit(key, entry.resource_version()) {
                Some(object) => {
                    state.hits += 1;
                    return Ok(object);
                }
                None => state.misses += 1,
            }
            hash
        };
        // Unshared: the entry does not remember it. This cache is what
        // shares a lister's decodes; were the entry to remember one too, its
        // `Weak` would keep the decode's allocation (the size of `K`, 2.4 KB
        // for a `Pod`) after this cache let it go, on every entry ever read.
        let object = self
            .decode_unshared(entry)
            .inspect_err(|error| self.failed(error))?;
        if Arc::weak_count(&object) > 0 {
            // A handler's decode, which its entry remembers: not kept
            // here, or it would outlive the handler with the entry's
            // `Weak` on it. The handler's release lets it go.
            return Ok(object);
        }
        let kept = Kept {
            resource_version: entry.resource_version().map(str::to_string),
            object: Arc::clone(&object),
        };
        let mut state = self.state.lock();
        let gone = state.admit(key, hash, kept, entry.decoded_bytes());
        self.holds_any.store(state.holds_any(), Ordering::Relaxed);
        drop(state);
        drop(gone);
        Ok(object)
    }

    /// `entry`'s object, shared with every other holder of its decode (see
    /// [`Compact::decode`](clientgo_apimachinery::Compact::decode)).
    pub(crate) fn decode(&self, entry: &Arc<S>) -> Result<Arc<K>, crate::Error> {
        Ok(S::object(entry)?)
    }

    /// A decode for one reader, remembered neither here nor by the entry
    /// (see [`Stored::object_unshared`]).
    pub(crate) fn decode_unshared(&self, entry: &Arc<S>) -> Result<Arc<K>, crate::Error> {
        Ok(S::object_unshared(entry)?)
    }

    fn failed(&self, error: &crate::Error) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        tracing::error!(%error, "a cached object does not decode; skipped");
    }
}

/// A decode kept for listers is dropped as soon as its entry stops being
/// current (updated or deleted): it could never be a hit again, and
/// without this the decodes of deleted objects would stay until the
/// budget pushed them out, a growth with every object ever read. (A read
/// that decoded the old version while the update landed may still put it
/// back; it goes at the key's next update or delete, and a hit is always
/// checked against the entry's resourceVersion.)
impl<K, S> Superseded<S> for DecodeCache<K, S>
where
    K: ApiObject,
    S: Stored<K>,
{
    fn superseded(&self, entry: &S) {
        if !S::DECODES || !self.holds_any.load(Ordering::Relaxed) {
            return;
        }
        // The key's decode goes whatever its version: the superseded one
        // is useless, and a newer one (a reader's, between the cache's
        // update and this call) costs one decode to make again.
        let key = meta_namespace_key(entry);
        let mut state = self.state.lock();
        let gone = state.forget(&key);
        if gone.iter().any(Option::is_some) {
            self.holds_any.store(state.holds_any(), Ordering::Relaxed);
        }
        // Freed outside the lock.
        drop(state);
        drop(gone);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn entry(name: &str, resource_version: &str, data: &str) -> Arc<Entry<ConfigMap>> {
        let json = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{resource_version}"}},"data":{{"k":"{data}"}}}}"#
        );
        Arc::new(Compact::from_json(&json).unwrap())
    }

    /// What a lister's read of `entry` weighs in the cache (its estimate
    /// counts the metadata the read builds).
    fn weight(entry: &Arc<Entry<ConfigMap>>) -> usize {
        DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(usize::MAX / 2)
            .for_lister(entry)
            .unwrap();
        Stored::<ConfigMap>::decoded_bytes(&**entry)
    }

    #[test]
    fn a_superseded_entry_takes_its_kept_decode_with_it() {
        let cache = DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(64 << 20);
        let (a, b) = (entry("a", "1", "x"), entry("b", "1", "y"));
        cache.superseded(&a);
        cache.for_lister(&a).unwrap();
        cache.for_lister(&b).unwrap();
        assert_eq!(cache.stats().held, 2);
        // a is updated (or deleted): its decode goes, b's stays.
        cache.superseded(&a);
        assert_eq!(cache.stats().held, 1);
        cache.superseded(&b);
        assert_eq!((cache.stats().held, cache.stats().held_bytes), (0, 0));
        // Nothing held: nothing to do, and the next read fills it again.
        cache.superseded(&b);
        cache.for_lister(&b).unwrap();
        assert_eq!(cache.stats().held, 1);
    }

    #[test]
    fn a_lister_read_decodes_once_per_version_and_the_cache_stays_in_budget() {
        let one = entry("a", "1", "x");
        // Room for two decodes in the main part, none in the window.
        let budget = weight(&one) * 2 * 8 / 7 + 1;
        let cache = DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(budget);
        let first = cache.for_lister(&one).unwrap();
        let again = cache.for_lister(&one).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!((cache.stats().hits, cache.stats().misses), (1, 1));

        let newer = entry("a", "2", "y");
        assert_eq!(
            cache.for_lister(&newer).unwrap().data.as_ref().unwrap()["k"],
            "y"
        );
        assert_eq!(cache.stats().misses, 2, "a new version decodes again");

        // b is kept while there is room; c and d, read once each, do not
        // displace a, the least recently used, read three times.
        for name in ["b", "c", "d"] {
            cache.for_lister(&entry(name, "1", "z")).unwrap();
        }
        let stats = cache.stats();
        assert_eq!((stats.held, stats.not_admitted), (2, 2), "{stats:?}");
        assert!(stats.held_bytes <= budget, "{stats:?}");
        // a read again is a hit, which leaves b the least recently used; d
        // read a second time has been read more often than b, and takes
        // its place.
        cache.for_lister(&newer).unwrap();
        let d = entry("d", "1", "z");
        cache.for_lister(&d).unwrap();
        let first = cache.for_lister(&d).unwrap();
        let again = cache.for_lister(&d).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let stats = cache.stats();
        assert_eq!(
            (stats.hits, stats.held, stats.not_admitted),
            (4, 2, 2),
            "{stats:?}"
        );
        cache.for_lister(&entry("b", "1", "z")).unwrap();
        assert_eq!(cache.stats().hits, 4, "b went to make room for d");
    }

    #[test]
    fn a_decode_the_main_part_does_not_take_waits_in_the_window() {
        let entries: Vec<_> = (0..9)
            .map(|index| entry(&format!("cm-{index}"), "1", "v"))
            .collect();
        // Seven decodes in the main part, one in the window.
        let cache = DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(weight(&entries[0]) * 8);
        for entry in &entries[..8] {
            cache.for_lister(entry).unwrap();
        }
        let stats = cache.stats();
        assert_eq!((stats.held, stats.not_admitted), (8, 1), "{stats:?}");
        cache.for_lister(&entries[7]).unwrap();
        assert_eq!(cache.stats().hits, 1, "cm-7 waits in the window");
        // The next decode the main part does not take pushes cm-7 out.
        cache.for_lister(&entries[8]).unwrap();
        cache.for_lister(&entries[7]).unwrap();
        let stats = cache.stats();
        assert_eq!(
            (stats.hits, stats.misses, stats.held),
            (1, 10, 8),
            "{stats:?}"
        );
    }

    #[test]
    fn a_decode_in_the_window_is_never_stale_and_goes_with_its_entry() {
        let entries: Vec<_> = (0..8)
            .map(|index| entry(&format!("cm-{index}"), "1", "v"))
            .collect();
        let filled = || {
            // Seven decodes in the main part, cm-7 in the window.
            let cache = DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(weight(&entries[0]) * 8);
            for entry in &entries {
                cache.for_lister(entry).unwrap();
            }
            assert_eq!(cache.stats().not_admitted, 1);
            cache
        };
        let cache = filled();
        let newer = entry("cm-7", "2", "changed");
        assert_eq!(
            cache.for_lister(&newer).unwrap().data.as_ref().unwrap()["k"],
            "changed"
        );
        assert_eq!(cache.stats().hits, 0);

        let cache = filled();
        cache.superseded(&entries[7]);
        assert_eq!(cache.stats().held, 7, "the window's decode went");
        cache.for_lister(&entries[7]).unwrap();
        assert_eq!(cache.stats().hits, 0);
    }

    #[test]
    fn readers_cycling_over_more_than_the_budget_hit_on_the_part_kept() {
        let entries: Vec<_> = (0..10)
            .map(|index| entry(&format!("cm-{index}"), "1", "v"))
            .collect();
        // Room for four of the ten decodes.
        let budget = weight(&entries[0]) * 4 * 8 / 7 + 1;
        let cache = DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(budget);
        for _ in 0..5 {
            for entry in &entries {
                cache.for_lister(entry).unwrap();
            }
        }
        let stats = cache.stats();
        // A least-recently-used cache would never hit here: each miss
        // would evict the decode read next but three.
        assert_eq!((stats.hits, stats.misses), (16, 34), "{stats:?}");
        assert_eq!((stats.held, stats.not_admitted), (4, 30), "{stats:?}");
        assert!(stats.held_bytes <= budget, "{stats:?}");
    }

    #[test]
    fn a_zero_budget_keeps_nothing() {
        let cache = DecodeCache::<ConfigMap, Entry<ConfigMap>>::new(0);
        let one = entry("a", "1", "x");
        assert_eq!(
            cache.for_lister(&one).unwrap().data.as_ref().unwrap()["k"],
            "x"
        );
        assert!(cache.for_handler(&one).is_some());
        let stats = cache.stats();
        assert_eq!((stats.held, stats.misses, stats.handler_decodes), (0, 1, 1));
    }

    #[test]
    fn decoded_entries_are_handed_out_as_they_are_and_never_counted() {
        let cache = DecodeCache::<ConfigMap, ConfigMap>::new(1 << 20);
        let object = Arc::new(ConfigMap::default());
        assert!(Arc::ptr_eq(&cache.for_lister(&object).unwrap(), &object));
        assert!(Arc::ptr_eq(&cache.for_handler(&object).unwrap(), &object));
        assert_eq!(cache.stats(), DecodeStats::default());
    }
}
