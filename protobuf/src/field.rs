//! Decoding one field: the helpers generated `merge_field`s call, one per
//! protobuf type, each fitted to the Rust field by the [`slot`](crate::slot)
//! traits. The `_or_absent` variants are for Go value fields with
//! `omitempty`: their zero value reads back as absent.

use clientgo_apimachinery::protobuf_wire::{WireError, WireReader, WireValue, read_varint};
use k8s_openapi::ByteString;

use crate::error::{DecodeError, Problem};
use crate::message::Message;
use crate::slot::{MapSlot, MessageSlot, Slot, StringsSlot};

fn wire_name(value: &WireValue<'_>) -> &'static str {
    match value {
        WireValue::Varint(_) => "varint",
        WireValue::Fixed64(_) => "fixed64",
        WireValue::Bytes(_) => "bytes",
        WireValue::Fixed32(_) => "fixed32",
    }
}

fn wrong(expected: &'static str, value: &WireValue<'_>) -> DecodeError {
    DecodeError::new(Problem::WrongWireType {
        expected,
        found: wire_name(value),
    })
}

/// The bytes of a length-delimited field.
pub fn length_delimited<'a>(value: WireValue<'a>) -> Result<&'a [u8], DecodeError> {
    match value {
        WireValue::Bytes(bytes) => Ok(bytes),
        other => Err(wrong("bytes", &other)),
    }
}

/// A `string` field.
pub fn string<S: Slot<String>>(slot: &mut S, value: WireValue<'_>) -> Result<(), DecodeError> {
    let bytes = length_delimited(value)?;
    let text = std::str::from_utf8(bytes).map_err(|_| DecodeError::new(Problem::NotUtf8))?;
    slot.put(text.to_owned());
    Ok(())
}

/// A `string` Go holds as a value with `omitempty`: `""` is absent.
pub fn string_or_absent<S: Slot<String>>(
    slot: &mut S,
    value: WireValue<'_>,
) -> Result<(), DecodeError> {
    if matches!(value, WireValue::Bytes([])) {
        slot.clear();
        return Ok(());
    }
    string(slot, value)
}

/// A `bytes` field.
pub fn bytes<S: Slot<ByteString>>(slot: &mut S, value: WireValue<'_>) -> Result<(), DecodeError> {
    slot.put(ByteString(length_delimited(value)?.to_vec()));
    Ok(())
}

/// A `bytes` field Go holds as a value with `omitempty`: empty is absent.
pub fn bytes_or_absent<S: Slot<ByteString>>(
    slot: &mut S,
    value: WireValue<'_>,
) -> Result<(), DecodeError> {
    if matches!(value, WireValue::Bytes([])) {
        slot.clear();
        return Ok(());
    }
    bytes(slot, value)
}

/// Every varint of a field: one, or a packed run of them.
fn varints(value: WireValue<'_>, mut each: impl FnMut(u64)) -> Result<(), DecodeError> {
    match value {
        WireValue::Varint(v) => {
            each(v);
            Ok(())
        }
        WireValue::Bytes(packed) => {
            let mut at = 0;
            while at < packed.len() {
                let (v, length) = read_varint(&packed[at..])
                    .map_err(|_| WireError::BadVarint { at })?
                    .ok_or(WireError::Truncated { at })?;
                at += length;
                each(v);
            }
            Ok(())
        }
        other => Err(wrong("varint", &other)),
    }
}

macro_rules! varint_field {
    ($name:ident, $absent:ident, $ty:ty, $convert:expr, $doc:literal) => {
        #[doc = concat!("An `", $doc, "` field (packed or not).")]
        pub fn $name<S: Slot<$ty>>(slot: &mut S, value: WireValue<'_>) -> Result<(), DecodeError> {
            varints(value, |v| slot.put($convert(v)))
        }

        #[doc = concat!("An `", $doc, "` Go holds as a value with `omitempty`: zero is absent.")]
        pub fn $absent<S: Slot<$ty>>(
            slot: &mut S,
            value: WireValue<'_>,
        ) -> Result<(), DecodeError> {
            varints(value, |v| {
                if v == 0 {
                    slot.clear();
                } else {
                    slot.put($convert(v));
                }
            })
        }
    };
}

// Protobuf's own conversions: an int32 is the low 32 bits of its varint.
varint_field!(int32, int32_or_absent, i32, |v: u64| v as i32, "int32");
varint_field!(int64, int64_or_absent, i64, |v: u64| v as i64, "int64");
varint_field!(boolean, boolean_or_absent, bool, |v: u64| v != 0, "bool");

/// A `double` field (packed or not).
pub fn double<S: Slot<f64>>(slot: &mut S, value: WireValue<'_>) -> Result<(), DecodeError> {
    match value {
        WireValue::Fixed64(bits) => {
            slot.put(f64::from_bits(bits));
            Ok(())
        }
        WireValue::Bytes(packed) if packed.len() % 8 == 0 => {
            for chunk in packed.chunks_exact(8) {
                let mut bits = [0u8; 8];
                bits.copy_from_slice(chunk);
                slot.put(f64::from_le_bytes(bits));
            }
            Ok(())
        }
        other => Err(wrong("fixed64", &other)),
    }
}

/// A `double` Go holds as a value with `omitempty`: zero is absent.
pub fn double_or_absent<S: Slot<f64>>(
    slot: &mut S,
    value: WireValue<'_>,
) -> Result<(), DecodeError> {
    if value == WireValue::Fixed64(0) {
        slot.clear();
        return Ok(());
    }
    double(slot, value)
}

/// An embedded message, merged into the field's value (or a new element
/// of a repeated field).
pub fn message<T: Message, S: MessageSlot<T>>(
    slot: &mut S,
    value: WireValue<'_>,
    reader: &WireReader<'_>,
) -> Result<(), DecodeError> {
    let bytes = length_delimited(value)?;
    if T::EMPTY_IS_ABSENT && bytes.is_empty() {
        slot.clear();
        return Ok(());
    }
    slot.next().merge_from(reader.nested(bytes))
}

/// Decodes a map entry's value (field 2) into the value stored for its
/// key.
pub type DecodeValue<V> = fn(&mut V, WireValue<'_>, &WireReader<'_>) -> Result<(), DecodeError>;

/// One entry of a `map<string, V>` field: a message with the key in
/// field 1 and the value in field 2.
pub fn map<V, S: MapSlot<V>>(
    slot: &mut S,
    value: WireValue<'_>,
    reader: &WireReader<'_>,
    empty: fn() -> V,
    decode_value: DecodeValue<V>,
) -> Result<(), DecodeError> {
    let mut entry = reader.nested(length_delimited(value)?);
    let mut key = String::new();
    let mut found: Option<(WireValue<'_>, WireReader<'_>)> = None;
    while let Some((number, field)) = entry.next_field()? {
        match number {
            1 => string(&mut key, field).map_err(|e| e.within("map entry", 1))?,
            2 => found = Some((field, entry.clone())),
            _ => {}
        }
    }
    // A key sent again replaces its value whole, and an entry without a
    // value field holds the empty value, as Go's generated decoders do.
    let stored = slot.entry(key, empty);
    *stored = empty();
    if let Some((field, at)) = found {
        decode_value(stored, field, &at).map_err(|e| e.within("map entry", 2))?;
    }
    Ok(())
}

/// A list of strings wrapped in a message (`repeated string items = 1`):
/// `meta.v1.Verbs`, the `ExtraValue`s.
pub fn wrapped_strings<S: StringsSlot>(
    slot: &mut S,
    value: WireValue<'_>,
    reader: &WireReader<'_>,
) -> Result<(), DecodeError> {
    let mut inner = reader.nested(length_delimited(value)?);
    let strings = slot.strings();
    while let Some((number, field)) = inner.next_field()? {
        if number == 1 {
            string(strings, field).map_err(|e| e.within("items", 1))?;
        }
    }
    Ok(())
}

/// A map value that is a string (`map<string, string>`).
pub fn string_value(
    slot: &mut String,
    value: WireValue<'_>,
    _: &WireReader<'_>,
) -> Result<(), DecodeError> {
    string(slot, value)
}

/// A map value that is bytes (`map<string, bytes>`).
pub fn bytes_value(
    slot: &mut ByteString,
    value: WireValue<'_>,
    _: &WireReader<'_>,
) -> Result<(), DecodeError> {
    bytes(slot, value)
}

/// A map value that is a message.
pub fn message_value<T: Message>(
    slot: &mut T,
    value: WireValue<'_>,
    reader: &WireReader<'_>,
) -> Result<(), DecodeError> {
    message::<T, T>(slot, value, reader)
}

/// A map value that is a wrapped list of strings (`ExtraValue`).
pub fn strings_value(
    slot: &mut Vec<String>,
    value: WireValue<'_>,
    reader: &WireReader<'_>,
) -> Result<(), DecodeError> {
    wrapped_strings(slot, value, reader)
}

/// An embedded Go struct whose fields JSON (and so k8s-openapi) inlines
/// into the parent (`ConfigMapKeySelector` embeds
/// `LocalObjectReference`): its fields are merged into the parent's by
/// `merge`.
pub fn inline(
    value: WireValue<'_>,
    reader: &WireReader<'_>,
    mut merge: impl FnMut(u32, WireValue<'_>, &WireReader<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut inner = reader.nested(length_delimited(value)?);
    while let Some((number, field)) = inner.next_field()? {
        merge(number, field, &inner).map_err(|e| e.within("embedded", number))?;
    }
    Ok(())
}
