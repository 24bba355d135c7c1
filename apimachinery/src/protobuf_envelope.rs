//! [`Unknown`]: the envelope of every protobuf object the API server sends
//! (`application/vnd.kubernetes.protobuf`): the magic `k8s\0`, then a
//! `runtime.Unknown` message holding the object's `apiVersion` and `kind`
//! and the object's own message bytes.

use crate::protobuf_wire::{WireError, WireReader, WireValue, put_bytes};

/// The four bytes every Kubernetes protobuf object starts with.
pub const PROTOBUF_MAGIC: [u8; 4] = *b"k8s\0";

/// The media type of Kubernetes protobuf.
pub const PROTOBUF_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// A decoded envelope: borrowed from the buffer it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// `typeMeta.apiVersion`.
    pub api_version: &'a str,
    /// `typeMeta.kind`.
    pub kind: &'a str,
    /// The object's message.
    pub raw: &'a [u8],
    /// `contentEncoding` (empty: none).
    pub content_encoding: &'a str,
    /// `contentType` (empty: protobuf).
    pub content_type: &'a str,
}

/// Why bytes are not a Kubernetes protobuf object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// They do not start with `k8s\0` (JSON, say).
    #[error("not Kubernetes protobuf: no k8s\\0 magic")]
    NoMagic,
    /// The envelope is not well-formed protobuf.
    #[error("the protobuf envelope: {0}")]
    Wire(#[from] WireError),
    /// A field has the wrong wire type.
    #[error("the protobuf envelope's field {field} has the wrong wire type")]
    WrongType {
        /// The field number.
        field: u32,
    },
    /// A string field is not UTF-8.
    #[error("the protobuf envelope's field {field} is not UTF-8")]
    NotUtf8 {
        /// The field number.
        field: u32,
    },
}

fn text(field: u32, value: WireValue<'_>) -> Result<&str, EnvelopeError> {
    match value {
        WireValue::Bytes(bytes) => {
            std::str::from_utf8(bytes).map_err(|_| EnvelopeError::NotUtf8 { field })
        }
        _ => Err(EnvelopeError::WrongType { field }),
    }
}

impl<'a> Unknown<'a> {
    /// The envelope of an object's message `raw` of type `api_version`
    /// `kind` (no content encoding or type, as the API server writes
    /// objects), encoded: what a protobuf body or watch event's object is.
    pub fn wrap(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        Unknown {
            api_version,
            kind,
            raw,
            content_encoding: "",
            content_type: "",
        }
        .encode()
    }

    /// Reads the envelope of `bytes` (magic included). Unknown fields are
    /// skipped, as protobuf requires.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, EnvelopeError> {
        let body = bytes
            .strip_prefix(&PROTOBUF_MAGIC[..])
            .ok_or(EnvelopeError::NoMagic)?;
        let mut envelope = Unknown {
            api_version: "",
            kind: "",
            raw: &[],
            content_encoding: "",
            content_type: "",
        };
        let mut reader = WireReader::new(body);
        while let Some((field, value)) = reader.next_field()? {
            match field {
                1 => {
                    let WireValue::Bytes(type_meta) = value else {
                        return Err(EnvelopeError::WrongType { field });
                    };
                    let mut type_reader = reader.nested(type_meta);
                    while let Some((inner, value)) = type_reader.next_field()? {
                        match inner {
                            1 => envelope.api_version = text(inner, value)?,
                            2 => envelope.kind = text(inner, value)?,
                            _ => {}
                        }
                    }
                }
                2 => match value {
                    WireValue::Bytes(raw) => envelope.raw = raw,
                    _ => return Err(EnvelopeError::WrongType { field }),
                },
                3 => envelope.content_encoding = text(field, value)?,
                4 => envelope.content_type = text(field, value)?,
                _ => {}
            }
        }
        Ok(envelope)
    }

    /// The envelope's bytes, magic included, byte for byte as the API
    /// server writes them: every field present, empty strings included
    /// (its generated code writes non-pointer strings always).
    pub fn encode(&self) -> Vec<u8> {
        let mut type_meta = Vec::new();
        put_bytes(&mut type_meta, 1, self.api_version.as_bytes());
        put_bytes(&mut type_meta, 2, self.kind.as_bytes());
        let mut out = PROTOBUF_MAGIC.to_vec();
        put_bytes(&mut out, 1, &type_meta);
        put_bytes(&mut out, 2, self.raw);
        put_bytes(&mut out, 3, self.content_encoding.as_bytes());
        put_bytes(&mut out, 4, self.content_type.as_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_envelope_round_trips() {
        let envelope = Unknown {
            api_version: "apps/v1",
            kind: "Deployment",
            raw: b"\x0a\x03abc",
            content_encoding: "",
            content_type: "",
        };
        let bytes = envelope.encode();
        assert!(bytes.starts_with(b"k8s\0"));
        assert_eq!(Unknown::decode(&bytes), Ok(envelope));
    }

    #[test]
    fn json_and_damage_are_typed_errors() {
        assert_eq!(
            Unknown::decode(b"{\"kind\":\"Pod\"}"),
            Err(EnvelopeError::NoMagic)
        );
        assert!(matches!(
            Unknown::decode(b"k8s\0\x0a\x05ab"),
            Err(EnvelopeError::Wire(_))
        ));
        assert_eq!(
            Unknown::decode(b"k8s\0\x10\x01"),
            Err(EnvelopeError::WrongType { field: 2 })
        );
        assert_eq!(
            Unknown::decode(b"k8s\0\x0a\x04\x0a\x02\xff\xfe"),
            Err(EnvelopeError::NotUtf8 { field: 1 })
        );
    }

    /// Every upstream fixture (`../shared/fixtures/api-testdata-v1.36`,
    /// one object per type as `.pb` and `.json`): its envelope names the
    /// JSON's apiVersion and kind, and carries a message. Skipped when the
    /// fixtures are absent.
    #[test]
    fn every_upstream_fixture_has_the_envelope_of_its_json() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/api-testdata-v1.36");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("skipped: {} is absent", dir.display());
            return;
        };
        let mut checked = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "pb") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("readable");
            let json: serde_json::Value = serde_json::from_slice(
                &std::fs::read(path.with_extension("json")).expect("a .json beside"),
            )
            .expect("valid JSON");
            let envelope =
                Unknown::decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                envelope.api_version,
                json["apiVersion"].as_str().unwrap_or_default(),
                "{}",
                path.display()
            );
            assert_eq!(
                envelope.kind,
                json["kind"].as_str().unwrap_or_default(),
                "{}",
                path.display()
            );
            assert!(!envelope.raw.is_empty(), "{}", path.display());
            // Re-encoding gives the same bytes back.
            assert_eq!(envelope.encode(), bytes, "{}", path.display());
            checked += 1;
        }
        assert!(checked > 100, "only {checked} fixtures");
    }

    proptest! {
        #[test]
        fn any_bytes_after_the_magic_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut input = PROTOBUF_MAGIC.to_vec();
            input.extend_from_slice(&bytes);
            let _ = Unknown::decode(&input);
        }
    }
}
