//! [`codec`]: the protobuf decoder and encoder of a type, found at run
//! time, so generic code (informers, list and watch decoding) can use
//! protobuf for the types that have it and JSON for the rest.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::OnceLock;

use clientgo_apimachinery::{Compact, Protobuf};

use crate::error::DecodeError;
use crate::message::Message;

/// A type's protobuf functions (no `k8s\0` envelope: the message alone).
pub struct Codec<K> {
    /// The message's name in its `.proto` file.
    pub name: &'static str,
    /// Decodes the message's bytes.
    pub decode: fn(&[u8]) -> Result<K, DecodeError>,
    /// Appends the message's bytes.
    pub encode: fn(&K, &mut Vec<u8>),
    /// Makes a value read back from a snapshot's record as
    /// [`decode`](Self::decode) would have made it: a `Compact<K, Protobuf>`
    /// entry gets its message decoder; nothing for other types.
    pub restore: fn(&mut K),
}

impl<K> Clone for Codec<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Codec<K> {}

impl<K> std::fmt::Debug for Codec<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<K: Message> Codec<K> {
    fn of() -> Self {
        Codec {
            name: K::NAME,
            decode: K::decode,
            encode: |k, out| k.encode_fields(out),
            restore: |_| {},
        }
    }
}

/// A resource type's protobuf codec reached by its apiVersion and kind,
/// converting to and from JSON: for code that holds objects as JSON (the
/// test server, tools printing protobuf) and for checking decoders
/// against JSON twins.
#[cfg(feature = "kind-codecs")]
#[derive(Debug, Clone, Copy)]
pub struct KindCodec {
    /// `apps/v1`.
    pub api_version: &'static str,
    /// `Deployment`.
    pub kind: &'static str,
    to_json: fn(&[u8]) -> Result<serde_json::Value, DecodeError>,
    from_json: fn(&[u8]) -> Result<Vec<u8>, serde_json::Error>,
    normalize: fn(&[u8]) -> Result<serde_json::Value, serde_json::Error>,
}

#[cfg(feature = "kind-codecs")]
impl KindCodec {
    fn of<K>() -> Self
    where
        K: Message + k8s_openapi::Resource + serde::Serialize + serde::de::DeserializeOwned,
    {
        KindCodec {
            api_version: K::API_VERSION,
            kind: K::KIND,
            to_json: |bytes| {
                let object = K::decode(bytes)?;
                serde_json::to_value(&object)
                    .map_err(|e| DecodeError::new(crate::Problem::EmbeddedJson(e.to_string())))
            },
            from_json: |json| Ok(serde_json::from_slice::<K>(json)?.encode()),
            normalize: |json| serde_json::to_value(serde_json::from_slice::<K>(json)?),
        }
    }

    /// Decodes the message (no envelope) and gives the object as JSON,
    /// as its type serialises it.
    pub fn protobuf_to_json(&self, bytes: &[u8]) -> Result<serde_json::Value, DecodeError> {
        (self.to_json)(bytes)
    }

    /// Reads the object from JSON into its type and encodes the message
    /// (no envelope).
    pub fn json_to_protobuf(&self, json: &[u8]) -> Result<Vec<u8>, serde_json::Error> {
        (self.from_json)(json)
    }

    /// Reads the object from JSON into its type and gives it back as JSON:
    /// what [`protobuf_to_json`](Self::protobuf_to_json) of the same
    /// object gives.
    pub fn normalize_json(&self, json: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
        (self.normalize)(json)
    }
}

/// The registered codecs, by type and by apiVersion and kind.
pub(crate) struct Registry {
    codecs: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    #[cfg(feature = "kind-codecs")]
    kinds: HashMap<(&'static str, &'static str), KindCodec>,
}

impl Registry {
    /// Registers `K`'s codec.
    pub(crate) fn add<K>(&mut self)
    where
        K: Message
            + k8s_openapi::Resource
            + serde::Serialize
            + serde::de::DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        self.codecs
            .insert(TypeId::of::<K>(), Box::new(Codec::<K>::of()));
        #[cfg(feature = "kind-codecs")]
        self.kinds
            .insert((K::API_VERSION, K::KIND), KindCodec::of::<K>());
        // Compact entries keeping the message: ingested with the metadata
        // parsed, decoded whole through `K`'s decoder, which each entry
        // is handed.
        self.codecs.insert(
            TypeId::of::<Compact<K, Protobuf>>(),
            Box::new(Codec::<Compact<K, Protobuf>> {
                name: K::NAME,
                decode: crate::compact::compact_from_message::<K>,
                encode: |_, _| {},
                restore: |entry| entry.set_message_decoder(crate::compact::decode_whole::<K>),
            }),
        );
    }
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut built = Registry {
            codecs: HashMap::new(),
            #[cfg(feature = "kind-codecs")]
            kinds: HashMap::new(),
        };
        crate::generated::register(&mut built);
        built
    })
}

/// The protobuf codec of `K` when `K` is a built-in resource type that
/// has one (every k8s-openapi resource type with a message in
/// Kubernetes' `generated.proto`), or a `Compact<K, Protobuf>` of one
/// (whose codec keeps the message, with only the metadata decoded, and
/// encodes nothing); `None` for anything else (custom resources,
/// `DynamicObject`, metadata-only objects, compact entries keeping JSON),
/// which stay JSON as in client-go.
///
/// The lookup is a hash of the type's `TypeId`: cheap, but meant to be
/// done once per informer or request, not per object.
pub fn codec<K: 'static>() -> Option<Codec<K>> {
    registry()
        .codecs
        .get(&TypeId::of::<K>())
        .and_then(|codec| codec.downcast_ref::<Codec<K>>())
        .copied()
}

/// The codec of the resource type with this apiVersion and kind, when it
/// has one.
#[cfg(feature = "kind-codecs")]
pub fn by_kind(api_version: &str, kind: &str) -> Option<KindCodec> {
    registry().kinds.get(&(api_version, kind)).copied()
}

/// How many types have a registered codec.
pub fn registered_types() -> usize {
    registry().codecs.len()
}
