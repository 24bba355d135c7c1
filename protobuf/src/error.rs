//! [`DecodeError`]: why protobuf bytes did not decode into a type, and
//! where.

use clientgo_apimachinery::protobuf_wire::WireError;

/// Why protobuf bytes did not decode, with the path of fields leading to
/// the problem (`Pod.spec(2) > PodSpec.containers(2) > Container.name(1)`:
/// message, field name where known, field number).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}{}", path_suffix(.path))]
pub struct DecodeError {
    /// The fields from the outermost message inward, each as
    /// `Message(number)`.
    pub path: Vec<String>,
    /// What was wrong.
    pub problem: Problem,
}

fn path_suffix(path: &[String]) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" (at {})", path.join(" > "))
    }
}

/// What was wrong with the bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// Not well-formed protobuf.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A field arrived with a wire type its declared type cannot have.
    #[error("wire type {found} where {expected} was expected")]
    WrongWireType {
        /// What the field's type needs.
        expected: &'static str,
        /// What arrived (`varint`, `fixed64`, `bytes`, `fixed32`).
        found: &'static str,
    },
    /// A string field that is not UTF-8.
    #[error("a string that is not UTF-8")]
    NotUtf8,
    /// An integer that does not fit the field's type.
    #[error("{value} does not fit in {target}")]
    OutOfRange {
        /// The value on the wire.
        value: i128,
        /// The field's type.
        target: &'static str,
    },
    /// Raw JSON carried in a field (`RawExtension`, `FieldsV1`, `JSON`)
    /// that is not JSON.
    #[error("embedded JSON does not parse: {0}")]
    EmbeddedJson(String),
    /// A timestamp outside what `jiff::Timestamp` can hold.
    #[error("timestamp {seconds}s {nanos}ns is out of range")]
    Timestamp {
        /// Seconds since the Unix epoch.
        seconds: i64,
        /// Nanoseconds.
        nanos: i32,
    },
    /// An `IntOrString` whose type is neither 0 (int) nor 1 (string).
    #[error("IntOrString type {0} is neither 0 nor 1")]
    IntOrStringType(i64),
    /// A `k8s\0` envelope problem or an envelope naming an unexpected
    /// kind.
    #[error("{0}")]
    Envelope(String),
}

impl DecodeError {
    /// An error with no path yet.
    pub fn new(problem: impl Into<Problem>) -> Self {
        DecodeError {
            path: Vec::new(),
            problem: problem.into(),
        }
    }

    /// The same error, seen from the field `number` of `message`: the
    /// path grows outward as the error travels up.
    #[must_use]
    pub fn within(mut self, message: &str, number: u32) -> Self {
        self.path.insert(0, format!("{message}({number})"));
        self
    }
}

impl From<WireError> for DecodeError {
    fn from(error: WireError) -> Self {
        DecodeError::new(error)
    }
}
