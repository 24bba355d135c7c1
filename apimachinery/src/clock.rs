//! An injectable clock, so code that depends on time (TTL caches, rate
//! limiters, resync schedules) can be tested without sleeping.
//!
//! Production code takes an `Arc<dyn Clock>` defaulting to [`RealClock`];
//! tests pass a [`FakeClock`] and move it forward by hand.

use std::fmt::Debug;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A source of the current time.
pub trait Clock: Send + Sync + Debug {
    /// The current instant.
    fn now(&self) -> Instant;

    /// How long ago `earlier` was (zero if `earlier` is in the future).
    fn since(&self, earlier: Instant) -> Duration {
        self.now().saturating_duration_since(earlier)
    }
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct FakeClock {
    now: Mutex<Instant>,
}

impl Default for FakeClock {
    fn default() -> Self {
        FakeClock::new()
    }
}

impl FakeClock {
    /// A fake clock starting at the real current instant.
    pub fn new() -> Self {
        FakeClock {
            now: Mutex::new(Instant::now()),
        }
    }

    /// Moves the clock forward.
    pub fn step(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now += by;
    }

    /// Sets the clock to an instant.
    pub fn set(&self, to: Instant) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_moves_only_when_stepped() {
        let clock = FakeClock::new();
        let start = clock.now();
        assert_eq!(clock.now(), start);
        clock.step(Duration::from_secs(5));
        assert_eq!(clock.since(start), Duration::from_secs(5));
        clock.set(start);
        assert_eq!(clock.now(), start);
        assert_eq!(clock.since(start + Duration::from_secs(1)), Duration::ZERO);
    }

    #[test]
    fn real_clock_moves_forward() {
        let clock = RealClock;
        let a = clock.now();
        assert!(clock.now() >= a);
    }
}
