//! [`FrequencySketch`]: about how often each key was seen lately, in a
//! fixed table of small counters. This is the count-min sketch behind
//! TinyLFU's admission rule (Einziger, Friedman and Manes, "TinyLFU: A
//! Highly Efficient Cache Admission Policy"; Caffeine's
//! `FrequencySketch`).
//!
//! A bounded cache that takes in every newcomer and evicts its least
//! recently used entry never hits when its readers cycle over more keys
//! than it holds. Each miss then evicts an entry that is about to be read
//! again. With a sketch, a full cache can instead take a newcomer only
//! when the sketch has seen its key more often than the entry it would
//! evict. Under a cycle, the cache keeps what it has and hits on that part.

/// Counters per key: a key's estimate is the least of its four counters,
/// so a collision inflates it only when all four collide.
const PROBES: usize = 4;

/// A counter's ceiling: recent frequency matters up to this many reads.
const MAX_COUNT: u8 = 15;

/// Seeds that make four table positions out of one hash.
const SEEDS: [u64; PROBES] = [
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0x85eb_ca77_c2b2_ae63,
];

/// Approximate recent frequencies of keys, given as 64-bit hashes.
///
/// Each key increments four of the table's counters, which stop at 15.
/// Every ten increments per slot, every counter is halved, so old
/// popularity fades and the sketch follows what is read now.
///
/// Memory: one byte per counter, four counters per slot asked for
/// (rounded up to a power of two). Not synchronised: its owner wraps it in
/// the lock it needs.
#[derive(Debug, Clone)]
pub struct FrequencySketch {
    counters: Box<[u8]>,
    /// The table's length minus one (a power of two minus one).
    mask: usize,
    /// Increments since the last halving.
    additions: usize,
    /// Increments between halvings.
    sample: usize,
    /// The number of keys this table was sized for.
    slots: usize,
}

impl FrequencySketch {
    /// The most keys a sketch is sized for (its table is then 1 GiB);
    /// asking for more gets this many.
    pub const MAX_SLOTS: usize = 1 << 28;

    /// A sketch sized for about `slots` keys held at once (at least 64, at
    /// most [`MAX_SLOTS`](Self::MAX_SLOTS)).
    pub fn new(slots: usize) -> Self {
        let slots = slots.clamp(64, Self::MAX_SLOTS);
        let length = slots.saturating_mul(PROBES).next_power_of_two();
        FrequencySketch {
            counters: vec![0; length].into_boxed_slice(),
            mask: length - 1,
            additions: 0,
            sample: slots.saturating_mul(10),
            slots,
        }
    }

    /// The number of keys this sketch was sized for.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Counts one more sighting of the key hashed to `hash`.
    pub fn increment(&mut self, hash: u64) {
        for seed in SEEDS {
            let position = self.position(hash, seed);
            let counter = &mut self.counters[position];
            *counter = (*counter + 1).min(MAX_COUNT);
        }
        self.additions += 1;
        if self.additions >= self.sample {
            self.halve();
        }
    }

    /// About how often the key hashed to `hash` was seen lately, from 0 to
    /// 15. It may be too high (collisions) but is never too low.
    pub fn estimate(&self, hash: u64) -> u8 {
        SEEDS
            .iter()
            .map(|seed| self.counters[self.position(hash, *seed)])
            .min()
            .unwrap_or(0)
    }

    fn position(&self, hash: u64, seed: u64) -> usize {
        let mixed = (hash ^ seed).wrapping_mul(0x2545_f491_4f6c_dd1d);
        // The high bits are the well mixed ones.
        (mixed >> 32) as usize & self.mask
    }

    fn halve(&mut self) {
        for counter in self.counters.iter_mut() {
            *counter /= 2;
        }
        self.additions = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_counts_up_to_the_ceiling() {
        let mut sketch = FrequencySketch::new(1_000);
        for _ in 0..3 {
            sketch.increment(42);
        }
        sketch.increment(7);
        assert_eq!(sketch.estimate(42), 3);
        assert_eq!(sketch.estimate(7), 1);
        assert_eq!(sketch.estimate(99), 0);
        for _ in 0..40 {
            sketch.increment(42);
        }
        assert_eq!(sketch.estimate(42), MAX_COUNT);
    }

    #[test]
    fn counts_fade_by_half_after_ten_increments_per_slot() {
        // Sized for 64 keys: halved at the 640th increment.
        let mut sketch = FrequencySketch::new(64);
        for _ in 0..639 {
            sketch.increment(1);
        }
        assert_eq!(sketch.estimate(1), MAX_COUNT);
        sketch.increment(1);
        assert_eq!(sketch.estimate(1), MAX_COUNT / 2);
        // Then again after as many more.
        for _ in 0..639 {
            sketch.increment(2);
        }
        assert_eq!((sketch.estimate(1), sketch.estimate(2)), (7, MAX_COUNT));
        sketch.increment(2);
        assert_eq!((sketch.estimate(1), sketch.estimate(2)), (3, 7));
        assert_eq!(
            FrequencySketch::new(usize::MAX).slots(),
            FrequencySketch::MAX_SLOTS
        );
    }

    #[test]
    fn many_keys_keep_their_estimates_near_their_counts() {
        let mut sketch = FrequencySketch::new(4_096);
        let hash = |key: u64| key.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (key << 7);
        for key in 0..4_096_u64 {
            for _ in 0..(key % 4) {
                sketch.increment(hash(key));
            }
        }
        let exact = (0..4_096_u64)
            .filter(|key| u64::from(sketch.estimate(hash(*key))) == key % 4)
            .count();
        assert!(exact > 4_096 * 9 / 10, "{exact} of 4096 exact");
        assert!((0..4_096_u64).all(|key| u64::from(sketch.estimate(hash(key))) >= key % 4));
    }
}
