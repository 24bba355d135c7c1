//! JSON decoding with errors that say what was being decoded, where it
//! failed, and what the bytes there looked like.

use std::fmt;

use serde::de::DeserializeOwned;

/// The longest snippet of input a [`DecodeError`] carries, in bytes, on
/// each side of the error position.
const SNIPPET_RADIUS: usize = 32;

/// What kind of problem stopped decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The bytes are not valid JSON.
    Syntax,
    /// The JSON is valid but does not fit the type (a wrong type, a missing
    /// field, an unknown enum value).
    Data,
    /// The input ended in the middle of a value (for example a truncated
    /// frame).
    Truncated,
    /// Reading the input failed.
    Io,
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecodeErrorKind::Syntax => "invalid JSON",
            DecodeErrorKind::Data => "JSON does not match the expected shape",
            DecodeErrorKind::Truncated => "input ended early",
            DecodeErrorKind::Io => "read failed",
        })
    }
}

/// A value could not be decoded from JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot decode {what}: {kind}: {message} (line {line}, column {column}, near `{snippet}`)")]
pub struct DecodeError {
    /// What was being decoded (a type or a description such as "watch event").
    pub what: String,
    /// The kind of problem.
    pub kind: DecodeErrorKind,
    /// The decoder's message.
    pub message: String,
    /// The 1-based line of the error (0 when unknown).
    pub line: usize,
    /// The 1-based column of the error (0 when unknown).
    pub column: usize,
    /// Up to 32 bytes of input on each side of the error, lossily decoded
    /// and escaped so it is safe to print.
    pub snippet: String,
}

impl DecodeError {
    /// A shape error found outside a byte stream (for example converting
    /// between a typed and a dynamic object), with no position.
    pub fn data(what: impl Into<String>, message: impl Into<String>) -> Self {
        DecodeError {
            what: what.into(),
            kind: DecodeErrorKind::Data,
            message: message.into(),
            line: 0,
            column: 0,
            snippet: String::new(),
        }
    }

    /// Builds a decode error from serde_json's error and the input it read.
    pub fn from_serde(what: impl Into<String>, input: &[u8], error: &serde_json::Error) -> Self {
        let kind = match error.classify() {
            serde_json::error::Category::Syntax => DecodeErrorKind::Syntax,
            serde_json::error::Category::Data => DecodeErrorKind::Data,
            serde_json::error::Category::Eof => DecodeErrorKind::Truncated,
            serde_json::error::Category::Io => DecodeErrorKind::Io,
        };
        // serde_json's message ends with " at line L column C"; keep only
        // the description, the position has fields of its own.
        let full = error.to_string();
        let message = match full.rfind(" at line ") {
            Some(index) => full[..index].to_string(),
            None => full,
        };
        DecodeError {
            what: what.into(),
            kind,
            message,
            line: error.line(),
            column: error.column(),
            snippet: snippet_at(input, error.line(), error.column()),
        }
    }
}

/// The byte offset of a 1-based line and column, clamped to the input.
fn offset_of(input: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    if line > 1 {
        let mut newlines = 0;
        for (index, byte) in input.iter().enumerate() {
            if *byte == b'\n' {
                newlines += 1;
                if newlines == line - 1 {
                    offset = index + 1;
                    break;
                }
            }
        }
    }
    offset
        .saturating_add(column.saturating_sub(1))
        .min(input.len())
}

/// A short, printable excerpt of `input` around a line and column.
pub(crate) fn snippet_at(input: &[u8], line: usize, column: usize) -> String {
    let offset = offset_of(input, line, column);
    let start = offset.saturating_sub(SNIPPET_RADIUS);
    let end = offset.saturating_add(SNIPPET_RADIUS).min(input.len());
    let excerpt = input.get(start..end).unwrap_or_default();
    String::from_utf8_lossy(excerpt).escape_debug().to_string()
}

/// Decodes a value of type `T` from JSON bytes; `what` names it in the
/// error ("Pod", "watch event", "list page").
pub fn from_json_slice<T: DeserializeOwned>(input: &[u8], what: &str) -> Result<T, DecodeError> {
    serde_json::from_slice(input).map_err(|error| DecodeError::from_serde(what, input, &error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    #[test]
    fn syntax_errors_carry_position_and_snippet() {
        let input = b"{\n  \"metadata\": {\"name\": \"a\",, }\n}";
        let err = from_json_slice::<Pod>(input, "Pod").unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Syntax);
        assert_eq!(err.what, "Pod");
        assert_eq!(err.line, 2);
        assert!(err.snippet.contains(",,"), "{}", err.snippet);
        let text = err.to_string();
        assert!(
            text.starts_with("cannot decode Pod: invalid JSON"),
            "{text}"
        );
        assert!(text.contains("line 2"), "{text}");
    }

    #[test]
    fn truncated_input_is_reported_as_such() {
        let err = from_json_slice::<Pod>(br#"{"metadata": {"na"#, "Pod").unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Truncated);
    }

    #[test]
    fn shape_errors_are_data_errors() {
        let err = from_json_slice::<Pod>(br#"{"metadata": {"name": 5}}"#, "Pod").unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::Data);
        assert!(err.message.contains("invalid type"), "{}", err.message);
    }

    #[test]
    fn snippets_are_bounded_and_printable() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\x00\xff\n\t");
        let err = from_json_slice::<Pod>(&input, "Pod").unwrap_err();
        assert!(err.snippet.len() <= 4 * 2 * SNIPPET_RADIUS);
        assert!(!err.snippet.contains('\0'));
    }

    #[test]
    fn snippet_positions_never_panic() {
        for (line, column) in [(0, 0), (1, 0), (1, 1), (99, 99), (usize::MAX, usize::MAX)] {
            let _ = snippet_at(b"ab\ncd", line, column);
            let _ = snippet_at(b"", line, column);
        }
        assert_eq!(snippet_at(b"ab\ncd", 2, 1), "ab\\ncd");
    }
}
