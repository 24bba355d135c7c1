//! Rate limiters: how long an item waits before it is retried (client-go's
//! `default_rate_limiters.go`).
//!
//! | limiter | delay for an item |
//! |---|---|
//! | [`ItemExponentialFailureRateLimiter`] | base × 2^failures, capped |
//! | [`ItemFastSlowRateLimiter`] | `fast` for the first attempts, then `slow` |
//! | [`BucketRateLimiter`] | a token bucket shared by all items |
//! | [`MaxOfRateLimiter`] | the longest of several |
//! | [`WithMaxWaitRateLimiter`] | another limiter's delay, capped |
//!
//! [`default_controller_rate_limiter`] is client-go's default;
//! [`recommended_controller_rate_limiter`] keeps its behaviour for normal
//! loads but bounds the wait a large burst of failures causes.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Decides how long an item waits before it is added again.
pub trait RateLimiter<T>: Send + Sync {
    /// The delay for `item` now. Limiters that count failures count this
    /// call as one.
    fn when(&self, item: &T) -> Duration;

    /// Stops tracking `item` (it succeeded). Limiters without per-item state
    /// do nothing.
    fn forget(&self, item: &T);

    /// How many times `item` has been limited since it was last forgotten.
    fn num_requeues(&self, item: &T) -> usize;
}

/// Per-item exponential backoff: `base × 2^n` where `n` is the number of
/// earlier failures of the item, capped at `max`. Overflow-safe: a delay too
/// large for the arithmetic is `max`.
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("tracked", &self.failures.lock().len())
            .finish()
    }
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// Delays from `base`, doubling per failure, up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialFailureRateLimiter {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exponent = {
            let mut failures = self.failures.lock();
            let count = failures.entry(item.clone()).or_insert(0);
            let exponent = *count;
            *count = count.saturating_add(1);
            exponent
        };
        let nanoseconds =
            self.base.as_nanos() as f64 * 2f64.powi(exponent.min(i32::MAX as u32) as i32);
        // Capped the way client-go does (above the largest i64); infinity
        // and NaN go to the cap too.
        if nanoseconds.is_nan() || nanoseconds > i64::MAX as f64 {
            return self.max;
        }
        Duration::from_nanos(nanoseconds as u64).min(self.max)
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).copied().unwrap_or(0) as usize
    }
}

/// `fast` for an item's first `max_fast_attempts` failures, `slow` after.
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish()
    }
}

impl<T> ItemFastSlowRateLimiter<T> {
    /// `fast` for the first `max_fast_attempts` failures of an item.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlowRateLimiter {
            fast,
            slow,
            max_fast_attempts,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut failures = self.failures.lock();
        let count = failures.entry(item.clone()).or_insert(0);
        *count = count.saturating_add(1);
        if *count <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).copied().unwrap_or(0) as usize
    }
}

struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// A token bucket shared by all items: it starts full with `burst` tokens
/// and refills at `qps` per second; every call to `when` reserves one token
/// and returns how long until it is available (golang.org/x/time/rate's
/// `Reserve().Delay()`). `num_requeues` is always 0 and `forget` does
/// nothing.
///
/// With [`with_max_wait`](BucketRateLimiter::with_max_wait), a reservation
/// never waits longer than the cap *and never borrows more than the cap's
/// worth of tokens*: after a large burst the bucket is back to normal within
/// the cap, instead of making every later item wait until the whole burst
/// has been paid for.
pub struct BucketRateLimiter {
    qps: f64,
    burst: f64,
    max_wait: Option<Duration>,
    bucket: Mutex<Bucket>,
}

impl fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketRateLimiter")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("max_wait", &self.max_wait)
            .finish()
    }
}

impl BucketRateLimiter {
    /// A bucket of `burst` tokens refilled at `qps` per second. A `qps` of
    /// infinity never delays; a `qps` of 0 or less never refills (a call
    /// finding the bucket empty waits "forever", `Duration::MAX`).
    pub fn new(qps: f64, burst: u32) -> Self {
        BucketRateLimiter {
            qps,
            burst: f64::from(burst),
            max_wait: None,
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst),
                updated: Instant::now(),
            }),
        }
    }

    /// The same bucket, but no reservation waits longer than `max_wait`
    /// nor borrows more than `max_wait × qps` tokens.
    pub fn with_max_wait(qps: f64, burst: u32, max_wait: Duration) -> Self {
        BucketRateLimiter {
            max_wait: Some(max_wait),
            ..BucketRateLimiter::new(qps, burst)
        }
    }

    /// Reserves one token and returns how long until it is available.
    fn reserve(&self) -> Duration {
        if self.qps.is_infinite() && self.qps > 0.0 {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let mut bucket = self.bucket.lock();
        if self.qps > 0.0 {
            let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * self.qps).min(self.burst);
        }
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Duration::ZERO;
        }
        if self.qps <= 0.0 {
            return Duration::MAX;
        }
        let tokens = bucket.tokens - 1.0;
        let wait_seconds = -tokens / self.qps;
        if let Some(max_wait) = self.max_wait
            && wait_seconds > max_wait.as_secs_f64()
        {
            bucket.tokens = -max_wait.as_secs_f64() * self.qps;
            return max_wait;
        }
        bucket.tokens = tokens;
        // Whole nanoseconds, rounded: 0.3 s is not exact in binary.
        let nanoseconds = (wait_seconds * 1e9).round();
        if nanoseconds >= u64::MAX as f64 {
            Duration::MAX
        } else {
            Duration::from_nanos(nanoseconds as u64)
        }
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

/// The longest delay of several limiters. Every limiter is asked on every
/// call (so a bucket reserves its token even when another limiter's delay
/// is longer); `num_requeues` is the largest count; `forget` goes to all.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// The longest delay of `limiters`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|limiter| limiter.when(item))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Another limiter's delay, capped at `max_delay`.
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_delay: Duration,
}

impl<T> fmt::Debug for WithMaxWaitRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithMaxWaitRateLimiter")
            .field("max_delay", &self.max_delay)
            .finish()
    }
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// Caps `limiter`'s delays at `max_delay`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { limiter, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

/// client-go's `DefaultTypedItemBasedRateLimiter`: exponential from 1 ms to
/// 1000 s per item.
pub fn default_item_based_rate_limiter<T: Eq + Hash + Clone + Send + Sync + 'static>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1000))
}

/// client-go's `DefaultTypedControllerRateLimiter`: the longer of a
/// per-item exponential backoff (5 ms doubling to 1000 s) and an overall
/// token bucket (10 per second, burst 100).
///
/// The bucket has no cap: when many items fail at once, the n-th waits
/// about (n − 100) / 10 seconds. 10,000 failures at once make the last wait
/// 990 s (16.5 minutes), and every failure in the following 16.5 minutes
/// waits behind them, however healthy it would be to retry it
/// (kubernetes/kubernetes#104554).
pub fn default_controller_rate_limiter<T: Eq + Hash + Clone + Send + Sync + 'static>()
-> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

/// The wait cap of [`recommended_controller_rate_limiter`]'s bucket.
pub const RECOMMENDED_BUCKET_MAX_WAIT: Duration = Duration::from_secs(30);

/// The limiter this crate recommends for controllers: the same per-item
/// exponential backoff and 10 per second / burst 100 bucket as
/// [`default_controller_rate_limiter`], but the bucket's wait (and its debt)
/// is capped at 30 seconds.
///
/// Under normal load the two behave the same: the bucket limits retries to
/// 10 per second after a burst of 100. When 10,000 items fail at once, the
/// default makes the last wait 990 s and keeps every later failure waiting
/// up to 16.5 minutes; this one delays none of them more than 30 s, and
/// 30 s after the burst the bucket is back to its usual behaviour. Items
/// that keep failing still back off exponentially to 1000 s through the
/// per-item limiter, which is not capped.
pub fn recommended_controller_rate_limiter<T: Eq + Hash + Clone + Send + Sync + 'static>()
-> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::with_max_wait(
            10.0,
            100,
            RECOMMENDED_BUCKET_MAX_WAIT,
        )),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn exponential_doubles_from_base_and_caps() {
        let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1));
        let delays: Vec<Duration> = (0..12).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays[0], ms(1));
        assert_eq!(delays[1], ms(2));
        assert_eq!(delays[2], ms(4));
        assert_eq!(delays[9], ms(512));
        assert_eq!(delays[10], Duration::from_secs(1), "1024 ms capped at 1 s");
        assert_eq!(delays[11], Duration::from_secs(1));
        assert_eq!(limiter.num_requeues(&"a"), 12);
        assert_eq!(limiter.when(&"b"), ms(1), "items are independent");
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), ms(1));
    }

    #[test]
    fn exponential_is_overflow_safe() {
        let max = Duration::from_secs(1000);
        let limiter = ItemExponentialFailureRateLimiter::new(ms(5), max);
        for _ in 0..2000 {
            let delay = limiter.when(&"x");
            assert!(delay <= max);
        }
        assert_eq!(limiter.when(&"x"), max);
        // A huge base and a huge cap still saturate instead of wrapping.
        let limiter = ItemExponentialFailureRateLimiter::new(Duration::MAX, Duration::MAX);
        for _ in 0..100 {
            assert_eq!(limiter.when(&"y"), Duration::MAX);
        }
        let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::MAX);
        let delays: Vec<Duration> = (0..70).map(|_| limiter.when(&"z")).collect();
        assert!(
            delays.windows(2).all(|w| w[0] <= w[1]),
            "never wraps around"
        );
        assert_eq!(*delays.last().unwrap(), Duration::MAX);
    }

    #[test]
    fn fast_slow_switches_after_the_fast_attempts() {
        let limiter = ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(10), 3);
        let delays: Vec<Duration> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(
            delays,
            [
                ms(5),
                ms(5),
                ms(5),
                Duration::from_secs(10),
                Duration::from_secs(10)
            ]
        );
        assert_eq!(limiter.num_requeues(&"a"), 5);
        limiter.forget(&"a");
        assert_eq!(limiter.when(&"a"), ms(5));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_the_burst_then_spaces_by_qps() {
        let limiter = BucketRateLimiter::new(10.0, 3);
        let delays: Vec<Duration> = (0..6)
            .map(|_| RateLimiter::<&str>::when(&limiter, &"x"))
            .collect();
        assert_eq!(&delays[..3], [Duration::ZERO; 3]);
        assert_eq!(delays[3], ms(100));
        assert_eq!(delays[4], ms(200));
        assert_eq!(delays[5], ms(300));
        assert_eq!(RateLimiter::<&str>::num_requeues(&limiter, &"x"), 0);
        // After enough time the bucket is full again, and no fuller.
        tokio::time::advance(Duration::from_secs(10)).await;
        let delays: Vec<Duration> = (0..4)
            .map(|_| RateLimiter::<&str>::when(&limiter, &"x"))
            .collect();
        assert_eq!(
            delays,
            [Duration::ZERO, Duration::ZERO, Duration::ZERO, ms(100)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_edge_rates() {
        let unlimited = BucketRateLimiter::new(f64::INFINITY, 0);
        assert_eq!(RateLimiter::<u8>::when(&unlimited, &0), Duration::ZERO);
        let frozen = BucketRateLimiter::new(0.0, 1);
        assert_eq!(RateLimiter::<u8>::when(&frozen, &0), Duration::ZERO);
        assert_eq!(RateLimiter::<u8>::when(&frozen, &0), Duration::MAX);
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(RateLimiter::<u8>::when(&frozen, &0), Duration::MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn capped_bucket_never_waits_or_borrows_past_the_cap() {
        let capped = BucketRateLimiter::with_max_wait(10.0, 100, Duration::from_secs(30));
        let uncapped = BucketRateLimiter::new(10.0, 100);
        let mut capped_max = Duration::ZERO;
        let mut uncapped_last = Duration::ZERO;
        for _ in 0..10_000 {
            capped_max = capped_max.max(RateLimiter::<u8>::when(&capped, &0));
            uncapped_last = RateLimiter::<u8>::when(&uncapped, &0);
        }
        assert_eq!(capped_max, Duration::from_secs(30));
        // The n-th of 10,000 waits (n - 100) / 10 s without a cap.
        assert_eq!(uncapped_last.as_secs(), 990);
        // 30 s later the capped bucket is back to normal (empty, refilling);
        // the uncapped one still makes a new item wait about 16 minutes.
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(RateLimiter::<u8>::when(&capped, &0), ms(100));
        assert!(RateLimiter::<u8>::when(&uncapped, &0) > Duration::from_secs(960));
    }

    #[tokio::test(start_paused = true)]
    async fn max_of_asks_every_limiter_and_takes_the_longest() {
        let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
            Box::new(ItemExponentialFailureRateLimiter::new(
                ms(1),
                Duration::from_secs(100),
            )),
            Box::new(BucketRateLimiter::new(1.0, 1)),
        ]);
        assert_eq!(limiter.when(&"a"), ms(1), "exponential 1 ms, bucket 0");
        assert_eq!(
            limiter.when(&"a"),
            Duration::from_secs(1),
            "bucket empty: 1 s"
        );
        // The bucket reserved a token even though only its answer counted.
        assert_eq!(limiter.when(&"b"), Duration::from_secs(2));
        assert_eq!(limiter.num_requeues(&"a"), 2);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        let empty: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![]);
        assert_eq!(empty.when(&"a"), Duration::ZERO);
    }

    #[test]
    fn with_max_wait_caps_the_inner_limiter() {
        let limiter = WithMaxWaitRateLimiter::new(
            Box::new(ItemExponentialFailureRateLimiter::new(
                ms(100),
                Duration::from_secs(100),
            )),
            ms(250),
        );
        let delays: Vec<Duration> = (0..4).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, [ms(100), ms(200), ms(250), ms(250)]);
        assert_eq!(limiter.num_requeues(&"a"), 4);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn default_limiters_match_client_go() {
        let item_based = default_item_based_rate_limiter::<&str>();
        assert_eq!(item_based.when(&"a"), ms(1));
        let controller = default_controller_rate_limiter::<String>();
        assert_eq!(controller.when(&"a".to_string()), ms(5));
        assert_eq!(controller.when(&"a".to_string()), ms(10));
        // 100 distinct first failures pass the bucket; the 101st waits 100 ms
        // (the 102 reservations so far include the two above).
        for i in 0..98 {
            assert_eq!(controller.when(&format!("k{i}")), ms(5));
        }
        assert_eq!(controller.when(&"late".to_string()), ms(100));
        let recommended = recommended_controller_rate_limiter::<String>();
        assert_eq!(recommended.when(&"a".to_string()), ms(5));
    }
}
