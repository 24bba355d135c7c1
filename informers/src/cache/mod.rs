//! What an informer keeps and how it is read: the storage forms (compact
//! entries, decoded objects), the entries' transform at ingest, the lister's
//! decode cache, the indexes, and the listers (client-go's `tools/cache`
//! store side and `listers`).

pub(crate) mod cached_object;
pub(crate) mod compact_index;
pub(crate) mod decode_cache;
pub(crate) mod lister;
pub(crate) mod metadata_index;
pub(crate) mod metadata_view;
pub(crate) mod storage;
pub(crate) mod stored;
pub(crate) mod superseded;
pub(crate) mod transform;
