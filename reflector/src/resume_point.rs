//! [`ResumePoint`]: a saved state a reflector starts from instead of a
//! first list (warm restart).

use std::sync::Arc;

/// A saved state to resume from: the objects a cache held and the
/// resourceVersion they reflect (as
/// `Indexer::list_with_resource_version` reads them).
///
/// The objects must be exactly the state at `resource_version` of the
/// same resource, namespace and selectors on the same server; a warm
/// restart checks that before it hands one over.
#[derive(Debug)]
pub struct ResumePoint<K> {
    /// The objects, as cached (transformed already).
    pub objects: Vec<Arc<K>>,
    /// The resourceVersion they reflect.
    pub resource_version: String,
}

impl<K> Clone for ResumePoint<K> {
    fn clone(&self) -> Self {
        ResumePoint {
            objects: self.objects.clone(),
            resource_version: self.resource_version.clone(),
        }
    }
}
