//! [`Error`]: what can go wrong reading a spec or CRDs, each naming the
//! file and where in it.

use std::path::PathBuf;

/// Why a spec or CRD manifest could not be turned into resources.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid JSON.
    #[error("{file}:{line}:{column}: not valid JSON: {message}")]
    Json {
        /// The file.
        file: String,
        /// Line of the problem (1-based).
        line: usize,
        /// Column of the problem (1-based).
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A file is not valid YAML.
    #[error("{file}: not valid YAML: {message}")]
    Yaml {
        /// The file.
        file: String,
        /// What the parser said (with its position).
        message: String,
    },
    /// The document is well formed but something in it is missing or
    /// wrong; `path` is the JSON path of the offending value.
    #[error("{file}: {path}: {problem}")]
    Invalid {
        /// The file.
        file: String,
        /// Where, as a JSON path (`paths["/api/v1/pods"].get`).
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// A CRD's kind has no Rust type in the mapping given.
    #[error(
        "{file}: {path}: no Rust type given for kind {kind} (map it with --type {kind}=path::to::Type)"
    )]
    UnknownTypePath {
        /// The CRD file.
        file: String,
        /// Where the kind is.
        path: String,
        /// The kind.
        kind: String,
    },
    /// The generated text of a file is not valid Rust: a name that came
    /// from the input (a kind, a type path) is not a Rust name.
    #[error(
        "{path}: the generated code does not parse ({message}); check the kinds and type paths given"
    )]
    Generated {
        /// The generated file, relative to the output directory.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// Two inputs define the same resource, or two kinds of one
    /// group/version would get the same Rust names.
    #[error("{first} and {second} clash: {problem}")]
    Clash {
        /// One resource.
        first: String,
        /// The other.
        second: String,
        /// What they share.
        problem: String,
    },
    /// The output directory could not be written, or holds files this
    /// tool did not generate.
    #[error("{path}: {problem}")]
    Output {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        problem: String,
    },
    /// The spec could not be fetched from the cluster.
    #[error("cannot fetch the OpenAPI spec from the cluster: {0}")]
    Cluster(#[source] clientgo_rest::Error),
    /// The async runtime for fetching from a cluster could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A Rust type path is not a valid path.
    #[error(
        "{type_path:?} is not a Rust type path (expected segments like `my_crate::v1::Widget`)"
    )]
    BadTypePath {
        /// What was given.
        type_path: String,
    },
}

impl Error {
    pub(crate) fn invalid(file: &str, path: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::Invalid {
            file: file.to_string(),
            path: path.into(),
            problem: problem.into(),
        }
    }

    pub(crate) fn json(file: &str, error: &serde_json::Error) -> Self {
        Error::Json {
            file: file.to_string(),
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        }
    }
}
