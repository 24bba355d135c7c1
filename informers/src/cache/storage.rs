//! [`Storage`]: how an informer's cache keeps its objects.

/// How a [`SharedIndexInformer`](crate::SharedIndexInformer) of `K` keeps
/// its objects. The typed API is the same either way: handlers take
/// `&Arc<K>`, listers return `Arc<K>`; only memory and where decoding
/// happens differ.
///
/// | | [`Compact`](Storage::Compact) (default) | [`Decoded`](Storage::Decoded) |
/// |---|---|---|
/// | the cache keeps | each object's bytes as received (a protobuf message, or JSON), with its metadata parsed once | each object decoded into `K` |
/// | memory per 8.8 KB pod (managedFields cut) | about 5 KB | about 30 KB |
/// | a handler of `K` | decodes each object once per event, shared by every handler of that event | no decode |
/// | a lister `get` / `list` | decodes through a cache of recent decodes bounded in bytes, checked against the resourceVersion | no decode |
/// | keys, metadata, label selectors, metadata indexes | no decode | no decode |
/// | whole-object index functions | one decode per object version, at ingest | no decode |
/// | a [`Transform::Object`](crate::Transform::Object) | runs once per object version, at ingest, on a decode; the result is kept as JSON | runs once per object version, at ingest |
///
/// [`CompactLz4`](Storage::CompactLz4) is `Compact` with each entry's bytes
/// LZ4-compressed at ingest: less memory for a decompression before each
/// decode.
///
/// Pick `Decoded` for a controller that reads every whole object on every
/// event or reconcile: it then pays for each decode once. Informers of
/// types that are already small (metadata-only objects, and explicit
/// `Compact<K>` types) keep them as they are; an informer over a custom
/// [`ListerWatcher`](clientgo_listwatch::ListerWatcher) keeps what its
/// source yields ([`Stored`](crate::Stored): `K`, or `Compact<K, B>`
/// entries).
///
/// client-go's informers keep decoded objects (`Decoded`); kube-controller-manager
/// and kube-scheduler add a transform that drops managedFields "for memory
/// efficiency", which `Compact` does by default as well.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Bytes as received plus parsed metadata; objects decoded on demand.
    #[default]
    Compact,
    /// [`Compact`](Storage::Compact) with the bytes LZ4-compressed.
    CompactLz4,
    /// Decoded objects.
    Decoded,
}
