//! [`Error`]: everything a request, a configuration or a credential can fail
//! with, each variant carrying what is needed to act on it.

use clientgo_apimachinery::{DecodeError, PathError, Status};

use crate::auth::error::{AuthError, AuthFailure, ExecError};
use crate::config::error::ConfigError;
use crate::transport::http::describe_http_error;
use crate::transport::websocket::UpgradeError;

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
    Upgrade(#[from] UpgradeError),
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

impl From<AuthFailure> for Error {
    fn from(failure: AuthFailure) -> Self {
        match failure {
            AuthFailure::Auth(error) => Error::Auth(error),
            AuthFailure::Exec(error) => Error::Exec(error),
            AuthFailure::Config(error) => Error::Config(error),
        }
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
