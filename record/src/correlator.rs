//! [`EventCorrelator`]: client-go's event correlator. It decides, before
//! anything is written, whether an event is aggregated with similar ones,
//! counted on top of an identical one, or dropped by the spam filter.
//!
//! A pure state machine over explicit time: `correlate(event, now)`, then
//! `written(event)` once the sink has stored it. The order is client-go's:
//! aggregate, then deduplicate, then filter.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

/// The correlator's limits, client-go's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelatorOptions {
    /// Entries kept per cache (aggregation, deduplication, spam buckets).
    pub cache_size: usize,
    /// Distinct messages within `aggregate_interval` after which similar
    /// events are combined.
    pub aggregate_max_events: usize,
    /// The window of aggregation.
    pub aggregate_interval: Duration,
    /// The spam filter's burst per source and object.
    pub spam_burst: u32,
    /// How long the spam filter takes to grant one more event.
    pub spam_refill_every: Duration,
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        CorrelatorOptions {
            cache_size: 4096,
            aggregate_max_events: 10,
            aggregate_interval: Duration::from_secs(600),
            spam_burst: 25,
            spam_refill_every: Duration::from_secs(300),
        }
    }
}

/// What to do with an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Correlated {
    /// Create it.
    Create {
        /// The event.
        event: Event,
        /// Its deduplication key, for [`EventCorrelator::written`].
        key: String,
    },
    /// An identical event was written before: apply `patch` (a strategic
    /// merge patch of count, lastTimestamp and message) to the event
    /// named in `event`.
    Patch {
        /// The event with its count incremented and the existing name.
        event: Event,
        /// The patch.
        patch: serde_json::Value,
        /// Its deduplication key, for [`EventCorrelator::written`].
        key: String,
    },
    /// Dropped by the spam filter.
    Skip,
}

/// What the deduplication cache remembers of an event written.
#[derive(Debug, Clone)]
struct Observation {
    count: i32,
    first_timestamp: Option<Time>,
    name: String,
    resource_version: Option<String>,
}

#[derive(Debug, Clone)]
struct Aggregate {
    messages: BTreeSet<String>,
    last: Instant,
}

#[derive(Debug, Clone)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// A map that forgets its least recently used entry beyond a size.
#[derive(Debug)]
struct Bounded<V> {
    entries: HashMap<String, (V, u64)>,
    tick: u64,
    size: usize,
}

impl<V> Bounded<V> {
    fn new(size: usize) -> Self {
        Bounded {
            entries: HashMap::new(),
            tick: 0,
            size: size.max(1),
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(value, used)| {
            *used = tick;
            value
        })
    }

    /// The entry under `key`, made by `make` when there is none.
    fn get_or_insert(&mut self, key: String, make: impl FnOnce() -> V) -> &mut V {
        if !self.entries.contains_key(&key) {
            self.make_room();
        }
        self.tick += 1;
        let tick = self.tick;
        let (value, used) = self.entries.entry(key).or_insert_with(|| (make(), tick));
        *used = tick;
        value
    }

    fn insert(&mut self, key: String, value: V) {
        if !self.entries.contains_key(&key) {
            self.make_room();
        }
        self.tick += 1;
        self.entries.insert(key, (value, self.tick));
    }

    /// Forgets the least recently used entry when full.
    fn make_room(&mut self) {
        if self.entries.len() >= self.size
            && let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone())
        {
            self.entries.remove(&oldest);
        }
    }
}

/// client-go's `EventCorrelator`; see the module documentation.
#[derive(Debug)]
pub struct EventCorrelator {
    options: CorrelatorOptions,
    aggregates: Bounded<Aggregate>,
    observed: Bounded<Observation>,
    buckets: Bounded<Bucket>,
}

fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// The source and involved object, the start of every key.
fn object_key(event: &Event) -> Vec<&str> {
    let source = event.source.as_ref();
    let object = &event.involved_object;
    vec![
        source.map_or("", |s| text(&s.component)),
        source.map_or("", |s| text(&s.host)),
        text(&object.kind),
        text(&object.namespace),
        text(&object.name),
        text(&object.field_path),
        text(&object.uid),
        text(&object.api_version),
    ]
}

/// Everything that makes two events the same (client-go's `getEventKey`).
fn event_key(event: &Event) -> String {
    let mut parts = object_key(event);
    parts.extend([
        text(&event.type_),
        text(&event.reason),
        text(&event.message),
    ]);
    parts.join("\u{0}")
}

/// What makes two events similar: everything but the message.
fn aggregate_key(event: &Event) -> String {
    let mut parts = object_key(event);
    parts.extend([
        text(&event.type_),
        text(&event.reason),
        text(&event.reporting_component),
        text(&event.reporting_instance),
    ]);
    parts.join("\u{0}")
}

impl EventCorrelator {
    /// A correlator with `options`.
    pub fn new(options: CorrelatorOptions) -> Self {
        EventCorrelator {
            aggregates: Bounded::new(options.cache_size),
            observed: Bounded::new(options.cache_size),
            buckets: Bounded::new(options.cache_size),
            options,
        }
    }

    /// Decides what to do with `event`, observed at `now` (`at` is the
    /// same moment as a timestamp, for the event's fields).
    pub fn correlate(&mut self, event: Event, now: Instant, at: Timestamp) -> Correlated {
        let (event, key) = self.aggregate(event, now, at);
        let (event, patch) = self.observe(event, &key);
        if !self.allow(&event, now) {
            return Correlated::Skip;
        }
        match patch {
            Some(patch) => Correlated::Patch { event, patch, key },
            None => Correlated::Create { event, key },
        }
    }

    /// Notes what the server stored (its name, resourceVersion and count),
    /// so the next identical event patches it (client-go's `UpdateState`).
    pub fn written(&mut self, key: &str, stored: &Event) {
        self.observed.insert(
            key.to_string(),
            Observation {
                count: stored.count.unwrap_or(1),
                first_timestamp: stored.first_timestamp.clone(),
                name: text(&stored.metadata.name).to_string(),
                resource_version: stored.metadata.resource_version.clone(),
            },
        );
    }

    /// Combines similar events: below the limit the event passes under its
    /// own key; from the limit on, it becomes a combined event under the
    /// similar events' key.
    fn aggregate(&mut self, event: Event, now: Instant, at: Timestamp) -> (Event, String) {
        let similar = aggregate_key(&event);
        let message = text(&event.message).to_string();
        let interval = self.options.aggregate_interval;
        let count = match self.aggregates.get_mut(&similar) {
            Some(record) if now.saturating_duration_since(record.last) <= interval => {
                record.messages.insert(message);
                record.last = now;
                let count = record.messages.len();
                if count >= self.options.aggregate_max_events {
                    // Keep the set bounded, as client-go does.
                    if let Some(any) = record.messages.iter().next().cloned() {
                        record.messages.remove(&any);
                    }
                }
                count
            }
            _ => {
                self.aggregates.insert(
                    similar.clone(),
                    Aggregate {
                        messages: BTreeSet::from([message]),
                        last: now,
                    },
                );
                1
            }
        };
        if count < self.options.aggregate_max_events {
            let key = event_key(&event);
            return (event, key);
        }
        let time = Time(at);
        let combined = Event {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(format!(
                    "{}.{:x}",
                    text(&event.involved_object.name),
                    at.as_nanosecond()
                )),
                namespace: event.metadata.namespace.clone(),
                ..Default::default()
            },
            count: Some(1),
            first_timestamp: Some(time.clone()),
            last_timestamp: Some(time),
            message: Some(format!(
                "(combined from similar events): {}",
                text(&event.message)
            )),
            ..event
        };
        (combined, similar)
    }

    /// Counts an identical event on top of the one written before.
    fn observe(&mut self, mut event: Event, key: &str) -> (Event, Option<serde_json::Value>) {
        let Some(last) = self.observed.get_mut(key) else {
            self.observed.insert(
                key.to_string(),
                Observation {
                    count: event.count.unwrap_or(1),
                    first_timestamp: event.first_timestamp.clone(),
                    name: text(&event.metadata.name).to_string(),
                    resource_version: None,
                },
            );
            return (event, None);
        };
        last.count += 1;
        event.count = Some(last.count);
        event.first_timestamp = last.first_timestamp.clone();
        event.metadata.name = Some(last.name.clone());
        event.metadata.resource_version = last.resource_version.clone();
        let patch = json!({
            "count": last.count,
            "lastTimestamp": event.last_timestamp,
            "message": event.message,
        });
        (event, Some(patch))
    }

    /// The spam filter: a token bucket per source and object.
    fn allow(&mut self, event: &Event, now: Instant) -> bool {
        let key = object_key(event).join("\u{0}");
        let burst = f64::from(self.options.spam_burst);
        let refill = self
            .options
            .spam_refill_every
            .as_secs_f64()
            .max(f64::MIN_POSITIVE);
        let bucket = self.buckets.get_or_insert(key, || Bucket {
            tokens: burst,
            last: now,
        });
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed / refill).min(burst);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{EventSource, ObjectReference};

    fn event(object: &str, reason: &str, message: &str) -> Event {
        Event {
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                namespace: Some("default".into()),
                name: Some(object.into()),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some("Normal".into()),
            source: Some(EventSource {
                component: Some("test".into()),
                host: None,
            }),
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(format!("{object}.1")),
                namespace: Some("default".into()),
                ..Default::default()
            },
            count: Some(1),
            ..Default::default()
        }
    }

    fn kind(correlated: &Correlated) -> String {
        match correlated {
            Correlated::Create { event, .. } => format!("create {}", text(&event.message)),
            Correlated::Patch { event, .. } => {
                format!(
                    "patch {} count {}",
                    text(&event.message),
                    event.count.unwrap_or(0)
                )
            }
            Correlated::Skip => "skip".to_string(),
        }
    }

    #[test]
    fn identical_events_are_counted_on_the_first() {
        let mut correlator = EventCorrelator::new(CorrelatorOptions::default());
        let now = Instant::now();
        let first = correlator.correlate(event("a", "Pulled", "pulled"), now, Timestamp::now());
        assert_eq!(kind(&first), "create pulled");
        let second = correlator.correlate(event("a", "Pulled", "pulled"), now, Timestamp::now());
        assert_eq!(kind(&second), "patch pulled count 2");
        let third = correlator.correlate(event("a", "Pulled", "pulled"), now, Timestamp::now());
        assert_eq!(kind(&third), "patch pulled count 3");
        // Another object is another event.
        let other = correlator.correlate(event("b", "Pulled", "pulled"), now, Timestamp::now());
        assert_eq!(kind(&other), "create pulled");
    }

    #[test]
    fn ten_similar_events_within_ten_minutes_are_combined() {
        let mut correlator = EventCorrelator::new(CorrelatorOptions::default());
        let now = Instant::now();
        let mut seen = Vec::new();
        for i in 0..12 {
            let correlated = correlator.correlate(
                event("a", "Failed", &format!("attempt {i}")),
                now,
                Timestamp::now(),
            );
            seen.push(kind(&correlated));
        }
        // Nine distinct messages pass as themselves; the tenth and later
        // are one combined event, counted up.
        for (i, seen) in seen.iter().enumerate().take(9) {
            assert_eq!(seen, &format!("create attempt {i}"));
        }
        assert_eq!(seen[9], "create (combined from similar events): attempt 9");
        assert_eq!(
            seen[10],
            "patch (combined from similar events): attempt 10 count 2"
        );
        assert_eq!(
            seen[11],
            "patch (combined from similar events): attempt 11 count 3"
        );
        // After the window, the count starts again.
        let later = now + Duration::from_secs(601);
        let fresh =
            correlator.correlate(event("a", "Failed", "attempt 99"), later, Timestamp::now());
        assert_eq!(kind(&fresh), "create attempt 99");
    }

    #[test]
    fn the_spam_filter_allows_a_burst_of_25_then_one_per_five_minutes() {
        let mut correlator = EventCorrelator::new(CorrelatorOptions::default());
        let now = Instant::now();
        // Distinct reasons, so neither aggregation nor deduplication
        // applies: only the bucket of the source and object.
        let passed = (0..30)
            .filter(|i| {
                correlator.correlate(event("a", &format!("R{i}"), "m"), now, Timestamp::now())
                    != Correlated::Skip
            })
            .count();
        assert_eq!(passed, 25);
        let soon = now + Duration::from_secs(299);
        assert_eq!(
            correlator.correlate(event("a", "X", "m"), soon, Timestamp::now()),
            Correlated::Skip
        );
        let later = now + Duration::from_secs(300);
        assert_ne!(
            correlator.correlate(event("a", "Y", "m"), later, Timestamp::now()),
            Correlated::Skip
        );
        // Another object has its own bucket.
        assert_ne!(
            correlator.correlate(event("b", "Z", "m"), now, Timestamp::now()),
            Correlated::Skip
        );
    }

    #[test]
    fn the_caches_stay_bounded() {
        let mut correlator = EventCorrelator::new(CorrelatorOptions {
            cache_size: 8,
            ..CorrelatorOptions::default()
        });
        let now = Instant::now();
        for i in 0..100 {
            correlator.correlate(event(&format!("o{i}"), "R", "m"), now, Timestamp::now());
        }
        assert!(correlator.observed.entries.len() <= 8);
        assert!(correlator.aggregates.entries.len() <= 8);
        assert!(correlator.buckets.entries.len() <= 8);
    }
}
