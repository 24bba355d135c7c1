//! [`ProtobufGenError`]: what can go wrong generating the protobuf
//! codecs, each naming the file or the message and field.

use std::path::PathBuf;

/// Why the protobuf codecs could not be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtobufGenError {
    /// A file or directory could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A `.proto` file line this reader does not understand.
    #[error("{file}:{line}: {problem}")]
    Proto {
        /// The file.
        file: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// A proto field of a type k8s-openapi has, which cannot be mapped to
    /// the Rust struct (a field the decoder would drop).
    #[error("{message}.{field} ({number}): {problem}")]
    Unmapped {
        /// The proto message (`k8s.io.api.core.v1.Pod`).
        message: String,
        /// The proto field name.
        field: String,
        /// The field number.
        number: u32,
        /// Why it cannot be mapped.
        problem: String,
    },
    /// No k8s-openapi source was found (`--k8s-openapi-src`).
    #[error("k8s-openapi's source: {0}")]
    K8sOpenapiSource(String),
    /// Formatting the generated code failed (a generator bug).
    #[error("generated code for {file} does not parse: {problem}")]
    Format {
        /// The generated file.
        file: String,
        /// What syn said.
        problem: String,
    },
}
