//! [`Compact<K>`]: an object kept as the JSON it arrived in plus its parsed
//! metadata, decoded into `K` only when asked.
//!
//! Most controllers read an object's key and metadata in their handlers and
//! a few whole objects per reconcile. A `Compact<K>` keeps, per object, one
//! owned copy of its JSON (never a view into a response buffer) and its
//! metadata parsed once at ingest, without `managedFields`, and packed
//! ([`CompactMeta`]: one allocation, more for an object with
//! finalizers or being deleted; read in place by the
//! [`Object`](crate::Object) accessors). It is an
//! [`Object`](crate::Object), and a `k8s_openapi::Resource` when `K` is
//! (typed and custom resources; a `Compact<DynamicObject>` works through
//! the resource-driven constructors), so every layer that works with `K`
//! (reflector, stores, indexers, informers, listers, factories) works with
//! `Compact<K>` unchanged: `factory.informer_for::<Compact<Pod>>()`.
//!
//! **Metadata is the source of truth.** [`decode`](Compact::decode) builds
//! `K` from the JSON and then gives it the parsed metadata, so a transform
//! that changed the metadata (dropping annotations, say) is seen in the
//! decoded object too.
//!
//! **Sharing.** A decoded object is kept only weakly: while anyone holds
//! the `Arc<K>` of one decode, later decodes of the same entry return it
//! without decoding again (so every handler of one event shares one
//! decode); once all are dropped, the memory is given back and the next
//! read decodes again.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use parking_lot::Mutex;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::compact_body::{CompactBody, Json, MessageDecoder};
use crate::{CompactMeta, OwnerRefs, StrMap};

mod record;

pub use record::CompactRecordError;

static DECODES: AtomicU64 = AtomicU64::new(0);
static DECODE_ERRORS: AtomicU64 = AtomicU64::new(0);
static COPIES: AtomicU64 = AtomicU64::new(0);
static META_BUILDS: AtomicU64 = AtomicU64::new(0);

/// Counters of [`Compact::decode`] across every type in the process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactDecodes {
    /// Full decodes made (a decode served by a live shared copy does not
    /// count).
    pub decodes: u64,
    /// Decodes that failed.
    pub errors: u64,
    /// Deep copies of an entry (`Clone`): the informer never makes one,
    /// which a test checks.
    pub copies: u64,
    /// Whole `ObjectMeta`s built and kept for an entry's
    /// [`meta`](crate::Object::meta) (the accessors never build one): the
    /// informer builds none, which a test checks.
    pub metadata_builds: u64,
}

/// The decode counters so far.
pub fn compact_decodes() -> CompactDecodes {
    CompactDecodes {
        decodes: DECODES.load(Ordering::Relaxed),
        errors: DECODE_ERRORS.load(Ordering::Relaxed),
        copies: COPIES.load(Ordering::Relaxed),
        metadata_builds: META_BUILDS.load(Ordering::Relaxed),
    }
}

/// A cached object that no longer decodes into its type (for example after
/// a CRD's schema changed): which object, and why.
#[derive(Debug, thiserror::Error)]
#[error("cached {kind} {key} does not decode: {source}")]
pub struct CompactDecodeError {
    /// The object's `namespace/name`.
    pub key: String,
    /// The Rust type asked for.
    pub kind: &'static str,
    /// serde_json's error, with its line and column in the object's JSON.
    #[source]
    pub source: serde_json::Error,
}

/// An object kept as its JSON (in body `B`: [`Json`] as received, or
/// [`Lz4`](crate::Lz4)-compressed) and parsed metadata; see the module
/// documentation.
pub struct Compact<K, B: CompactBody = Json> {
    meta: MetaForm,
    body: B,
    /// What only some readers ask for, made on the first such ask: most
    /// entries of an informer whose handlers read metadata never need
    /// one, and the entry is smaller for it (120 bytes for a protobuf
    /// pod's instead of 200; `Compact` is kept once per cached object).
    asked: OnceLock<Box<Asked<K>>>,
    /// The `apiVersion` and `kind` of the list the object came in
    /// ([`fill_type_from_list`](crate::Object::fill_type_from_list)),
    /// given to the decoded object, which keeps them only if it has none
    /// (a `DynamicObject` from a list of a built-in type).
    list_type: Option<&'static ListType>,
    /// Decodes a [`Protobuf`](crate::Protobuf) body's message, handed over
    /// by the codec that made the entry from one (or by
    /// [`set_message_decoder`](Compact::set_message_decoder)).
    message_decoder: Option<MessageDecoder<K>>,
    _type: PhantomData<fn() -> K>,
}

/// An entry's metadata: packed, as ingest keeps it; or whole, once
/// [`meta_mut`](crate::Object::meta_mut) was asked for (until
/// [`change_metadata`](Compact::change_metadata) packs it again).
enum MetaForm {
    Packed(CompactMeta),
    Whole(Box<WholeMeta>),
}

/// The parts of an entry made only when a reader asks for them.
struct Asked<K> {
    /// Built from packed metadata by the first
    /// [`meta`](crate::Object::meta) and kept: the accessors never need it.
    built: OnceLock<Box<ObjectMeta>>,
    /// The last decode, while anyone holds it (see the module's docs).
    decoded: Mutex<Weak<K>>,
    /// See [`Compact::memo`].
    memo: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl<K> Default for Asked<K> {
    fn default() -> Self {
        Asked {
            built: OnceLock::new(),
            decoded: Mutex::new(Weak::new()),
            memo: OnceLock::new(),
        }
    }
}

impl MetaForm {
    /// A copy in the same form (packed metadata copied as it is, without
    /// a built `ObjectMeta`).
    fn copy(&self) -> Self {
        match self {
            MetaForm::Packed(packed) => MetaForm::Packed(packed.clone()),
            MetaForm::Whole(whole) => MetaForm::Whole(whole.clone()),
        }
    }

    /// The whole `ObjectMeta`: built (and counted) into `built` when
    /// packed.
    fn whole<'a>(
        &'a self,
        built: impl FnOnce() -> &'a OnceLock<Box<ObjectMeta>>,
    ) -> &'a ObjectMeta {
        match self {
            MetaForm::Packed(packed) => built().get_or_init(|| {
                META_BUILDS.fetch_add(1, Ordering::Relaxed);
                Box::new(packed.to_object_meta())
            }),
            MetaForm::Whole(whole) => &whole.0,
        }
    }

    /// A new `ObjectMeta` equal to the kept one, built without keeping it.
    fn to_object_meta(&self) -> ObjectMeta {
        match self {
            MetaForm::Packed(packed) => packed.to_object_meta(),
            MetaForm::Whole(whole) => whole.0.clone(),
        }
    }

    /// The kept metadata, made whole to change (from `built`, when one
    /// was built).
    fn whole_mut(&mut self, built: Option<Box<ObjectMeta>>) -> &mut ObjectMeta {
        if let MetaForm::Packed(packed) = self {
            let whole = built.map_or_else(|| packed.to_object_meta(), |built| *built);
            *self = MetaForm::Whole(Box::new(WholeMeta(whole)));
        }
        match self {
            MetaForm::Whole(whole) => &mut whole.0,
            MetaForm::Packed(_) => unreachable!("made whole just above"),
        }
    }

    /// Bytes on the heap, with a whole `ObjectMeta` that was `built`.
    fn heap_bytes(&self, built: bool) -> usize {
        match self {
            // A whole `ObjectMeta` built by `meta()` is kept too: about
            // its own size, the packed bytes again, and a map entry's
            // overhead per label and annotation.
            MetaForm::Packed(packed) if built => {
                packed.heap_bytes()
                    + std::mem::size_of::<ObjectMeta>()
                    + packed.heap_bytes()
                    + 48 * (packed.labels().len() + packed.annotations().len())
            }
            MetaForm::Packed(packed) => packed.heap_bytes(),
            MetaForm::Whole(whole) => CompactMeta::new(&whole.0).heap_bytes(),
        }
    }
}

/// Reads one metadata field of an entry through the accessor of either
/// form: [`CompactMeta`]'s, or the [`Object`](crate::Object) trait's on
/// the whole `ObjectMeta`.
macro_rules! field {
    ($entry:expr, $accessor:ident) => {
        match &$entry.meta {
            MetaForm::Packed(packed) => packed.$accessor(),
            MetaForm::Whole(whole) => crate::Object::$accessor(&**whole),
        }
    };
}

/// A whole `ObjectMeta` as an [`Object`](crate::Object), read with the
/// trait's accessors.
#[derive(Clone)]
struct WholeMeta(ObjectMeta);

impl crate::Object for WholeMeta {
    fn meta(&self) -> &ObjectMeta {
        &self.0
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0
    }
}

impl<K> Compact<K, Json> {
    /// The object's JSON as received (without `managedFields` when the
    /// lister-watcher skips them).
    pub fn json(&self) -> &str {
        self.body.as_str()
    }
}

impl<K, B: CompactBody> Compact<K, B> {
    /// Keeps `json` (one object) with metadata parsed from it; the whole
    /// of `json` is checked to be JSON.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        let head: MetadataOnly = serde_json::from_str(json)?;
        Ok(Compact::with_metadata(json.into(), head.metadata))
    }

    /// Keeps `json`, already checked to be JSON (a `RawValue`), parsing
    /// only its `metadata` member, which the scanner finds without
    /// parsing what comes before or after; when it cannot (a key spelled
    /// with escapes), the whole object is parsed as [`from_json`] does.
    ///
    /// [`from_json`]: Compact::from_json
    fn from_checked(json: Box<str>) -> Result<Self, serde_json::Error> {
        let metadata = match crate::json_scan::member_value(json.as_bytes(), b"metadata") {
            Some(range) => serde_json::from_str::<Option<MetadataSansManagedFields>>(&json[range])?,
            None => serde_json::from_str::<MetadataOnly>(&json)?.metadata,
        };
        Ok(Compact::with_metadata(json, metadata))
    }

    fn with_metadata(json: Box<str>, metadata: Option<MetadataSansManagedFields>) -> Self {
        Compact::from_parts(
            metadata.map(ObjectMeta::from).unwrap_or_default(),
            B::from_json(json),
        )
    }

    /// An entry of `metadata` (packed; its managedFields are not kept)
    /// and `body`, for readers that have the metadata as an `ObjectMeta`
    /// (a snapshot record). It has no message decoder.
    pub fn from_parts(metadata: ObjectMeta, body: B) -> Self {
        Compact::from_packed(CompactMeta::from_owned(metadata), body)
    }

    /// An entry of metadata already packed and `body`, for decoders that
    /// read the metadata straight into a [`CompactMeta`] (clientgo-protobuf
    /// does). It has no message decoder.
    pub fn from_packed(metadata: CompactMeta, body: B) -> Self {
        Compact {
            meta: MetaForm::Packed(metadata),
            body,
            asked: OnceLock::new(),
            list_type: None,
            message_decoder: None,
            _type: PhantomData,
        }
    }

    /// This entry with `decoder` for its protobuf message (see
    /// [`set_message_decoder`](Self::set_message_decoder)).
    #[must_use]
    pub fn with_message_decoder(mut self, decoder: MessageDecoder<K>) -> Self {
        self.message_decoder = Some(decoder);
        self
    }

    /// Gives the entry the decoder of its protobuf message, which an entry
    /// built with [`from_parts`](Self::from_parts) or read back from a
    /// snapshot record lacks. A JSON body ignores it.
    pub fn set_message_decoder(&mut self, decoder: MessageDecoder<K>) {
        self.message_decoder = Some(decoder);
    }

    /// Whether a [`decode`](Self::decode) of a protobuf message has a
    /// decoder to use.
    pub fn has_message_decoder(&self) -> bool {
        self.message_decoder.is_some()
    }

    /// Applies `change` to the metadata (as a metadata transform does).
    /// The change sees `managedFields` as `Some(empty)` when the body keeps
    /// them as bytes; setting them to `None` cuts them from the body too,
    /// so no decode gives them back. Forgets the memo and any shared
    /// decode.
    ///
    /// The metadata is unpacked, changed and packed again; managedFields
    /// the change sets are not kept (an entry keeps them only as its
    /// body's bytes). [`strip_managed_fields`](Self::strip_managed_fields)
    /// is the cut alone, without unpacking.
    pub fn change_metadata(&mut self, change: &(dyn Fn(&mut ObjectMeta) + Send + Sync)) {
        let placeholder = MetaForm::Packed(CompactMeta::default());
        let mut metadata = match std::mem::replace(&mut self.meta, placeholder) {
            MetaForm::Packed(packed) => packed.to_object_meta(),
            MetaForm::Whole(whole) => whole.0,
        };
        let cut = changed_metadata(&mut metadata, change);
        self.meta = MetaForm::Packed(CompactMeta::from_owned(metadata));
        // A built `ObjectMeta`, a decode and a memo are all of the old
        // metadata.
        self.asked = OnceLock::new();
        if cut && let Some(body) = self.body.without_managed_fields() {
            self.body = body;
        }
    }

    /// [`heap_bytes`](Self::heap_bytes) with the body counted as it is
    /// once decompressed: what a decode reads, and what a decoded object's
    /// size is estimated from.
    pub fn plain_bytes(&self) -> usize {
        self.heap_bytes() - self.body.heap_bytes() + self.body.plain_bytes()
    }

    /// Whether [`compress`](Self::compress) would change the body.
    pub fn compressible(&self) -> bool {
        self.body.compressible()
    }

    /// Compresses the body, when its kind can be compressed and is not
    /// yet (a [`Protobuf`](crate::Protobuf) body becomes LZ4). Forgets any
    /// shared decode.
    pub fn compress(&mut self) {
        if let Some(body) = self.body.compressed() {
            self.body = body;
            self.forget_decode();
        }
    }

    /// Cuts managedFields from the body, when it keeps any (the packed
    /// metadata never does): what [`change_metadata`](Self::change_metadata)
    /// with a change setting them to `None` does, without unpacking the
    /// metadata (the informer's default ingest: managedFields dropped, no
    /// metadata transform of the user's). Forgets the memo and any shared
    /// decode when it cuts.
    pub fn strip_managed_fields(&mut self) {
        if let Some(body) = self.body.without_managed_fields() {
            self.body = body;
            self.forget_decode();
            self.forget_memo();
        }
    }

    /// The parts made on request, made empty on the first.
    fn asked(&self) -> &Asked<K> {
        self.asked.get_or_init(Box::default)
    }

    /// Drops the remembered decode, if any.
    fn forget_decode(&mut self) {
        if let Some(asked) = self.asked.get_mut() {
            *asked.decoded.get_mut() = Weak::new();
        }
    }

    /// Drops the memo, if any.
    fn forget_memo(&mut self) {
        if let Some(asked) = self.asked.get_mut() {
            asked.memo = OnceLock::new();
        }
    }

    /// This entry with managedFields cut from its body, as
    /// [`strip_managed_fields`](Self::strip_managed_fields) does, when its
    /// body keeps any (`None` when it keeps none: nothing to change).
    /// Only the metadata is copied (the body is cut from the kept one, not
    /// cloned first); no decode or memo is carried over.
    pub fn without_managed_fields(&self) -> Option<Self> {
        let body = self.body.without_managed_fields()?;
        Some(self.copy_with(body))
    }

    /// This entry's metadata (in its form, without a built `ObjectMeta`),
    /// list type and message decoder with `body`; nothing asked yet.
    fn copy_with(&self, body: B) -> Self {
        Compact {
            meta: self.meta.copy(),
            body,
            asked: OnceLock::new(),
            list_type: self.list_type,
            message_decoder: self.message_decoder,
            _type: PhantomData,
        }
    }

    /// Whether [`change_metadata`](Self::change_metadata) with `change`
    /// would alter this entry (its metadata, or the managedFields its body
    /// keeps), found on a copy of the metadata.
    pub fn changed_by(&self, change: &(dyn Fn(&mut ObjectMeta) + Send + Sync)) -> bool {
        let kept = self.meta.to_object_meta();
        let mut metadata = kept.clone();
        let cut = changed_metadata(&mut metadata, change);
        // Packing keeps no managedFields: ones the change sets are no
        // change to the entry.
        if !cut && self.compact_meta().is_some() {
            metadata.managed_fields.clone_from(&kept.managed_fields);
        }
        // A cut changes the entry if its body holds any.
        metadata != kept || (cut && self.body.without_managed_fields().is_some())
    }

    /// The kept body.
    pub fn body(&self) -> &B {
        &self.body
    }

    /// A value derived from this entry, computed by `make` on the first
    /// call and kept with the entry (index values computed from a decode
    /// at ingest, so recomputing them on update or delete decodes
    /// nothing). An entry keeps one memo: `None` when it already holds a
    /// value of another type (the caller then computes without keeping).
    /// Changing the metadata (`meta_mut`) forgets it; a clone starts
    /// without one. Concurrent first calls wait for a single `make`.
    pub fn memo<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Option<&T> {
        self.asked()
            .memo
            .get_or_init(|| Box::new(make()))
            .downcast_ref::<T>()
    }

    /// Bytes this entry holds on the heap: the body, the packed
    /// metadata's text, offsets and lists, and the part made on request
    /// once made (an estimate that leaves out the entry's own struct and
    /// allocator overhead).
    pub fn heap_bytes(&self) -> usize {
        let asked = self.asked.get();
        let built = asked.is_some_and(|asked| asked.built.get().is_some());
        self.body.heap_bytes()
            + self.meta.heap_bytes(built)
            + asked.map_or(0, |_| std::mem::size_of::<Asked<K>>())
    }

    /// The metadata as kept, packed ([`None`] while it is whole after a
    /// [`meta_mut`](crate::Object::meta_mut)).
    pub fn compact_meta(&self) -> Option<&CompactMeta> {
        match &self.meta {
            MetaForm::Packed(packed) => Some(packed),
            MetaForm::Whole(_) => None,
        }
    }

    /// A new `ObjectMeta` equal to the kept metadata (without
    /// `managedFields`), which the entry does not keep: for a reader that
    /// needs the whole of it once (a snapshot, a decode).
    pub fn to_object_meta(&self) -> ObjectMeta {
        self.meta.to_object_meta()
    }
}

impl<K: DeserializeOwned + crate::Object + 'static, B: CompactBody> Compact<K, B> {
    /// The whole object: decoded from the JSON (with the parsed metadata
    /// put in), or the copy someone else decoded and still holds. A JSON
    /// that no longer decodes into `K` is an error naming the object.
    /// Concurrent calls on one entry wait for a single decode (the entry's
    /// lock is held while decoding); other entries are not held up.
    pub fn decode(&self) -> Result<Arc<K>, CompactDecodeError> {
        self.decode_transformed(Ok::<_, std::convert::Infallible>)
            .map(|transformed| match transformed {
                Ok(object) => object,
                Err(never) => match never {},
            })
    }

    /// [`decode`](Self::decode), with `transform` applied to a fresh
    /// decode while it is still the only reference (so a transform may
    /// change it in place), and the result shared as a decode is: while
    /// anyone holds it, later calls return it as it is. Every caller of one
    /// entry must pass the same transform (an informer's decoder does).
    /// The outer error is the decode's, the inner the transform's.
    pub fn decode_transformed<E>(
        &self,
        transform: impl FnOnce(Arc<K>) -> Result<Arc<K>, E>,
    ) -> Result<Result<Arc<K>, E>, CompactDecodeError> {
        let mut decoded = self.asked().decoded.lock();
        if let Some(object) = decoded.upgrade() {
            return Ok(Ok(object));
        }
        let transformed = transform(Arc::new(self.decode_fresh()?));
        if let Ok(object) = &transformed {
            *decoded = Arc::downgrade(object);
        }
        Ok(transformed)
    }

    /// The whole object for one reader: the decode the entry remembers
    /// (from [`decode`](Self::decode)) while anyone holds it, else a decode
    /// of its own that the entry does not remember (so
    /// nothing is added to the entry, and dropping it frees all of it).
    /// While it is held, any other read of the entry (shared or not)
    /// decodes again.
    pub fn decode_unshared(&self) -> Result<Arc<K>, CompactDecodeError> {
        if let Some(object) = self
            .asked
            .get()
            .and_then(|asked| asked.decoded.lock().upgrade())
        {
            return Ok(object);
        }
        self.decode_fresh().map(Arc::new)
    }

    /// A new decode of the body with the kept metadata put in.
    fn decode_fresh(&self) -> Result<K, CompactDecodeError> {
        let mut object: K = self
            .body
            .decode::<K>(self.message_decoder)
            .map_err(|source| {
                DECODE_ERRORS.fetch_add(1, Ordering::Relaxed);
                CompactDecodeError {
                    key: self.key(),
                    kind: std::any::type_name::<K>(),
                    source,
                }
            })?;
        DECODES.fetch_add(1, Ordering::Relaxed);
        // The parsed metadata never holds managedFields (they stay in
        // the body, as bytes, unless the source or a transform cut them):
        // the body's go back in, unless a transform set its own.
        let managed_fields = object.meta_mut().managed_fields.take();
        *object.meta_mut() = self.meta.to_object_meta();
        if object.meta().managed_fields.is_none() {
            object.meta_mut().managed_fields = managed_fields;
        }
        if let Some(list_type) = self.list_type {
            object.fill_type_from_list(&list_type.api_version, &list_type.kind);
        }
        Ok(object)
    }
}

impl<K, B: CompactBody> Compact<K, B> {
    /// Gives back a decode of this entry that its holder is done with.
    /// When no one else holds it, the entry forgets it at once, so its
    /// memory is freed now: a shared decode is only remembered weakly,
    /// and a remembered `Weak` keeps the decode's allocation (the size of
    /// `K`, 2.4 KB for a `Pod`) until the entry itself goes. When others
    /// hold it too, this only drops the caller's reference.
    ///
    /// Informers call it after each handler call; a reader that keeps
    /// objects need not.
    pub fn release(&self, object: Arc<K>) {
        if let Some(asked) = self.asked.get() {
            let mut decoded = asked.decoded.lock();
            // Upgrades happen under this lock, so the count cannot grow
            // while it is held.
            if Arc::strong_count(&object) == 1
                && std::ptr::eq(decoded.as_ptr(), Arc::as_ptr(&object))
            {
                *decoded = Weak::new();
            }
        }
        drop(object);
    }

    fn key(&self) -> String {
        let name = field!(self, name).unwrap_or_default();
        match field!(self, namespace).filter(|ns| !ns.is_empty()) {
            Some(namespace) => format!("{namespace}/{name}"),
            None => name.to_string(),
        }
    }
}

impl<K, B: CompactBody> Clone for Compact<K, B> {
    /// A deep copy (the JSON and the metadata), counted in
    /// [`CompactDecodes::copies`].
    fn clone(&self) -> Self {
        COPIES.fetch_add(1, Ordering::Relaxed);
        let copy = self.copy_with(self.body.clone());
        // A decode someone still holds is shared with the copy.
        if let Some(asked) = self.asked.get() {
            let decoded = asked.decoded.lock().clone();
            if decoded.strong_count() > 0 {
                *copy.asked().decoded.lock() = decoded;
            }
        }
        copy
    }
}

impl<K, B: CompactBody> fmt::Debug for Compact<K, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compact")
            .field("type", &std::any::type_name::<K>())
            .field("key", &self.key())
            .field("resource_version", &field!(self, resource_version))
            .field("body", &B::NAME)
            .field("body_bytes", &self.body.heap_bytes())
            .finish()
    }
}

impl<'de, K, B: CompactBody> Deserialize<'de> for Compact<K, B> {
    /// Keeps one owned copy of the object's JSON and parses its metadata;
    /// the rest of the object is scanned, not built.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: Box<RawValue> = Deserialize::deserialize(deserializer)?;
        Compact::from_checked(raw.into()).map_err(D::Error::custom)
    }
}

impl<K, B> serde::Serialize for Compact<K, B>
where
    K: serde::Serialize + DeserializeOwned + crate::Object + 'static,
    B: CompactBody,
{
    /// Serializes the whole object as [`decode`](Compact::decode) builds
    /// it (the kept metadata over the JSON's body), so it costs a decode
    /// unless one is held, and leaves nothing on the entry
    /// ([`decode_unshared`](Compact::decode_unshared)); an object that no
    /// longer decodes is a serialization error naming it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let object = self.decode_unshared().map_err(serde::ser::Error::custom)?;
        object.serialize(serializer)
    }
}

impl<K: k8s_openapi::Resource, B: CompactBody> k8s_openapi::Resource for Compact<K, B> {
    const API_VERSION: &'static str = K::API_VERSION;
    const GROUP: &'static str = K::GROUP;
    const KIND: &'static str = K::KIND;
    const VERSION: &'static str = K::VERSION;
    const URL_PATH_SEGMENT: &'static str = K::URL_PATH_SEGMENT;
    type Scope = K::Scope;
}

impl<K: k8s_openapi::ListableResource, B: CompactBody> k8s_openapi::ListableResource
    for Compact<K, B>
{
    const LIST_KIND: &'static str = K::LIST_KIND;
}

impl<K: crate::Object, B: CompactBody> crate::Object for Compact<K, B> {
    fn compactable() -> bool {
        false
    }

    /// The whole `ObjectMeta`: built from the packed metadata on the first
    /// call and kept with the entry from then on (counted in
    /// [`CompactDecodes::metadata_builds`]). Read fields through the other
    /// accessors, which read the packed form in place; use
    /// [`to_object_meta`](Compact::to_object_meta) for a copy not kept.
    fn meta(&self) -> &ObjectMeta {
        self.meta.whole(|| &self.asked().built)
    }

    /// The metadata, to change: it is made whole (and packed again by
    /// [`change_metadata`](Compact::change_metadata), the informer's
    /// transform path); forgets the entry's [`memo`](Compact::memo),
    /// which may depend on it.
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.forget_memo();
        let built = self.asked.get_mut().and_then(|asked| asked.built.take());
        self.meta.whole_mut(built)
    }

    fn name(&self) -> Option<&str> {
        field!(self, name)
    }

    fn namespace(&self) -> Option<&str> {
        field!(self, namespace)
    }

    fn resource_version(&self) -> Option<&str> {
        field!(self, resource_version)
    }

    fn uid(&self) -> Option<&str> {
        field!(self, uid)
    }

    fn generation(&self) -> Option<i64> {
        field!(self, generation)
    }

    fn labels(&self) -> StrMap<'_> {
        field!(self, labels)
    }

    fn annotations(&self) -> StrMap<'_> {
        field!(self, annotations)
    }

    fn creation_timestamp(&self) -> Option<&Time> {
        field!(self, creation_timestamp)
    }

    fn deletion_timestamp(&self) -> Option<&Time> {
        field!(self, deletion_timestamp)
    }

    fn owner_references(&self) -> OwnerRefs<'_> {
        field!(self, owner_references)
    }

    fn finalizers(&self) -> &[String] {
        field!(self, finalizers)
    }

    /// `K`'s: a compact entry keeps no `apiVersion` or `kind` of its own.
    fn fixed_type() -> Option<(&'static str, &'static str)> {
        K::fixed_type()
    }

    /// Kept for the decode, which hands it to `K` (a `DynamicObject` from
    /// a list of a built-in type has neither, as the server leaves them
    /// out). Each distinct list type is stored once for the process, so
    /// an entry pays one pointer.
    fn fill_type_from_list(&mut self, list_api_version: &str, list_kind: &str) {
        if !list_api_version.is_empty() {
            self.list_type = Some(ListType::interned(list_api_version, list_kind));
        }
    }
}

/// A list's `apiVersion` and `kind`, one per distinct pair for the
/// process (there are as many as resource types listed).
#[derive(Debug, PartialEq, Eq, Hash)]
struct ListType {
    api_version: String,
    kind: String,
}

impl ListType {
    fn interned(api_version: &str, kind: &str) -> &'static ListType {
        static SEEN: Mutex<Vec<&'static ListType>> = Mutex::new(Vec::new());
        let mut seen = SEEN.lock();
        if let Some(found) = seen
            .iter()
            .find(|known| known.api_version == api_version && known.kind == kind)
        {
            return found;
        }
        let leaked: &'static ListType = Box::leak(Box::new(ListType {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        }));
        seen.push(leaked);
        leaked
    }
}

/// The part of an object parsed at ingest: its metadata; every other
/// member is skipped.
#[derive(Deserialize)]
struct MetadataOnly {
    #[serde(default)]
    metadata: Option<MetadataSansManagedFields>,
}

/// `ObjectMeta` without `managedFields`, which is skipped, never built.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetadataSansManagedFields {
    #[serde(default)]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    creation_timestamp: Option<Time>,
    #[serde(default)]
    deletion_grace_period_seconds: Option<i64>,
    #[serde(default)]
    deletion_timestamp: Option<Time>,
    #[serde(default)]
    finalizers: Option<Vec<String>>,
    #[serde(default)]
    generate_name: Option<String>,
    #[serde(default)]
    generation: Option<i64>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    owner_references: Option<Vec<OwnerReference>>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    self_link: Option<String>,
    #[serde(default)]
    uid: Option<String>,
}

impl From<MetadataSansManagedFields> for ObjectMeta {
    fn from(head: MetadataSansManagedFields) -> Self {
        ObjectMeta {
            annotations: head.annotations,
            creation_timestamp: head.creation_timestamp,
            deletion_grace_period_seconds: head.deletion_grace_period_seconds,
            deletion_timestamp: head.deletion_timestamp,
            finalizers: head.finalizers,
            generate_name: head.generate_name,
            generation: head.generation,
            labels: head.labels,
            managed_fields: None,
            name: head.name,
            namespace: head.namespace,
            owner_references: head.owner_references,
            resource_version: head.resource_version,
            self_link: head.self_link,
            uid: head.uid,
        }
    }
}

/// Applies `change` to `metadata` as [`Compact::change_metadata`] says:
/// parsed metadata without managedFields (the body keeps any) shows them
/// to the change as `Some(empty)`, given back as `None` when it leaves
/// them so. Whether the change cut them (set them to `None`), which the
/// body must then follow.
fn changed_metadata(
    metadata: &mut ObjectMeta,
    change: &(dyn Fn(&mut ObjectMeta) + Send + Sync),
) -> bool {
    let kept_in_body = metadata.managed_fields.is_none();
    if kept_in_body {
        metadata.managed_fields = Some(Vec::new());
    }
    change(metadata);
    if !kept_in_body {
        return false;
    }
    match &metadata.managed_fields {
        Some(entries) if entries.is_empty() => {
            metadata.managed_fields = None;
            false
        }
        None => true,
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use k8s_openapi::api::core::v1::{ConfigMap, Pod};

    use super::*;
    use crate::{Object, ObjectList, WatchEvent};

    #[test]
    fn an_entry_stays_small() {
        // Kept once per cached object; the decode slot, the built
        // metadata and the memo live in `Asked`, made on request.
        assert!(std::mem::size_of::<Compact<Pod, crate::Protobuf>>() <= 120);
        assert!(std::mem::size_of::<Compact<Pod>>() <= 112);
    }

    const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default","uid":"u-1","resourceVersion":"42","labels":{"app":"web"},"managedFields":[{"manager":"kubectl","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}],"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"r-1"}]},"spec":{"containers":[{"name":"app","image":"nginx"}]}}"#;

    #[test]
    fn serializing_leaves_nothing_on_the_entry() {
        let compact = Compact::<Pod>::from_json(POD).unwrap();
        let before = compact.heap_bytes();
        let json = serde_json::to_value(&compact).unwrap();
        assert_eq!(json["metadata"]["name"], "web-1");
        assert_eq!(compact.heap_bytes(), before, "no decode slot was made");
    }

    #[test]
    fn a_copy_without_managed_fields_keeps_the_metadata_and_leaves_the_original() {
        let original = Compact::<Pod>::from_json(POD).unwrap();
        let stripped = original
            .without_managed_fields()
            .expect("the body keeps some");
        assert_eq!(stripped.to_object_meta(), original.to_object_meta());
        assert!(stripped.decode().unwrap().metadata.managed_fields.is_none());
        assert!(original.decode().unwrap().metadata.managed_fields.is_some());
        assert!(
            stripped.without_managed_fields().is_none(),
            "nothing left to cut"
        );
    }

    #[test]
    fn accessors_read_the_packed_metadata_and_meta_builds_it_once() {
        let compact = Compact::<Pod>::from_json(POD).unwrap();
        let before = compact_decodes().metadata_builds;
        assert_eq!(compact.name(), Some("web-1"));
        assert_eq!(compact.labels().get("app"), Some("web"));
        assert_eq!(compact.owner_references().get(0).unwrap().name, "web");
        assert!(compact.compact_meta().is_some());
        let packed_only = compact.heap_bytes();
        let whole = compact.meta();
        assert_eq!(whole, &compact.to_object_meta());
        assert_eq!(whole.name.as_deref(), Some("web-1"));
        let _ = compact.meta();
        assert!(
            compact.heap_bytes() > packed_only,
            "the built one is counted"
        );
        // Other tests of this binary may build too: at least this one.
        assert!(compact_decodes().metadata_builds > before);
        // A change makes it whole; change_metadata packs it again.
        let mut changed = compact.clone();
        changed.meta_mut().name = Some("web-2".into());
        assert!(changed.compact_meta().is_none());
        assert_eq!(changed.name(), Some("web-2"));
        changed.change_metadata(&|meta: &mut ObjectMeta| meta.namespace = Some("other".into()));
        assert!(changed.compact_meta().is_some());
        assert_eq!(
            (changed.name(), changed.namespace()),
            (Some("web-2"), Some("other"))
        );
    }

    #[test]
    fn metadata_is_parsed_without_managed_fields_and_the_json_kept() {
        let compact = Compact::<Pod>::from_json(POD).unwrap();
        assert_eq!(compact.name(), Some("web-1"));
        assert_eq!(compact.namespace(), Some("default"));
        assert_eq!(compact.resource_version(), Some("42"));
        assert_eq!(compact.labels().get("app"), Some("web"));
        assert_eq!(compact.meta().owner_references.as_ref().unwrap().len(), 1);
        assert!(compact.meta().managed_fields.is_none());
        assert_eq!(compact.json(), POD);
        assert!(compact.heap_bytes() >= POD.len());
    }

    #[test]
    fn a_released_decode_no_one_else_holds_is_freed_whole() {
        let compact = Compact::<Pod>::from_json(POD).unwrap();
        let first = compact.decode().unwrap();
        let second = compact.decode().unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        // Another holder: releasing only drops the caller's reference,
        // and the entry still shares the decode.
        compact.release(second);
        assert!(Arc::ptr_eq(&first, &compact.decode().unwrap()));
        // The last holder: the entry forgets it, so nothing but `watch`
        // refers to the allocation once it is dropped (a remembered Weak
        // would keep the Pod's 2.4 KB allocated).
        let watch = Arc::downgrade(&first);
        assert_eq!(Weak::weak_count(&watch), 2);
        compact.release(first);
        assert!(watch.upgrade().is_none());
        assert!(
            Weak::ptr_eq(&compact.asked().decoded.lock(), &Weak::new()),
            "the entry still remembers its decode"
        );
        // A release of someone else's object changes nothing.
        let kept = compact.decode().unwrap();
        compact.release(Arc::new(Pod::default()));
        assert!(Arc::ptr_eq(&kept, &compact.decode().unwrap()));
    }

    #[test]
    fn an_unshared_decode_adds_nothing_to_the_entry_and_takes_a_held_one() {
        let compact = Compact::<Pod>::from_json(POD).unwrap();
        let before = compact.heap_bytes();
        let alone = compact.decode_unshared().unwrap();
        assert_eq!(alone.metadata.name, compact.to_object_meta().name);
        assert!(
            compact.asked.get().is_none(),
            "the entry made its part on request"
        );
        assert_eq!(compact.heap_bytes(), before);
        // Not remembered: another read decodes again.
        assert!(!Arc::ptr_eq(&alone, &compact.decode_unshared().unwrap()));
        // A decode someone holds is handed out instead.
        let shared = compact.decode().unwrap();
        assert!(Arc::ptr_eq(&shared, &compact.decode_unshared().unwrap()));
    }

    #[test]
    fn decoding_builds_the_object_with_the_kept_metadata_and_shares_it_while_held() {
        let mut compact = Compact::<Pod>::from_json(POD).unwrap();
        // A transform changed the metadata: the decoded object sees it.
        compact.meta_mut().labels = None;
        let first = compact.decode().unwrap();
        assert_eq!(
            first.spec.as_ref().unwrap().containers[0].image.as_deref(),
            Some("nginx")
        );
        assert!(first.metadata.labels.is_none());
        assert_eq!(
            first.metadata.managed_fields.as_ref().map(Vec::len),
            Some(1),
            "managedFields kept in the body come back with the whole object"
        );
        let second = compact.decode().unwrap();
        assert!(Arc::ptr_eq(&first, &second), "held: shared");
        drop((first, second));
        let third = compact.decode().unwrap();
        assert_eq!(third.metadata.name.as_deref(), Some("web-1"));
    }

    #[test]
    fn a_metadata_change_that_drops_managed_fields_cuts_them_from_the_body() {
        let mut compact = Compact::<Pod>::from_json(POD).unwrap();
        let keep = |meta: &mut ObjectMeta| meta.labels = None;
        let strip = |meta: &mut ObjectMeta| meta.managed_fields = None;
        assert!(compact.changed_by(&keep));
        assert!(compact.changed_by(&strip), "the body holds some");
        compact.change_metadata(&keep);
        assert!(compact.json().contains("managedFields"), "kept");
        assert!(compact.decode().unwrap().metadata.managed_fields.is_some());
        compact.change_metadata(&strip);
        assert!(!compact.json().contains("managedFields"), "cut");
        assert!(compact.decode().unwrap().metadata.managed_fields.is_none());
        assert!(!compact.changed_by(&strip), "nothing left to cut");
        assert!(compact.decode().unwrap().metadata.labels.is_none());
    }

    #[test]
    fn a_transform_on_decode_runs_once_and_its_result_is_shared() {
        let compact = Compact::<Pod>::from_json(POD).unwrap();
        let transform = |mut pod: Arc<Pod>| {
            Arc::get_mut(&mut pod).ok_or("shared")?.metadata.labels = None;
            Ok::<_, &str>(pod)
        };
        let first = compact.decode_transformed(transform).unwrap().unwrap();
        assert!(first.metadata.labels.is_none(), "changed in place");
        let again = compact.decode_transformed(transform).unwrap().unwrap();
        assert!(Arc::ptr_eq(&first, &again));
    }

    #[test]
    fn an_object_that_does_not_decode_is_an_error_naming_it() {
        let compact = Compact::<ConfigMap>::from_json(
            r#"{"metadata":{"name":"c","namespace":"ns"},"data":{"k":7}}"#,
        )
        .unwrap();
        let error = compact.decode().unwrap_err();
        assert_eq!(error.key, "ns/c");
        assert!(error.to_string().contains("ns/c"), "{error}");
    }

    #[test]
    fn watch_events_and_list_items_deserialize_into_compact_objects() {
        let frame = format!(r#"{{"type":"MODIFIED","object":{POD}}}"#);
        let event: WatchEvent<Compact<Pod>> = serde_json::from_str(&frame).unwrap();
        match event {
            WatchEvent::Modified(compact) => assert_eq!(compact.json(), POD),
            other => panic!("{}", other.type_name()),
        }
        let list = format!(r#"{{"metadata":{{"resourceVersion":"9"}},"items":[{POD},{POD}]}}"#);
        let list: ObjectList<Compact<Pod>> = serde_json::from_str(&list).unwrap();
        assert_eq!(list.items.len(), 2);
        assert_eq!(list.items[1].uid(), Some("u-1"));
    }

    #[test]
    fn it_serializes_as_the_decoded_object() {
        let mut compact = Compact::<Pod>::from_json(POD).unwrap();
        compact.meta_mut().labels = None;
        let value = serde_json::to_value(&compact).unwrap();
        assert_eq!(value["spec"]["containers"][0]["image"], "nginx");
        assert!(value["metadata"].get("labels").is_none(), "{value}");
        let broken = Compact::<ConfigMap>::from_json(
            r#"{"metadata":{"name":"c","namespace":"ns"},"data":{"k":7}}"#,
        )
        .unwrap();
        let error = serde_json::to_string(&broken).unwrap_err();
        assert!(error.to_string().contains("ns/c"), "{error}");
    }

    #[test]
    fn an_lz4_body_keeps_less_and_decodes_the_same() {
        let plain = Compact::<Pod>::from_json(POD).unwrap();
        let compressed = Compact::<Pod, crate::Lz4>::from_json(POD).unwrap();
        assert_eq!(compressed.meta(), plain.meta());
        assert_eq!(compressed.decode().unwrap(), plain.decode().unwrap());
        let list = format!(r#"{{"metadata":{{"resourceVersion":"9"}},"items":[{POD}]}}"#);
        let list: ObjectList<Compact<Pod, crate::Lz4>> = serde_json::from_str(&list).unwrap();
        assert_eq!(
            list.items[0].decode().unwrap().metadata.name.as_deref(),
            Some("web-1")
        );
    }

    #[test]
    fn a_memo_is_computed_once_kept_and_forgotten_when_the_metadata_changes() {
        let mut compact = Compact::<Pod>::from_json(POD).unwrap();
        let mut runs = 0;
        assert_eq!(
            compact.memo(|| {
                runs += 1;
                7_u32
            }),
            Some(&7)
        );
        assert_eq!(
            compact.memo(|| {
                runs += 1;
                8_u32
            }),
            Some(&7)
        );
        assert_eq!(runs, 1);
        assert_eq!(compact.memo(|| "another type"), None);
        compact.meta_mut().labels = None;
        assert_eq!(compact.memo(|| 9_u32), Some(&9));
        assert_eq!(compact.clone().memo(|| 10_u32), Some(&10));
    }

    #[test]
    fn metadata_found_by_the_scanner_or_by_a_full_parse_is_the_same() {
        let scanned: Compact<Pod> = serde_json::from_str(POD).unwrap();
        assert_eq!(
            scanned.meta(),
            Compact::<Pod>::from_json(POD).unwrap().meta()
        );
        // A key spelled with an escape: the scanner does not see it, the
        // full parse does.
        let escaped = r#"{"kind":"Pod","\u006detadata":{"name":"x","namespace":"n"}}"#;
        let parsed: Compact<Pod> = serde_json::from_str(escaped).unwrap();
        assert_eq!(parsed.name(), Some("x"));
        let without: Compact<Pod> = serde_json::from_str(r#"{"kind":"Pod"}"#).unwrap();
        assert_eq!(without.meta(), &ObjectMeta::default());
        let bad: Result<Compact<Pod>, _> = serde_json::from_str(r#"{"metadata":{"name":7}}"#);
        assert!(bad.is_err());
    }

    #[test]
    fn a_dynamic_object_from_a_list_of_a_built_in_type_gets_the_list_type() {
        let item = r#"{"metadata":{"name":"a","namespace":"n"},"spec":{}}"#;
        let mut compact = Compact::<crate::DynamicObject>::from_json(item).unwrap();
        compact.fill_type_from_list("v1", "PodList");
        let object = compact.decode().unwrap();
        assert_eq!(object.kind.as_deref(), Some("Pod"));
        assert_eq!(object.api_version.as_deref(), Some("v1"));
        // A typed object ignores it.
        let mut pod = Compact::<Pod>::from_json(item).unwrap();
        pod.fill_type_from_list("v1", "PodList");
        assert_eq!(pod.decode().unwrap().metadata.name.as_deref(), Some("a"));
    }

    #[test]
    fn it_is_a_resource_of_its_type() {
        use k8s_openapi::Resource;
        assert_eq!(<Compact<Pod> as Resource>::KIND, "Pod");
        assert_eq!(<Compact<Pod> as Resource>::URL_PATH_SEGMENT, "pods");
    }
}
