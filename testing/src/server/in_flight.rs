//! [`InFlight`]: kube-apiserver's max-in-flight filter, the cap on requests
//! served at once (long-running ones, watches, aside).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts requests being served against an optional limit.
#[derive(Debug)]
pub(crate) struct InFlight {
    limit: Option<usize>,
    serving: AtomicUsize,
}

/// A request's place under the limit, given back when dropped.
#[derive(Debug)]
pub(crate) struct InFlightSlot<'a> {
    serving: &'a AtomicUsize,
}

impl Drop for InFlightSlot<'_> {
    fn drop(&mut self) {
        self.serving.fetch_sub(1, Ordering::AcqRel);
    }
}

impl InFlight {
    /// A counter with this limit (`None`: no limit).
    pub(crate) fn new(limit: Option<usize>) -> Self {
        InFlight {
            limit,
            serving: AtomicUsize::new(0),
        }
    }

    /// Takes a slot, or `None` when the limit is reached (the request is
    /// then answered 429 without being served).
    pub(crate) fn enter(&self) -> Option<InFlightSlot<'_>> {
        let before = self.serving.fetch_add(1, Ordering::AcqRel);
        let slot = InFlightSlot {
            serving: &self.serving,
        };
        match self.limit {
            Some(limit) if before >= limit => None,
            _ => Some(slot),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_refuses_only_beyond_it_and_slots_come_back() {
        let in_flight = InFlight::new(Some(2));
        let first = in_flight.enter();
        let second = in_flight.enter();
        assert!(first.is_some() && second.is_some());
        assert!(in_flight.enter().is_none());
        drop(first);
        assert!(in_flight.enter().is_some());
        let unlimited = InFlight::new(None);
        let held: Vec<_> = (0..1000).map(|_| unlimited.enter()).collect();
        assert!(held.iter().all(Option::is_some));
    }
}
