//! [`ProtobufListDecoder`]: decodes a protobuf list response as its bytes
//! arrive, one item at a time, as [`ListDecoder`](crate::ListDecoder) does
//! for JSON.

use clientgo_apimachinery::ObjectList;
use clientgo_apimachinery::protobuf_wire::WireReader;
use clientgo_apimachinery::protobuf_wire::without_managed_fields;
use clientgo_protobuf::{Codec, Message};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;

use crate::protobuf_framing::{Buffer, peek_length_delimited, peek_varint};
use crate::watch_decoder::FrameError;

/// The most bytes the envelope's small fields (type, encoding, list
/// metadata) may take.
const MAX_ENVELOPE_FIELD_BYTES: usize = 1024 * 1024;

/// Where in the body the decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the `k8s\0` magic.
    Magic,
    /// Among the envelope's (`runtime.Unknown`) fields.
    Envelope,
    /// Inside the envelope's `raw` field (the list message), with this
    /// many of its bytes still to come.
    List(usize),
}

/// Decodes a protobuf list (`k8s\0`, then a `runtime.Unknown` whose `raw`
/// is the `PodList` message: `metadata = 1`, `items = 2`) from chunks split
/// at any byte.
///
/// Each item is decoded with the type's [`Codec`] as soon as its last
/// byte arrives and its bytes dropped, so the memory held is the decoded
/// items plus about one item's bytes, never the whole body. An item larger
/// than the frame limit, an envelope field over 1 MiB, bad wire format, an
/// item that does not decode and a body cut off are [`FrameError`]s;
/// nothing panics.
#[derive(Debug)]
pub struct ProtobufListDecoder<K> {
    codec: Codec<K>,
    buffer: Buffer,
    phase: Phase,
    api_version: Option<String>,
    kind: Option<String>,
    metadata: ListMeta,
    items: Vec<K>,
    saw_list: bool,
    max_item_bytes: usize,
    /// Applied to every decoded object.
    after_decode: Option<fn(&mut K)>,
    /// Leave `metadata.managedFields` out of each item before decoding it.
    skip_managed_fields: bool,
    /// An item's bytes without its managed fields.
    scratch: Vec<u8>,
}

impl<K> ProtobufListDecoder<K> {
    /// A decoder of `codec`'s type refusing items larger than
    /// `max_item_bytes`.
    pub fn new(codec: Codec<K>, max_item_bytes: usize) -> Self {
        ProtobufListDecoder {
            codec,
            buffer: Buffer::default(),
            phase: Phase::Magic,
            api_version: None,
            kind: None,
            metadata: ListMeta::default(),
            items: Vec::new(),
            saw_list: false,
            max_item_bytes,
            after_decode: None,
            skip_managed_fields: false,
            scratch: Vec::new(),
        }
    }

    /// Leaves `metadata.managedFields` out of every item's bytes before
    /// decoding it, so the field managers' trees are never built
    /// ([`without_managed_fields`]).
    ///
    /// [`without_managed_fields`]: clientgo_apimachinery::protobuf_wire::without_managed_fields
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.skip_managed_fields = skip;
        self
    }

    /// Applies `hook` to every decoded object.
    #[must_use]
    pub fn after_decode(mut self, hook: fn(&mut K)) -> Self {
        self.after_decode = Some(hook);
        self
    }

    /// Items decoded so far.
    pub fn decoded(&self) -> usize {
        self.items.len()
    }

    /// Feeds the next chunk, decoding every item it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), FrameError> {
        self.buffer.push(chunk);
        while self.step()? {}
        Ok(())
    }

    /// The list, once the body has ended; [`FrameError::Truncated`] when it
    /// ended early.
    pub fn finish(self) -> Result<ObjectList<K>, FrameError> {
        if self.phase != Phase::Envelope || self.buffer.len() > 0 || !self.saw_list {
            return Err(FrameError::Truncated {
                bytes: self.buffer.len(),
            });
        }
        Ok(ObjectList {
            api_version: self.api_version,
            kind: self.kind,
            metadata: self.metadata,
            items: self.items,
        })
    }

    /// Decodes what the buffer allows; `false` when it needs more bytes.
    fn step(&mut self) -> Result<bool, FrameError> {
        match self.phase {
            Phase::Magic => {
                let rest = self.buffer.rest();
                let seen = rest.len().min(4);
                if rest[..seen] != clientgo_apimachinery::PROTOBUF_MAGIC[..seen] {
                    return Err(FrameError::protobuf("the body does not start with k8s\\0"));
                }
                if seen < 4 {
                    return Ok(false);
                }
                self.buffer.consume(4);
                self.phase = Phase::Envelope;
                Ok(true)
            }
            Phase::Envelope => {
                let rest = self.buffer.rest();
                if rest.is_empty() {
                    return Ok(false);
                }
                let Some((number, length, header)) = peek_length_delimited(rest, "the envelope")?
                else {
                    return Ok(false);
                };
                if number == 2 {
                    // The list message follows; its fields are read one by one.
                    self.buffer.consume(header);
                    self.phase = Phase::List(length);
                    self.saw_list = true;
                    return Ok(true);
                }
                if length > MAX_ENVELOPE_FIELD_BYTES {
                    return Err(FrameError::TooLarge {
                        limit: MAX_ENVELOPE_FIELD_BYTES,
                        seen: length,
                    });
                }
                if rest.len() < header + length {
                    return Ok(false);
                }
                if number == 1 {
                    let (api_version, kind) = type_meta(&rest[header..header + length])?;
                    self.api_version = Some(api_version);
                    self.kind = Some(kind);
                }
                self.buffer.consume(header + length);
                Ok(true)
            }
            Phase::List(0) => {
                self.phase = Phase::Envelope;
                Ok(true)
            }
            Phase::List(remaining) => {
                let rest = self.buffer.rest();
                let window = &rest[..rest.len().min(remaining)];
                let Some((key, key_length)) = peek_varint(window)? else {
                    return self.need_more(window.len(), remaining);
                };
                if key & 7 != 2 {
                    // Lists have only length-delimited fields; anything else
                    // is skipped as protobuf allows, if it is a varint.
                    if key & 7 == 0 {
                        let Some((_, value_length)) = peek_varint(&window[key_length..])? else {
                            return self.need_more(window.len(), remaining);
                        };
                        self.consume_list(key_length + value_length, remaining);
                        return Ok(true);
                    }
                    return Err(FrameError::protobuf(format!(
                        "the list: field {} has wire type {}",
                        key >> 3,
                        key & 7
                    )));
                }
                let Some((number, length, header)) = peek_length_delimited(window, "the list")?
                else {
                    return self.need_more(window.len(), remaining);
                };
                if header + length > remaining {
                    return Err(FrameError::protobuf("a list field runs past the list"));
                }
                let limit = if number == 2 {
                    self.max_item_bytes
                } else {
                    MAX_ENVELOPE_FIELD_BYTES
                };
                if length > limit {
                    return Err(FrameError::TooLarge {
                        limit,
                        seen: length,
                    });
                }
                if window.len() < header + length {
                    return Ok(false);
                }
                let body = &window[header..header + length];
                match number {
                    1 => {
                        self.metadata = ListMeta::decode(body).map_err(FrameError::Protobuf)?;
                    }
                    2 => {
                        let body = if self.skip_managed_fields
                            && without_managed_fields(body, &mut self.scratch) == Ok(true)
                        {
                            &self.scratch[..]
                        } else {
                            body
                        };
                        let mut item = (self.codec.decode)(body).map_err(|e| {
                            FrameError::Protobuf(e.within("list item", self.items.len() as u32))
                        })?;
                        if let Some(hook) = self.after_decode {
                            hook(&mut item);
                        }
                        self.items.push(item);
                    }
                    _ => {}
                }
                self.consume_list(header + length, remaining);
                Ok(true)
            }
        }
    }

    fn consume_list(&mut self, count: usize, remaining: usize) {
        self.buffer.consume(count);
        self.phase = Phase::List(remaining - count);
    }

    /// More bytes are needed, unless the list has no more to give: then
    /// its last field is cut off.
    fn need_more(&self, available: usize, remaining: usize) -> Result<bool, FrameError> {
        if available >= remaining {
            return Err(FrameError::protobuf("the list's last field is cut off"));
        }
        Ok(false)
    }
}

/// `runtime.TypeMeta`: apiVersion (1) and kind (2).
fn type_meta(bytes: &[u8]) -> Result<(String, String), FrameError> {
    let mut reader = WireReader::new(bytes);
    let (mut api_version, mut kind) = (String::new(), String::new());
    while let Some((number, value)) = reader
        .next_field()
        .map_err(|e| FrameError::Protobuf(e.into()))?
    {
        match number {
            1 => clientgo_protobuf::field::string(&mut api_version, value),
            2 => clientgo_protobuf::field::string(&mut kind, value),
            _ => Ok(()),
        }
        .map_err(FrameError::Protobuf)?;
    }
    Ok((api_version, kind))
}
