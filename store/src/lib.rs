//! client-go's tools/cache stores, in Rust.
//!
//! (Crate documentation is completed in a later step.)

mod delta;
mod delta_fifo;
mod error;
mod expiration_cache;
mod fifo;
mod heap;
mod index;
mod indexer;
mod key;
mod mutation_cache;
mod process_deltas;
mod queue;
mod real_fifo;
mod store;
mod thread_safe_store;
mod undelta_store;

pub use delta::{Delta, DeltaType, Deltas};
pub use delta_fifo::{DeltaFifo, DeltaFifoOptions};
pub use error::{PopError, StoreError};
pub use expiration_cache::{ExpirationCache, ExpirationPolicy, TimestampedEntry, TtlPolicy};
pub use fifo::Fifo;
pub use heap::{Heap, LessFunc};
pub use index::{
    IndexFunc, IndexFuncError, Indexers, NAMESPACE_INDEX, index_func_to_key_func,
    namespace_index_func, namespace_indexers,
};
pub use indexer::{Indexer, IndexerOptions, Transaction, TransactionError};
pub use key::{
    DeletedFinalStateUnknown, KeyFunc, ObjectName, ObjectOrTombstone, meta_namespace_key,
    meta_namespace_key_func, split_meta_namespace_key,
};
pub use mutation_cache::{MutationCache, MutationCacheOptions};
pub use process_deltas::{DeltaHandler, ProcessError, process_deltas, process_deltas_in_batch};
pub use queue::Queue;
pub use real_fifo::{DEFAULT_BATCH_SIZE, RealFifo, RealFifoOptions};
pub use store::{KnownObjects, ReflectorStore, Store, TransformFunc};
pub use thread_safe_store::{Change, ThreadSafeStore};
pub use undelta_store::{PushFunc, UndeltaStore};
