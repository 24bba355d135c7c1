//! [`Error`]: why a webhook server cannot start, or a configuration
//! cannot be made or applied.

use std::net::SocketAddr;
use std::path::PathBuf;

/// This crate's errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A certificate or key file cannot be read.
    #[error("reading {file}: {source}")]
    CertificateFile {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A certificate or key file does not hold what it should.
    #[error("{file}: {message}")]
    Certificate {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The client CA cannot be used.
    #[error("the client CA {file}: {message}")]
    ClientCa {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The address cannot be listened on.
    #[error("listening on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Two handlers for one path, or a path that is not one.
    #[error("webhook path {path:?}: {message}")]
    Path {
        /// The path.
        path: String,
        /// What is wrong.
        message: &'static str,
    },
    /// Making a development certificate failed.
    #[error("making a development certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// Writing a development certificate failed.
    #[error("writing {file}: {source}")]
    Write {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Applying a webhook configuration failed.
    #[error("applying {kind} {name}: {source}")]
    Apply {
        /// `ValidatingWebhookConfiguration` or `MutatingWebhookConfiguration`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The server's answer.
        source: Box<clientgo_rest::Error>,
    },
    /// The metrics could not be registered.
    #[error("registering the webhook metrics: {0}")]
    Metrics(#[from] prometheus::Error),
}
