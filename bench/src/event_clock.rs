//! [`EventClock`]: counts applied watch events and times the first and the
//! expected last.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Counts events from any thread and notes when the first and the
/// `expected`-th arrived. Recording is one atomic add, plus a lock on the
/// first and the last event only.
#[derive(Debug)]
pub struct EventClock {
    expected: u64,
    count: AtomicU64,
    first: Mutex<Option<Instant>>,
    last: Mutex<Option<Instant>>,
}

impl EventClock {
    /// A clock waiting for `expected` events.
    pub fn new(expected: u64) -> Self {
        EventClock {
            expected,
            count: AtomicU64::new(0),
            first: Mutex::new(None),
            last: Mutex::new(None),
        }
    }

    /// Records one event.
    pub fn record(&self) {
        let count = self.count.fetch_add(1, Ordering::AcqRel) + 1;
        if count == 1 {
            *self.first.lock() = Some(Instant::now());
        }
        if count == self.expected {
            *self.last.lock() = Some(Instant::now());
        }
    }

    /// Events recorded so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// Waits (polling every 2 ms) until the expected events arrived, and
    /// returns the time from the first to the last of them; `None` when
    /// `timeout` passes first.
    pub async fn wait(&self, timeout: Duration) -> Option<Duration> {
        let deadline = Instant::now() + timeout;
        loop {
            if let (Some(first), Some(last)) = (*self.first.lock(), *self.last.lock()) {
                return Some(last.saturating_duration_since(first));
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn times_from_the_first_to_the_expected_event() {
        let clock = EventClock::new(3);
        clock.record();
        assert_eq!(clock.wait(Duration::from_millis(10)).await, None);
        clock.record();
        clock.record();
        assert!(clock.wait(Duration::from_millis(10)).await.is_some());
        assert_eq!(clock.count(), 3);
    }
}
