//! [`Error`]: what a reflector reports to its watch-error handler and keeps
//! as its last error.

use std::time::Duration;

use clientgo_apimachinery::Status;
use clientgo_store::StoreError;

/// A failure seen by a reflector. None of them stops it: each is reported,
/// then the reflector re-watches or relists as its rules say.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Listing failed (after the immediate retry at resourceVersion "" when
    /// the first attempt's resourceVersion was too old or too new).
    #[error("listing {resource} at resourceVersion {resource_version:?} failed: {source}")]
    List {
        /// The resource listed.
        resource: String,
        /// The resourceVersion asked for.
        resource_version: String,
        /// The cause.
        #[source]
        source: clientgo_listwatch::Error,
    },
    /// Opening a watch failed, or an open watch ended with an error event,
    /// a connection error or bad bytes.
    #[error("watching {resource} from resourceVersion {resource_version:?} failed: {source}")]
    Watch {
        /// The resource watched.
        resource: String,
        /// The resourceVersion the watch started from.
        resource_version: String,
        /// The cause.
        #[source]
        source: clientgo_listwatch::Error,
    },
    /// A watch-list request (streaming the initial state as watch events)
    /// failed; the reflector falls back to a list, or retries, as the
    /// error says.
    #[error("watch-list of {resource} failed: {source}")]
    WatchList {
        /// The resource.
        resource: String,
        /// The cause.
        #[source]
        source: clientgo_listwatch::Error,
    },
    /// A watch closed within a second without a single event: something
    /// between here and the server is likely cutting connections. The
    /// reflector relists, as client-go does.
    #[error("very short watch of {resource}: closed after {lasted:?} with no events; relisting")]
    VeryShortWatch {
        /// The resource.
        resource: String,
        /// How long it lasted.
        lasted: Duration,
    },
    /// No bytes (events or bookmarks) arrived on a watch for the idle
    /// timeout; the connection is presumed dead and the watch restarted.
    #[error("watch of {resource} received nothing for {idle:?}; restarting it")]
    IdleWatch {
        /// The resource.
        resource: String,
        /// The idle timeout that passed.
        idle: Duration,
    },
    /// The store refused a change (an index or transform function failed).
    /// The event is skipped (as client-go does) and the next relist
    /// repairs the cache.
    #[error("the store refused {operation} of {resource}: {source}")]
    Store {
        /// The resource.
        resource: String,
        /// What was being done: add, update, delete, replace, resync.
        operation: &'static str,
        /// The cause.
        #[source]
        source: StoreError,
    },
}

impl Error {
    /// The underlying list or watch error, if this is one.
    pub fn list_watch_error(&self) -> Option<&clientgo_listwatch::Error> {
        match self {
            Error::List { source, .. }
            | Error::Watch { source, .. }
            | Error::WatchList { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The API server's Status behind this error, if the server answered
    /// with one (403 Forbidden, 404 for a missing CRD, 410 Gone).
    pub fn status(&self) -> Option<&Status> {
        self.list_watch_error()
            .and_then(clientgo_listwatch::Error::status)
    }
}
