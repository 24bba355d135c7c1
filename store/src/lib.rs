//! client-go's tools/cache stores, in Rust.
//!
//! (Crate documentation is completed in a later step.)

mod delta;
mod delta_fifo;
mod error;
mod index;
mod indexer;
mod key;
mod queue;
mod real_fifo;
mod store;
mod thread_safe_store;

pub use delta::{Delta, DeltaType, Deltas};
pub use delta_fifo::{DeltaFifo, DeltaFifoOptions};
pub use error::{PopError, StoreError};
pub use index::{
    IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX, namespace_index_func, namespace_indexers,
};
pub use indexer::{Indexer, IndexerOptions, Transaction, TransactionError};
pub use key::{
    DeletedFinalStateUnknown, KeyFunc, ObjectName, ObjectOrTombstone, meta_namespace_key,
    meta_namespace_key_func, split_meta_namespace_key,
};
pub use queue::Queue;
pub use real_fifo::{DEFAULT_BATCH_SIZE, RealFifo, RealFifoOptions};
pub use store::{KnownObjects, ReflectorStore, Store, TransformFunc};
pub use thread_safe_store::{Change, ThreadSafeStore};
