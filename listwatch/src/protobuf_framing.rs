//! What the protobuf list and watch decoders share: a byte buffer that is
//! consumed from the front as chunks arrive, and varints read from it
//! without knowing whether they are complete yet.

use crate::watch_decoder::FrameError;

/// Bytes received and not yet consumed. Consumed bytes are dropped from
/// the front once they are the larger part, so the buffer holds about one
/// item or frame at a time.
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    bytes: Vec<u8>,
    start: usize,
}

impl Buffer {
    /// Appends a chunk.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 && self.start >= self.bytes.len() / 2 {
            self.bytes.drain(..self.start);
            self.start = 0;
        }
        self.bytes.extend_from_slice(chunk);
    }

    /// The unconsumed bytes.
    pub(crate) fn rest(&self) -> &[u8] {
        &self.bytes[self.start..]
    }

    /// Marks `count` bytes consumed.
    pub(crate) fn consume(&mut self, count: usize) {
        self.start = (self.start + count).min(self.bytes.len());
    }

    /// How many bytes are unconsumed.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() - self.start
    }
}

/// The varint at the start of `bytes` and its length; `None` when it is
/// not complete yet.
pub(crate) fn peek_varint(bytes: &[u8]) -> Result<Option<(u64, usize)>, FrameError> {
    clientgo_apimachinery::protobuf_wire::read_varint(bytes)
        .map_err(|_| FrameError::protobuf("a varint longer than 10 bytes"))
}

/// A length-delimited field's header at the start of `bytes`: field
/// number, body length and header length; `None` when incomplete. A field
/// of another wire type is an error naming `what`.
pub(crate) fn peek_length_delimited(
    bytes: &[u8],
    what: &str,
) -> Result<Option<(u64, usize, usize)>, FrameError> {
    let Some((key, key_length)) = peek_varint(bytes)? else {
        return Ok(None);
    };
    if key & 7 != 2 {
        return Err(FrameError::protobuf(format!(
            "{what}: field {} has wire type {}, expected a length-delimited field",
            key >> 3,
            key & 7
        )));
    }
    let Some((length, length_length)) = peek_varint(&bytes[key_length..])? else {
        return Ok(None);
    };
    let length = usize::try_from(length)
        .map_err(|_| FrameError::protobuf(format!("{what}: a length over the address space")))?;
    Ok(Some((key >> 3, length, key_length + length_length)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_wait_for_their_last_byte() {
        assert_eq!(peek_varint(&[]).unwrap(), None);
        assert_eq!(peek_varint(&[0x96]).unwrap(), None);
        assert_eq!(peek_varint(&[0x96, 0x01]).unwrap(), Some((150, 2)));
        assert!(peek_varint(&[0xff; 11]).is_err());
        assert_eq!(
            peek_length_delimited(&[0x12, 0x03, b'a'], "t").unwrap(),
            Some((2, 3, 2))
        );
        assert!(peek_length_delimited(&[0x08, 0x01], "t").is_err());
    }

    #[test]
    fn the_buffer_keeps_what_is_not_consumed() {
        let mut buffer = Buffer::default();
        buffer.push(b"abcdef");
        buffer.consume(4);
        buffer.push(b"gh");
        assert_eq!(buffer.rest(), b"efgh");
        assert_eq!(buffer.len(), 4);
    }
}
