//! Watch streams: newline-delimited JSON events over a chunked response,
//! with the real server's start rules, bookmarks, timeouts and selector
//! transitions.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use clientgo_apimachinery::{
    ApiResource, INITIAL_EVENTS_END_ANNOTATION, ListOptions, ResourceVersionMatch, Status,
};
use http_body::{Body, Frame};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::api::handlers::{Filters, Representation};
use crate::api::protobuf::Encoding;
use crate::api::request_path::ResourcePath;
use crate::faults::controls::{Corruption, Faults};
use crate::store::object::StoredObject;
use crate::store::storage::{EventType, ReadAt, Storage, StorageEvent};

/// A response body fed from a channel: each message is one chunk.
pub(crate) struct ChannelBody {
    chunks: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    /// A body of the chunks `chunks` receives, ending when its senders go.
    pub(crate) fn new(chunks: mpsc::Receiver<Bytes>) -> Self {
        ChannelBody { chunks }
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.chunks
            .poll_recv(context)
            .map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// Settings a watch takes from the server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchSettings {
    /// How often a watch that allows them gets a bookmark; `None` when
    /// watches are served without a watch cache (from etcd), which sends
    /// none.
    pub bookmark_interval: Option<Duration>,
    /// Whether `sendInitialEvents` (watch-list) is served; without it the
    /// server answers as one with the WatchList feature off.
    pub watch_list: bool,
    /// Whether the server has a watch cache: it sends bookmarks and
    /// answers lists at resourceVersion "0" in one page.
    pub watch_cache: bool,
}

/// Appends one event line to `out`, the object written by `write_object`
/// straight into it.
fn push_event(out: &mut Vec<u8>, event_type: &str, write_object: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(event_type.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    write_object(out);
    out.extend_from_slice(b"}\n");
}

/// One event line on its own.
fn event_line(event_type: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + 32);
    push_event(&mut line, event_type, |out| out.extend_from_slice(object));
    Bytes::from(line)
}

fn bookmark_line(resource: &ApiResource, revision: u64, initial_events_end: bool) -> Bytes {
    let mut metadata = serde_json::json!({
        "resourceVersion": revision.to_string(),
        "creationTimestamp": null,
    });
    if initial_events_end {
        metadata["annotations"] = serde_json::json!({ INITIAL_EVENTS_END_ANNOTATION: "true" });
    }
    let object = serde_json::json!({
        "kind": resource.kind(),
        "apiVersion": resource.api_version(),
        "metadata": metadata,
    });
    event_line("BOOKMARK", &serde_json::to_vec(&object).unwrap_or_default())
}

/// A well-formed ADDED event of another kind than any watched resource's
/// (a core `Event`), for [`Faults::foreign_event_next_watch`].
fn foreign_event_line() -> Bytes {
    event_line(
        "ADDED",
        br#"{"apiVersion":"v1","kind":"Event","metadata":{"name":"foreign-object","namespace":"default"},"reason":"Foreign","involvedObject":{}}"#,
    )
}

fn error_line(status: &Status) -> Bytes {
    event_line("ERROR", &serde_json::to_vec(status).unwrap_or_default())
}

/// An ERROR event in the watch's encoding.
fn error_event(encoding: Encoding, status: &Status) -> Bytes {
    match encoding {
        Encoding::Json => error_line(status),
        Encoding::Protobuf(_) => crate::api::protobuf::error_frame(status),
    }
}

/// A BOOKMARK event in the watch's encoding.
fn bookmark_event(
    encoding: Encoding,
    resource: &ApiResource,
    revision: u64,
    initial_events_end: bool,
) -> Bytes {
    match encoding {
        Encoding::Json => bookmark_line(resource, revision, initial_events_end),
        Encoding::Protobuf(codec) => {
            crate::api::protobuf::bookmark_frame(&codec, revision, initial_events_end)
        }
    }
}

/// An object's event in the watch's encoding; a protobuf object that
/// cannot be encoded becomes an ERROR event.
fn object_event(
    encoding: Encoding,
    representation: Representation,
    event_type: &str,
    object: &StoredObject,
) -> Result<Bytes, Bytes> {
    match encoding {
        Encoding::Json => {
            let mut line = Vec::with_capacity(object.json.len() + 32);
            push_event(&mut line, event_type, |out| {
                representation.write_object(object, out)
            });
            Ok(Bytes::from(line))
        }
        Encoding::Protobuf(codec) => crate::api::protobuf::event_frame(&codec, event_type, object)
            .map_err(|status| error_event(encoding, &status)),
    }
}

/// The foreign event of [`Faults::foreign_event_next_watch`] in the
/// watch's encoding.
fn foreign_event(encoding: Encoding) -> Bytes {
    match encoding {
        Encoding::Json => foreign_event_line(),
        Encoding::Protobuf(_) => crate::api::protobuf::foreign_event_frame(),
    }
}

/// The size of the pieces a long bad frame is streamed in.
const CORRUPTION_PIECE: usize = 64 * 1024;

/// The start of a bad event whose object holds a string, for the
/// corruptions that put something wrong inside that string.
const BAD_EVENT_START: &[u8] =
    b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"bad\"},\"data\":{\"x\":\"";

/// Sends a bad frame for fault injection; the long ones are streamed in
/// pieces until they are done or the client hangs up.
async fn send_corruption(sender: &mpsc::Sender<Bytes>, corruption: Corruption, encoding: Encoding) {
    if let Encoding::Protobuf(_) = encoding {
        // A WatchEvent whose type field claims more bytes than the frame
        // holds, or a frame cut off after its length: the protobuf
        // counterparts of the JSON corruptions.
        let frame: Bytes = match corruption {
            Corruption::Truncated => Bytes::from_static(b"\0\0\0\x40\x0a\x05ADDED"),
            // A length past the client's limit: a client that buffers
            // before checking waits for bytes that never come.
            Corruption::Oversized(length) => {
                Bytes::copy_from_slice(&u32::try_from(length).unwrap_or(u32::MAX).to_be_bytes())
            }
            _ => Bytes::from_static(b"\0\0\0\x03\x0a\x05A"),
        };
        let _ = sender.send(frame).await;
        return;
    }
    let frame = match corruption {
        Corruption::Malformed => {
            Bytes::from_static(b"{\"type\":\"ADDED\",\"object\":{this is not json]}\n")
        }
        Corruption::Truncated => {
            Bytes::from_static(b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"trunc")
        }
        Corruption::InvalidUtf8 => {
            let mut frame = BAD_EVENT_START.to_vec();
            frame.extend_from_slice(b"\xff\xfe\xc3\x28\"}}}\n");
            Bytes::from(frame)
        }
        Corruption::DeepNesting(depth) => {
            let mut frame =
                b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"deep\"},\"spec\":"
                    .to_vec();
            frame.resize(frame.len() + depth, b'[');
            frame.resize(frame.len() + depth, b']');
            frame.extend_from_slice(b"}}\n");
            Bytes::from(frame)
        }
        Corruption::Oversized(length) => return send_long_string(sender, Some(length)).await,
        Corruption::EndlessString => return send_long_string(sender, None).await,
    };
    let _ = sender.send(frame).await;
}

/// Streams a bad event whose string holds `length` bytes of `x` (without
/// end when `None`), in 64 KiB pieces, so the server never holds it whole.
async fn send_long_string(sender: &mpsc::Sender<Bytes>, length: Option<usize>) {
    if sender
        .send(Bytes::from_static(BAD_EVENT_START))
        .await
        .is_err()
    {
        return;
    }
    let piece = Bytes::from(vec![b'x'; CORRUPTION_PIECE]);
    let mut left = length;
    loop {
        let size = match left {
            Some(0) => break,
            Some(left) => left.min(CORRUPTION_PIECE),
            None => CORRUPTION_PIECE,
        };
        if sender.send(piece.slice(..size)).await.is_err() {
            return;
        }
        if let Some(left) = &mut left {
            *left -= size;
        }
    }
    let _ = sender.send(Bytes::from_static(b"\"}}}\n")).await;
}

/// What a stored event looks like through the watch's selectors: an
/// object entering the selection is ADDED, one leaving it is DELETED.
fn translate(event: &StorageEvent, filters: &Filters) -> Option<&'static str> {
    let now = filters.matches(&event.object);
    let before = event
        .previous
        .as_ref()
        .is_some_and(|previous| filters.matches(previous));
    match (event.event_type, before, now) {
        (EventType::Added, _, true) => Some("ADDED"),
        (EventType::Modified, true, true) => Some("MODIFIED"),
        (EventType::Modified, false, true) => Some("ADDED"),
        (EventType::Modified, true, false) => Some("DELETED"),
        (EventType::Deleted, _, true) => Some("DELETED"),
        _ => None,
    }
}

/// Where a watch starts: the objects to send first as ADDED, the revision
/// after which events follow, and whether a watch-list end bookmark
/// follows the initial objects.
struct Start {
    initial: Vec<Arc<StoredObject>>,
    after: u64,
    initial_events_end: bool,
}

fn start(storage: &Storage, path: &ResourcePath, options: &ListOptions) -> Result<Start, Status> {
    let resource = path.resource.group_resource();
    let namespace = path.namespace.as_deref();
    let resource_version = options.resource_version.as_deref().unwrap_or_default();
    if options.send_initial_events == Some(true) {
        if options.resource_version_match != Some(ResourceVersionMatch::NotOlderThan) {
            return Err(Status::bad_request(
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        let at =
            match resource_version {
                "" | "0" => ReadAt::Latest,
                rv => ReadAt::NotOlderThan(rv.parse().map_err(|_| {
                    Status::bad_request(format!("invalid resource version: {rv:?}"))
                })?),
            };
        let (initial, after) = storage.list(&resource, namespace, at)?;
        return Ok(Start {
            initial,
            after,
            initial_events_end: true,
        });
    }
    match resource_version {
        "" | "0" => {
            let (initial, after) = storage.list(&resource, namespace, ReadAt::Latest)?;
            Ok(Start {
                initial,
                after,
                initial_events_end: false,
            })
        }
        rv => Ok(Start {
            initial: Vec::new(),
            after: rv
                .parse()
                .map_err(|_| Status::bad_request(format!("invalid resource version: {rv:?}")))?,
            initial_events_end: false,
        }),
    }
}

/// Starts a watch: selector errors are answered at once (400); anything
/// else, including a resourceVersion too old (410), arrives in the stream
/// as an ERROR event, as the real server does.
pub(crate) fn watch(
    storage: Arc<Storage>,
    path: ResourcePath,
    options: ListOptions,
    settings: WatchSettings,
    shutdown: CancellationToken,
    faults: Arc<Faults>,
    (representation, encoding): (Representation, Encoding),
) -> Result<ChannelBody, Status> {
    let filters = Filters::parse(&options, &path.resource.group_resource())?;
    if options.send_initial_events.is_some() && !settings.watch_list {
        return Err(Status::invalid(
            "ListOptions",
            "",
            vec![clientgo_apimachinery::StatusCause {
                reason: clientgo_apimachinery::status::cause_type::FIELD_VALUE_FORBIDDEN.to_string(),
                message: "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled".to_string(),
                field: "sendInitialEvents".to_string(),
            }],
        ));
    }
    let (sender, chunks) = mpsc::channel::<Bytes>(256);
    let dropped = faults.watch_token();
    let stall = faults.take_stall();
    let corruption = faults.take_corruption();
    let foreign = faults.take_foreign_event();
    let error_status = faults.take_error_event();
    tokio::spawn(async move {
        if let Some(stall) = stall {
            tokio::select! {
                () = tokio::time::sleep(stall) => {}
                () = dropped.cancelled() => return,
                () = shutdown.cancelled() => return,
            }
        }
        tokio::select! {
            () = faults.wait_while_held() => {}
            () = dropped.cancelled() => return,
            () = shutdown.cancelled() => return,
        }
        let started = start(&storage, &path, &options).and_then(|start| {
            let watch = storage.watch(
                &path.resource.group_resource(),
                path.namespace.as_deref(),
                start.after,
            )?;
            Ok((start, watch))
        });
        let (start, mut watch) = match started {
            Ok(started) => started,
            Err(status) => {
                let _ = sender.send(error_event(encoding, &status)).await;
                return;
            }
        };
        // As kube-apiserver's watch handler: each event is written as it
        // comes, one frame each, and the transport flushes whenever no
        // event is pending (hyper flushes when the body has nothing ready).
        for object in start.initial.iter().filter(|o| filters.matches(o)) {
            let (frame, failed) = match object_event(encoding, representation, "ADDED", object) {
                Ok(frame) => (frame, false),
                Err(error) => (error, true),
            };
            if sender.send(frame).await.is_err() || failed {
                return;
            }
        }
        // The ordered faults come after the initial events and before a
        // watch-list's bookmark, so they can break a watch-list too.
        if foreign && sender.send(foreign_event(encoding)).await.is_err() {
            return;
        }
        if let Some(status) = error_status {
            let _ = sender.send(error_event(encoding, &status)).await;
            return;
        }
        if let Some(corruption) = corruption {
            tokio::select! {
                () = send_corruption(&sender, corruption, encoding) => {}
                () = dropped.cancelled() => {}
                () = shutdown.cancelled() => {}
            }
            return;
        }
        if start.initial_events_end
            && sender
                .send(bookmark_event(encoding, &path.resource, start.after, true))
                .await
                .is_err()
        {
            return;
        }
        let timeout = options.timeout_seconds.map(Duration::from_secs);
        let deadline = tokio::time::sleep(timeout.unwrap_or(Duration::from_secs(365 * 24 * 3600)));
        tokio::pin!(deadline);
        // With a watch cache, the first bookmark comes one interval after
        // the start; without one, never.
        let bookmark_interval = settings
            .bookmark_interval
            .filter(|_| options.allow_watch_bookmarks);
        let mut bookmarks =
            tokio::time::interval(bookmark_interval.unwrap_or(Duration::from_secs(3600)));
        bookmarks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        bookmarks.tick().await;
        loop {
            // Biased: once the watch is dropped, nothing written after
            // `drop_watches` returned may still go out on it (a random
            // pick could send a later event first).
            let line = tokio::select! {
                biased;
                () = shutdown.cancelled() => return,
                () = dropped.cancelled() => return,
                () = &mut deadline => return,
                _ = bookmarks.tick(), if bookmark_interval.is_some() => {
                    bookmark_event(encoding, &path.resource, watch.progress(), false)
                }
                next = watch.next() => match next {
                    None => return,
                    Some(Err(status)) => {
                        let _ = sender.send(error_event(encoding, &status)).await;
                        return;
                    }
                    Some(Ok(event)) => {
                        let Some(event_type) = translate(&event, &filters) else {
                            continue;
                        };
                        faults.event_sent();
                        match object_event(encoding, representation, event_type, &event.object) {
                            Ok(frame) => frame,
                            Err(error) => {
                                let _ = sender.send(error).await;
                                return;
                            }
                        }
                    }
                },
            };
            // An event taken before a drop still goes out: with the biased
            // select above, none was written after `drop_watches` returned
            // (and a drop ordered by `drop_watches_after` must let its last
            // event out).
            if sender.send(line).await.is_err() {
                return;
            }
        }
    });
    Ok(ChannelBody { chunks })
}
