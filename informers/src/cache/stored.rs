//! [`Stored`]: what an informer's cache keeps for each object of `K`, and
//! how a kept entry becomes the object again.

use std::sync::Arc;

use clientgo_apimachinery::{ApiObject, Compact, CompactBody, CompactDecodeError};
use clientgo_store::{Indexers, StoreError, TransformFunc};

use crate::cache::compact_index::decoded_indexers;
use crate::cache::transform::{Ingest, MetadataTransform};

/// A decoded object is estimated at this many times its compact entry's
/// heap bytes, counting its body as it is decompressed (a pod of 5 KB in protobuf without managedFields is about
/// 30 KB decoded: strings, maps and vectors, each with its allocation).
pub const DECODED_EXPANSION: usize = 6;

/// What an informer's cache keeps for each object of `K`: the object
/// itself (`K`, decoded storage) or a [`Compact<K, B>`] entry that decodes
/// to it. The informer's engine, its [`Lister`](crate::Lister) and the
/// adapters that hand objects to handlers are written once over this
/// trait; [`Storage`](crate::Storage) chooses which an informer made from
/// a client uses, and [`SharedIndexInformer::new`](crate::SharedIndexInformer::new)
/// takes a source of either.
///
/// Implemented for every [`ApiObject`] (kept as itself) and for
/// `Compact<K, B>` of every body (kept as the bytes it arrived in, with
/// its metadata parsed); sealed.
pub trait Stored<K>: ApiObject + Sized + sealed::Sealed<K> {
    /// Whether [`object`](Self::object) decodes (a compact entry) or hands
    /// out the entry itself (`K`); readers keep a cache of recent decodes
    /// only for the former.
    const DECODES: bool;

    /// The whole object: the entry itself, or its decode, shared with
    /// every other holder of the same entry's decode while any holds it.
    fn object(entry: &Arc<Self>) -> Result<Arc<K>, CompactDecodeError>;

    /// The whole object for one reader
    /// ([`Lister::read_uncached`](crate::Lister::read_uncached), and
    /// the lister's cache of decodes): the decode the entry remembers for
    /// its handlers while any holds it, else one the entry does not
    /// remember, so reading adds nothing to the entry.
    fn object_unshared(entry: &Arc<Self>) -> Result<Arc<K>, CompactDecodeError> {
        Self::object(entry)
    }

    /// Gives back an [`object`](Self::object) of `entry` the caller is
    /// done with, so a decode no one holds any more frees all of its
    /// memory now (see `Compact::release`); for `K`, drops it.
    fn release(entry: &Self, object: Arc<K>);

    /// The bytes the entry holds on the heap: an estimate, leaving out
    /// allocator overhead. For a compact entry, its bytes and parsed
    /// metadata; for a decoded object, its JSON's length (a floor: a
    /// decoded object holds several times that in strings, maps and
    /// vectors).
    fn heap_bytes(&self) -> usize;

    /// The bytes a decode of this entry is estimated to hold (what a
    /// cache of decodes weighs it at); zero when nothing is decoded.
    fn decoded_bytes(&self) -> usize;

    /// What is done to each arriving entry before it is queued and cached
    /// (see [`Transform`](crate::Transform) for the rule); `None` when
    /// there is nothing to do.
    #[doc(hidden)]
    fn ingest(plan: Ingest<K>) -> Option<TransformFunc<Self>>;

    /// Index functions over whole objects as index functions over
    /// entries: for a compact entry, one decode per entry version, at
    /// ingest, shared by every function of the group (their values are
    /// kept with the entry).
    #[doc(hidden)]
    fn indexers(functions: Indexers<K>) -> Indexers<Self>;
}

impl<K: ApiObject> Stored<K> for K {
    const DECODES: bool = false;

    fn object(entry: &Arc<Self>) -> Result<Arc<K>, CompactDecodeError> {
        Ok(Arc::clone(entry))
    }

    fn release(_entry: &Self, object: Arc<K>) {
        drop(object);
    }

    fn heap_bytes(&self) -> usize {
        let mut counter = ByteCounter(0);
        // A type that does not encode counts as nothing.
        let _ = serde_json::to_writer(&mut counter, self);
        counter.0
    }

    fn decoded_bytes(&self) -> usize {
        0
    }

    fn indexers(functions: Indexers<K>) -> Indexers<Self> {
        functions
    }

    fn ingest(plan: Ingest<K>) -> Option<TransformFunc<Self>> {
        let Ingest {
            metadata, object, ..
        } = plan;
        let metadata = metadata.map(change_fresh::<K>);
        match (metadata, object) {
            (None, None) => None,
            (Some(metadata), None) => Some(metadata),
            (None, Some(object)) => Some(object),
            (Some(metadata), Some(object)) => {
                Some(Arc::new(move |entry: Arc<K>| object(metadata(entry)?)))
            }
        }
    }
}

impl<K: ApiObject, B: CompactBody> Stored<K> for Compact<K, B> {
    const DECODES: bool = true;

    fn object(entry: &Arc<Self>) -> Result<Arc<K>, CompactDecodeError> {
        entry.decode()
    }

    fn object_unshared(entry: &Arc<Self>) -> Result<Arc<K>, CompactDecodeError> {
        entry.decode_unshared()
    }

    fn release(entry: &Self, object: Arc<K>) {
        entry.release(object);
    }

    fn heap_bytes(&self) -> usize {
        Compact::heap_bytes(self)
    }

    fn decoded_bytes(&self) -> usize {
        self.plain_bytes().saturating_mul(DECODED_EXPANSION)
    }

    fn indexers(functions: Indexers<K>) -> Indexers<Self> {
        if functions.is_empty() {
            return Indexers::new();
        }
        decoded_indexers(functions)
    }

    fn ingest(plan: Ingest<K>) -> Option<TransformFunc<Self>> {
        let Ingest {
            metadata,
            only_drops_managed_fields,
            object,
            compress,
        } = plan;
        if metadata.is_none() && object.is_none() && !compress {
            return None;
        }
        Some(Arc::new(move |entry: Arc<Self>| {
            let entry = match &metadata {
                Some(_) if only_drops_managed_fields => stripped_entry(entry),
                Some(change) => changed_entry(entry, change),
                None => entry,
            };
            let entry = match &object {
                Some(transform) => transformed_entry(entry, transform)?,
                None => entry,
            };
            Ok(if compress {
                compressed_entry(entry)
            } else {
                entry
            })
        }))
    }
}

/// `change` on a fresh decode (held by the informer alone), in place; a
/// shared object is a saved state's or the cache's own (changed when it
/// was cached; a snapshot taken under another transform is refused) and
/// is returned as is. So no `Clone` of the object is needed.
fn change_fresh<K: ApiObject>(change: MetadataTransform) -> TransformFunc<K> {
    Arc::new(move |mut object: Arc<K>| {
        if let Some(owned) = Arc::get_mut(&mut object) {
            change(owned.meta_mut());
        }
        Ok(object)
    })
}

/// managedFields cut from an entry's bytes, its metadata left packed: a
/// fresh entry in place; a shared one (the cache's own on a relist, or a
/// saved state's) copied only if it keeps any.
fn stripped_entry<K, B: CompactBody>(mut entry: Arc<Compact<K, B>>) -> Arc<Compact<K, B>> {
    if let Some(owned) = Arc::get_mut(&mut entry) {
        owned.strip_managed_fields();
        return entry;
    }
    match entry.without_managed_fields() {
        Some(stripped) => Arc::new(stripped),
        None => entry,
    }
}

/// `change` on an entry's metadata (dropping managedFields cuts them from
/// its bytes too): a fresh entry in place; a shared one (the cache's own
/// on a relist, or a saved state's) copied only if `change` alters it.
fn changed_entry<K, B>(
    mut entry: Arc<Compact<K, B>>,
    change: &MetadataTransform,
) -> Arc<Compact<K, B>>
where
    B: CompactBody,
{
    if let Some(owned) = Arc::get_mut(&mut entry) {
        owned.change_metadata(&**change);
        return entry;
    }
    if !entry.changed_by(&**change) {
        return entry;
    }
    let mut changed = (*entry).clone();
    changed.change_metadata(&**change);
    Arc::new(changed)
}

/// A whole-object transform on a fresh entry: decoded, transformed, and
/// kept as the result's JSON, so the cache holds what the transform
/// returned and no read runs it again. An entry the transform returns
/// unchanged (the same `Arc`) is kept as it is; so is a shared one.
fn transformed_entry<K, B>(
    entry: Arc<Compact<K, B>>,
    transform: &TransformFunc<K>,
) -> Result<Arc<Compact<K, B>>, StoreError>
where
    K: ApiObject,
    B: CompactBody,
{
    let failed = |reason: String| StoreError::Transform {
        object: clientgo_store::meta_namespace_key(&*entry),
        reason,
    };
    if Arc::strong_count(&entry) > 1 {
        // A saved state's entry (warm restart), transformed when it was
        // cached: its snapshot was taken under this same transform (the
        // snapshot's identity names it), so it is kept as it is.
        return Ok(entry);
    }
    let decoded = entry.decode().map_err(|error| failed(error.to_string()))?;
    // The entry's own weak handle on its decode keeps a transform from
    // changing the decode in place: a changed object is a new allocation.
    let before = Arc::as_ptr(&decoded);
    let transformed = transform(decoded)?;
    if Arc::as_ptr(&transformed) == before {
        entry.release(transformed);
        return Ok(entry);
    }
    let json = serde_json::to_string(&*transformed).map_err(|error| failed(error.to_string()))?;
    let kept = Compact::<K, B>::from_json(&json).map_err(|error| failed(error.to_string()))?;
    Ok(Arc::new(kept))
}

/// An entry's bytes compressed: a fresh entry in place, a shared one
/// copied only while not compressed yet.
fn compressed_entry<K, B: CompactBody>(mut entry: Arc<Compact<K, B>>) -> Arc<Compact<K, B>> {
    if let Some(owned) = Arc::get_mut(&mut entry) {
        owned.compress();
        return entry;
    }
    if !entry.compressible() {
        return entry;
    }
    let mut compressed = (*entry).clone();
    compressed.compress();
    Arc::new(compressed)
}

/// Counts the bytes written to it.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

mod sealed {
    use clientgo_apimachinery::{ApiObject, Compact, CompactBody};

    /// Keeps [`Stored`](super::Stored) to this crate's two forms.
    pub trait Sealed<K> {}

    impl<K: ApiObject> Sealed<K> for K {}

    impl<K: ApiObject, B: CompactBody> Sealed<K> for Compact<K, B> {}
}
