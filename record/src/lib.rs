//! client-go's `tools/record` in Rust: controllers tell people what they
//! did through core/v1 Events, which `kubectl describe` shows.
//!
//! ```no_run
//! # async fn example(client: clientgo_rest::RestClient, pod: k8s_openapi::api::core::v1::Pod) {
//! use clientgo_record::{EventBroadcaster, EventType, object_reference};
//!
//! let broadcaster = EventBroadcaster::new(Default::default());
//! broadcaster.start_recording_to_sink(client);
//! broadcaster.start_logging();
//! let recorder = broadcaster.recorder("my-controller");
//! recorder.event(&object_reference(&pod), EventType::Normal, "Synced", "pod synced");
//! # }
//! ```
//!
//! | type | client-go | what it is |
//! |---|---|---|
//! | [`EventBroadcaster`] | `record.EventBroadcaster` (`StartRecordingToSink`, `StartLogging`, `Shutdown`) | fans events out to the API and to logs |
//! | [`EventRecorder`] | `record.EventRecorder` (`Event`, `Eventf`, `AnnotatedEventf`) | builds core/v1 Events |
//! | [`EventCorrelator`] | `record.EventCorrelator` | aggregation, deduplication, spam filter |
//! | [`EventSink`], [`ApiSink`] | `record.EventSink`, `typedcorev1.EventSinkImpl` | where events are written |
//! | [`SeriesBroadcaster`], [`SeriesRecorder`] | `events.EventBroadcaster`, `events.EventRecorder` | events.k8s.io/v1 with EventSeries |
//! | [`object_reference`], [`object_reference_as`] | `reference.GetReference` | an object's `ObjectReference` (typed, compact, dynamic) |
//!
//! - **Never blocks the caller.** `event` puts the event on a bounded
//!   queue (1,000, client-go's) and returns; when the queue is full the
//!   event is dropped and counted ([`EventBroadcaster::stats`]).
//! - **client-go's correlator** ([`EventCorrelator`]), before anything is
//!   written: more than 10 events within 10 minutes that differ only in
//!   their message become one "(combined from similar events)" event; an
//!   identical event increments the count of the one already written (a
//!   PATCH); a token bucket per source and object (burst 25, one more
//!   every 5 minutes) drops the rest.
//! - **Retries:** a failed write is tried again up to 12 times, 10 s apart
//!   (the first wait randomised), then dropped and counted.
//!
//! **events.k8s.io/v1** (client-go's `tools/events`): [`SeriesBroadcaster`]
//! and [`SeriesRecorder`] write Events with a reporting controller and an
//! action; an isomorphic event turns the first into an EventSeries (a
//! PATCH), later ones are counted in memory and written every 30 minutes,
//! and a series unobserved for 6 minutes is finished.
#![warn(missing_docs)]

mod broadcaster;
mod correlator;
mod event;
mod events_v1;
mod sink;

pub use broadcaster::{BroadcasterOptions, EventBroadcaster, EventRecorder, RecorderStats};
pub use correlator::{Correlated, CorrelatorOptions, EventCorrelator};
pub use event::{EventType, object_reference, object_reference_as};
pub use events_v1::{SeriesBroadcaster, SeriesOptions, SeriesRecorder, SeriesStats};
pub use sink::{ApiSink, EventSink, SinkError};
