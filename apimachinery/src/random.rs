//! [`Random`]: the small pseudo-random source every crate's jitter uses
//! (backoff, watch timeouts, leader-election retries, event retries,
//! identities).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// xorshift64*, seeded from the standard library's per-process random
/// hasher keys and a counter, so two sources never start alike: no
/// cryptographic quality, no dependency. Not thread-safe by itself: keep
/// one per task, or behind a lock.
#[derive(Debug)]
pub struct Random {
    state: u64,
}

impl Default for Random {
    fn default() -> Self {
        Random::new()
    }
}

impl Random {
    /// A source seeded afresh.
    pub fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        Random {
            state: hasher.finish() | 1,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in [0, 1).
    pub fn fraction(&mut self) -> f64 {
        // The top 53 bits, as a fraction.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_stay_in_range_and_sources_differ() {
        let mut a = Random::new();
        let mut b = Random::new();
        assert_ne!(a.next_u64(), b.next_u64());
        for _ in 0..10_000 {
            let fraction = a.fraction();
            assert!((0.0..1.0).contains(&fraction));
        }
    }
}
