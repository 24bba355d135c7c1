//! [`WireReader`]: protobuf's wire format, read field by field from a byte
//! slice without copying, every length checked against what is left.
//!
//! The groundwork of protobuf support (Kubernetes' `application/
//! vnd.kubernetes.protobuf`): generated decoders read their messages
//! through it. Groups (wire types 3 and 4, deprecated and never used by
//! Kubernetes) are refused.

/// One field's value as it is on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireValue<'a> {
    /// Wire type 0: an integer, a bool or an enum.
    Varint(u64),
    /// Wire type 1: 8 bytes (fixed64, sfixed64, double).
    Fixed64(u64),
    /// Wire type 2: a string, bytes, an embedded message or a packed list.
    Bytes(&'a [u8]),
    /// Wire type 5: 4 bytes (fixed32, sfixed32, float).
    Fixed32(u32),
}

/// Why bytes are not well-formed protobuf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The bytes end inside a field.
    #[error("protobuf cut off at byte {at}")]
    Truncated {
        /// Where the cut-off field starts.
        at: usize,
    },
    /// A varint longer than 10 bytes, or over 64 bits.
    #[error("a malformed varint at byte {at}")]
    BadVarint {
        /// Where it starts.
        at: usize,
    },
    /// Wire type 3, 4, 6 or 7.
    #[error("wire type {wire_type} at byte {at} is not supported")]
    BadWireType {
        /// The wire type.
        wire_type: u8,
        /// Where the field's key starts.
        at: usize,
    },
    /// Field number 0, which protobuf reserves.
    #[error("field number 0 at byte {at}")]
    FieldZero {
        /// Where the field's key starts.
        at: usize,
    },
}

/// Reads a message's fields in order; see the module documentation.
#[derive(Debug, Clone)]
pub struct WireReader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where `bytes` starts in the outermost buffer, for error positions.
    offset: usize,
}

impl<'a> WireReader<'a> {
    /// A reader over one message's bytes.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        WireReader {
            bytes,
            at: 0,
            offset: 0,
        }
    }

    /// A reader over an embedded message found by this one (error
    /// positions stay relative to the outermost buffer).
    #[inline]
    pub fn nested(&self, bytes: &'a [u8]) -> Self {
        let start = (bytes.as_ptr() as usize).saturating_sub(self.bytes.as_ptr() as usize);
        WireReader {
            bytes,
            at: 0,
            offset: self.offset + start,
        }
    }

    /// Where the next field starts, in this reader's bytes.
    #[inline]
    pub fn position(&self) -> usize {
        self.at
    }

    /// The next field's number and value; `None` at the end.
    #[inline]
    pub fn next_field(&mut self) -> Result<Option<(u32, WireValue<'a>)>, WireError> {
        if self.at >= self.bytes.len() {
            return Ok(None);
        }
        let key_at = self.offset + self.at;
        let key = self.varint()?;
        let wire_type = (key & 0x7) as u8;
        let number = u32::try_from(key >> 3).map_err(|_| WireError::BadVarint { at: key_at })?;
        if number == 0 {
            return Err(WireError::FieldZero { at: key_at });
        }
        let value = match wire_type {
            0 => WireValue::Varint(self.varint()?),
            1 => {
                let bytes: [u8; 8] = self
                    .take(8, key_at)?
                    .try_into()
                    .map_err(|_| WireError::Truncated { at: key_at })?;
                WireValue::Fixed64(u64::from_le_bytes(bytes))
            }
            2 => {
                let length = self.varint()?;
                let length =
                    usize::try_from(length).map_err(|_| WireError::Truncated { at: key_at })?;
                WireValue::Bytes(self.take(length, key_at)?)
            }
            5 => {
                let bytes: [u8; 4] = self
                    .take(4, key_at)?
                    .try_into()
                    .map_err(|_| WireError::Truncated { at: key_at })?;
                WireValue::Fixed32(u32::from_le_bytes(bytes))
            }
            other => {
                return Err(WireError::BadWireType {
                    wire_type: other,
                    at: key_at,
                });
            }
        };
        Ok(Some((number, value)))
    }

    #[inline]
    fn take(&mut self, length: usize, field_at: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .at
            .checked_add(length)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(WireError::Truncated { at: field_at })?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    #[inline]
    fn varint(&mut self) -> Result<u64, WireError> {
        // Most keys and lengths fit in one byte.
        if let Some(&byte) = self.bytes.get(self.at)
            && byte < 0x80
        {
            self.at += 1;
            return Ok(u64::from(byte));
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> Result<u64, WireError> {
        let start = self.offset + self.at;
        match read_varint(&self.bytes[self.at..]) {
            Ok(Some((value, length))) => {
                self.at += length;
                Ok(value)
            }
            Ok(None) => Err(WireError::Truncated { at: start }),
            Err(_) => Err(WireError::BadVarint { at: start }),
        }
    }
}

/// The varint at the start of `bytes` and how many bytes it takes;
/// `Ok(None)` when `bytes` end before it does (a reader waiting for more
/// bytes asks again), an error when it is longer than 10 bytes or over 64
/// bits. Every varint of the workspace is read through this.
#[inline]
pub fn read_varint(bytes: &[u8]) -> Result<Option<(u64, usize)>, WireError> {
    let mut value: u64 = 0;
    for (index, byte) in bytes.iter().take(10).enumerate() {
        let bits = u64::from(byte & 0x7f);
        // The tenth byte may carry only the top bit of a u64.
        if index == 9 && bits > 1 {
            return Err(WireError::BadVarint { at: 0 });
        }
        value |= bits << (7 * index);
        if byte & 0x80 == 0 {
            return Ok(Some((value, index + 1)));
        }
    }
    if bytes.len() >= 10 {
        return Err(WireError::BadVarint { at: 0 });
    }
    Ok(None)
}

/// Appends a varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a length-delimited field (wire type 2).
pub fn put_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(number) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The field of `ObjectMeta` that holds `managedFields`.
const MANAGED_FIELDS: u32 = 17;

/// Writes into `out` the resource message `message` without its
/// `metadata.managedFields` (field 17 of `ObjectMeta`, itself field 1 of
/// every resource message), so a decoder never builds the field managers'
/// `fieldsV1` trees: the protobuf counterpart of
/// [`json_scan::managed_fields_member`](crate::json_scan::managed_fields_member).
/// Only keys and lengths are read; the other fields are copied as they
/// are. `Ok(false)` (and `out` untouched) when there is nothing to leave
/// out; an error for bytes that are not well-formed protobuf (which the
/// caller's decode then reports as it would).
pub fn without_managed_fields(message: &[u8], out: &mut Vec<u8>) -> Result<bool, WireError> {
    for field in spans(message) {
        let (number, value, span) = field?;
        let (1, WireValue::Bytes(metadata)) = (number, value) else {
            continue;
        };
        let mut kept_length = 0;
        let mut managed = false;
        for field in spans(metadata) {
            let (number, _, field_span) = field?;
            if number == MANAGED_FIELDS {
                managed = true;
            } else {
                kept_length += field_span.len();
            }
        }
        if !managed {
            return Ok(false);
        }
        out.clear();
        out.reserve(message.len());
        out.extend_from_slice(&message[..span.start]);
        put_varint(out, (1 << 3) | 2);
        put_varint(out, kept_length as u64);
        // The first pass read every field, so this one cannot fail.
        for (number, _, field_span) in spans(metadata).flatten() {
            if number != MANAGED_FIELDS {
                out.extend_from_slice(&metadata[field_span]);
            }
        }
        out.extend_from_slice(&message[span.end..]);
        return Ok(true);
    }
    Ok(false)
}

/// Splits the fields of an `ObjectMeta` message: `managedFields` (field
/// 17) are appended to `managed`, every other field to `kept`, each as it
/// was on the wire. A compact entry parses `kept` and keeps `managed` as
/// bytes, decoded only with the whole object. `Ok(false)`, with nothing
/// written, when there are no managedFields: the metadata is then `kept`
/// as it is, and the caller reads it in place.
pub fn split_managed_fields(
    metadata: &[u8],
    kept: &mut Vec<u8>,
    managed: &mut Vec<u8>,
) -> Result<bool, WireError> {
    let mut found = false;
    for field in spans(metadata) {
        found |= field?.0 == MANAGED_FIELDS;
    }
    if !found {
        return Ok(false);
    }
    kept.reserve(metadata.len());
    for field in spans(metadata) {
        let (number, _, span) = field?;
        let out = if number == MANAGED_FIELDS {
            &mut *managed
        } else {
            &mut *kept
        };
        out.extend_from_slice(&metadata[span]);
    }
    Ok(true)
}

/// `message` without any field `number`; `None` when it has none, or is
/// not well-formed protobuf. Only keys and lengths are read, and nothing
/// is allocated unless the field is there.
pub fn without_field(message: &[u8], number: u32) -> Option<Vec<u8>> {
    let mut found = false;
    let mut kept = 0;
    for field in spans(message) {
        let (field_number, _, span) = field.ok()?;
        if field_number == number {
            found = true;
        } else {
            kept += span.len();
        }
    }
    if !found {
        return None;
    }
    // Exactly the size kept, so a body made of it is kept without a copy.
    let mut out = Vec::with_capacity(kept);
    // The first pass read every field, so this one cannot fail.
    for (field_number, _, span) in spans(message).flatten() {
        if field_number != number {
            out.extend_from_slice(&message[span]);
        }
    }
    Some(out)
}

/// A message's fields with the bytes each spans (key, length and value);
/// ends after the first error.
fn spans(
    message: &[u8],
) -> impl Iterator<Item = Result<(u32, WireValue<'_>, std::ops::Range<usize>), WireError>> {
    let mut reader = WireReader::new(message);
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let start = reader.position();
        match reader.next_field() {
            Ok(Some((number, value))) => Some(Ok((number, value, start..reader.position()))),
            Ok(None) => None,
            Err(error) => {
                failed = true;
                Some(Err(error))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_missing_field_is_left_alone_and_a_present_one_cut() {
        let mut metadata = Vec::new();
        put_bytes(&mut metadata, 1, b"web");
        let (mut kept, mut managed) = (Vec::new(), Vec::new());
        assert!(!split_managed_fields(&metadata, &mut kept, &mut managed).unwrap());
        assert!(kept.is_empty() && managed.is_empty(), "nothing written");
        assert_eq!(without_field(&metadata, MANAGED_FIELDS), None);

        let mut with_managed = metadata.clone();
        put_bytes(&mut with_managed, MANAGED_FIELDS, b"manager");
        assert!(split_managed_fields(&with_managed, &mut kept, &mut managed).unwrap());
        assert_eq!(kept, metadata);
        assert_eq!(without_field(&with_managed, MANAGED_FIELDS), Some(metadata));
        assert!(!managed.is_empty());
    }

    #[test]
    fn varints_round_trip_at_every_width() {
        for value in [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, value << 3);
            let mut reader = WireReader::new(&out);
            assert_eq!(reader.varint(), Ok(value << 3), "{value}");
        }
    }

    #[test]
    fn fields_of_every_wire_type_are_read_in_order() {
        let mut out = Vec::new();
        put_varint(&mut out, 1 << 3);
        put_varint(&mut out, 150);
        put_bytes(&mut out, 2, b"hello");
        out.push((3 << 3) | 1);
        out.extend_from_slice(&7_u64.to_le_bytes());
        out.push((4 << 3) | 5);
        out.extend_from_slice(&9_u32.to_le_bytes());
        let mut reader = WireReader::new(&out);
        assert_eq!(reader.next_field(), Ok(Some((1, WireValue::Varint(150)))));
        assert_eq!(
            reader.next_field(),
            Ok(Some((2, WireValue::Bytes(b"hello"))))
        );
        assert_eq!(reader.next_field(), Ok(Some((3, WireValue::Fixed64(7)))));
        assert_eq!(reader.next_field(), Ok(Some((4, WireValue::Fixed32(9)))));
        assert_eq!(reader.next_field(), Ok(None));
    }

    #[test]
    fn damage_is_a_typed_error() {
        let cases: [(&[u8], WireError); 6] = [
            (&[0x12, 0x05, b'a'], WireError::Truncated { at: 0 }),
            (&[0x08], WireError::Truncated { at: 1 }),
            (
                &[
                    0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
                ],
                WireError::BadVarint { at: 1 },
            ),
            (
                &[0x0b],
                WireError::BadWireType {
                    wire_type: 3,
                    at: 0,
                },
            ),
            (&[0x02, 0x00], WireError::FieldZero { at: 0 }),
            (&[0x09, 1, 2, 3], WireError::Truncated { at: 0 }),
        ];
        for (bytes, expected) in cases {
            let mut reader = WireReader::new(bytes);
            assert_eq!(reader.next_field(), Err(expected), "{bytes:?}");
        }
    }

    proptest! {
        #[test]
        fn any_bytes_end_in_fields_or_an_error_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut reader = WireReader::new(&bytes);
            for _ in 0..300 {
                match reader.next_field() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }

    #[test]
    fn managed_fields_are_left_out_and_the_rest_kept_byte_for_byte() {
        // metadata: name (1), managedFields (17) twice, labels (11); then
        // a spec (2) after it and a field before it.
        let mut metadata = Vec::new();
        put_bytes(&mut metadata, 1, b"pod-1");
        put_bytes(&mut metadata, 17, &[0x0a, 0x03, b'k', b'u', b'b']);
        put_bytes(&mut metadata, 11, b"\x0a\x01a\x12\x01b");
        put_bytes(&mut metadata, 17, &[0x0a, 0x01, b'x']);
        let mut without = Vec::new();
        put_bytes(&mut without, 1, b"pod-1");
        put_bytes(&mut without, 11, b"\x0a\x01a\x12\x01b");
        let message = |metadata: &[u8]| {
            let mut message = Vec::new();
            put_varint(&mut message, 9 << 3);
            put_varint(&mut message, 7);
            put_bytes(&mut message, 1, metadata);
            put_bytes(&mut message, 2, b"spec bytes");
            message
        };
        let mut out = Vec::new();
        assert_eq!(
            without_managed_fields(&message(&metadata), &mut out),
            Ok(true)
        );
        assert_eq!(out, message(&without));
        // Nothing to leave out: false, and `out` untouched.
        let mut untouched = vec![1, 2, 3];
        assert_eq!(
            without_managed_fields(&message(&without), &mut untouched),
            Ok(false)
        );
        assert_eq!(untouched, [1, 2, 3]);
        // Bad bytes are an error, never a panic.
        assert!(without_managed_fields(&[0x0a, 0x05, 0x8a], &mut out).is_err());
    }

    proptest! {
        #[test]
        fn any_bytes_are_rewritten_or_refused_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut out = Vec::new();
            let _ = without_managed_fields(&bytes, &mut out);
        }
    }
}
