//! Decoders of protobuf messages into Rust types, reached by `TypeId`:
//! how a [`Compact`](crate::Compact) entry with a
//! [`Protobuf`](crate::Protobuf) body decodes its message, when the
//! decoders live in a crate above this one (clientgo-protobuf installs
//! them the first time its codecs are looked up, which happens before any
//! such entry exists).

use std::any::{Any, TypeId};
use std::sync::OnceLock;

/// Decodes a message into a boxed value of the type it was found for.
pub type MessageDecoder = fn(&[u8]) -> Result<Box<dyn Any + Send>, String>;

/// Finds the decoder of a type.
pub type MessageDecoderLookup = fn(TypeId) -> Option<MessageDecoder>;

static LOOKUP: OnceLock<MessageDecoderLookup> = OnceLock::new();

/// Installs the lookup (once for the process; later calls are ignored).
pub fn install_message_decoders(lookup: MessageDecoderLookup) {
    let _ = LOOKUP.set(lookup);
}

/// Decodes `bytes` as `K`'s message; an error when no decoder is
/// installed for `K`.
pub(crate) fn decode_message<K: 'static>(bytes: &[u8]) -> Result<K, String> {
    let lookup = LOOKUP
        .get()
        .ok_or("no protobuf decoders are installed (clientgo-protobuf installs them)")?;
    let decode = lookup(TypeId::of::<K>())
        .ok_or_else(|| format!("no protobuf decoder for {}", std::any::type_name::<K>()))?;
    let boxed = decode(bytes)?;
    boxed.downcast::<K>().map(|object| *object).map_err(|_| {
        format!(
            "the protobuf decoder gave another type than {}",
            std::any::type_name::<K>()
        )
    })
}
