//! [`Lister`] and [`NamespaceLister`]: reads of an informer's cache by
//! label selector and by name (client-go's `GenericLister` and the
//! generated listers).

use std::fmt;
use std::sync::Arc;

use clientgo_apimachinery::{GroupResource, LabelSelector, Object};
use clientgo_store::{Indexer, NAMESPACE_INDEX, Store};

use crate::error::Error;

/// Lists and gets objects from an informer's cache.
///
/// Results are the cache's own `Arc`s: read-only, shared with every other
/// reader. For a namespaced resource use [`namespace`](Self::namespace)
/// to read one namespace (through the namespace index);
/// [`get`](Self::get) on the lister itself looks up cluster-scoped objects
/// (key = name).
pub struct Lister<K> {
    indexer: Arc<Indexer<K>>,
    resource: GroupResource,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            indexer: Arc::clone(&self.indexer),
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

impl<K: Object + Send + Sync + 'static> Lister<K> {
    /// A lister over `indexer`, naming `resource` in not-found errors.
    pub fn new(indexer: Arc<Indexer<K>>, resource: GroupResource) -> Self {
        Lister { indexer, resource }
    }

    /// Every cached object whose labels match `selector` (an empty
    /// selector matches everything without reading labels), in no
    /// particular order.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        if selector.is_empty() {
            return self.indexer.list();
        }
        let mut found = Vec::new();
        self.indexer.for_each(|_, object| {
            if selector.matches(object.labels()) {
                found.push(Arc::clone(object));
            }
        });
        found
    }

    /// The cluster-scoped object named `name`.
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        Store::get_by_key(&*self.indexer, name).ok_or_else(|| Error::NotFound {
            resource: self.resource.clone(),
            namespace: None,
            name: name.to_string(),
        })
    }

    /// The cached objects `index_name` files under `value` (the indexer's
    /// `ByIndex`); an unknown index is an error.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.indexer
            .by_index(index_name, value)
            .map_err(|source| Error::Store {
                informer: self.resource.to_string(),
                source,
            })
    }

    /// The objects of one namespace (client-go's `Pods(namespace)`).
    pub fn namespace(&self, namespace: impl Into<String>) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: Arc::clone(&self.indexer),
            resource: self.resource.clone(),
            namespace: namespace.into(),
        }
    }

    /// The group and resource named in errors.
    pub fn resource(&self) -> &GroupResource {
        &self.resource
    }
}

/// Lists and gets the objects of one namespace.
pub struct NamespaceLister<K> {
    indexer: Arc<Indexer<K>>,
    resource: GroupResource,
    namespace: String,
}

impl<K> Clone for NamespaceLister<K> {
    fn clone(&self) -> Self {
        NamespaceLister {
            indexer: Arc::clone(&self.indexer),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

impl<K> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("resource", &self.resource)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Object + Send + Sync + 'static> NamespaceLister<K> {
    /// The namespace's objects whose labels match `selector`. Uses the
    /// namespace index; without it, scans the whole cache (and logs that
    /// it did), as client-go's `ListAllByNamespace`.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        match self.indexer.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(mut objects) => {
                if !selector.is_empty() {
                    objects.retain(|object| selector.matches(object.labels()));
                }
                objects
            }
            Err(_) => {
                tracing::warn!(
                    resource = %self.resource,
                    namespace = %self.namespace,
                    "the cache has no namespace index; scanning every object"
                );
                let mut found = Vec::new();
                self.indexer.for_each(|_, object| {
                    if object.namespace().unwrap_or_default() == self.namespace
                        && selector.matches(object.labels())
                    {
                        found.push(Arc::clone(object));
                    }
                });
                found
            }
        }
    }

    /// The object `namespace/name`.
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        let key = format!("{}/{}", self.namespace, name);
        Store::get_by_key(&*self.indexer, &key).ok_or_else(|| Error::NotFound {
            resource: self.resource.clone(),
            namespace: Some(self.namespace.clone()),
            name: name.to_string(),
        })
    }

    /// The namespace read.
    pub fn namespace(&self) -> &str {
        &self.namespace
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
    fn get_returns_shared_objects_or_a_typed_not_found() -> Result<(), Box<dyn std::error::Error>> {
        let pods = lister(IndexerOptions::default().namespace_index())?;
        let first = pods.namespace("a").get("web-1")?;
        let second = pods.namespace("a").get("web-1")?;
        assert!(Arc::ptr_eq(&first, &second));
        let missing = pods.namespace("a").get("nope").err().ok_or("found")?;
        assert!(missing.is_not_found());
        assert_eq!(
            missing.to_string(),
            "pods \"nope\" not found in namespace \"a\""
        );
        let cluster = pods.get("web-1").err().ok_or("found")?;
        assert_eq!(cluster.to_string(), "pods \"web-1\" not found");
        Ok(())
    }
}
