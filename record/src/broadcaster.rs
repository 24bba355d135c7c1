//! [`EventBroadcaster`] and [`EventRecorder`]: events queued without
//! blocking, correlated and written on a task of their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_apimachinery::random::Random;
use clientgo_rest::RestClient;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::correlator::{Correlated, CorrelatorOptions, EventCorrelator};
use crate::event::EventType;
use crate::sink::{ApiSink, EventSink};

/// A broadcaster's settings, client-go's defaults.
///
/// | setting | default | client-go |
/// |---|---|---|
/// | `queue` | 1,000 events per destination | the same (`maxQueuedEvents`) |
/// | `tries` | 12 | `maxTriesPerEvent` |
/// | `retry_interval` | 10 s, the first wait randomised | `sleepDuration` |
/// | `correlator` | [`CorrelatorOptions::default`] | the same |
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcasterOptions {
    /// Events waiting per destination; more are dropped.
    pub queue: usize,
    /// Attempts to write one event.
    pub tries: u32,
    /// The wait between attempts.
    pub retry_interval: Duration,
    /// The correlator's limits.
    pub correlator: CorrelatorOptions,
}

impl Default for BroadcasterOptions {
    fn default() -> Self {
        BroadcasterOptions {
            queue: 1000,
            tries: 12,
            retry_interval: Duration::from_secs(10),
            correlator: CorrelatorOptions::default(),
        }
    }
}

/// What a broadcaster did with the events it was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecorderStats {
    /// Events recorded (before correlation).
    pub recorded: u64,
    /// Events dropped because a destination's queue was full.
    pub dropped: u64,
    /// Events created on the server.
    pub created: u64,
    /// Identical events counted on an existing one (a patch).
    pub patched: u64,
    /// Events dropped by the spam filter.
    pub skipped: u64,
    /// Events given up after every attempt failed.
    pub failed: u64,
}

#[derive(Debug, Default)]
struct Counters {
    recorded: AtomicU64,
    dropped: AtomicU64,
    created: AtomicU64,
    patched: AtomicU64,
    skipped: AtomicU64,
    failed: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

struct Inner {
    options: BroadcasterOptions,
    destinations: Mutex<Vec<mpsc::Sender<Event>>>,
    counters: Counters,
    cancel: CancellationToken,
    /// Cancels `cancel` when the last handle goes.
    _stop_on_drop: DropGuard,
}

/// Fans recorded events out to its destinations: the API (through the
/// correlator) and logs (client-go's `EventBroadcaster`). Dropping the
/// last handle (recorders hold one) stops its tasks; events still queued
/// are dropped.
#[derive(Clone)]
pub struct EventBroadcaster {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventBroadcaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBroadcaster")
            .field("options", &self.inner.options)
            .field("stats", &self.stats())
            .finish()
    }
}

impl EventBroadcaster {
    /// A broadcaster with no destination yet.
    pub fn new(options: BroadcasterOptions) -> Self {
        EventBroadcaster {
            inner: Arc::new({
                let cancel = CancellationToken::new();
                Inner {
                    options,
                    destinations: Mutex::new(Vec::new()),
                    counters: Counters::default(),
                    _stop_on_drop: cancel.clone().drop_guard(),
                    cancel,
                }
            }),
        }
    }

    /// Writes events to the core/v1 Events API through `client`.
    pub fn start_recording_to_sink(&self, client: RestClient) {
        self.start_recording_to(ApiSink::new(client));
    }

    /// Writes events to `sink`, after the correlator, on a task of its own
    /// (needs a Tokio runtime).
    pub fn start_recording_to(&self, sink: impl EventSink) {
        let mut destination = self.destination();
        let weak = Arc::downgrade(&self.inner);
        let options = self.inner.options.clone();
        tokio::spawn(async move {
            let mut correlator = EventCorrelator::new(options.correlator.clone());
            while let Some(event) = destination.next().await {
                let cancel = &destination.cancel;
                let correlated = correlator.correlate(event, Instant::now(), Timestamp::now());
                let outcome = write(&sink, &mut correlator, correlated, &options, cancel).await;
                let Some(inner) = weak.upgrade() else { return };
                match outcome {
                    Outcome::Created => bump(&inner.counters.created),
                    Outcome::Patched => bump(&inner.counters.patched),
                    Outcome::Skipped => bump(&inner.counters.skipped),
                    Outcome::Failed => bump(&inner.counters.failed),
                    Outcome::Cancelled => return,
                }
            }
        });
    }

    /// Logs every event through `tracing` (Warning events at warn level).
    pub fn start_logging(&self) {
        let mut destination = self.destination();
        tokio::spawn(async move {
            while let Some(event) = destination.next().await {
                let object = &event.involved_object;
                let (kind, namespace, name) = (
                    object.kind.as_deref().unwrap_or_default(),
                    object.namespace.as_deref().unwrap_or_default(),
                    object.name.as_deref().unwrap_or_default(),
                );
                let reason = event.reason.as_deref().unwrap_or_default();
                let message = event.message.as_deref().unwrap_or_default();
                if event.type_.as_deref() == Some("Warning") {
                    tracing::warn!(kind, namespace, name, reason, message, "event");
                } else {
                    tracing::info!(kind, namespace, name, reason, message, "event");
                }
            }
        });
    }

    /// A new destination's end of the fan-out: its bounded queue, closed
    /// when the broadcaster stops.
    fn destination(&self) -> Destination {
        let (sender, events) = mpsc::channel::<Event>(self.inner.options.queue.max(1));
        self.inner.destinations.lock().push(sender);
        Destination {
            events,
            cancel: self.inner.cancel.clone(),
        }
    }

    /// A recorder of events from `component` (the event's source).
    pub fn recorder(&self, component: impl Into<String>) -> EventRecorder {
        EventRecorder {
            broadcaster: self.clone(),
            source: EventSource {
                component: Some(component.into()),
                host: None,
            },
        }
    }

    /// What happened to the events so far.
    pub fn stats(&self) -> RecorderStats {
        let counters = &self.inner.counters;
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        RecorderStats {
            recorded: read(&counters.recorded),
            dropped: read(&counters.dropped),
            created: read(&counters.created),
            patched: read(&counters.patched),
            skipped: read(&counters.skipped),
            failed: read(&counters.failed),
        }
    }

    /// Stops every destination's task; events still queued are dropped.
    pub fn shutdown(&self) {
        self.inner.cancel.cancel();
    }

    /// Queues `event` for every destination, never waiting.
    fn action(&self, event: Event) {
        bump(&self.inner.counters.recorded);
        let destinations = self.inner.destinations.lock();
        let mut event = Some(event);
        for (position, destination) in destinations.iter().enumerate() {
            // The last destination takes the event itself; the others a copy.
            let copy = if position + 1 == destinations.len() {
                event.take()
            } else {
                event.clone()
            };
            if let Some(copy) = copy
                && destination.try_send(copy).is_err()
            {
                bump(&self.inner.counters.dropped);
            }
        }
    }
}

/// Records events from one component (client-go's `EventRecorder`).
/// Cheap to clone; never blocks.
#[derive(Debug, Clone)]
pub struct EventRecorder {
    broadcaster: EventBroadcaster,
    source: EventSource,
}

impl EventRecorder {
    /// Records an event about `object` (client-go's `Event`; use
    /// `format!` for `Eventf`).
    pub fn event(
        &self,
        object: &ObjectReference,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) {
        self.annotated_event(object, Default::default(), event_type, reason, message);
    }

    /// Records an event with annotations on the Event itself (client-go's
    /// `AnnotatedEventf`).
    pub fn annotated_event(
        &self,
        object: &ObjectReference,
        annotations: std::collections::BTreeMap<String, String>,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) {
        let now = Timestamp::now();
        let namespace = object
            .namespace
            .clone()
            .filter(|namespace| !namespace.is_empty())
            .unwrap_or_else(|| "default".to_string());
        let event = Event {
            metadata: ObjectMeta {
                name: Some(format!(
                    "{}.{:x}",
                    object.name.as_deref().unwrap_or_default(),
                    now.as_nanosecond()
                )),
                namespace: Some(namespace),
                annotations: (!annotations.is_empty()).then_some(annotations),
                ..ObjectMeta::default()
            },
            involved_object: object.clone(),
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            type_: Some(event_type.as_str().to_string()),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            source: Some(self.source.clone()),
            reporting_component: self.source.component.clone(),
            reporting_instance: self.source.host.clone(),
            ..Event::default()
        };
        self.broadcaster.action(event);
    }
}

/// What a destination's task reads from.
struct Destination {
    events: mpsc::Receiver<Event>,
    cancel: CancellationToken,
}

impl Destination {
    /// The next event; `None` once the broadcaster stopped.
    async fn next(&mut self) -> Option<Event> {
        tokio::select! {
            () = self.cancel.cancelled() => None,
            event = self.events.recv() => event,
        }
    }
}

enum Outcome {
    Created,
    Patched,
    Skipped,
    Failed,
    Cancelled,
}

/// Writes one correlated event, trying up to `options.tries` times
/// (client-go's `recordToSink`): a patch whose event is gone is created
/// anew.
async fn write<S: EventSink>(
    sink: &S,
    correlator: &mut EventCorrelator,
    correlated: Correlated,
    options: &BroadcasterOptions,
    cancel: &CancellationToken,
) -> Outcome {
    let (event, patch, key) = match correlated {
        Correlated::Skip => return Outcome::Skipped,
        Correlated::Create { event, key } => (event, None, key),
        Correlated::Patch { event, patch, key } => (event, Some(patch), key),
    };
    for attempt in 0..options.tries.max(1) {
        if attempt > 0 {
            let wait = if attempt == 1 {
                // The first wait is randomised, so many recorders failing
                // together do not retry together.
                options.retry_interval.mul_f64(Random::new().fraction())
            } else {
                options.retry_interval
            };
            tokio::select! {
                () = cancel.cancelled() => return Outcome::Cancelled,
                () = tokio::time::sleep(wait) => {}
            }
        }
        let written = match &patch {
            Some(patch) => match sink.patch(&event, patch).await {
                Err(error) if error.is_not_found() => {
                    // The counted event expired on the server: write it
                    // anew, as a new object.
                    let mut fresh = event.clone();
                    fresh.count = Some(1);
                    fresh.metadata.resource_version = None;
                    sink.create(&fresh).await.map(|stored| (stored, false))
                }
                other => other.map(|stored| (stored, true)),
            },
            None => sink.create(&event).await.map(|stored| (stored, false)),
        };
        match written {
            Ok((stored, patched)) => {
                correlator.written(&key, &stored);
                return if patched {
                    Outcome::Patched
                } else {
                    Outcome::Created
                };
            }
            Err(error)
                if error
                    .source
                    .status()
                    .is_some_and(clientgo_apimachinery::Status::is_already_exists) =>
            {
                return Outcome::Created;
            }
            Err(error) => {
                tracing::debug!(%error, attempt, "could not write an event");
            }
        }
    }
    tracing::warn!(
        reason = event.reason.as_deref().unwrap_or_default(),
        "dropping an event after {} attempts",
        options.tries
    );
    Outcome::Failed
}
