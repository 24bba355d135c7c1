//! Index functions over an object's metadata: they work in either
//! [`Storage`](crate::Storage) and never decode a compact entry.

use std::collections::HashMap;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_store::{IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// An index function that reads only the metadata (labels, owners,
/// namespace, annotations).
pub type MetadataIndexFunc =
    Arc<dyn Fn(&ObjectMeta) -> Result<Vec<String>, IndexFuncError> + Send + Sync>;

/// Metadata index functions by index name.
pub type MetadataIndexers = HashMap<String, MetadataIndexFunc>;

/// The namespace index (client-go's `MetaNamespaceIndexFunc`, under
/// [`NAMESPACE_INDEX`]): an object's namespace, "" for cluster-scoped
/// ones. Every informer has it unless its options replace the metadata
/// indexers.
pub fn namespace_metadata_indexers() -> MetadataIndexers {
    let by_namespace: MetadataIndexFunc =
        Arc::new(|meta: &ObjectMeta| Ok(vec![meta.namespace.clone().unwrap_or_default()]));
    HashMap::from([(NAMESPACE_INDEX.to_string(), by_namespace)])
}

/// `indexers` as index functions over `E`'s metadata.
pub(crate) fn over_metadata<E: Object + 'static>(indexers: MetadataIndexers) -> Indexers<E> {
    indexers
        .into_iter()
        .map(|(name, function)| {
            let index: IndexFunc<E> = Arc::new(move |object: &E| function(object.meta()));
            (name, index)
        })
        .collect()
}
