//! The errors of the store crate.

/// Why a store, index or queue operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The key function could not compute a key for an object.
    #[error("cannot compute the key of {object}: {reason}")]
    Key {
        /// A description of the object (its namespace/name when known).
        object: String,
        /// Why.
        reason: String,
    },
    /// A key has more than one `/`.
    #[error("unexpected key format: {key:?} (expected \"name\" or \"namespace/name\")")]
    InvalidKey {
        /// The key.
        key: String,
    },
    /// An index function failed for an object; the store was left unchanged.
    #[error("index {index:?} failed for {key:?}: {reason}")]
    IndexFunc {
        /// The index name.
        index: String,
        /// The object's key.
        key: String,
        /// What the index function reported.
        reason: String,
    },
    /// A lookup named an index that does not exist.
    #[error("index with name {index:?} does not exist")]
    IndexNotFound {
        /// The index name.
        index: String,
    },
    /// `add_indexers` named indexes that already exist.
    #[error("indexer conflict: {names:?} already exist")]
    IndexerConflict {
        /// The conflicting names, sorted.
        names: Vec<String>,
    },
    /// The transform function refused an object.
    #[error("transform failed for {object}: {reason}")]
    Transform {
        /// A description of the object.
        object: String,
        /// What the transform reported.
        reason: String,
    },
    /// An object was expected but not found (Heap deletes).
    #[error("object {key:?} not found")]
    NotFound {
        /// The key.
        key: String,
    },
    /// The queue is closed (and, for pops, empty).
    #[error("queue {name:?} is closed")]
    Closed {
        /// The queue's name.
        name: String,
    },
    /// A resourceVersion that should be an integer was not.
    #[error("resourceVersion {resource_version:?} of {key:?} is not an integer")]
    NonIntegerResourceVersion {
        /// The object's key.
        key: String,
        /// The offending resourceVersion.
        resource_version: String,
    },
    /// The object has no metadata a key can be computed from (for example
    /// a tombstone handed to a plain key function).
    #[error("object has no meta: {object}")]
    NoMeta {
        /// A description of the object.
        object: String,
    },
}

/// The outcome of a pop on a closed queue, or of the processing callback.
#[derive(Debug, thiserror::Error)]
pub enum PopError<E> {
    /// The queue is closed and empty; nothing was popped.
    #[error("queue is closed")]
    Closed,
    /// An item was popped and the processing callback returned an error.
    /// The item is not put back (client-go removed requeueing in 1.33).
    #[error("processing failed: {0}")]
    Process(E),
}
