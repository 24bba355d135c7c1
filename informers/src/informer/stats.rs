//! [`InformerStats`]: the counters of an informer's work.

use clientgo_listwatch::ShardStats;
use clientgo_reflector::{ReflectorMode, ReflectorStats};

use crate::cache::decode_cache::DecodeStats;

/// What an informer's reflector, queue, cache and decoder report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InformerStats {
    /// The reflector's counters (zero before start).
    pub reflector: ReflectorStats,
    /// How the reflector synced last ([`ReflectorMode::NotSynced`] until
    /// the first sync).
    pub mode: ReflectorMode,
    /// Deltas waiting in the FIFO.
    pub queued: usize,
    /// Objects cached.
    pub cached: usize,
    /// Registered handlers.
    pub handlers: usize,
    /// Decodes of cached entries, in compact storage (all zero in decoded
    /// storage, which hands out the cache's own objects).
    pub decodes: DecodeStats,
    /// For a sharded informer: whether the server or the informer filters
    /// the shards, and how much the informer dropped.
    pub shard: Option<ShardStats>,
}
