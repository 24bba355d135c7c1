//! A [`Compact`] entry as a self-contained record, for snapshots of a
//! cache written to disk and read back by a later process.
//!
//! A record is, in order: the metadata as the entry keeps it (it is the
//! source of truth: a transform may have changed it) as JSON, preceded by
//! its length (u32, little-endian); the list type's `apiVersion` and `kind`
//! (each a u16 length and the text; empty when none); and the body as its
//! [`CompactBody::write_record`] writes it, to the end of the record: the
//! object's JSON (decompressed if the body is an [`Lz4`](crate::Lz4) one),
//! or for a protobuf body a marker byte and the bytes as kept (the message
//! or JSON, LZ4-compressed for an informer in compact LZ4 storage).
//!
//! Reading parses the metadata and checks that the JSON is UTF-8, but does
//! not parse the JSON again: it was checked when it arrived, and a snapshot
//! is checksummed as a whole. JSON that was damaged all the same fails
//! when decoded, as a typed error naming the object.

use super::{Compact, ListType};
use crate::RecordCodec;
use crate::compact_body::CompactBody;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Why a record could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum CompactRecordError {
    /// The entry's body could not be read (a damaged compressed body).
    #[error("the entry's body cannot be read: {0}")]
    Body(String),
    /// The metadata could not be written or read back.
    #[error("the record's metadata: {0}")]
    Metadata(#[from] serde_json::Error),
    /// The record is shorter than its lengths say, or not UTF-8.
    #[error("not a record of a compact entry: {0}")]
    Malformed(&'static str),
}

/// Records of the metadata and body as kept: JSON for the JSON bodies (the
/// same format for both, so a snapshot written with one reads back into
/// the other), the message for [`Protobuf`](crate::Protobuf).
impl<K, B: CompactBody> RecordCodec for Compact<K, B> {
    const RECORD_FORMAT: &'static str = B::RECORD_FORMAT;

    type Error = CompactRecordError;

    /// Appends this entry as a record to `out` (see the module
    /// documentation); [`read_record`](Self::read_record) reads it back.
    fn write_record(&self, out: &mut Vec<u8>) -> Result<(), CompactRecordError> {
        let length_at = out.len();
        out.extend_from_slice(&[0; 4]);
        serde_json::to_writer(&mut *out, &self.meta.to_object_meta())?;
        let length = u32::try_from(out.len() - length_at - 4)
            .map_err(|_| CompactRecordError::Malformed("metadata over 4 GiB"))?;
        out[length_at..length_at + 4].copy_from_slice(&length.to_le_bytes());
        let (api_version, kind) = self
            .list_type
            .map_or(("", ""), |t| (t.api_version.as_str(), t.kind.as_str()));
        for text in [api_version, kind] {
            let length = u16::try_from(text.len())
                .map_err(|_| CompactRecordError::Malformed("a list type over 64 KiB"))?;
            out.extend_from_slice(&length.to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
        self.body
            .write_record(out)
            .map_err(CompactRecordError::Body)
    }

    /// An entry from a record written by [`write_record`](Self::write_record),
    /// with its metadata as written. The entry holds its own copy; nothing
    /// points into `record`. An entry keeping a protobuf message has no
    /// decoder yet ([`set_message_decoder`](Compact::set_message_decoder)).
    fn read_record(record: &[u8]) -> Result<Self, CompactRecordError> {
        let mut rest = record;
        let mut take = |length: usize| -> Result<&[u8], CompactRecordError> {
            if rest.len() < length {
                return Err(CompactRecordError::Malformed("cut off"));
            }
            let (taken, after) = rest.split_at(length);
            rest = after;
            Ok(taken)
        };
        let meta_length = u32::from_le_bytes(
            take(4)?
                .try_into()
                .map_err(|_| CompactRecordError::Malformed("cut off"))?,
        );
        let meta_length = usize::try_from(meta_length)
            .map_err(|_| CompactRecordError::Malformed("metadata too long"))?;
        let metadata: ObjectMeta = serde_json::from_slice(take(meta_length)?)?;
        let mut text = || -> Result<&str, CompactRecordError> {
            let length = u16::from_le_bytes(
                take(2)?
                    .try_into()
                    .map_err(|_| CompactRecordError::Malformed("cut off"))?,
            );
            std::str::from_utf8(take(usize::from(length))?)
                .map_err(|_| CompactRecordError::Malformed("a list type that is not UTF-8"))
        };
        let api_version = text()?.to_string();
        let kind = text()?.to_string();
        let body = B::from_record(rest).map_err(CompactRecordError::Body)?;
        let mut entry = Compact::from_parts(metadata, body);
        entry.list_type =
            (!api_version.is_empty()).then(|| ListType::interned(&api_version, &kind));
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;
    use crate::compact_body::{Json, Lz4};
    use k8s_openapi::api::core::v1::Pod;

    const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"n","resourceVersion":"7","labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;

    fn round_trip<B: CompactBody>() {
        let mut entry = Compact::<Pod, B>::from_json(POD).expect("valid JSON");
        entry
            .meta_mut()
            .annotations
            .get_or_insert_default()
            .insert("changed".into(), "by a transform".into());
        entry.fill_type_from_list("v1", "PodList");
        let mut out = Vec::new();
        entry.write_record(&mut out).expect("writable");
        let back = Compact::<Pod, B>::read_record(&out).expect("readable");
        assert_eq!(back.meta(), entry.meta());
        assert_eq!(
            back.decode().expect("decodes"),
            entry.decode().expect("decodes")
        );
    }

    #[test]
    fn a_record_reads_back_into_an_equal_entry_with_either_body() {
        round_trip::<Json>();
        round_trip::<Lz4>();
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        for bad in [
            &b""[..],
            b"{",
            b"[]",
            b"{\"metadata\":{}}",
            b"{\"metadata\":1,\"object\":{}}",
        ] {
            assert!(Compact::<Pod>::read_record(bad).is_err(), "{bad:?}");
        }
    }
}
