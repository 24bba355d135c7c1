//! Index functions over an object's metadata: they work in either
//! [`Storage`](crate::Storage) and never decode a compact entry.

use std::collections::HashMap;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_store::{IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX};

/// An index function that reads only the metadata (labels, owners,
/// namespace, annotations) through the [`Object`] accessors, which read a
/// compact entry's packed metadata in place.
pub type MetadataIndexFunc =
    Arc<dyn Fn(&dyn Object) -> Result<Vec<String>, IndexFuncError> + Send + Sync>;

/// Metadata index functions by index name.
pub type MetadataIndexers = HashMap<String, MetadataIndexFunc>;

/// The namespace index (client-go's `MetaNamespaceIndexFunc`, under
/// [`NAMESPACE_INDEX`]): an object's namespace, "" for cluster-scoped
/// ones. Every informer has it unless its options replace the metadata
/// indexers.
pub fn namespace_metadata_indexers() -> MetadataIndexers {
    let by_namespace: MetadataIndexFunc =
        Arc::new(|meta: &dyn Object| Ok(vec![meta.namespace().unwrap_or_default().to_string()]));
    HashMap::from([(NAMESPACE_INDEX.to_string(), by_namespace)])
}

/// `indexers` as index functions over `E`'s metadata.
pub(crate) fn over_metadata<E: Object + 'static>(indexers: MetadataIndexers) -> Indexers<E> {
    indexers
        .into_iter()
        .map(|(name, function)| {
            let index: IndexFunc<E> = Arc::new(move |object: &E| function(object));
            (name, index)
        })
        .collect()
}
