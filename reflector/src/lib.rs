//! client-go's Reflector in Rust: keeps a store in step with one resource
//! on the API server, through every fault a server or network can cause.
//!
//! A [`Reflector`] syncs the store, either with a watch-list request
//! (`sendInitialEvents=true`, the default as in client-go 1.35+) or with a
//! paginated list, then watches from the synced resourceVersion and applies
//! each ADDED, MODIFIED, DELETED and BOOKMARK event to the store, in the
//! server's order. It writes to any [`ReflectorStore`](clientgo_store::ReflectorStore):
//! an informer's `RealFifo`, a `DeltaFifo`, or a plain `Indexer`.
//!
//! # Recovery rules
//!
//! The resourceVersion a list is sent with ("relist RV") is "" after a
//! resourceVersion was found unavailable (410 or too large), "0" before the
//! first sync, else the last synced one. Backoff is 800 ms doubling to 30 s
//! with jitter up to the step again, reset after 2 quiet minutes.
//!
//! | condition | action | request sent |
//! |---|---|---|
//! | start | watch-list (or list when off or unsupported) | `GET ?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300..599` |
//! | watch-list fails otherwise (422, 403, 500, an ERROR event, a bad, oversized or undecodable frame, a connection broken before the answer, closed within 1 s with no events, the store refusing the state) | report, then list and watch this round ("making progress is better than deadlocking"); watch-list again next round | `GET ?resourceVersion=0&limit=500` |
//! | watch-list: 410 or too-large RV | ask again at once at ""; refused at "" too: back off first | watch-list without `resourceVersion` |
//! | watch-list: 429, connection refused | back off, ask again | watch-list |
//! | watch-list ends before the initial-events-end bookmark: cleanly, its connection broken, or cut inside a frame (client-go's stream watcher takes the last two for a clean close) | ask again | watch-list |
//! | watch-list: no bytes for the idle timeout (once periodic bookmarks were seen), or no answer to the request within it | ask again at once | watch-list |
//! | initial-events-end bookmark | replace the store at its RV; the same stream goes on as the watch | none |
//! | list at RV "" or "0" | pages of 500, continue tokens followed | `GET ?resourceVersion=0&limit=500`, then `?limit=500&continue=…` |
//! | list at a synced RV | one unpaginated request (the watch cache answers); pages if an RV=0 list was ever paginated | `GET ?resourceVersion=<last>` |
//! | list fails with 410 or too-large RV | at once, list at "" (a consistent read); refused at "" too: report, back off, list again | `GET ?limit=<same>` without `resourceVersion` |
//! | continue token expires mid-list | the pager lists again once, unpaginated | `GET ?resourceVersion=<same>` |
//! | list fails otherwise (403, 404, 500, network) | report, back off, list again | the same list |
//! | watch ends cleanly (server timeout, dropped between events) | re-watch at once, no relist | `GET ?watch=true&resourceVersion=<last>&allowWatchBookmarks=true&timeoutSeconds=…` |
//! | watch closes within 1 s with no events | report "very short watch", back off, relist | list at the last RV |
//! | opening a watch: 429 or connection refused | back off (at least the server's Retry-After), re-watch, no relist | watch at the last RV |
//! | opening a watch fails otherwise | report, back off, relist | list at the last RV |
//! | watch ERROR 410 Expired/Gone | report, back off, relist at the last RV (not ""; list-at-RV already means "not older than") | `GET ?resourceVersion=<last>` |
//! | watch ERROR 429 | back off, re-watch | watch at the last RV |
//! | watch ERROR 500 within `max_internal_error_retry_duration` (default 0: never) | re-watch at once | watch at the last RV |
//! | watch ERROR otherwise | report, back off, relist | list at the last RV |
//! | connection breaks mid-stream (reset, server restart) | re-watch at once; a refused connection then backs off | watch at the last RV |
//! | malformed or truncated frame **(better than client-go, which relists)** | report, back off, re-watch from the last good RV; a second bad frame in a row relists | watch at the last RV |
//! | frame over `max_frame_bytes` (16 MiB) | report, back off, relist (a list has no frame limit) | list at the last RV |
//! | **no bytes for the idle timeout, once the server has sent a periodic bookmark (not in client-go)** | report, re-watch at once (a dead TCP connection never stalls the informer) | watch at the last RV |
//! | resync tick (`resync_period`) and `should_resync` | the store's `resync` | none |
//! | resync fails | report, back off, relist | list at the last RV |
//! | the store refuses one event | report, skip it (the next relist repairs) | none |
//! | **start with a saved state ([`Reflector::resume_from`], warm restart; not in client-go)** | watch from its RV; fold the replay into the saved objects until a bookmark or 100 ms of quiet; replace the store once; the stream goes on as the watch | `GET ?watch=true&resourceVersion=<saved>&allowWatchBookmarks=true&timeoutSeconds=…` |
//! | resume: 410 or too-large RV | list this round, the saved state replaced into the store first (objects deleted meanwhile become tombstones) | the start's list or watch-list |
//! | resume fails otherwise (refused, broken, idle, the store refusing the state) | report, back off, resume again | the resume's watch |
//!
//! One pure function (`recovery.rs`) implements this table: from the
//! phase (watch-list, list, opening a watch, a watch's stream, a resume), how it
//! ended (the error's cause, idle, a clean end, a store refusal), how long
//! it lasted, how many events it carried and the retry state (bad frames
//! in a row, the 500 window), it returns the action; the loops only do the
//! I/O. Each row is a unit test there. A watch event of another kind than
//! the resource's is no ending: the reflector knows the kind it watches
//! (`K`'s fixed type, or the lister-watcher's for dynamic objects), skips
//! the event and counts it ([`ReflectorStats::other_type_events`]), and the
//! stream goes on; typed decoders skip such events before decoding them.
//!
//! ADDED events of a watch started at "" or "0" do not move the last
//! resourceVersion until another event type arrives (they come in no
//! resourceVersion order). Every decision is logged through `tracing` in a
//! `reflector` span carrying the reflector's name, with the
//! resourceVersion concerned.
//!
//! # Beyond client-go
//!
//! - The watch idle timeout above (default: twice the expected bookmark
//!   interval, at least 90 s). It applies only after a watch of the
//!   reflector has received a periodic bookmark: a server without a watch
//!   cache sends none, and a quiet resource's watch is then legitimately
//!   silent (restarting it would end in a 410 and a needless relist every
//!   few minutes). Without bookmarks, as in client-go, HTTP/2 pings and TCP
//!   keepalive find dead connections.
//! - Relist memory: the pager hands pages over one at a time (the next is
//!   fetched while the last is stored); only decoded objects are kept,
//!   each in an `Arc` that the store then holds without copying. A relist
//!   never holds more than one page of JSON.
//! - Every object received goes through the store's
//!   [`prepare`](clientgo_store::ReflectorStore::prepare) once, as it
//!   arrives: the transform has one home and runs once, and relist reuse
//!   follows: an object the cache holds with the same key, UID and
//!   resourceVersion comes back as the cached `Arc` as soon as its page
//!   arrives, so a paginated relist of unchanged objects peaks at about one
//!   page over the cache instead of a second copy (52 MiB instead of 1.9 GiB
//!   for 50,000 pods; BENCHMARKS.md).
//! - A reflector is an owned task: [`Reflector::run`] takes it, and its
//!   state is plain fields of that task. A [`ReflectorStatus`], taken
//!   before, is the cheap cloneable view others read meanwhile: the last
//!   error since the last sync ([`ReflectorStatus::last_error`]; a
//!   watch-error handler, [`ReflectorOptions::watch_error_handler`],
//!   receives every error), the last synced resourceVersion and a wait for
//!   one ([`ReflectorStatus::wait_for_resource_version`], read your own
//!   writes), the mode in use (watch-list, list and watch, resumed) and
//!   counters of lists, watches, re-watches, events, backoffs and errors.
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use clientgo_listwatch::ResourceListerWatcher;
//! use clientgo_reflector::{Reflector, ReflectorOptions};
//! use clientgo_rest::{ResourceClient, RestClient};
//! use clientgo_store::{Indexer, IndexerOptions, Store};
//! use k8s_openapi::api::core::v1::Pod;
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = RestClient::infer()?;
//! let pods = ResourceListerWatcher::new(ResourceClient::<Pod>::all(client));
//! let cache = Arc::new(Indexer::<Pod>::new(IndexerOptions::default()));
//! let reflector = Reflector::new(pods, cache.clone(), ReflectorOptions::default());
//! let status = reflector.status();
//! let cancel = CancellationToken::new();
//! tokio::spawn(reflector.run(cancel.clone()));
//! // After creating a pod answered with resourceVersion "4711":
//! status.wait_for_resource_version("4711").await?;
//! println!("{} pods cached ({})", cache.list().len(), status.mode());
//! cancel.cancel();
//! # Ok(())
//! # }
//! ```

mod backoff;
mod error;
mod initial_events;
mod list;
mod options;
mod recovery;
mod reflector;
mod resource_version;
mod resume_point;
mod resync_timer;
mod stats;
mod status;
mod watch;

pub use backoff::BackoffOptions;
pub use error::Error;
pub use options::{
    DEFAULT_EXPECTED_BOOKMARK_INTERVAL, DEFAULT_RESUME_SETTLE, MIN_DEFAULT_IDLE_TIMEOUT,
    MIN_WATCH_TIMEOUT, ReflectorOptions, ShouldResync, WatchErrorHandler,
};
pub use reflector::Reflector;
pub use resource_version::{ResourceVersionTracker, WaitError, compare_resource_versions};
pub use resume_point::ResumePoint;
pub use stats::ReflectorStats;
pub use status::{ReflectorMode, ReflectorStatus};
