//! [`Message`]: a type that has a protobuf encoding, read and written
//! field by field.

use clientgo_apimachinery::protobuf_wire::{WireReader, WireValue};

use crate::error::DecodeError;

/// A type with a protobuf message: its fields are merged in one at a time
/// as they are read, and written out in field-number order.
///
/// Implemented (by generated code, see `clientgo-codegen`'s
/// `clientgo-protobuf-gen`) for every k8s-openapi type that has a message
/// in Kubernetes' `generated.proto` files, and by hand for the types
/// whose encoding is special (`Time`, `MicroTime`, `Quantity`,
/// `IntOrString`, `RawExtension`, `FieldsV1`, `JSON` and the
/// `JSONSchemaPropsOr…` unions).
///
/// Decoding follows protobuf's merge rules: a scalar read twice keeps the
/// last value, a message read twice is merged, repeated fields append,
/// unknown fields are skipped. Fields the Go type holds as values with
/// `omitempty` (Go writes them even when empty) read back as absent when
/// they are the zero value, as their JSON would, so a protobuf decode
/// gives the same struct as a JSON decode of the same object.
pub trait Message: Sized {
    /// The message's name in its `.proto` file (`Pod`), for error paths.
    const NAME: &'static str;

    /// An empty message means "absent" (`Time`, `MicroTime`: the API server
    /// writes a zero time as an empty message, and its JSON as `null`).
    const EMPTY_IS_ABSENT: bool = false;

    /// The message with no field set: what decoding starts from
    /// (`Default::default()` for the generated structs).
    fn empty() -> Self;

    /// Merges one field read from the wire into `self`. Unknown field
    /// numbers are ignored.
    fn merge_field(
        &mut self,
        number: u32,
        value: WireValue<'_>,
        reader: &WireReader<'_>,
    ) -> Result<(), DecodeError>;

    /// Appends every field that is set, in field-number order.
    fn encode_fields(&self, out: &mut Vec<u8>);

    /// Merges every field of the message in `reader`.
    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        for_each_field(reader, Self::NAME, |number, value, reader| {
            self.merge_field(number, value, reader)
        })
    }

    /// Decodes a whole message (no `k8s\0` envelope).
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut message = Self::empty();
        message.merge_from(WireReader::new(bytes))?;
        Ok(message)
    }

    /// Encodes the whole message (no `k8s\0` envelope).
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_fields(&mut out);
        out
    }
}

/// Calls `field` for every field of the message in `reader`, in order; an
/// error from it gains the field's place in `message` (its name in error
/// paths).
pub fn for_each_field(
    mut reader: WireReader<'_>,
    message: &str,
    mut field: impl FnMut(u32, WireValue<'_>, &WireReader<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    while let Some((number, value)) = reader.next_field()? {
        field(number, value, &reader).map_err(|e| e.within(message, number))?;
    }
    Ok(())
}
