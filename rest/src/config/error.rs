//! [`ConfigError`]: a configuration that cannot be used (a kubeconfig
//! field, a file, a TLS setting), naming where it came from.

use std::path::PathBuf;

/// A configuration problem, naming the file and the field when there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {what} {path}: {source}")]
    ReadFile {
        /// What the file is for ("kubeconfig", "certificate-authority").
        what: String,
        /// The path as resolved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A kubeconfig file is not valid YAML, or a field has the wrong type.
    #[error("kubeconfig {path} is not valid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the YAML reader said, with the line and column.
        message: String,
    },
    /// A field of a kubeconfig (or of the configuration) has a bad value.
    #[error("{field} in {source_name}: {message}")]
    InvalidField {
        /// The field, as a path (`users[admin].client-key-data`).
        field: String,
        /// Where it came from: a kubeconfig file's path, or "Config".
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// A context, cluster or user named in the kubeconfig does not exist.
    #[error("{what} {name:?} named by {named_by} is not defined in {files}")]
    NotFound {
        /// "context", "cluster" or "user".
        what: &'static str,
        /// The missing name.
        name: String,
        /// What named it (`current-context`, `context "dev"`, the override).
        named_by: String,
        /// The files that were read.
        files: String,
    },
    /// No current context is set and none was asked for.
    #[error("no current context is set in {files} and none was given")]
    NoCurrentContext {
        /// The files that were read.
        files: String,
    },
    /// An explicitly given kubeconfig path does not exist.
    #[error("the kubeconfig {path} given explicitly does not exist")]
    ExplicitPathMissing {
        /// The path.
        path: PathBuf,
    },
    /// Not running inside a pod: the service environment is missing.
    #[error(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set"
    )]
    NotInCluster,
    /// [`Config::infer`](crate::Config::infer) found nothing usable; each
    /// entry says what was tried and why it failed.
    #[error("no Kubernetes configuration found; tried: {}", .tried.join("; "))]
    NothingFound {
        /// One line per attempt.
        tried: Vec<String>,
    },
    /// The TLS settings cannot be used (bad PEM, a key that does not match).
    #[error("TLS configuration {field} in {source_name}: {message}")]
    Tls {
        /// Which setting (`certificate-authority-data`, `client-key`).
        field: String,
        /// Where it came from.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// The HTTP client could not be built from the configuration.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
}
