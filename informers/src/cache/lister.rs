//! [`Lister`] and [`NamespaceLister`]: reads of an informer's cache by
//! label selector and by name (client-go's `GenericLister` and the
//! generated listers), in either [`Storage`](crate::Storage).

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::{ApiObject, GroupResource, LabelSelector, Object};
use clientgo_store::{Indexer, NAMESPACE_INDEX, Store};

use crate::cache::decode_cache::{DecodeCache, DecodeStats};
use crate::cache::metadata_view::MetadataView;
use crate::cache::stored::Stored;
use crate::error::Error;

/// What a [`Lister`] reads: an informer's cache of entries of some
/// [`Stored`] form of `K`, with the informer's decoder. Implemented once,
/// by [`Cache`].
trait CacheReader<K>: Send + Sync {
    fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>>;
    fn list_namespace(
        &self,
        namespace: &str,
        selector: &LabelSelector,
        resource: &GroupResource,
    ) -> Vec<Arc<K>>;
    fn get(&self, key: &str) -> Result<Option<Arc<K>>, Error>;
    fn contains(&self, key: &str) -> bool;
    fn get_metadata(&self, key: &str) -> Option<MetadataView>;
    fn get_uncached(&self, key: &str) -> Result<Option<Arc<K>>, Error>;
    fn release(&self, key: &str, object: Arc<K>);
    fn keys(&self) -> Vec<String>;
    fn by_index(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<Arc<K>>, clientgo_store::StoreError>;
    fn index_keys(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<String>, clientgo_store::StoreError>;
    fn list_index_func_values(&self, index_name: &str) -> Vec<String>;
    fn len(&self) -> usize;
    fn list_metadata(&self, selector: &LabelSelector) -> Vec<MetadataView>;
    fn decode_stats(&self) -> DecodeStats;
}

/// An informer's cache of `S` and the decoder that turns its entries into
/// objects of `K`.
pub(crate) struct Cache<K, S> {
    indexer: Arc<Indexer<S>>,
    decoder: Arc<DecodeCache<K, S>>,
}

/// Lists and gets objects from an informer's cache.
///
/// For a namespaced resource use [`namespace`](Self::namespace) to read
/// one namespace (through the namespace index);
/// [`get_by_key`](Self::get_by_key) on the lister itself looks up a key
/// (a cluster-scoped object's is its name).
///
/// **Sharing.** Results are shared, read-only `Arc`s. With
/// [`Storage::Decoded`](crate::Storage::Decoded) they are the cache's own
/// objects. With [`Storage::Compact`](crate::Storage::Compact) each is
/// decoded from its cached entry through the informer's cache of recent
/// decodes (bounded in bytes, shared by every lister of the informer, each
/// hit checked against the entry's resourceVersion); an entry that does
/// not decode is left out by `list` and `get_by_key` (logged and counted
/// in [`decode_stats`](Self::decode_stats)), and is an [`Error::Decode`]
/// from [`try_get_by_key`](Self::try_get_by_key).
/// [`keys`](Self::keys), [`contains`](Self::contains) and label selectors
/// never decode.
pub struct Lister<K> {
    cache: Arc<dyn CacheReader<K>>,
    resource: GroupResource,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            cache: Arc::clone(&self.cache),
            resource: self.resource.clone(),
        }
    }
}

impl<K> fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister")
            .field("resource", &self.resource)
            .finish()
    }
}

/// `take` of each object of `indexer` whose labels match `selector`, in
/// one pass (what `take` declines is left out).
fn matching<E, T>(
    indexer: &Indexer<E>,
    selector: &LabelSelector,
    mut take: impl FnMut(&Arc<E>) -> Option<T>,
) -> Vec<T>
where
    E: Object + Send + Sync + 'static,
{
    let mut found = Vec::new();
    indexer.for_each_object(|object| {
        if selector.matches(object.labels())
            && let Some(taken) = take(object)
        {
            found.push(taken);
        }
    });
    found
}

/// `take` of each object of `indexer` in `namespace` whose labels match
/// `selector`, through the namespace index when there is one.
fn in_namespace<E, T>(
    indexer: &Indexer<E>,
    namespace: &str,
    selector: &LabelSelector,
    resource: &GroupResource,
    mut take: impl FnMut(&Arc<E>) -> Option<T>,
) -> Vec<T>
where
    E: Object + Send + Sync + 'static,
{
    match indexer.by_index(NAMESPACE_INDEX, namespace) {
        Ok(objects) => objects
            .iter()
            .filter(|object| selector.matches(object.labels()))
            .filter_map(take)
            .collect(),
        Err(_) => {
            tracing::warn!(
                %resource,
                %namespace,
                "the cache has no namespace index; scanning every object"
            );
            matching(indexer, &LabelSelector::everything(), |object| {
                (object.namespace().unwrap_or_default() == namespace
                    && selector.matches(object.labels()))
                .then(|| take(object))
                .flatten()
            })
        }
    }
}

impl<K, S> CacheReader<K> for Cache<K, S>
where
    K: ApiObject,
    S: Stored<K>,
{
    fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        matching(&self.indexer, selector, |entry| self.object(entry))
    }

    fn list_namespace(
        &self,
        namespace: &str,
        selector: &LabelSelector,
        resource: &GroupResource,
    ) -> Vec<Arc<K>> {
        in_namespace(&self.indexer, namespace, selector, resource, |entry| {
            self.object(entry)
        })
    }

    fn get(&self, key: &str) -> Result<Option<Arc<K>>, Error> {
        Store::get_by_key(&*self.indexer, key)
            .map(|entry| self.decoder.for_lister_at(&entry, key))
            .transpose()
    }

    fn contains(&self, key: &str) -> bool {
        Store::get_by_key(&*self.indexer, key).is_some()
    }

    fn get_metadata(&self, key: &str) -> Option<MetadataView> {
        Store::get_by_key(&*self.indexer, key).map(|entry| MetadataView::of(&entry))
    }

    fn get_uncached(&self, key: &str) -> Result<Option<Arc<K>>, Error> {
        Store::get_by_key(&*self.indexer, key)
            .map(|entry| self.decoder.decode_unshared(&entry))
            .transpose()
    }

    fn release(&self, key: &str, object: Arc<K>) {
        match Store::get_by_key(&*self.indexer, key) {
            Some(entry) => S::release(&entry, object),
            None => drop(object),
        }
    }

    fn keys(&self) -> Vec<String> {
        Store::list_keys(&*self.indexer)
    }

    fn by_index(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<Arc<K>>, clientgo_store::StoreError> {
        self.indexer.by_index(index_name, value).map(|entries| {
            entries
                .iter()
                .filter_map(|entry| self.object(entry))
                .collect()
        })
    }

    fn index_keys(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<String>, clientgo_store::StoreError> {
        self.indexer.index_keys(index_name, value)
    }

    fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.indexer.list_index_func_values(index_name)
    }

    fn len(&self) -> usize {
        self.indexer.len()
    }

    fn list_metadata(&self, selector: &LabelSelector) -> Vec<MetadataView> {
        matching(&self.indexer, selector, |entry| {
            Some(MetadataView::of(entry))
        })
    }

    fn decode_stats(&self) -> DecodeStats {
        self.decoder.stats()
    }
}

impl<K, S> Cache<K, S>
where
    K: ApiObject,
    S: Stored<K>,
{
    /// `indexer`, read through `decoder`.
    pub(crate) fn new(indexer: Arc<Indexer<S>>, decoder: Arc<DecodeCache<K, S>>) -> Self {
        Cache { indexer, decoder }
    }

    /// An entry's object; `None` (the decoder logs and counts it) when it
    /// does not decode.
    fn object(&self, entry: &Arc<S>) -> Option<Arc<K>> {
        self.decoder.for_lister(entry).ok()
    }
}

impl<K: ApiObject> Lister<K> {
    /// A lister over a cache of decoded objects, naming `resource` in
    /// not-found errors.
    pub fn new(indexer: Arc<Indexer<K>>, resource: GroupResource) -> Self {
        Self::over_entries(indexer, resource, 0)
    }

    /// A lister of `K` over a cache of any [`Stored`] form of it: compact
    /// entries are decoded on demand, keeping up to `decode_cache_bytes`
    /// estimated bytes of decodes (0 keeps none; see
    /// [`DEFAULT_DECODE_CACHE_BYTES`](crate::DEFAULT_DECODE_CACHE_BYTES)),
    /// shared by its clones.
    pub fn over_entries<S: Stored<K>>(
        indexer: Arc<Indexer<S>>,
        resource: GroupResource,
        decode_cache_bytes: usize,
    ) -> Self {
        let decoder = Arc::new(DecodeCache::new(decode_cache_bytes));
        Self::over(Cache::new(indexer, decoder), resource)
    }

    /// A lister over an informer's cache.
    pub(crate) fn over<S: Stored<K>>(cache: Cache<K, S>, resource: GroupResource) -> Self {
        Lister {
            cache: Arc::new(cache),
            resource,
        }
    }

    /// Every cached object whose labels match `selector` (client-go's
    /// `List`).
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        self.cache.list(selector)
    }

    /// The object cached under `key`: `namespace/name`, or a
    /// cluster-scoped object's name (client-go's `GetByKey`; its listers'
    /// `Get(name)` is [`NamespaceLister::get`], or this with the name for
    /// a cluster-scoped kind). `None` when none is cached; in compact
    /// storage an entry that no longer decodes is `None` as well, and
    /// [`try_get_by_key`](Self::try_get_by_key) tells the two apart.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.try_get_by_key(key).ok().flatten()
    }

    /// As [`get_by_key`](Self::get_by_key), with a cached entry that does
    /// not decode an [`Error::Decode`](crate::Error::Decode) rather than
    /// `None`.
    pub fn try_get_by_key(&self, key: &str) -> Result<Option<Arc<K>>, Error> {
        self.cache.get(key)
    }

    /// The objects the index `index_name` files under `value` (client-go's
    /// `ByIndex`); an unknown index is an error.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.cache
            .by_index(index_name, value)
            .map_err(|source| Error::Store {
                informer: self.resource.to_string(),
                source,
            })
    }

    /// The keys the index `index_name` files under `value` (client-go's
    /// `IndexKeys`); decodes nothing. An unknown index is an error.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, Error> {
        self.cache
            .index_keys(index_name, value)
            .map_err(|source| Error::Store {
                informer: self.resource.to_string(),
                source,
            })
    }

    /// Every value the index `index_name` files objects under (client-go's
    /// `ListIndexFuncValues`); none for an unknown index. Decodes nothing.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.cache.list_index_func_values(index_name)
    }

    /// Every cached key (`namespace/name`, or `name`); decodes nothing.
    pub fn keys(&self) -> Vec<String> {
        self.cache.keys()
    }

    /// Whether an object is cached under `key` (`namespace/name`, or
    /// `name`); decodes nothing.
    pub fn contains(&self, key: &str) -> bool {
        self.cache.contains(key)
    }

    /// The object cached under `key` (`namespace/name`, or `name`), as
    /// [`try_get_by_key`](Self::try_get_by_key) but never kept in the lister's cache of
    /// decodes nor remembered by the entry (a decode a handler holds is
    /// shared; otherwise this read decodes its own, even when the lister's
    /// cache of decodes holds one, so two such reads of one entry at once
    /// decode twice): for a reader that reads each object once per change,
    /// as a controller's worker does. The guard gives the decode back when
    /// dropped: in compact storage a decode no one else holds then frees
    /// all of its memory at once. Reading adds nothing to the cache's
    /// memory.
    pub fn read_uncached(&self, key: &str) -> Result<Option<UncachedRead<K>>, Error> {
        Ok(self.cache.get_uncached(key)?.map(|object| UncachedRead {
            object: Some(object),
            key: key.to_string(),
            cache: Arc::clone(&self.cache),
        }))
    }

    /// The metadata of the object cached under `key` (`namespace/name`,
    /// or `name`); decodes and copies nothing.
    pub fn get_metadata(&self, key: &str) -> Option<MetadataView> {
        self.cache.get_metadata(key)
    }

    /// The metadata of every cached object whose labels match
    /// `selector`; decodes and copies nothing.
    pub fn list_metadata(&self, selector: &LabelSelector) -> Vec<MetadataView> {
        self.cache.list_metadata(selector)
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The counters of the informer's decodes (all zero in
    /// [`Storage::Decoded`](crate::Storage::Decoded)).
    pub fn decode_stats(&self) -> DecodeStats {
        self.cache.decode_stats()
    }

    /// A lister of one namespace.
    pub fn namespace(&self, namespace: impl Into<String>) -> NamespaceLister<K> {
        NamespaceLister {
            lister: self.clone(),
            namespace: namespace.into(),
        }
    }

    /// The resource named in errors.
    pub fn resource(&self) -> &GroupResource {
        &self.resource
    }
}

/// Reads one namespace of an informer's cache (client-go's generated
/// `PodNamespaceLister` and the like); see [`Lister`] for sharing and
/// decoding.
pub struct NamespaceLister<K> {
    lister: Lister<K>,
    namespace: String,
}

impl<K> Clone for NamespaceLister<K> {
    fn clone(&self) -> Self {
        NamespaceLister {
            lister: self.lister.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

impl<K> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("resource", &self.lister.resource)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: ApiObject> NamespaceLister<K> {
    /// The namespace's objects whose labels match `selector`, through the
    /// namespace index (a scan of the whole cache, with a warning, when
    /// the informer has none).
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        self.lister
            .cache
            .list_namespace(&self.namespace, selector, &self.lister.resource)
    }

    /// The object `name` of the namespace (client-go's `Get`), `None` when
    /// none is cached; see [`Lister::get_by_key`].
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.try_get(name).ok().flatten()
    }

    /// As [`get`](Self::get), with a cached entry that does not decode an
    /// [`Error::Decode`](crate::Error::Decode); see
    /// [`Lister::try_get_by_key`].
    pub fn try_get(&self, name: &str) -> Result<Option<Arc<K>>, Error> {
        self.lister
            .cache
            .get(&format!("{}/{}", self.namespace, name))
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

/// An object read by [`Lister::read_uncached`]: derefs to the object, and
/// gives its decode back to the cache when dropped. Hand the reconcile a
/// clone of [`object`](Self::object); drop the guard after it is done.
pub struct UncachedRead<K> {
    /// `Some` until dropped.
    object: Option<Arc<K>>,
    key: String,
    cache: Arc<dyn CacheReader<K>>,
}

impl<K> UncachedRead<K> {
    /// The object, to share with whoever reads it while the guard lives.
    pub fn object(&self) -> &Arc<K> {
        // Taken only in `drop`.
        self.object
            .as_ref()
            .unwrap_or_else(|| unreachable!("an UncachedRead is read after drop"))
    }

    /// The key it was read under.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl<K> std::ops::Deref for UncachedRead<K> {
    type Target = K;

    fn deref(&self) -> &K {
        self.object()
    }
}

impl<K: fmt::Debug> fmt::Debug for UncachedRead<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UncachedRead")
            .field("key", &self.key)
            .field("object", &self.object)
            .finish()
    }
}

impl<K> Drop for UncachedRead<K> {
    fn drop(&mut self) {
        if let Some(object) = self.object.take() {
            self.cache.release(&self.key, object);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_store::{IndexerOptions, ReflectorStore};
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(namespace: &str, name: &str, app: &str) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                labels: Some([("app".to_string(), app.to_string())].into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn names(mut objects: Vec<Arc<Pod>>) -> Vec<String> {
        objects.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        objects
            .iter()
            .filter_map(|o| o.metadata.name.clone())
            .collect()
    }

    fn lister(options: IndexerOptions<Pod>) -> Result<Lister<Pod>, Box<dyn std::error::Error>> {
        let indexer = Arc::new(Indexer::new(options));
        indexer.add(pod("a", "web-1", "web"))?;
        indexer.add(pod("a", "db-1", "db"))?;
        indexer.add(pod("b", "web-2", "web"))?;
        Ok(Lister::new(indexer, GroupResource::new("", "pods")))
    }

    #[test]
    fn lists_by_selector_and_namespace_with_or_without_the_index()
    -> Result<(), Box<dyn std::error::Error>> {
        let web = LabelSelector::parse("app=web")?;
        for options in [
            IndexerOptions::default().namespace_index(),
            IndexerOptions::default(),
        ] {
            let pods = lister(options)?;
            assert_eq!(names(pods.list(&LabelSelector::everything())).len(), 3);
            assert_eq!(names(pods.list(&web)), ["web-1", "web-2"]);
            assert_eq!(
                names(pods.namespace("a").list(&LabelSelector::everything())),
                ["db-1", "web-1"]
            );
            assert_eq!(names(pods.namespace("a").list(&web)), ["web-1"]);
            assert!(pods.namespace("c").list(&web).is_empty());
        }
        Ok(())
    }

    #[test]
    fn get_returns_shared_objects_or_none() -> Result<(), Box<dyn std::error::Error>> {
        let pods = lister(IndexerOptions::default().namespace_index())?;
        let first = pods.namespace("a").get("web-1").ok_or("missing")?;
        let second = pods.namespace("a").get("web-1").ok_or("missing")?;
        assert!(Arc::ptr_eq(&first, &second));
        assert!(pods.namespace("a").get("nope").is_none());
        assert!(
            pods.namespace("b").get("web-1").is_none(),
            "another namespace"
        );
        assert!(
            pods.get_by_key("web-1").is_none(),
            "a namespaced object's key is namespace/name"
        );
        assert!(pods.get_by_key("a/web-1").is_some());
        assert!(pods.namespace("a").try_get("nope")?.is_none());
        Ok(())
    }
}
