//! [`Error`]: what listing and watching can fail with.

use clientgo_apimachinery::Status;

use crate::watch_decoder::FrameError;

/// A list or watch failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request failed or the server answered with an error Status.
    #[error(transparent)]
    Rest(#[from] clientgo_rest::Error),
    /// The watch stream carried bytes that are not a valid event, or an
    /// event too large or cut off.
    #[error("watch stream from {url}: {source}")]
    Frame {
        /// The watch's URL.
        url: String,
        /// What was wrong.
        #[source]
        source: FrameError,
    },
    /// The server ended the watch with an ERROR event (410 Expired, for
    /// instance).
    #[error("the watch from {url} ended with an error: {} {}", .status.code, .status)]
    WatchStatus {
        /// The watch's URL.
        url: String,
        /// The Status of the ERROR event.
        status: Box<Status>,
    },
    /// The caller asked for something this crate refuses before sending
    /// anything (a retry watcher from resourceVersion `""` or `"0"`).
    #[error("{0}")]
    InvalidArgument(String),
}

impl Error {
    /// The API server's Status, from an error answer or an ERROR event.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Rest(error) => error.status(),
            Error::WatchStatus { status, .. } => Some(status),
            Error::Frame { .. } | Error::InvalidArgument(_) => None,
        }
    }

    /// Whether the server said the resourceVersion is too old (410 Gone or
    /// Expired): the caller must list again.
    pub fn is_expired_or_gone(&self) -> bool {
        self.status().is_some_and(Status::is_expired_or_gone)
    }

    /// Whether the server said the resourceVersion is newer than it has
    /// (one of the three forms client-go recognises).
    pub fn is_too_large_resource_version(&self) -> bool {
        self.status()
            .is_some_and(Status::is_too_large_resource_version)
    }

    /// Whether the server said 429 Too Many Requests.
    pub fn is_too_many_requests(&self) -> bool {
        self.status().is_some_and(Status::is_too_many_requests)
    }

    /// Whether the server said 500 Internal Error (a watch stream's ERROR
    /// event included).
    pub fn is_internal_error(&self) -> bool {
        self.status().is_some_and(Status::is_internal_error)
    }

    /// Whether nothing listened at the server's address.
    pub fn is_connection_refused(&self) -> bool {
        matches!(self, Error::Rest(error) if error.is_connection_refused())
    }

    /// Whether no answer came, or the connection broke mid-stream (reset,
    /// closed, timed out): a transport failure, not a refusal.
    pub fn is_connection_error(&self) -> bool {
        matches!(self, Error::Rest(clientgo_rest::Error::Http { .. }))
    }

    /// The frame problem when the watch stream carried bad bytes.
    pub fn frame_error(&self) -> Option<&FrameError> {
        match self {
            Error::Frame { source, .. } => Some(source),
            _ => None,
        }
    }
}
