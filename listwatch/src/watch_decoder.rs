//! [`WatchDecoder`]: turns the bytes of a watch response, split into chunks
//! anywhere, into [`WatchEvent`]s.
//!
//! The API server writes one JSON object per event, usually followed by a
//! newline, but neither the newline nor the chunk boundaries can be relied
//! on (proxies re-chunk; HTTP/2 frames split objects anywhere). The decoder
//! therefore frames events by the JSON structure itself: it tracks string,
//! escape and nesting state byte by byte (skipping through strings with
//! `memchr`), and when the top-level object closes it hands exactly those
//! bytes to serde_json, which decodes them straight into `WatchEvent<K>`
//! (no intermediate `serde_json::Value`).

use std::marker::PhantomData;

use clientgo_apimachinery::{DecodeError, WatchEvent};
use serde::de::DeserializeOwned;

use clientgo_apimachinery::json_scan::{ObjectAt, managed_fields_member, watch_event_types};

/// The largest event accepted by default: 16 MiB. The API server limits
/// objects to about 1.5 MiB in etcd, so a bigger frame is a broken or
/// hostile stream; the decoder stops instead of buffering without bound.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// What can go wrong framing and decoding a watch stream. After any of
/// these the stream is unusable; the caller restarts the watch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A complete frame is not a valid watch event (bad JSON, invalid
    /// UTF-8, wrong shape, too deeply nested).
    #[error(transparent)]
    Malformed(DecodeError),
    /// Something other than a JSON object where an event should start.
    #[error("expected a JSON object starting a watch event, found {found:?}")]
    NotAnObject {
        /// Up to 64 bytes from there, escaped.
        found: String,
    },
    /// A frame grew past the limit without ending.
    #[error("a watch event is larger than the {limit}-byte limit ({seen} bytes so far)")]
    TooLarge {
        /// The limit.
        limit: usize,
        /// Bytes of the frame seen when the limit was passed.
        seen: usize,
    },
    /// The stream ended in the middle of an event.
    #[error("the watch stream ended inside an event ({bytes} bytes of it received)")]
    Truncated {
        /// How much of the event had arrived.
        bytes: usize,
    },
    /// A protobuf list or watch frame is malformed: not the `k8s\0`
    /// envelope, bad wire format, an object that does not decode as its
    /// type, an unknown event type.
    #[error("protobuf: {0}")]
    Protobuf(clientgo_protobuf::DecodeError),
}

impl FrameError {
    /// A protobuf framing problem with no field path.
    pub(crate) fn protobuf(problem: impl Into<String>) -> Self {
        FrameError::Protobuf(clientgo_protobuf::DecodeError::new(
            clientgo_protobuf::Problem::Envelope(problem.into()),
        ))
    }
}

/// How long a frame in progress grows in the decoder's buffer before its
/// bytes are set aside in a piece (see [`WatchDecoder`]): below glibc's
/// initial `mmap` threshold of 128 KiB.
pub const PIECE_BYTES: usize = 64 * 1024;

/// Frames and decodes watch events from byte chunks.
///
/// Feed chunks with [`push`](Self::push) and take events with
/// [`next_event`](Self::next_event) until it returns `None`; at the end of
/// the stream call [`finish`](Self::finish), which reports a truncated last
/// event. Memory held is the unconsumed tail: at most one partial event plus
/// the chunk that completed it, never more than the frame limit plus one
/// chunk.
///
/// **A long frame is kept in pieces** of about [`PIECE_BYTES`] until it is
/// complete, and only then assembled into one buffer to decode (given back
/// at the next [`push`](Self::push)); a frame that passes the limit is
/// refused without ever being one allocation. A buffer grown to many
/// megabytes would be served by `mmap` and, once freed, raise glibc's
/// thresholds for giving memory back to the system: each 17 MiB frame the
/// chaos soak sends used to leave the process holding tens of MiB it no
/// longer used. After an error the decoder keeps nothing.
#[derive(Debug)]
pub struct WatchDecoder<K> {
    buffer: Vec<u8>,
    /// The scanned start of a long frame in progress, in pieces.
    pieces: Vec<Box<[u8]>>,
    /// Their bytes in all.
    pieces_len: usize,
    /// A long frame, assembled once complete.
    assembled: Vec<u8>,
    /// Bytes at the front of `buffer` already handed out.
    consumed: usize,
    /// Where scanning resumes.
    scan: usize,
    /// Where the current frame starts, when inside one.
    frame_start: Option<usize>,
    depth: u32,
    in_string: bool,
    escaped: bool,
    max_frame_bytes: usize,
    failed: bool,
    /// Leave `metadata.managedFields` out of each event's object.
    skip_managed_fields: bool,
    /// An event's bytes without its managed fields.
    scratch: Vec<u8>,
    /// The `apiVersion` and `kind` the watched objects have, when known:
    /// a well-formed event whose object is of another type is skipped.
    expected_type: Option<(String, String)>,
    /// Events skipped for being of another type.
    skipped: u64,
    event: PhantomData<fn() -> K>,
}

impl<K> Default for WatchDecoder<K> {
    fn default() -> Self {
        WatchDecoder::new(DEFAULT_MAX_FRAME_BYTES)
    }
}

impl<K> WatchDecoder<K> {
    /// A decoder refusing frames larger than `max_frame_bytes`.
    pub fn new(max_frame_bytes: usize) -> Self {
        WatchDecoder {
            buffer: Vec::new(),
            pieces: Vec::new(),
            pieces_len: 0,
            assembled: Vec::new(),
            consumed: 0,
            scan: 0,
            frame_start: None,
            depth: 0,
            in_string: false,
            escaped: false,
            max_frame_bytes: max_frame_bytes.max(2),
            failed: false,
            skip_managed_fields: false,
            scratch: Vec::new(),
            expected_type: None,
            skipped: 0,
            event: PhantomData,
        }
    }

    /// Names the type of the watched objects. An event whose object says
    /// it is of another `apiVersion` or `kind` is then skipped with a
    /// warning before it is decoded, and the events after it are decoded
    /// as usual: client-go's reflector does the same with an event of an
    /// unexpected type. Without it such an event is decoded as `K` (an
    /// error that ends the stream for a typed `K`). [`WatchStream`]
    /// names `K`'s fixed type itself.
    ///
    /// [`WatchStream`]: crate::WatchStream
    #[must_use]
    pub fn expect_type(mut self, api_version: &str, kind: &str) -> Self {
        self.expected_type = Some((api_version.to_string(), kind.to_string()));
        self
    }

    /// How many events were skipped for being of another type (see
    /// [`expect_type`](Self::expect_type)).
    pub fn skipped_events(&self) -> u64 {
        self.skipped
    }

    /// Leaves `metadata.managedFields` out of every event's object before
    /// decoding it, so it is never built (for a caller that would drop it:
    /// the informer factory's `keep_managed_fields(false)`). The member is found
    /// by a scan of the event's structure; where it cannot be found (an
    /// escaped key, say) the event is decoded whole.
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.skip_managed_fields = skip;
        self
    }

    /// Appends a chunk of the response body.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.failed {
            // Nothing more is decoded: nothing more is kept.
            self.buffer = Vec::new();
            self.pieces = Vec::new();
            self.pieces_len = 0;
            self.consumed = 0;
            self.scan = 0;
            self.frame_start = None;
            return;
        }
        if self.consumed > 0 {
            // Drop what was handed out; offsets move with it.
            self.buffer.drain(..self.consumed);
            self.scan -= self.consumed;
            if let Some(start) = self.frame_start.as_mut() {
                *start -= self.consumed;
            }
            self.consumed = 0;
        }
        if self.assembled.capacity() > PIECE_BYTES {
            self.assembled = Vec::new();
        }
        if self.scratch.capacity() > PIECE_BYTES {
            self.scratch = Vec::new();
        }
        if let Some(start) = self.frame_start
            && self.scan - start >= PIECE_BYTES
        {
            // The frame in progress is long: what of it is scanned moves to
            // a piece of its own, so the buffer does not grow with it.
            self.pieces
                .push(self.buffer.drain(start..self.scan).collect());
            self.pieces_len += self.scan - start;
            self.scan = start;
        }
        self.buffer.extend_from_slice(chunk);
    }

    /// Bytes buffered and not yet handed out.
    pub fn buffered(&self) -> usize {
        self.buffer.len() - self.consumed + self.pieces_len
    }

    /// Checks the end of the stream: an error if an event was cut off.
    pub fn finish(&self) -> Result<(), FrameError> {
        match self.frame_start {
            Some(start) if !self.failed => Err(FrameError::Truncated {
                bytes: self.frame_bytes(start, self.buffer.len()),
            }),
            _ => Ok(()),
        }
    }

    /// The bytes of the frame in progress, which starts at `start` in
    /// `buffer` (after its pieces) and is scanned up to `end`.
    fn frame_bytes(&self, start: usize, end: usize) -> usize {
        end - start + self.pieces_len
    }

    /// Finds the next complete frame: its byte range in `buffer`.
    fn next_frame(&mut self) -> Result<Option<(usize, usize)>, FrameError> {
        let length = self.buffer.len();
        let mut index = self.scan;
        while index < length {
            let Some(start) = self.frame_start else {
                match self.buffer[index] {
                    b' ' | b'\n' | b'\r' | b'\t' => {
                        index += 1;
                        self.consumed = index;
                        continue;
                    }
                    b'{' => {
                        self.frame_start = Some(index);
                        self.depth = 1;
                        index += 1;
                        continue;
                    }
                    _ => {
                        let end = (index + 64).min(length);
                        let found = String::from_utf8_lossy(&self.buffer[index..end])
                            .escape_debug()
                            .to_string();
                        return Err(FrameError::NotAnObject { found });
                    }
                }
            };
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    index += 1;
                    continue;
                }
                match memchr::memchr2(b'"', b'\\', &self.buffer[index..]) {
                    None => index = length,
                    Some(offset) => {
                        let at = index + offset;
                        if self.buffer[at] == b'\\' {
                            self.escaped = true;
                        } else {
                            self.in_string = false;
                        }
                        index = at + 1;
                    }
                }
            } else {
                match self.buffer[index] {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            let end = index + 1;
                            self.frame_start = None;
                            self.scan = end;
                            self.consumed = end;
                            return Ok(Some((start, end)));
                        }
                    }
                    _ => {}
                }
                index += 1;
            }
            let seen = self.frame_bytes(start, index);
            if seen > self.max_frame_bytes {
                return Err(FrameError::TooLarge {
                    limit: self.max_frame_bytes,
                    seen,
                });
            }
        }
        self.scan = length;
        if let Some(start) = self.frame_start
            && self.frame_bytes(start, length) > self.max_frame_bytes
        {
            return Err(FrameError::TooLarge {
                limit: self.max_frame_bytes,
                seen: self.frame_bytes(start, length),
            });
        }
        Ok(None)
    }
}

impl<K: DeserializeOwned> WatchDecoder<K> {
    /// The next complete event, `None` when more bytes are needed. After an
    /// error every call returns `None`: the stream cannot be trusted past a
    /// bad frame.
    pub fn next_event(&mut self) -> Option<Result<WatchEvent<K>, FrameError>> {
        loop {
            if self.failed {
                return None;
            }
            let (start, end) = match self.next_frame() {
                Ok(None) => return None,
                Ok(Some(range)) => range,
                Err(error) => {
                    self.failed = true;
                    return Some(Err(error));
                }
            };
            let mut frame = &self.buffer[start..end];
            if !self.pieces.is_empty() {
                self.assembled.clear();
                self.assembled.reserve_exact(self.pieces_len + frame.len());
                for piece in self.pieces.drain(..) {
                    self.assembled.extend_from_slice(&piece);
                }
                self.assembled.extend_from_slice(frame);
                self.pieces_len = 0;
                frame = &self.assembled;
            }
            if self.skip_managed_fields
                && let Some(member) = managed_fields_member(frame, ObjectAt::EventObject)
            {
                self.scratch.clear();
                self.scratch.extend_from_slice(&frame[..member.start]);
                self.scratch.extend_from_slice(&frame[member.end..]);
                frame = &self.scratch;
            }
            if let Some(expected) = &self.expected_type
                && let Some((api_version, kind)) = other_type(frame, expected)
            {
                self.skipped += 1;
                tracing::warn!(
                    api_version,
                    kind,
                    expected_api_version = expected.0.as_str(),
                    expected_kind = expected.1.as_str(),
                    "skipping a watch event whose object is of another type"
                );
                continue;
            }
            return Some(
                serde_json::from_slice::<WatchEvent<K>>(frame).map_err(|error| {
                    self.failed = true;
                    FrameError::Malformed(DecodeError::from_serde("watch event", frame, &error))
                }),
            );
        }
    }
}

/// The type of an event's object when it is not `expected`: an ADDED,
/// MODIFIED or DELETED event whose object names an `apiVersion` and `kind`
/// other than the expected ones, read by a scan that stops at them.
/// `None` for an ERROR event (its object is a `Status`), for a BOOKMARK
/// (it carries only a resourceVersion, and a metadata-only watch's names
/// the resource's kind), as the protobuf decoder does, for an object that
/// names no type, and for anything malformed (which the decode then
/// reports).
fn other_type<'a>(frame: &'a [u8], expected: &(String, String)) -> Option<(&'a str, &'a str)> {
    let types = watch_event_types(frame)?;
    let known = matches!(types.event_type?, b"ADDED" | b"MODIFIED" | b"DELETED");
    let api_version = std::str::from_utf8(types.api_version?).ok()?;
    let kind = std::str::from_utf8(types.kind?).ok()?;
    let other = api_version != expected.0 || kind != expected.1;
    (known && other).then_some((api_version, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn decode_all(chunks: &[&[u8]]) -> (Vec<WatchEvent<Value>>, Option<FrameError>) {
        let mut decoder = WatchDecoder::<Value>::default();
        let mut events = Vec::new();
        for chunk in chunks {
            decoder.push(chunk);
            while let Some(event) = decoder.next_event() {
                match event {
                    Ok(event) => events.push(event),
                    Err(error) => return (events, Some(error)),
                }
            }
        }
        (events, decoder.finish().err())
    }

    #[test]
    fn events_of_another_type_are_skipped_when_the_type_is_known() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let stream = br#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}}
{"type":"ADDED","object":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"dg=="}}}
{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}}
"#;
        let mut decoder = WatchDecoder::<ConfigMap>::default().expect_type("v1", "ConfigMap");
        decoder.push(stream);
        let mut names = Vec::new();
        while let Some(event) = decoder.next_event() {
            match event.unwrap() {
                WatchEvent::Added(c) | WatchEvent::Modified(c) => {
                    names.push(c.metadata.name.unwrap())
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(names, ["a", "b"]);
        assert_eq!(decoder.skipped_events(), 1);
        assert!(decoder.finish().is_ok());

        // Without the expected type, the stream ends at the odd event.
        let mut unknowing = WatchDecoder::<ConfigMap>::default();
        unknowing.push(stream);
        assert!(unknowing.next_event().unwrap().is_ok());
        assert!(matches!(
            unknowing.next_event(),
            Some(Err(FrameError::Malformed(_)))
        ));
        assert!(unknowing.next_event().is_none());

        // An object of the expected type that does not decode is malformed,
        // and so is an event of an unknown type.
        for bad in [
            &br#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":7}}}"#[..],
            br#"{"type":"SOMETHING","object":{"apiVersion":"v1","kind":"Secret","metadata":{}}}"#,
            br#"{"type":"ADDED","object":{"metadata":{"name":7}}}"#,
        ] {
            let mut decoder = WatchDecoder::<ConfigMap>::default().expect_type("v1", "ConfigMap");
            decoder.push(bad);
            assert!(
                matches!(decoder.next_event(), Some(Err(FrameError::Malformed(_)))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn frames_by_structure_not_newlines() {
        let stream = br#"{"type":"ADDED","object":{"a":"}{\"]"}}{"type":"DELETED","object":{"b":[1,{"c":2}]}}
  {"type":"MODIFIED","object":{}}"#;
        let (events, error) = decode_all(&[stream]);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(events.len(), 3);
        assert_eq!(events[0], WatchEvent::Added(json!({"a": "}{\"]"})));
        assert_eq!(events[2], WatchEvent::Modified(json!({})));
    }

    #[test]
    fn escapes_split_across_chunks() {
        let stream = br#"{"type":"ADDED","object":{"a":"x\"y"}}"#;
        let at = stream.iter().position(|b| *b == b'\\').unwrap() + 1;
        let (events, error) = decode_all(&[&stream[..at], &stream[at..]]);
        assert!(error.is_none());
        assert_eq!(events, vec![WatchEvent::Added(json!({"a": "x\"y"}))]);
    }

    #[test]
    fn truncated_oversized_and_garbage_are_errors() {
        let (_, error) = decode_all(&[br#"{"type":"ADDED","object":{"a"#]);
        assert!(
            matches!(error, Some(FrameError::Truncated { .. })),
            "{error:?}"
        );

        let mut decoder = WatchDecoder::<Value>::new(100);
        decoder.push(
            format!(
                r#"{{"type":"ADDED","object":{{"a":"{}"}}}}"#,
                "x".repeat(200)
            )
            .as_bytes(),
        );
        assert!(matches!(
            decoder.next_event(),
            Some(Err(FrameError::TooLarge { limit: 100, .. }))
        ));
        assert!(decoder.next_event().is_none(), "poisoned after an error");

        let (_, error) = decode_all(&[b"<html>oops</html>"]);
        assert!(
            matches!(error, Some(FrameError::NotAnObject { .. })),
            "{error:?}"
        );

        let (_, error) = decode_all(&[br#"{"type":"ADDED","object":{"a":}}"#]);
        let Some(FrameError::Malformed(decode)) = error else {
            panic!("malformed expected");
        };
        assert!(decode.snippet.contains(":}"), "{decode:?}");
    }

    #[test]
    fn an_unending_string_hits_the_limit_instead_of_growing() {
        let mut decoder = WatchDecoder::<Value>::new(1024);
        decoder.push(br#"{"type":"ADDED","object":{"a":""#);
        let mut error = None;
        for _ in 0..100 {
            decoder.push(&[b'x'; 64]);
            if let Some(Err(e)) = decoder.next_event() {
                error = Some(e);
                break;
            }
        }
        assert!(
            matches!(error, Some(FrameError::TooLarge { .. })),
            "{error:?}"
        );
        assert!(decoder.buffered() < 2048);
    }

    #[test]
    fn a_long_frame_is_kept_in_pieces_and_decoded_whole() {
        // Two events, the first of 1 MiB, the second completed by the
        // chunk that ends the first; fed in 10,000-byte chunks.
        let long = "y".repeat(1 << 20);
        let stream = format!(
            "{}\n{}\n",
            json!({"type": "ADDED", "object": {"long": long}}),
            json!({"type": "DELETED", "object": {"short": "z"}})
        );
        let mut decoder = WatchDecoder::<Value>::default();
        let mut events = Vec::new();
        let mut largest_buffer = 0;
        for chunk in stream.as_bytes().chunks(10_000) {
            decoder.push(chunk);
            largest_buffer = largest_buffer.max(decoder.buffer.capacity());
            while let Some(event) = decoder.next_event() {
                events.push(event.unwrap());
            }
        }
        assert!(decoder.finish().is_ok());
        assert_eq!(events.len(), 2);
        let WatchEvent::Added(first) = &events[0] else {
            panic!("{:?}", events[0]);
        };
        assert_eq!(first["long"].as_str().map(str::len), Some(1 << 20));
        assert!(matches!(&events[1], WatchEvent::Deleted(o) if o["short"] == "z"));
        // The buffer never held more than about a piece and a chunk.
        assert!(largest_buffer < 4 * PIECE_BYTES, "{largest_buffer}");
        assert_eq!(decoder.buffered(), 0);
    }

    #[test]
    fn any_chunking_gives_the_same_events_with_long_frames_among_short_ones() {
        let mut stream = String::new();
        for (index, length) in [10, 150_000, 3, PIECE_BYTES - 40, 70_000, 1]
            .iter()
            .enumerate()
        {
            let value = format!("{index}{}", "\\\"q".repeat(*length / 3));
            stream.push_str(&json!({"type": "MODIFIED", "object": {"v": value}}).to_string());
            stream.push_str(if index % 2 == 0 { "\n" } else { " \r\n" });
        }
        let whole = decode_all(&[stream.as_bytes()]);
        assert_eq!(whole.0.len(), 6);
        assert!(whole.1.is_none());
        for size in [
            1,
            7,
            4096,
            PIECE_BYTES - 1,
            PIECE_BYTES,
            PIECE_BYTES + 1,
            200_000,
        ] {
            let chunks: Vec<&[u8]> = stream.as_bytes().chunks(size).collect();
            let (events, error) = decode_all(&chunks);
            assert!(error.is_none(), "chunks of {size}: {error:?}");
            assert_eq!(events, whole.0, "chunks of {size}");
        }
    }

    #[test]
    fn a_frame_over_the_limit_is_refused_without_being_one_buffer() {
        let mut decoder = WatchDecoder::<Value>::new(1 << 20);
        decoder.push(br#"{"type":"ADDED","object":{"a":""#);
        let mut error = None;
        let mut largest_buffer = 0;
        for _ in 0..100 {
            decoder.push(&[b'x'; 32 * 1024]);
            largest_buffer = largest_buffer.max(decoder.buffer.capacity());
            if let Some(Err(e)) = decoder.next_event() {
                error = Some(e);
                break;
            }
        }
        let Some(FrameError::TooLarge { limit, seen }) = error else {
            panic!("{error:?}");
        };
        assert_eq!(limit, 1 << 20);
        assert!(seen > limit && seen < limit + 64 * 1024, "{seen}");
        assert!(largest_buffer < 4 * PIECE_BYTES, "{largest_buffer}");
        assert!(decoder.next_event().is_none());
        // A stream cut inside a long frame reports all of it as truncated.
        let mut cut = WatchDecoder::<Value>::default();
        cut.push(br#"{"type":"ADDED","object":{"a":""#);
        for _ in 0..10 {
            cut.push(&[b'x'; 32 * 1024]);
            assert!(cut.next_event().is_none());
        }
        let Err(FrameError::Truncated { bytes }) = cut.finish() else {
            panic!("truncated expected");
        };
        assert_eq!(bytes, 31 + 10 * 32 * 1024);
    }

    #[test]
    fn pushing_after_an_error_keeps_nothing_and_never_panics() {
        // The refusal comes in the same scan that skipped the whitespace
        // after a good frame: the offsets must not be reused afterwards.
        let mut decoder = WatchDecoder::<Value>::new(100);
        let mut stream = br#"{"type":"ADDED","object":{}}"#.to_vec();
        stream.extend_from_slice(b"\n  {\"type\":\"ADDED\",\"object\":{\"a\":\"");
        stream.extend_from_slice(&[b'x'; 200]);
        decoder.push(&stream);
        assert!(matches!(decoder.next_event(), Some(Ok(_))));
        assert!(matches!(
            decoder.next_event(),
            Some(Err(FrameError::TooLarge { .. }))
        ));
        for _ in 0..3 {
            decoder.push(&[b'x'; 1000]);
            assert!(decoder.next_event().is_none());
        }
        assert_eq!(decoder.buffered(), 0);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let depth = 100_000;
        let text = format!(
            r#"{{"type":"ADDED","object":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let (_, error) = decode_all(&[text.as_bytes()]);
        assert!(matches!(error, Some(FrameError::Malformed(_))), "{error:?}");
    }

    #[test]
    fn invalid_utf8_is_malformed() {
        let mut bytes = br#"{"type":"ADDED","object":{"a":""#.to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe]);
        bytes.extend_from_slice(br#""}}"#);
        let (_, error) = decode_all(&[&bytes]);
        assert!(matches!(error, Some(FrameError::Malformed(_))), "{error:?}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn event() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                any::<i64>().prop_map(Value::from),
                ".{0,12}".prop_map(Value::from),
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
            ];
            let value = leaf.prop_recursive(4, 32, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                    prop::collection::btree_map("[a-z\"\\\\{}]{0,6}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            });
            (
                prop_oneof![Just("ADDED"), Just("MODIFIED"), Just("DELETED")],
                value,
            )
                .prop_map(|(kind, object)| json!({"type": kind, "object": {"payload": object}}))
        }

        proptest! {
            #[test]
            fn any_split_decodes_the_same_events(
                events in prop::collection::vec(event(), 1..6),
                cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
                newline in any::<bool>(),
            ) {
                let mut stream = Vec::new();
                for event in &events {
                    stream.extend_from_slice(&serde_json::to_vec(event).unwrap());
                    if newline {
                        stream.push(b'\n');
                    }
                }
                let mut positions: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
                positions.push(0);
                positions.push(stream.len());
                positions.sort_unstable();
                positions.dedup();
                let chunks: Vec<&[u8]> = positions.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
                let (decoded, error) = decode_all(&chunks);
                prop_assert!(error.is_none(), "{:?}", error);
                let expected: Vec<WatchEvent<Value>> = events
                    .iter()
                    .map(|e| serde_json::from_value(e.clone()).unwrap())
                    .collect();
                prop_assert_eq!(decoded, expected);
            }

            #[test]
            fn random_bytes_never_panic(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..8)) {
                let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                let _ = decode_all(&slices);
            }

            #[test]
            fn token_soup_never_panics(soup in prop::collection::vec(prop_oneof![
                Just(&b"{"[..]), Just(&b"}"[..]), Just(&b"["[..]), Just(&b"]"[..]),
                Just(&b"\""[..]), Just(&b"\\"[..]), Just(&b":"[..]), Just(&b","[..]),
                Just(&br#"{"type":"ADDED","object":"#[..]), Just(&b"\n"[..]),
            ], 0..40)) {
                let stream: Vec<u8> = soup.concat();
                let _ = decode_all(&[&stream]);
            }
        }
    }
}
