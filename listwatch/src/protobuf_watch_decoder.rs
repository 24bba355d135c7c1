//! [`ProtobufWatchDecoder`]: frames and decodes a protobuf watch stream,
//! as [`WatchDecoder`](crate::WatchDecoder) does for JSON.

use clientgo_apimachinery::protobuf_wire::{WireReader, without_managed_fields};
use clientgo_apimachinery::{Bookmark, Object, Status, Unknown, WatchEvent};
use clientgo_protobuf::Codec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::protobuf_framing::Buffer;
use crate::watch_decoder::FrameError;

/// Frames and decodes protobuf watch events from byte chunks.
///
/// The stream (`application/vnd.kubernetes.protobuf;stream=watch`) is a
/// sequence of frames, each a 4-byte big-endian length and that many bytes.
/// As kube-apiserver writes it, a frame is a bare `meta.v1.WatchEvent`
/// message (`type = 1`, `object = 2`), with no `k8s\0` magic and no
/// `runtime.Unknown` envelope around it; only the object inside
/// (`object.raw`) is `k8s\0` + `Unknown` around the object's message.
/// ADDED, MODIFIED and DELETED objects are decoded with the type's
/// [`Codec`]; a BOOKMARK's object only for its metadata; an ERROR's as a
/// `Status`.
///
/// A frame longer than the limit is refused before it is buffered; a
/// malformed frame, an unknown event type and a stream cut inside a frame
/// are [`FrameError`]s, after which the decoder yields nothing. An event
/// whose object's envelope names another type than `K`'s
/// ([`Object::fixed_type`], or the one given to
/// [`expect_type`](Self::expect_type)) is skipped before its object is
/// decoded, and counted, as the JSON decoder does.
#[derive(Debug)]
pub struct ProtobufWatchDecoder<K> {
    buffer: Buffer,
    max_frame_bytes: usize,
    skipped: u64,
    failed: bool,
    /// Turns one frame into its event (apart from the buffer, so a frame
    /// borrowed from the buffer can be decoded with scratch space).
    frames: FrameDecoder<K>,
}

/// What decoding one frame needs.
#[derive(Debug)]
struct FrameDecoder<K> {
    codec: Codec<K>,
    expected_type: Option<(String, String)>,
    /// Applied to every decoded object.
    after_decode: Option<fn(&mut K)>,
    /// Leave `metadata.managedFields` out of each object before decoding
    /// it.
    skip_managed_fields: bool,
    /// An object's bytes without its managed fields, reused frame after
    /// frame.
    scratch: Vec<u8>,
}

impl<K: Object> ProtobufWatchDecoder<K> {
    /// A decoder of `codec`'s type refusing frames larger than
    /// `max_frame_bytes`, expecting objects of `K`'s fixed type.
    pub fn new(codec: Codec<K>, max_frame_bytes: usize) -> Self {
        let decoder = ProtobufWatchDecoder {
            buffer: Buffer::default(),
            max_frame_bytes,
            skipped: 0,
            failed: false,
            frames: FrameDecoder {
                codec,
                expected_type: None,
                after_decode: None,
                skip_managed_fields: false,
                scratch: Vec::new(),
            },
        };
        match K::fixed_type() {
            Some((api_version, kind)) => decoder.expect_type(api_version, kind),
            None => decoder,
        }
    }
}

impl<K> ProtobufWatchDecoder<K> {
    /// Names the type of the watched objects, in place of `K`'s fixed
    /// type: an event of another type is skipped (see
    /// [`WatchDecoder::expect_type`](crate::WatchDecoder::expect_type)).
    #[must_use]
    pub fn expect_type(mut self, api_version: &str, kind: &str) -> Self {
        self.frames.expected_type = Some((api_version.to_string(), kind.to_string()));
        self
    }

    /// Applies `hook` to every decoded object.
    #[must_use]
    pub fn after_decode(mut self, hook: fn(&mut K)) -> Self {
        self.frames.after_decode = Some(hook);
        self
    }

    /// Leaves `metadata.managedFields` out of every object's bytes before
    /// decoding it (see [`ProtobufListDecoder::skip_managed_fields`](crate::ProtobufListDecoder::skip_managed_fields)).
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.frames.skip_managed_fields = skip;
        self
    }

    /// How many events were skipped for being of another type.
    pub fn skipped_events(&self) -> u64 {
        self.skipped
    }

    /// Feeds the next chunk.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buffer.push(chunk);
    }

    /// Bytes received and not yet decoded.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Reports a stream that ended inside a frame.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.buffer.len() > 0 && !self.failed {
            return Err(FrameError::Truncated {
                bytes: self.buffer.len(),
            });
        }
        Ok(())
    }

    /// The next complete event, if the buffer holds one.
    pub fn next_event(&mut self) -> Option<Result<WatchEvent<K>, FrameError>> {
        loop {
            if self.failed {
                return None;
            }
            let rest = self.buffer.rest();
            let header = rest.get(..4)?;
            let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
            if length > self.max_frame_bytes {
                self.failed = true;
                return Some(Err(FrameError::TooLarge {
                    limit: self.max_frame_bytes,
                    seen: length,
                }));
            }
            let frame = rest.get(4..4 + length)?;
            let decoded = self.frames.decode(frame);
            self.buffer.consume(4 + length);
            match decoded {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => self.skipped += 1,
                Err(error) => {
                    self.failed = true;
                    return Some(Err(error));
                }
            }
        }
    }
}

impl<K> FrameDecoder<K> {
    /// One frame's event; `None` for an event of an unexpected type.
    fn decode(&mut self, frame: &[u8]) -> Result<Option<WatchEvent<K>>, FrameError> {
        let (event_type, object) = watch_event(frame)?;
        let object = Unknown::decode(object)
            .map_err(|e| FrameError::protobuf(format!("a watch event's object: {e}")))?;
        let event: fn(K) -> WatchEvent<K> = match event_type.as_str() {
            "ADDED" => WatchEvent::Added,
            "MODIFIED" => WatchEvent::Modified,
            "DELETED" => WatchEvent::Deleted,
            "ERROR" => {
                let status = clientgo_protobuf::status_message_json(object.raw)
                    .and_then(|json| serde_json::from_value::<Status>(json).ok())
                    .ok_or_else(|| FrameError::protobuf("an ERROR event without a Status"))?;
                return Ok(Some(WatchEvent::Error(status)));
            }
            "BOOKMARK" => {
                let metadata = object_metadata(object.raw)?;
                let mut bookmark = Bookmark::new(metadata.resource_version.unwrap_or_default());
                bookmark.metadata.annotations = metadata.annotations.unwrap_or_default();
                bookmark.api_version = Some(object.api_version.to_string());
                bookmark.kind = Some(object.kind.to_string());
                return Ok(Some(WatchEvent::Bookmark(bookmark)));
            }
            other => {
                return Err(FrameError::protobuf(format!(
                    "a watch event of unknown type {other:?}"
                )));
            }
        };
        // As the JSON decoder: only an object that names both its
        // apiVersion and kind, and names another type, is skipped.
        if let Some((api_version, kind)) = &self.expected_type
            && !object.api_version.is_empty()
            && !object.kind.is_empty()
            && (object.api_version != api_version || object.kind != kind)
        {
            tracing::warn!(
                expected = %format!("{api_version}/{kind}"),
                got = %format!("{}/{}", object.api_version, object.kind),
                "skipping a watch event of another type"
            );
            return Ok(None);
        }
        let raw = if self.skip_managed_fields
            && without_managed_fields(object.raw, &mut self.scratch) == Ok(true)
        {
            &self.scratch[..]
        } else {
            object.raw
        };
        let mut decoded = (self.codec.decode)(raw).map_err(FrameError::Protobuf)?;
        if let Some(hook) = self.after_decode {
            hook(&mut decoded);
        }
        Ok(Some(event(decoded)))
    }
}

/// A bare `meta.v1.WatchEvent` message (one whole frame): its type and its
/// object's raw bytes (the `RawExtension`'s `raw`).
fn watch_event(bytes: &[u8]) -> Result<(String, &[u8]), FrameError> {
    let wire = |e: clientgo_apimachinery::protobuf_wire::WireError| FrameError::Protobuf(e.into());
    let mut reader = WireReader::new(bytes);
    let mut event_type = String::new();
    let mut object: &[u8] = &[];
    while let Some((number, value)) = reader.next_field().map_err(wire)? {
        match number {
            1 => clientgo_protobuf::field::string(&mut event_type, value)
                .map_err(|e| FrameError::Protobuf(e.within("WatchEvent", 1)))?,
            2 => {
                let extension = clientgo_protobuf::field::length_delimited(value)
                    .map_err(|e| FrameError::Protobuf(e.within("WatchEvent", 2)))?;
                let mut inner = WireReader::new(extension);
                while let Some((number, value)) = inner.next_field().map_err(wire)? {
                    if number == 1 {
                        object = clientgo_protobuf::field::length_delimited(value)
                            .map_err(|e| FrameError::Protobuf(e.within("RawExtension", 1)))?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok((event_type, object))
}

/// The metadata (field 1 of every resource message) of an object's
/// message, without decoding the rest.
fn object_metadata(bytes: &[u8]) -> Result<ObjectMeta, FrameError> {
    let mut reader = WireReader::new(bytes);
    let mut metadata = ObjectMeta::default();
    while let Some((number, value)) = reader
        .next_field()
        .map_err(|e| FrameError::Protobuf(e.into()))?
    {
        if number == 1 {
            clientgo_protobuf::field::message::<ObjectMeta, _>(&mut metadata, value, &reader)
                .map_err(FrameError::Protobuf)?;
        }
    }
    Ok(metadata)
}
