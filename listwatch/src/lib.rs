//! client-go's `ListerWatcher` and pager in Rust: list pages and watch
//! streams of one resource over clientgo-rest.
//!
//! - [`ListerWatcher`]: list one page, open a watch; [`ResourceListerWatcher`]
//!   implements it for typed, dynamic and metadata-only resources, with a
//!   hook to adjust every request's options (selectors).
//! - [`WatchDecoder`] and [`WatchStream`]: a watch body decoded as it
//!   arrives. Events are framed by their JSON structure, so chunks may be
//!   split at any byte and hold several events; each frame is decoded
//!   straight into [`WatchEvent`](clientgo_apimachinery::WatchEvent);
//!   frames larger than 16 MiB (configurable) are refused instead of
//!   buffered; bad bytes are a typed error with a snippet, never a panic.
//! - [`ListDecoder`]: a list body decoded as it arrives, item by item, so
//!   a list (even an unpaginated relist) never holds its whole JSON text;
//!   [`ResourceListerWatcher`] lists through it.
//! - [`EventStream`]: the seam between a watch's source and a reflector,
//!   a `futures::Stream` of decoded events ([`WatchStream`] over HTTP, or
//!   any in-memory source), and [`IdleTimer`], the one place a watch's
//!   silence is measured. [`WatchStream`], [`PageStream`] and
//!   clientgo-rest's `ByteStream` all implement `Stream`.
//! - [`Pager`]: pages of 500 following continue tokens (resourceVersion
//!   cleared on continuations), one unpaginated relist when a token
//!   expires, and pages handed over one by one while the next is fetched.
//!
//! # Failure handling
//!
//! This crate reports; the reflector decides (its crate has the full
//! recovery table). What each layer does on its own:
//!
//! | condition | action | request sent |
//! |---|---|---|
//! | continuation page answers 410 Expired | [`PagerEvent::Restarted`], then the whole list again, once, unpaginated, with the original resourceVersion and match | `GET ?resourceVersion=<original>` (no limit, no continue) |
//! | a second expiry, or any other list error | the error ends the listing | none |
//! | 429 or 5xx with `Retry-After`, a GET whose connection broke | retried inside clientgo-rest (up to 10 times) before this crate sees it | the same request |
//! | watch ERROR event | [`Error::WatchStatus`] with the Status; the stream ends | none |
//! | malformed, non-object or truncated frame, or one over the limit | [`Error::Frame`] naming the URL, with a snippet; the stream ends | none |
//! | list body malformed, truncated or with an item over the limit | [`Error::Frame`] from `list` | none |
//! | connection broken mid-stream | [`Error::Rest`] (an HTTP error); [`Error::is_connection_error`] says so | none |
//!
//! ```no_run
//! use clientgo_apimachinery::ListOptions;
//! use clientgo_listwatch::{ListerWatcher, Pager, ResourceListerWatcher};
//! use clientgo_rest::{ResourceClient, RestClient};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = RestClient::infer()?;
//! let pods = ResourceListerWatcher::new(ResourceClient::<Pod>::all(client))
//!     .tweak_list_options(|options| options.label_selector = Some("app=web".into()));
//! let list = Pager::default().list_all(pods.clone(), ListOptions::default()).await?;
//! let mut events = pods
//!     .watch(&ListOptions::default().resource_version(list.resource_version))
//!     .await?;
//! while let Some(event) = events.next().await {
//!     println!("{}", event?.type_name());
//! }
//! # Ok(())
//! # }
//! ```

mod boxed_lister_watcher;
mod error;
mod event_stream;
mod fake_lister_watcher;
mod idle_timer;
mod list_decoder;
mod lister_watcher;
mod pager;
mod protobuf_framing;
mod protobuf_list_decoder;
mod protobuf_watch_decoder;
mod sharded_lister_watcher;
mod watch_decoder;
mod watch_stream;

pub use boxed_lister_watcher::{BoxedListerWatcher, BoxedWatch};
pub use error::Error;
pub use event_stream::EventStream;
pub use fake_lister_watcher::{FakeListerWatcher, FakeWatch};
pub use idle_timer::{IdleTimer, Next};
pub use list_decoder::ListDecoder;
pub use lister_watcher::{ListerWatcher, ResourceListerWatcher, TweakListOptions, restore_fn};
pub use pager::{DEFAULT_PAGE_SIZE, ListResult, PageStream, Pager, PagerEvent};
pub use protobuf_list_decoder::ProtobufListDecoder;
pub use protobuf_watch_decoder::ProtobufWatchDecoder;
pub use sharded_lister_watcher::{
    ShardFiltering, ShardStats, ShardStatus, ShardedListerWatcher, ShardedWatch,
};
pub use watch_decoder::{DEFAULT_MAX_FRAME_BYTES, FrameError, PIECE_BYTES, WatchDecoder};
pub use watch_stream::WatchStream;
