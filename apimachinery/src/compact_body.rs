//! How a [`Compact`](crate::Compact) object keeps its bytes: [`Json`] as
//! received, or [`Lz4`], the same JSON block-compressed.
//!
//! The choice is part of the type (`Compact<Pod>` is `Compact<Pod, Json>`;
//! `Compact<Pod, Lz4>` compresses), so it reaches every informer,
//! factory and lister without an option threaded through each: the body
//! is made when the list or watch decoder builds the entry, and read back
//! only when someone decodes the whole object.
//!
//! | body | ingest | memory | decode |
//! |---|---|---|---|
//! | [`Json`] | one copy of the JSON | the JSON | parse |
//! | [`Lz4`] | + compression (about 3 µs per 5 KB pod) | about a third of the JSON | + decompression into a scratch buffer, then parse |

use std::fmt;

/// A way to keep an object's JSON; see the module documentation.
pub trait CompactBody: Clone + Send + Sync + Sized + 'static {
    /// Its name in logs and `Debug` output.
    const NAME: &'static str;

    /// Keeps `json` (one object, already checked to be JSON).
    fn from_json(json: Box<str>) -> Self;

    /// Calls `read` with the JSON, decompressed if need be. A body that
    /// cannot be read back (never expected: it is written by this crate)
    /// is an error message.
    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String>;

    /// Bytes held on the heap.
    fn heap_bytes(&self) -> usize;
}

/// The JSON as received, uncompressed: the fastest ingest and decode.
#[derive(Clone)]
pub struct Json(Box<str>);

impl Json {
    /// The JSON.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl CompactBody for Json {
    const NAME: &'static str = "json";

    fn from_json(json: Box<str>) -> Self {
        Json(json)
    }

    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String> {
        Ok(read(&self.0))
    }

    fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Json({} bytes)", self.0.len())
    }
}

/// The JSON block-compressed with LZ4 (its length first): a Kubernetes
/// object's repetitive keys shrink to about a third, for a few
/// microseconds per object at ingest and a decompression before each
/// decode.
#[derive(Clone)]
pub struct Lz4(Box<[u8]>);

impl CompactBody for Lz4 {
    const NAME: &'static str = "lz4";

    fn from_json(json: Box<str>) -> Self {
        Lz4(lz4_flex::block::compress_prepend_size(json.as_bytes()).into_boxed_slice())
    }

    fn read<R>(&self, read: impl FnOnce(&str) -> R) -> Result<R, String> {
        let bytes = lz4_flex::block::decompress_size_prepended(&self.0)
            .map_err(|error| format!("the LZ4 body does not decompress: {error}"))?;
        let json = std::str::from_utf8(&bytes)
            .map_err(|error| format!("the LZ4 body is not UTF-8: {error}"))?;
        Ok(read(json))
    }

    fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Debug for Lz4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lz4({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn both_bodies_give_the_json_back() {
        let json = r#"{"metadata":{"name":"a","labels":{"app":"web","tier":"web"}},"data":{"k":"web web web web"}}"#;
        let plain = Json::from_json(json.into());
        assert_eq!(plain.read(str::to_string).unwrap(), json);
        let compressed = Lz4::from_json(json.into());
        assert_eq!(compressed.read(str::to_string).unwrap(), json);
    }

    #[test]
    fn lz4_shrinks_a_repetitive_object() {
        let json: String =
            std::iter::repeat_n(r#"{"name":"container","image":"nginx"},"#, 100).collect();
        let compressed = Lz4::from_json(json.clone().into());
        assert!(
            compressed.heap_bytes() * 4 < json.len(),
            "{} of {}",
            compressed.heap_bytes(),
            json.len()
        );
    }

    #[test]
    fn a_damaged_lz4_body_is_an_error_not_a_panic() {
        let damaged = Lz4(vec![200, 0, 0, 0, 0xff, 1, 2].into_boxed_slice());
        assert!(damaged.read(|_| ()).is_err());
        let empty = Lz4(Vec::new().into_boxed_slice());
        assert!(empty.read(|_| ()).is_err());
    }
}
