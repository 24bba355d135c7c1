//! [`Error`]: everything a request, a configuration or a credential can fail
//! with, each variant carrying what is needed to act on it.

use std::path::PathBuf;

use clientgo_apimachinery::{DecodeError, PathError, Status};

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error from the REST layer.
///
/// Match on [`Error::Api`] to act on what the API server said (not found,
/// conflict, gone); [`Error::status`] gives the Status whatever the variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a non-2xx status. The Status is decoded from
    /// the body, or synthesized from the HTTP code when the body is not a
    /// Status (then its message holds up to 2 KiB of the body's text).
    #[error("the API server answered {}: {}", .0.code, .0)]
    Api(Box<Status>),
    /// The request did not get an answer: connection refused or reset, TLS
    /// handshake failure, timeout, a body cut off.
    #[error("HTTP request to {url} failed: {}", describe_http_error(.source))]
    Http {
        /// The URL requested (without credentials; they never go in URLs).
        url: String,
        /// What reqwest reported.
        #[source]
        source: reqwest::Error,
    },
    /// A 2xx answer whose body is not what was asked for.
    #[error("cannot decode the answer from {url}: {source}")]
    Decode {
        /// The URL requested.
        url: String,
        /// What was wrong, with the line, column and a short snippet.
        #[source]
        source: DecodeError,
    },
    /// The configuration is wrong: a kubeconfig field, a file, a missing
    /// setting.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Credentials could not be obtained (a token file could not be read).
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// An exec credential plugin failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The request itself is invalid; found before anything was sent.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A WebSocket upgrade was answered but not completed.
    #[error(transparent)]
    Upgrade(#[from] crate::websocket_upgrade::UpgradeError),
}

impl Error {
    /// The API server's Status when this is [`Error::Api`].
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api(status) => Some(status),
            _ => None,
        }
    }

    /// Whether the server said 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        self.status().is_some_and(Status::is_not_found)
    }

    /// Whether the server said 409 Conflict.
    pub fn is_conflict(&self) -> bool {
        self.status().is_some_and(Status::is_conflict)
    }

    /// Whether the server said 410 Gone or Expired (a resourceVersion too
    /// old): the caller must relist.
    pub fn is_expired_or_gone(&self) -> bool {
        self.status().is_some_and(Status::is_expired_or_gone)
    }

    /// Whether the server said 401 Unauthorized.
    pub fn is_unauthorized(&self) -> bool {
        self.status().is_some_and(Status::is_unauthorized)
    }

    /// Whether the server said 429 Too Many Requests.
    pub fn is_too_many_requests(&self) -> bool {
        self.status().is_some_and(Status::is_too_many_requests)
    }

    /// Whether the connection was refused: nothing listens at the address
    /// (an API server restarting, typically). client-go's reflector retries
    /// a watch after such an error without relisting.
    pub fn is_connection_refused(&self) -> bool {
        let Error::Http { source, .. } = self else {
            return false;
        };
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source);
        while let Some(error) = cause {
            if let Some(io) = error.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return true;
            }
            cause = error.source();
        }
        false
    }
}

/// reqwest's top-level message ("error sending request") hides the cause;
/// walk the chain so a log line says "connection refused" or "invalid peer
/// certificate: UnknownIssuer".
pub(crate) fn describe_http_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

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

/// A request that cannot be sent as built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A path part is not a valid path segment.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A path part was set twice, or is empty.
    #[error("invalid request path: {0}")]
    InvalidPath(String),
    /// A header name or value is not valid.
    #[error("invalid header {name:?}: {message}")]
    InvalidHeader {
        /// The header name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The body could not be encoded as JSON.
    #[error("cannot encode the request body as JSON: {0}")]
    Encode(#[from] serde_json::Error),
    /// The URL could not be formed.
    #[error("invalid URL {url:?}: {message}")]
    InvalidUrl {
        /// The URL text.
        url: String,
        /// What is wrong.
        message: String,
    },
}
