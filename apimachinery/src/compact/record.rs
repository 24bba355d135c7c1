//! A [`Compact`] entry as a self-contained record, for snapshots of a
//! cache written to disk and read back by a later process.
//!
//! A record is one JSON object: `{"metadata": …, "listType": [apiVersion,
//! kind] or null, "object": …}`. The metadata is written as the entry
//! keeps it (it is the source of truth: a transform may have changed it),
//! and the object as the entry's JSON, decompressed if its body is.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Compact, ListType};
use crate::compact_body::CompactBody;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordOut<'a> {
    metadata: &'a ObjectMeta,
    list_type: Option<(&'a str, &'a str)>,
    object: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordIn {
    metadata: ObjectMeta,
    #[serde(default)]
    list_type: Option<(String, String)>,
    object: Box<RawValue>,
}

/// Why a record could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum CompactRecordError {
    /// The entry's body could not be read (a damaged compressed body).
    #[error("the entry's body cannot be read: {0}")]
    Body(String),
    /// The record is not a well-formed record.
    #[error("not a record of a compact entry: {0}")]
    Malformed(#[from] serde_json::Error),
}

impl<K, B: CompactBody> Compact<K, B> {
    /// Appends this entry as a record to `out` (see the module
    /// documentation); [`from_record`](Self::from_record) reads it back
    /// into an equal entry.
    pub fn write_record(&self, out: &mut Vec<u8>) -> Result<(), CompactRecordError> {
        let written = self.body.read(|json| {
            let object: &RawValue = serde_json::from_str(json)?;
            serde_json::to_writer(
                &mut *out,
                &RecordOut {
                    metadata: &self.metadata,
                    list_type: self
                        .list_type
                        .map(|t| (t.api_version.as_str(), t.kind.as_str())),
                    object,
                },
            )
        });
        match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(CompactRecordError::Malformed(error)),
            Err(unreadable) => Err(CompactRecordError::Body(unreadable)),
        }
    }

    /// An entry from a record written by [`write_record`](Self::write_record),
    /// with its metadata as written and its JSON checked to be JSON. The
    /// entry holds its own copy; nothing points into `record`.
    pub fn from_record(record: &[u8]) -> Result<Self, CompactRecordError> {
        let record: RecordIn = serde_json::from_slice(record)?;
        let json: Box<str> = record.object.get().into();
        let mut entry = Compact::with_metadata(json, None);
        entry.metadata = record.metadata;
        entry.list_type = record
            .list_type
            .map(|(api_version, kind)| ListType::interned(&api_version, &kind));
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
        let back = Compact::<Pod, B>::from_record(&out).expect("readable");
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
            assert!(Compact::<Pod>::from_record(bad).is_err(), "{bad:?}");
        }
    }
}
