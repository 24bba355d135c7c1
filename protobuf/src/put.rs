//! Encoding one field: the helpers generated `encode_fields` call, one
//! per protobuf type. Fields are written when set; the `_value` variants
//! are for Go value fields (written even when absent, as their zero
//! value, as the API server does), so the test server's protobuf has the
//! shape the real one's has.

use clientgo_apimachinery::protobuf_wire::{self as wire, put_varint};
use k8s_openapi::ByteString;

use crate::message::Message;
use crate::slot::{Each, MapSlot, StringsSlot};

fn key(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire_type));
}

/// Appends a length-delimited field whose body `write` appends, with its
/// length in front (the body is written first, then the length is put
/// before it, so nothing is encoded twice).
pub fn length_prefixed(out: &mut Vec<u8>, number: u32, write: impl FnOnce(&mut Vec<u8>)) {
    key(out, number, 2);
    let start = out.len();
    write(out);
    let length = out.len() - start;
    let mut prefix = Vec::with_capacity(10);
    put_varint(&mut prefix, length as u64);
    out.splice(start..start, prefix);
}

/// A `string` field, written for each value it holds.
pub fn put_string<S: Each<String>>(out: &mut Vec<u8>, number: u32, field: &S) {
    field.each(|v| wire::put_bytes(out, number, v.as_bytes()));
}

/// A `string` Go holds as a value: written even when absent, as `""`.
pub fn put_string_value<S: Each<String>>(out: &mut Vec<u8>, number: u32, field: &S) {
    wire::put_bytes(
        out,
        number,
        field.single().map_or(&[][..], |v| v.as_bytes()),
    );
}

/// A `bytes` field.
pub fn put_bytes<S: Each<ByteString>>(out: &mut Vec<u8>, number: u32, field: &S) {
    field.each(|v| wire::put_bytes(out, number, &v.0));
}

/// A `bytes` Go holds as a value; written only when set and not empty
/// (Go writes a nil slice as nothing).
pub fn put_bytes_value<S: Each<ByteString>>(out: &mut Vec<u8>, number: u32, field: &S) {
    if let Some(v) = field.single().filter(|v| !v.0.is_empty()) {
        wire::put_bytes(out, number, &v.0);
    }
}

macro_rules! put_varint_field {
    ($name:ident, $value:ident, $ty:ty, $convert:expr, $doc:literal) => {
        #[doc = concat!("An `", $doc, "` field, unpacked as Kubernetes writes it.")]
        pub fn $name<S: Each<$ty>>(out: &mut Vec<u8>, number: u32, field: &S) {
            field.each(|v| {
                key(out, number, 0);
                put_varint(out, $convert(*v));
            });
        }

        #[doc = concat!("An `", $doc, "` Go holds as a value: written even when absent, as zero.")]
        pub fn $value<S: Each<$ty>>(out: &mut Vec<u8>, number: u32, field: &S) {
            key(out, number, 0);
            put_varint(out, field.single().map_or(0, |v| $convert(*v)));
        }
    };
}

// Negative int32s are sign-extended to 64 bits, as protobuf says.
put_varint_field!(
    put_int32,
    put_int32_value,
    i32,
    |v: i32| i64::from(v) as u64,
    "int32"
);
put_varint_field!(put_int64, put_int64_value, i64, |v: i64| v as u64, "int64");
put_varint_field!(put_boolean, put_boolean_value, bool, u64::from, "bool");

/// A `double` field.
pub fn put_double<S: Each<f64>>(out: &mut Vec<u8>, number: u32, field: &S) {
    field.each(|v| {
        key(out, number, 1);
        out.extend_from_slice(&v.to_le_bytes());
    });
}

/// A `double` Go holds as a value: written even when absent, as zero.
pub fn put_double_value<S: Each<f64>>(out: &mut Vec<u8>, number: u32, field: &S) {
    key(out, number, 1);
    out.extend_from_slice(&field.single().copied().unwrap_or(0.0).to_le_bytes());
}

/// An embedded message, once per value.
pub fn put_message<T: Message, S: Each<T>>(out: &mut Vec<u8>, number: u32, field: &S) {
    field.each(|v| length_prefixed(out, number, |out| v.encode_fields(out)));
}

/// Encodes a map entry's value as field 2.
pub type PutValue<V> = fn(&mut Vec<u8>, &V);

/// A `map<string, V>` field: one entry message per key, in key order.
pub fn put_map<V, S: MapSlot<V>>(
    out: &mut Vec<u8>,
    number: u32,
    field: &S,
    put_value: PutValue<V>,
) {
    let Some(entries) = field.entries() else {
        return;
    };
    for (k, v) in entries {
        length_prefixed(out, number, |out| {
            wire::put_bytes(out, 1, k.as_bytes());
            put_value(out, v);
        });
    }
}

/// A list of strings wrapped in a message (`Verbs`, `ExtraValue`).
pub fn put_wrapped_strings<S: StringsSlot>(out: &mut Vec<u8>, number: u32, field: &S) {
    if let Some(strings) = field.get() {
        length_prefixed(out, number, |out| {
            for s in strings {
                wire::put_bytes(out, 1, s.as_bytes());
            }
        });
    }
}

/// A map value that is a string.
pub fn string_value(out: &mut Vec<u8>, value: &String) {
    wire::put_bytes(out, 2, value.as_bytes());
}

/// A map value that is bytes.
pub fn bytes_value(out: &mut Vec<u8>, value: &ByteString) {
    wire::put_bytes(out, 2, &value.0);
}

/// A map value that is a message.
pub fn message_value<T: Message>(out: &mut Vec<u8>, value: &T) {
    length_prefixed(out, 2, |out| value.encode_fields(out));
}

/// A map value that is a wrapped list of strings.
pub fn strings_value(out: &mut Vec<u8>, value: &Vec<String>) {
    put_wrapped_strings(out, 2, value);
}
