//! The events.k8s.io/v1 recorder (client-go's `tools/events`): events with
//! a reporting controller and an action, and EventSeries instead of
//! counts.
//!
//! client-go's rules: an event *isomorphic* to one already written (the
//! same regarding and related objects, type, reason, action, reporting
//! controller and instance; the note may differ) is not written again.
//! The second one turns the first into a series (a PATCH with
//! `series.count = 2`); later ones only increase the count in memory, and
//! every series is written out every `refresh_interval` (30 minutes).
//! A series not observed for `finish_after` (6 minutes) is finished: the
//! next isomorphic event starts a new Event.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_rest::{CreateOptions, Patch, PatchOptions, ResourceClient, RestClient};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::event::EventType;

/// Settings of an events.k8s.io/v1 broadcaster, client-go's defaults.
///
/// | setting | default | client-go |
/// |---|---|---|
/// | `queue` | 1,000 | the same |
/// | `refresh_interval` | 30 min | `refreshTime` |
/// | `finish_after` | 6 min | `finishTime` |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesOptions {
    /// Events waiting to be written; more are dropped.
    pub queue: usize,
    /// How often every open series is written out.
    pub refresh_interval: Duration,
    /// How long a series may go unobserved before it is finished.
    pub finish_after: Duration,
}

impl Default for SeriesOptions {
    fn default() -> Self {
        SeriesOptions {
            queue: 1000,
            refresh_interval: Duration::from_secs(30 * 60),
            finish_after: Duration::from_secs(6 * 60),
        }
    }
}

/// What an events.k8s.io/v1 broadcaster did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SeriesStats {
    /// Events recorded.
    pub recorded: u64,
    /// Dropped because the queue was full.
    pub dropped: u64,
    /// Events created.
    pub created: u64,
    /// Series written (a PATCH of `series`).
    pub series_writes: u64,
    /// Writes that failed.
    pub failed: u64,
}

#[derive(Debug, Default)]
struct Counters {
    recorded: AtomicU64,
    dropped: AtomicU64,
    created: AtomicU64,
    series_writes: AtomicU64,
    failed: AtomicU64,
}

struct Inner {
    sender: mpsc::Sender<Event>,
    counters: Arc<Counters>,
    cancel: CancellationToken,
    /// Cancels `cancel` when the last handle goes.
    _stop_on_drop: DropGuard,
}

/// Writes events.k8s.io/v1 Events (client-go's `events.EventBroadcaster`
/// started with a sink). Dropping the last handle stops its task.
#[derive(Clone)]
pub struct SeriesBroadcaster {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SeriesBroadcaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeriesBroadcaster")
            .field("stats", &self.stats())
            .finish()
    }
}

/// The isomorphism key: everything but the note and the times.
fn isomorphic_key(event: &Event) -> String {
    let reference = |object: Option<&ObjectReference>| {
        object.map_or_else(String::new, |o| {
            [
                &o.kind,
                &o.namespace,
                &o.name,
                &o.uid,
                &o.api_version,
                &o.field_path,
            ]
            .iter()
            .map(|part| part.as_deref().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("/")
        })
    };
    [
        reference(event.regarding.as_ref()),
        reference(event.related.as_ref()),
        event.type_.clone().unwrap_or_default(),
        event.reason.clone().unwrap_or_default(),
        event.action.clone().unwrap_or_default(),
        event.reporting_controller.clone().unwrap_or_default(),
        event.reporting_instance.clone().unwrap_or_default(),
    ]
    .join("\u{0}")
}

/// One written event and when it was last observed.
struct Known {
    event: Event,
    observed: Instant,
}

impl SeriesBroadcaster {
    /// Starts writing through `client` (needs a Tokio runtime).
    pub fn start(client: RestClient, options: SeriesOptions) -> Self {
        let (sender, mut events) = mpsc::channel::<Event>(options.queue.max(1));
        let counters = Arc::new(Counters::default());
        let cancel = CancellationToken::new();
        tokio::spawn({
            let (counters, cancel) = (Arc::clone(&counters), cancel.clone());
            async move {
                let mut known: HashMap<String, Known> = HashMap::new();
                let mut refresh = tokio::time::interval(options.refresh_interval);
                refresh.tick().await;
                let mut finish =
                    tokio::time::interval(options.finish_after.max(Duration::from_millis(1)));
                finish.tick().await;
                loop {
                    tokio::select! {
                        () = cancel.cancelled() => return,
                        _ = refresh.tick() => {
                            for entry in known.values().filter(|entry| entry.event.series.is_some()) {
                                write_series(&client, &entry.event, &counters).await;
                            }
                        }
                        _ = finish.tick() => {
                            known.retain(|_, entry| entry.observed.elapsed() < options.finish_after);
                        }
                        event = events.recv() => {
                            let Some(event) = event else { return };
                            record(&client, &mut known, event, &counters).await;
                        }
                    }
                }
            }
        });
        SeriesBroadcaster {
            inner: Arc::new(Inner {
                sender,
                counters,
                _stop_on_drop: cancel.clone().drop_guard(),
                cancel,
            }),
        }
    }

    /// A recorder for `controller` (`reportingController`) running as
    /// `instance` (`reportingInstance`).
    pub fn recorder(
        &self,
        controller: impl Into<String>,
        instance: impl Into<String>,
    ) -> SeriesRecorder {
        SeriesRecorder {
            broadcaster: self.clone(),
            controller: controller.into(),
            instance: instance.into(),
        }
    }

    /// What happened so far.
    pub fn stats(&self) -> SeriesStats {
        let counters = &self.inner.counters;
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        SeriesStats {
            recorded: read(&counters.recorded),
            dropped: read(&counters.dropped),
            created: read(&counters.created),
            series_writes: read(&counters.series_writes),
            failed: read(&counters.failed),
        }
    }

    /// Stops the task; queued events are dropped.
    pub fn shutdown(&self) {
        self.inner.cancel.cancel();
    }
}

/// Writes or counts one event (client-go's `recordToSink`).
async fn record(
    client: &RestClient,
    known: &mut HashMap<String, Known>,
    event: Event,
    counters: &Counters,
) {
    let key = isomorphic_key(&event);
    if let Some(entry) = known.get_mut(&key) {
        entry.observed = Instant::now();
        let now = MicroTime(Timestamp::now());
        match entry.event.series.as_mut() {
            Some(series) => {
                // Counted in memory; written at the next refresh.
                series.count += 1;
                series.last_observed_time = now;
            }
            None => {
                entry.event.series = Some(EventSeries {
                    count: 2,
                    last_observed_time: now,
                });
                write_series(client, &entry.event, counters).await;
            }
        }
        return;
    }
    let namespace = event
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let events = ResourceClient::<Event>::namespaced(client.clone(), &namespace);
    match events.create(&CreateOptions::default(), &event).await {
        Ok(stored) => {
            counters.created.fetch_add(1, Ordering::Relaxed);
            known.insert(
                key,
                Known {
                    event: stored,
                    observed: Instant::now(),
                },
            );
        }
        Err(error) => {
            counters.failed.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%error, "could not write an event");
        }
    }
}

/// PATCHes an event's series.
async fn write_series(client: &RestClient, event: &Event, counters: &Counters) {
    let namespace = event
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = event.metadata.name.clone().unwrap_or_default();
    let events = ResourceClient::<Event>::namespaced(client.clone(), &namespace);
    let patch = Patch::Strategic(json!({ "series": event.series }));
    match events.patch(&name, &PatchOptions::default(), &patch).await {
        Ok(_) => {
            counters.series_writes.fetch_add(1, Ordering::Relaxed);
        }
        Err(error) => {
            counters.failed.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%error, "could not update an event series");
        }
    }
}

/// Records events.k8s.io/v1 Events (client-go's `events.EventRecorder`).
/// Never blocks.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    broadcaster: SeriesBroadcaster,
    controller: String,
    instance: String,
}

impl SeriesRecorder {
    /// Records that `action` happened to `regarding` (and `related`) for
    /// `reason`, with a human-readable `note` (client-go's `Eventf`).
    pub fn event(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        event_type: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) {
        let now = Timestamp::now();
        let event = Event {
            metadata: ObjectMeta {
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_deref().unwrap_or_default(),
                    now.as_nanosecond()
                )),
                namespace: Some(
                    regarding
                        .namespace
                        .clone()
                        .filter(|namespace| !namespace.is_empty())
                        .unwrap_or_else(|| "default".to_string()),
                ),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            related: related.cloned(),
            type_: Some(event_type.as_str().to_string()),
            reason: Some(reason.to_string()),
            action: Some(action.to_string()),
            note: Some(note.to_string()),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        let inner = &self.broadcaster.inner;
        inner.counters.recorded.fetch_add(1, Ordering::Relaxed);
        if inner.sender.try_send(event).is_err() {
            inner.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}
