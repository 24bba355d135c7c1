//! [`AuthError`] and [`ExecError`]: a credential that could not be
//! obtained, and [`AuthFailure`], what the authenticators return.

use std::path::PathBuf;

use crate::config::error::ConfigError;

/// A credential could not be obtained.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The bearer token file could not be read.
    #[error("cannot read the bearer token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The token file is empty.
    #[error("the bearer token file {path} is empty")]
    EmptyTokenFile {
        /// The file.
        path: PathBuf,
    },
    /// A credential holds bytes that cannot go into an HTTP header.
    #[error("the {what} cannot be sent in an HTTP header (it holds control characters)")]
    InvalidHeaderValue {
        /// "bearer token", "username"...
        what: &'static str,
    },
    /// The `oidc` auth-provider could not refresh its ID token.
    #[error("the oidc auth-provider could not refresh its ID token from {issuer}: {message}")]
    OidcRefresh {
        /// The issuer's URL.
        issuer: String,
        /// What went wrong (never a token).
        message: String,
    },
}

/// An exec credential plugin failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The plugin could not be started (not found, not executable).
    #[error("cannot run the exec credential plugin {command:?}: {source}{}", hint_suffix(.install_hint))]
    Spawn {
        /// The command.
        command: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
        /// The kubeconfig's installHint, shown to the user.
        install_hint: Option<String>,
    },
    /// The plugin exited with a failure status.
    #[error("the exec credential plugin {command:?} failed ({exit}): {stderr}")]
    Failed {
        /// The command.
        command: String,
        /// How it exited.
        exit: String,
        /// The end of what it wrote to stderr (up to 4 KiB).
        stderr: String,
    },
    /// The plugin did not finish in time.
    #[error(
        "the exec credential plugin {command:?} did not finish within {timeout:?}; stderr: {stderr}"
    )]
    Timeout {
        /// The command.
        command: String,
        /// The time allowed.
        timeout: std::time::Duration,
        /// What it had written to stderr.
        stderr: String,
    },
    /// The plugin's output is not a valid ExecCredential.
    #[error("the exec credential plugin {command:?} printed an invalid ExecCredential: {message}")]
    InvalidOutput {
        /// The command.
        command: String,
        /// What is wrong.
        message: String,
    },
    /// The plugin needs a terminal but interactive mode is Never here, or
    /// its configuration is unusable.
    #[error("the exec credential plugin {command:?} cannot be used: {message}")]
    Unusable {
        /// The command.
        command: String,
        /// Why.
        message: String,
    },
}

fn hint_suffix(hint: &Option<String>) -> String {
    match hint {
        Some(hint) => format!("\n{hint}"),
        None => String::new(),
    }
}

/// Why a request's credential could not be produced: what the
/// authenticators return, turned into the client's error by the caller.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AuthFailure {
    /// A credential could not be obtained.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// An exec credential plugin failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The configuration is wrong (a certificate that does not parse).
    #[error(transparent)]
    Config(#[from] ConfigError),
}
