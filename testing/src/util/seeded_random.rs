//! [`SeededRandom`]: the small deterministic generator behind the churn
//! writer and fault schedules, so that one seed names one run.

/// xorshift64: small, fast, and the same sequence for the same seed on
/// every machine. Not for anything but tests.
#[derive(Debug, Clone)]
pub struct SeededRandom(u64);

impl SeededRandom {
    /// Starts the sequence named by `seed` (0, which xorshift cannot use,
    /// counts as 1).
    pub fn new(seed: u64) -> Self {
        SeededRandom(seed.max(1))
    }

    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next number below `bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64().checked_rem(bound).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_names_one_sequence() {
        let mut first = SeededRandom::new(7);
        let mut second = SeededRandom::new(7);
        let a: Vec<u64> = (0..5).map(|_| first.next_u64()).collect();
        let b: Vec<u64> = (0..5).map(|_| second.next_u64()).collect();
        assert_eq!(a, b);
        assert_ne!(a[0], SeededRandom::new(8).next_u64());
        assert!((0..100).all(|_| first.below(10) < 10));
        assert_eq!(first.below(0), 0);
        assert_ne!(SeededRandom::new(0).next_u64(), 0);
    }
}
