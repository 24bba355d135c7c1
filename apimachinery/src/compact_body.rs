//! How a [`Compact`](crate::Compact) object keeps its bytes: [`Json`] as
//! received, or [`Lz4`], the same JSON block-compressed.
//!
//! The choice is part of the type (`Compact<Pod>` is `Compact<Pod, Json>`;
//! `Compact<Pod, Lz4>` compresses), so it reaches every informer,
//! factory and lister without an option threaded through each: the body
//! is made when the list or watch decoder builds the entry, and read back
//! only when someone decodes the whole object.
//!
//! | body | ingest | memory | decode |
//! |---|---|---|---|
//! | [`Json`] | one copy of the JSON | the JSON | parse |
//! | [`Lz4`] | + compression (about 3 µs per 5 KB pod) | about a third of the JSON | + decompression into a scratch buffer, then parse |
//! | [`Protobuf`] | the protobuf message as received, without its metadata (kept parsed beside it); JSON when the server answered JSON | about half the JSON | the generated protobuf decoder |

use std::fmt;

/// Decodes a [`Protobuf`] body's message (the object's message without
/// its metadata, field 1, which the entry keeps parsed) into `K`; an error
/// is a message naming the problem. Each [`Compact`](crate::Compact) entry
/// carries its type's, handed over by the codec that made it.
pub type MessageDecoder<K> = fn(&[u8]) -> Result<K, String>;

/// A way to keep an object's JSON; see the module documentation.
pub trait CompactBody: Clone + Send + Sync + Sized + 'static {
    /// Its name in logs and `Debug` output.
    const NAME: &'static str;

    /// Keeps `json` (one object, already checked to be JSON).
    fn from_json(json: Box<str>) -> Self;

    /// Calls `read` with the JSON, decompressed if need be. A body that
    /// cannot be read back (never expected: it is written by this crate)
    /// is an error message.
    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String>;

    /// Bytes held on the heap.
    fn heap_bytes(&self) -> usize;

    /// The name of the record format [`write_record`](Self::write_record)
    /// writes: the entry's
    /// [`RecordCodec::RECORD_FORMAT`](crate::RecordCodec::RECORD_FORMAT).
    const RECORD_FORMAT: &'static str = "compact-record-2";

    /// Decodes the whole object as `K` (its metadata is then set from the
    /// entry's); `message` decodes a protobuf message, for a body that
    /// keeps one (the entry's decoder, if it was given one). The default
    /// parses the JSON [`read`](Self::read) gives.
    fn decode<K: serde::de::DeserializeOwned>(
        &self,
        message: Option<MessageDecoder<K>>,
    ) -> Result<K, serde_json::Error> {
        let _ = message;
        self.read(|json| serde_json::from_str::<K>(json))
            .unwrap_or_else(|unreadable| Err(serde::de::Error::custom(unreadable)))
    }

    /// The body compressed, when this kind of body can be and is not yet
    /// (the default: never).
    fn compressed(&self) -> Option<Self> {
        None
    }

    /// Whether [`compressed`](Self::compressed) would give a body, found
    /// without compressing.
    fn compressible(&self) -> bool {
        false
    }

    /// The bytes the body holds once decompressed (what a decode reads);
    /// [`heap_bytes`](Self::heap_bytes) for a body that is not compressed.
    fn plain_bytes(&self) -> usize {
        self.heap_bytes()
    }

    /// The body without `metadata.managedFields`, for an entry whose
    /// metadata transform dropped them; `None` when it holds none. The
    /// default cuts them from the JSON [`read`](Self::read) gives.
    fn without_managed_fields(&self) -> Option<Self> {
        self.read(json_without_managed_fields)
            .ok()
            .flatten()
            .map(|json| Self::from_json(json.into_boxed_str()))
    }

    /// Appends the body as a snapshot record keeps it (the JSON, by
    /// default).
    fn write_record(&self, out: &mut Vec<u8>) -> Result<(), String> {
        self.read(|json| out.extend_from_slice(json.as_bytes()))
    }

    /// A body from what [`write_record`](Self::write_record) wrote.
    fn from_record(bytes: &[u8]) -> Result<Self, String> {
        let json = std::str::from_utf8(bytes).map_err(|_| "an object that is not UTF-8")?;
        if json.is_empty() {
            return Err("no object".into());
        }
        Ok(Self::from_json(json.into()))
    }
}

/// `json` without its `metadata.managedFields` member; `None` without one.
fn json_without_managed_fields(json: &str) -> Option<String> {
    let range =
        crate::json_scan::managed_fields_member(json.as_bytes(), crate::json_scan::ObjectAt::Root)?;
    let mut kept = String::with_capacity(json.len() - range.len());
    kept.push_str(json.get(..range.start)?);
    kept.push_str(json.get(range.end..)?);
    Some(kept)
}

/// The JSON as received, uncompressed: the fastest ingest and decode.
#[derive(Clone)]
pub struct Json(Box<str>);

impl Json {
    /// The JSON.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl CompactBody for Json {
    const NAME: &'static str = "json";

    fn from_json(json: Box<str>) -> Self {
        Json(json)
    }

    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String> {
        Ok(read(&self.0))
    }

    fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Json({} bytes)", self.0.len())
    }
}

/// The JSON block-compressed with LZ4 (its length first): a Kubernetes
/// object's repetitive keys shrink to about a third, for a few
/// microseconds per object at ingest and a decompression before each
/// decode.
#[derive(Clone)]
pub struct Lz4(Box<[u8]>);

impl CompactBody for Lz4 {
    const NAME: &'static str = "lz4";

    fn from_json(json: Box<str>) -> Self {
        Lz4(lz4(json.as_bytes()))
    }

    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String> {
        Ok(read(&lz4_text(&self.0)?))
    }

    fn heap_bytes(&self) -> usize {
        self.0.len()
    }

    fn plain_bytes(&self) -> usize {
        lz4_plain_length(&self.0)
    }
}

impl fmt::Debug for Lz4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lz4({} bytes)", self.0.len())
    }
}

/// The object's protobuf message as the API server sent it, without its
/// metadata (field 1, which the entry keeps parsed; a field 1 holding
/// only the `managedFields`, when they were kept, stays as bytes for the
/// decode of the whole object): about half the JSON's
/// size, and decoded by the type's generated decoder. Built by
/// clientgo-protobuf's `compact_from_message` for `Compact<K, Protobuf>`
/// informers on a client configured for protobuf; an object that arrived
/// as JSON (a server that answered JSON, a type without protobuf) is kept
/// as JSON.
#[derive(Clone)]
pub enum Protobuf {
    /// The message without field 1.
    Message(Box<[u8]>),
    /// JSON, when that is what arrived.
    Json(Box<str>),
    /// [`Message`](Protobuf::Message) block-compressed with LZ4 (its
    /// length first), for an informer in `Storage::CompactLz4`.
    Lz4Message(Box<[u8]>),
    /// [`Json`](Protobuf::Json) block-compressed with LZ4.
    Lz4Json(Box<[u8]>),
}

impl Protobuf {
    /// A [`Message`](Protobuf::Message) body of `bytes` (a message without
    /// field 1), kept at its exact size whatever room `bytes` had.
    pub fn message(bytes: Vec<u8>) -> Self {
        Protobuf::Message(exact(bytes))
    }
}

/// `bytes` decompressed, or why not.
fn lz4_decompressed(bytes: &[u8]) -> Result<Vec<u8>, String> {
    lz4_flex::block::decompress_size_prepended(bytes)
        .map_err(|error| format!("the LZ4 body does not decompress: {error}"))
}

/// `bytes` decompressed into UTF-8 text, or why not.
fn lz4_text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(lz4_decompressed(bytes)?)
        .map_err(|error| format!("the LZ4 body is not UTF-8: {error}"))
}

/// The length an LZ4 block with its length first says it decompresses
/// to (0 for one too short to say).
fn lz4_plain_length(bytes: &[u8]) -> usize {
    bytes
        .first_chunk::<4>()
        .map_or(0, |length| u32::from_le_bytes(*length) as usize)
}

fn lz4(bytes: &[u8]) -> Box<[u8]> {
    // Compressed into a buffer of the worst case.
    exact(lz4_flex::block::compress_prepend_size(bytes))
}

/// Spare capacity from which [`exact`] copies instead of shrinking in
/// place (glibc's smallest chunk: less cannot be split off as a hole).
const SLACK: usize = 32;

/// `bytes` in an allocation of exactly their length, for a body a cache
/// keeps. Shrinking a buffer with more room in place would leave its tail
/// free beside every kept entry, a hole per entry that glibc keeps (LZ4
/// storage at 10,000 pods: 8 MiB of holes over the 13 MiB kept); such a
/// buffer is copied instead.
fn exact(bytes: Vec<u8>) -> Box<[u8]> {
    if bytes.capacity() - bytes.len() >= SLACK {
        Box::from(bytes.as_slice())
    } else {
        bytes.into_boxed_slice()
    }
}

impl CompactBody for Protobuf {
    const NAME: &'static str = "protobuf";
    const RECORD_FORMAT: &'static str = "compact-record-protobuf-2";

    fn from_json(json: Box<str>) -> Self {
        Protobuf::Json(json)
    }

    /// The JSON of a body that arrived as JSON; an error for a message
    /// (decode it instead).
    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String> {
        match self {
            Protobuf::Json(json) => Ok(read(json)),
            Protobuf::Lz4Json(bytes) => Ok(read(&lz4_text(bytes)?)),
            Protobuf::Message(_) | Protobuf::Lz4Message(_) => {
                Err("a protobuf body has no JSON; decode the object".into())
            }
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Protobuf::Message(bytes) | Protobuf::Lz4Message(bytes) | Protobuf::Lz4Json(bytes) => {
                bytes.len()
            }
            Protobuf::Json(json) => json.len(),
        }
    }

    fn decode<K: serde::de::DeserializeOwned>(
        &self,
        decoder: Option<MessageDecoder<K>>,
    ) -> Result<K, serde_json::Error> {
        let message = |bytes: &[u8]| match decoder {
            Some(decode) => decode(bytes).map_err(serde::de::Error::custom),
            None => Err(serde::de::Error::custom(format!(
                "a protobuf message and no decoder of {} for it (an entry gets one from the \
                 protobuf codec that made it, or from set_message_decoder)",
                std::any::type_name::<K>()
            ))),
        };
        match self {
            Protobuf::Json(json) => serde_json::from_str(json),
            Protobuf::Message(bytes) => message(bytes),
            Protobuf::Lz4Message(bytes) => {
                message(&lz4_decompressed(bytes).map_err(serde::de::Error::custom)?)
            }
            Protobuf::Lz4Json(bytes) => {
                serde_json::from_str(&lz4_text(bytes).map_err(serde::de::Error::custom)?)
            }
        }
    }

    fn compressible(&self) -> bool {
        matches!(self, Protobuf::Message(_) | Protobuf::Json(_))
    }

    fn plain_bytes(&self) -> usize {
        match self {
            Protobuf::Lz4Message(bytes) | Protobuf::Lz4Json(bytes) => lz4_plain_length(bytes),
            Protobuf::Message(bytes) => bytes.len(),
            Protobuf::Json(json) => json.len(),
        }
    }

    fn compressed(&self) -> Option<Self> {
        match self {
            Protobuf::Message(bytes) => Some(Protobuf::Lz4Message(lz4(bytes))),
            Protobuf::Json(json) => Some(Protobuf::Lz4Json(lz4(json.as_bytes()))),
            Protobuf::Lz4Message(_) | Protobuf::Lz4Json(_) => None,
        }
    }

    /// A message's managedFields are its only field 1 (see
    /// `clientgo_protobuf::compact_from_message`): that field goes.
    fn without_managed_fields(&self) -> Option<Self> {
        match self {
            Protobuf::Message(bytes) => {
                crate::protobuf_wire::without_field(bytes, 1).map(Protobuf::message)
            }
            Protobuf::Json(json) => {
                json_without_managed_fields(json).map(|json| Protobuf::Json(json.into_boxed_str()))
            }
            Protobuf::Lz4Message(bytes) => {
                let message = lz4_decompressed(bytes).ok()?;
                crate::protobuf_wire::without_field(&message, 1)
                    .map(|rest| Protobuf::Lz4Message(lz4(&rest)))
            }
            Protobuf::Lz4Json(bytes) => json_without_managed_fields(&lz4_text(bytes).ok()?)
                .map(|json| Protobuf::Lz4Json(lz4(json.as_bytes()))),
        }
    }

    /// A marker byte (`j` for JSON, `p` for a message, `J` and `P` for
    /// the same compressed), then the bytes as kept.
    fn write_record(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let (marker, bytes): (u8, &[u8]) = match self {
            Protobuf::Json(json) => (b'j', json.as_bytes()),
            Protobuf::Message(bytes) => (b'p', bytes),
            Protobuf::Lz4Json(bytes) => (b'J', bytes),
            Protobuf::Lz4Message(bytes) => (b'P', bytes),
        };
        out.push(marker);
        out.extend_from_slice(bytes);
        Ok(())
    }

    fn from_record(bytes: &[u8]) -> Result<Self, String> {
        match bytes.split_first() {
            Some((b'j', json)) => std::str::from_utf8(json)
                .map(|json| Protobuf::Json(json.into()))
                .map_err(|_| "an object that is not UTF-8".into()),
            Some((b'p', message)) => Ok(Protobuf::Message(message.into())),
            Some((b'J', compressed)) => Ok(Protobuf::Lz4Json(compressed.into())),
            Some((b'P', compressed)) => Ok(Protobuf::Lz4Message(compressed.into())),
            _ => Err("not a protobuf body's record".into()),
        }
    }
}

impl fmt::Debug for Protobuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Protobuf::Message(bytes) => write!(f, "Protobuf({} bytes of message)", bytes.len()),
            Protobuf::Json(json) => write!(f, "Protobuf({} bytes of JSON)", json.len()),
            Protobuf::Lz4Message(bytes) => {
                write!(f, "Protobuf({} bytes of LZ4 message)", bytes.len())
            }
            Protobuf::Lz4Json(bytes) => write!(f, "Protobuf({} bytes of LZ4 JSON)", bytes.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn both_bodies_give_the_json_back() {
        let json = r#"{"metadata":{"name":"a","labels":{"app":"web","tier":"web"}},"data":{"k":"web web web web"}}"#;
        let plain = Json::from_json(json.into());
        assert_eq!(plain.read(str::to_string).unwrap(), json);
        let compressed = Lz4::from_json(json.into());
        assert_eq!(compressed.read(str::to_string).unwrap(), json);
    }

    #[test]
    fn lz4_shrinks_a_repetitive_object() {
        let json: String =
            std::iter::repeat_n(r#"{"name":"container","image":"nginx"},"#, 100).collect();
        let compressed = Lz4::from_json(json.clone().into());
        assert!(
            compressed.heap_bytes() * 4 < json.len(),
            "{} of {}",
            compressed.heap_bytes(),
            json.len()
        );
    }

    #[test]
    fn a_protobuf_body_keeps_what_arrived_and_records_it() {
        let message = Protobuf::Message(vec![0x12, 0x01, b'x'].into_boxed_slice());
        assert!(message.read(|_| ()).is_err());
        let mut record = Vec::new();
        message.write_record(&mut record).unwrap();
        assert!(
            matches!(Protobuf::from_record(&record).unwrap(), Protobuf::Message(b) if *b == [0x12, 0x01, b'x'])
        );
        let json = Protobuf::from_json("{}".into());
        let mut record = Vec::new();
        json.write_record(&mut record).unwrap();
        assert!(
            matches!(Protobuf::from_record(&record).unwrap(), Protobuf::Json(j) if &*j == "{}")
        );
        assert!(Protobuf::from_record(b"").is_err());
        assert!(Protobuf::from_record(b"x{}").is_err());
    }

    #[test]
    fn a_damaged_lz4_body_is_an_error_not_a_panic() {
        let damaged = Lz4(vec![200, 0, 0, 0, 0xff, 1, 2].into_boxed_slice());
        assert!(damaged.read(|_| ()).is_err());
        let empty = Lz4(Vec::new().into_boxed_slice());
        assert!(empty.read(|_| ()).is_err());
    }

    #[test]
    fn a_compressed_protobuf_body_reads_records_and_cuts_as_the_plain_one() {
        let json = r#"{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"data":{"k":"v v v v v v v v"}}"#;
        let plain = Protobuf::from_json(json.into());
        let compressed = plain.compressed().unwrap();
        assert!(matches!(compressed, Protobuf::Lz4Json(_)));
        assert!(compressed.compressed().is_none(), "once");
        assert_eq!(compressed.read(str::to_string).unwrap(), json);
        let mut record = Vec::new();
        compressed.write_record(&mut record).unwrap();
        let back = Protobuf::from_record(&record).unwrap();
        assert_eq!(back.read(str::to_string).unwrap(), json);
        let cut = compressed.without_managed_fields().unwrap();
        assert!(matches!(cut, Protobuf::Lz4Json(_)));
        assert!(!cut.read(str::to_string).unwrap().contains("managedFields"));
        let message = Protobuf::Message(vec![0x0a, 0x01, b'x', 0x12, 0x01, b'y'].into());
        let packed = message.compressed().unwrap();
        let mut record = Vec::new();
        packed.write_record(&mut record).unwrap();
        assert!(matches!(
            Protobuf::from_record(&record).unwrap(),
            Protobuf::Lz4Message(_)
        ));
        let Some(Protobuf::Lz4Message(rest)) = packed.without_managed_fields() else {
            panic!("field 1 cut")
        };
        assert_eq!(lz4_decompressed(&rest).unwrap(), [0x12, 0x01, b'y']);
        assert!(
            Protobuf::Lz4Message(vec![9, 9].into())
                .decode::<String>(Some(|_| Ok(String::new())))
                .is_err(),
            "a damaged compressed message is an error before the decoder sees it"
        );
        assert!(
            Protobuf::Message(vec![9, 9].into())
                .decode::<String>(None)
                .is_err(),
            "a message without a decoder is an error"
        );
    }
}
