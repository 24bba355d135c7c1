//! [`TokenBucket`]: client-side throttling, as client-go's
//! `flowcontrol.NewTokenBucketRateLimiter`.

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Waits longer than this are logged at debug level (client-go: V(3)).
const LOG_WAIT_OVER: Duration = Duration::from_millis(50);
/// Waits longer than this are logged at info level (client-go: V(2)).
const LOUD_WAIT_OVER: Duration = Duration::from_secs(1);

/// A token bucket: `burst` tokens, refilled at `qps` per second. Each
/// request takes one token, waiting for it when the bucket is empty.
///
/// Waiting reserves a token first and sleeps after releasing the lock, so
/// concurrent callers are served in the order they asked (as Go's
/// `rate.Limiter.Wait`). Time comes from tokio, so tests run it under
/// paused time.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// Tokens available at `updated`; negative when callers are waiting.
    tokens: f64,
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens refilled at `qps` per second.
    /// `None` when `qps` is zero, negative or not finite (no throttling).
    pub fn new(qps: f32, burst: u32) -> Option<Self> {
        if !qps.is_finite() || qps <= 0.0 {
            return None;
        }
        let burst = f64::from(burst.max(1));
        Some(TokenBucket {
            qps: f64::from(qps),
            burst,
            state: Mutex::new(BucketState {
                tokens: burst,
                updated: Instant::now(),
            }),
        })
    }

    /// Requests per second.
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// Takes a token without waiting; `false` when none is available.
    pub fn try_accept(&self) -> bool {
        let mut state = self.state.lock();
        self.refill(&mut state, Instant::now());
        if state.tokens >= 1.0 {
            state.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Takes a token, waiting until one is available; returns how long it
    /// waited. Waits over 50 ms are logged (over 1 s more loudly).
    pub async fn accept(&self) -> Duration {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
            if wait > LOUD_WAIT_OVER {
                tracing::info!(
                    waited_ms = wait.as_millis() as u64,
                    qps = self.qps,
                    "request waited in the client-side rate limiter (raise Config::qps/burst if this is not a runaway loop)"
                );
            } else if wait > LOG_WAIT_OVER {
                tracing::debug!(
                    waited_ms = wait.as_millis() as u64,
                    "request waited in the client-side rate limiter"
                );
            }
        }
        wait
    }

    /// Takes a token now (going into debt) and says how long until it is
    /// really available.
    fn reserve(&self) -> Duration {
        let mut state = self.state.lock();
        self.refill(&mut state, Instant::now());
        state.tokens -= 1.0;
        if state.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-state.tokens / self.qps)
        }
    }

    fn refill(&self, state: &mut BucketState, now: Instant) {
        let elapsed = now.saturating_duration_since(state.updated).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        state.updated = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_positive_qps_means_no_limiter() {
        assert!(TokenBucket::new(0.0, 10).is_none());
        assert!(TokenBucket::new(-1.0, 10).is_none());
        assert!(TokenBucket::new(f32::NAN, 10).is_none());
        assert!(TokenBucket::new(f32::INFINITY, 10).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn burst_then_steady_rate() {
        let bucket = TokenBucket::new(10.0, 5).unwrap();
        let start = Instant::now();
        for _ in 0..5 {
            assert_eq!(bucket.accept().await, Duration::ZERO);
        }
        // 20 more at 10 per second take 2 s.
        for _ in 0..20 {
            bucket.accept().await;
        }
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(1999) && elapsed <= Duration::from_millis(2001),
            "{elapsed:?}"
        );
        assert!(!bucket.try_accept());
        tokio::time::advance(Duration::from_millis(100)).await;
        assert!(bucket.try_accept());
    }

    #[tokio::test(start_paused = true)]
    async fn the_bucket_never_holds_more_than_burst() {
        let bucket = TokenBucket::new(100.0, 3).unwrap();
        tokio::time::advance(Duration::from_secs(60)).await;
        let accepted = (0..10).filter(|_| bucket.try_accept()).count();
        assert_eq!(accepted, 3);
    }
}
