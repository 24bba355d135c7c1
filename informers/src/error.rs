//! [`Error`]: what informers, listers and factories report.

use clientgo_apimachinery::GroupVersionResource;
use clientgo_store::StoreError;

/// Why an informer, lister or factory call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The informer has stopped, so handlers can no longer be added.
    #[error("informer {informer} has stopped; cannot {action}")]
    Stopped {
        /// The informer's name.
        informer: String,
        /// What was attempted.
        action: &'static str,
    },
    /// The thread of a new handler could not be started.
    #[error("informer {informer}: starting the thread of handler {handler}: {source}")]
    HandlerThread {
        /// The informer's name.
        informer: String,
        /// The handler's name.
        handler: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The cache refused an operation (a conflicting or failing index).
    #[error("informer {informer}: {source}")]
    Store {
        /// The informer's name.
        informer: String,
        /// What the cache said.
        #[source]
        source: StoreError,
    },
    /// A cached compact object no longer decodes into its type.
    #[error(transparent)]
    Decode(#[from] clientgo_apimachinery::CompactDecodeError),
    /// A factory knows no informer for a resource.
    #[error("no informer found for {resource}")]
    NoInformerFound {
        /// The resource asked for.
        resource: GroupVersionResource,
    },
    /// Discovery of a resource failed.
    #[error("discovering {resource}: {source}")]
    Discovery {
        /// The resource looked up.
        resource: GroupVersionResource,
        /// The request's error.
        #[source]
        source: Box<clientgo_rest::Error>,
    },
    /// The server does not serve a resource.
    #[error("the server does not serve {resource}")]
    NotServed {
        /// The resource looked up.
        resource: GroupVersionResource,
    },
    /// A resource cannot be listed and watched, so no informer can run on
    /// it.
    #[error("{resource} cannot be watched: its verbs are {verbs:?}")]
    NotWatchable {
        /// The resource.
        resource: GroupVersionResource,
        /// The verbs it supports.
        verbs: Vec<String>,
    },
}
