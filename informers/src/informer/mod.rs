//! The informer itself: [`SharedIndexInformer`](crate::SharedIndexInformer)
//! and its options, the engine behind its handle, the pipeline from the
//! reflector through the delta queue into the cache, its state and stats,
//! handler registrations, and waiting for sync (the informer half of
//! client-go's `shared_informer.go`, and `WaitForCacheSync`).

pub(crate) mod engine;
pub(crate) mod free_memory;
pub(crate) mod heavy_work;
pub(crate) mod options;
pub(crate) mod pipeline;
pub(crate) mod registration;
pub(crate) mod shared_index_informer;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod wait;
