//! [`WatchStream`]: the events of one watch response, decoded as the bytes
//! arrive.

use std::pin::Pin;
use std::task::{Context, Poll};

use clientgo_apimachinery::{Object, WatchEvent};
use clientgo_rest::client::ByteStream;
use futures_core::Stream;
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::event_stream::EventStream;
use crate::protobuf_watch_decoder::ProtobufWatchDecoder;
use crate::watch_decoder::{FrameError, WatchDecoder};

/// The decoder of the stream's encoding.
#[derive(Debug)]
enum Decoder<K> {
    Json(WatchDecoder<K>),
    Protobuf(ProtobufWatchDecoder<K>),
}

impl<K: DeserializeOwned> Decoder<K> {
    fn next_event(&mut self) -> Option<Result<WatchEvent<K>, FrameError>> {
        match self {
            Decoder::Json(decoder) => decoder.next_event(),
            Decoder::Protobuf(decoder) => decoder.next_event(),
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        match self {
            Decoder::Json(decoder) => decoder.push(chunk),
            Decoder::Protobuf(decoder) => decoder.push(chunk),
        }
    }

    fn finish(&self) -> Result<(), FrameError> {
        match self {
            Decoder::Json(decoder) => decoder.finish(),
            Decoder::Protobuf(decoder) => decoder.finish(),
        }
    }
}

/// The decoded events of one open watch over HTTP: an [`EventStream`].
///
/// [`next`](Self::next) returns events in the order the server sent them,
/// `None` when the server ended the stream cleanly (its timeout, or it
/// closed the connection between events). An ERROR event is returned as
/// [`Error::WatchStatus`]; a bad, oversized or cut-off frame as
/// [`Error::Frame`]. After an error the stream yields `None`.
#[derive(Debug)]
pub struct WatchStream<K> {
    body: ByteStream,
    decoder: Decoder<K>,
    done: bool,
    bytes_received: u64,
}

// Nothing in a `WatchStream` is structurally pinned: the decoder and body
// are moved freely between polls.
impl<K> Unpin for WatchStream<K> {}

impl<K: DeserializeOwned> Stream for WatchStream<K> {
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        loop {
            if let Some(decoded) = this.decoder.next_event() {
                return Poll::Ready(Some(match decoded {
                    Ok(WatchEvent::Error(status)) => {
                        this.done = true;
                        Err(Error::WatchStatus {
                            url: this.body.url().to_string(),
                            status: Box::new(status),
                        })
                    }
                    Ok(event) => Ok(event),
                    Err(source) => {
                        this.done = true;
                        Err(this.frame_error(source))
                    }
                }));
            }
            match std::task::ready!(Pin::new(&mut this.body).poll_next(cx)) {
                Some(Ok(chunk)) => {
                    this.bytes_received += chunk.len() as u64;
                    this.decoder.push(&chunk);
                }
                None => {
                    this.done = true;
                    return Poll::Ready(match this.decoder.finish() {
                        Ok(()) => None,
                        Err(source) => Some(Err(this.frame_error(source))),
                    });
                }
                Some(Err(error)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(Error::Rest(error))));
                }
            }
        }
    }
}

impl<K: DeserializeOwned + Send> EventStream<K> for WatchStream<K> {
    /// Body bytes received so far.
    fn progress(&self) -> u64 {
        self.bytes_received
    }
}

impl<K: DeserializeOwned + Object> WatchStream<K> {
    /// Decodes `body` with frames of at most `max_frame_bytes`. Events
    /// whose object is of another type than `K`'s fixed one
    /// ([`Object::fixed_type`]) are skipped before they are decoded.
    pub fn new(body: ByteStream, max_frame_bytes: usize) -> Self {
        let mut decoder = WatchDecoder::new(max_frame_bytes);
        if let Some((api_version, kind)) = K::fixed_type() {
            decoder = decoder.expect_type(api_version, kind);
        }
        WatchStream {
            body,
            decoder: Decoder::Json(decoder),
            done: false,
            bytes_received: 0,
        }
    }

    /// Decodes `body` as a protobuf watch stream of `codec`'s type (the
    /// answer to a watch asking for protobuf, when the server gave it),
    /// skipping events of another type as [`new`](Self::new) does.
    pub fn protobuf(
        body: ByteStream,
        codec: clientgo_protobuf::Codec<K>,
        max_frame_bytes: usize,
    ) -> Self {
        WatchStream {
            body,
            decoder: Decoder::Protobuf(ProtobufWatchDecoder::new(codec, max_frame_bytes)),
            done: false,
            bytes_received: 0,
        }
    }
}

impl<K: DeserializeOwned> WatchStream<K> {
    /// Applies `hook` to every object a protobuf stream decodes.
    #[must_use]
    pub fn after_protobuf_decode(mut self, hook: fn(&mut K)) -> Self {
        if let Decoder::Protobuf(decoder) = self.decoder {
            self.decoder = Decoder::Protobuf(decoder.after_decode(hook));
        }
        self
    }

    /// Whether the stream is decoded as protobuf.
    pub fn is_protobuf(&self) -> bool {
        matches!(self.decoder, Decoder::Protobuf(_))
    }

    /// Leaves `metadata.managedFields` out of every event's object before
    /// decoding it, so the field managers' trees are never built (see
    /// [`WatchDecoder::skip_managed_fields`] and
    /// [`ProtobufWatchDecoder::skip_managed_fields`]).
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.decoder = match self.decoder {
            Decoder::Json(decoder) => Decoder::Json(decoder.skip_managed_fields(skip)),
            Decoder::Protobuf(decoder) => Decoder::Protobuf(decoder.skip_managed_fields(skip)),
        };
        self
    }

    /// Skips well-formed events whose object is of another type than
    /// `apiVersion` `kind`, in place of `K`'s fixed type (a dynamic
    /// object's resource; see [`WatchDecoder::expect_type`]).
    #[must_use]
    pub fn expect_type(mut self, api_version: &str, kind: &str) -> Self {
        self.decoder = match self.decoder {
            Decoder::Json(decoder) => Decoder::Json(decoder.expect_type(api_version, kind)),
            Decoder::Protobuf(decoder) => Decoder::Protobuf(decoder.expect_type(api_version, kind)),
        };
        self
    }

    /// How many events were skipped for being of another type.
    pub fn skipped_events(&self) -> u64 {
        match &self.decoder {
            Decoder::Json(decoder) => decoder.skipped_events(),
            Decoder::Protobuf(decoder) => decoder.skipped_events(),
        }
    }

    /// The watch's URL.
    pub fn url(&self) -> &str {
        self.body.url()
    }

    /// Body bytes received so far (events, bookmarks and whitespace); a
    /// caller watching for an idle connection compares it over time.
    pub fn bytes_received(&self) -> u64 {
        self.bytes_received
    }

    /// The next event; waits for bytes from the server. Cancel-safe: a
    /// dropped call loses no decoded event (chunks already read stay in the
    /// decoder). The same as [`StreamExt::next`](futures_util::StreamExt::next).
    pub async fn next(&mut self) -> Option<Result<WatchEvent<K>, Error>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    fn frame_error(&self, source: FrameError) -> Error {
        Error::Frame {
            url: self.body.url().to_string(),
            source,
        }
    }
}
