//! [`EventStream`]: the seam between a watch's source and its reader.

use clientgo_apimachinery::WatchEvent;
use futures_core::Stream;

use crate::error::Error;

/// One open watch as a reflector reads it: a [`Stream`] of decoded events,
/// in the order the source produced them.
///
/// The contract, which every implementation keeps:
/// - the stream ends (`None`) when the source ended it cleanly (a server's
///   timeout, a connection closed between events);
/// - an ERROR event is yielded as [`Error::WatchStatus`] carrying its
///   Status, and a bad, oversized or cut-off frame as [`Error::Frame`];
///   after any error the stream yields `None`;
/// - polling is cancel-safe: dropping a pending `next()` loses no event.
///
/// [`WatchStream`](crate::WatchStream) implements it over HTTP; anything
/// else (an in-memory fake, a recorded session) can feed a reflector by
/// implementing it and returning it from
/// [`ListerWatcher::watch`](crate::ListerWatcher::watch).
pub trait EventStream<K>: Stream<Item = Result<WatchEvent<K>, Error>> + Send + Unpin {
    /// A count that grows whenever the source receives anything, even part
    /// of an event (body bytes, for HTTP). An [`IdleTimer`](crate::IdleTimer)
    /// takes growth as a sign of life, so a large event arriving slowly is
    /// not taken for a dead connection. The default, for a source that
    /// only ever has whole events, never grows.
    fn progress(&self) -> u64 {
        0
    }
}
