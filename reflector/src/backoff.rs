//! [`Backoff`]: the reflector's wait between failed attempts, client-go's
//! `wait.Backoff{Duration: 800ms, Factor: 2, Jitter: 1, Cap: 30s}` with a
//! reset after two quiet minutes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::clock::Clock;
pub(crate) use clientgo_apimachinery::random::Random;

/// How the reflector backs off between failed attempts.
///
/// Each wait is `d + random × jitter × d` for the current step `d`, which
/// starts at `initial`, is multiplied by `factor` after each wait and
/// stops growing at `cap`. With client-go's defaults the waits are
/// [0.8, 1.6) s, [1.6, 3.2) s, ... and settle in [30, 60) s, about 0.02
/// requests per second per failing reflector. The step goes back to
/// `initial` when `reset_after` has passed since the previous wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffOptions {
    /// The first step (800 ms).
    pub initial: Duration,
    /// The growth per wait (2.0).
    pub factor: f64,
    /// The random extra, as a fraction of the step (1.0: up to twice the
    /// step).
    pub jitter: f64,
    /// The largest step (30 s).
    pub cap: Duration,
    /// Quiet time after which the step is reset (2 minutes).
    pub reset_after: Duration,
}

impl Default for BackoffOptions {
    fn default() -> Self {
        BackoffOptions {
            initial: Duration::from_millis(800),
            factor: 2.0,
            jitter: 1.0,
            cap: Duration::from_secs(30),
            reset_after: Duration::from_secs(120),
        }
    }
}

impl BackoffOptions {
    /// Sets the first step.
    #[must_use]
    pub fn initial(mut self, initial: Duration) -> Self {
        self.initial = initial;
        self
    }

    /// Sets the largest step.
    #[must_use]
    pub fn cap(mut self, cap: Duration) -> Self {
        self.cap = cap;
        self
    }

    /// Sets the growth factor.
    #[must_use]
    pub fn factor(mut self, factor: f64) -> Self {
        self.factor = factor;
        self
    }

    /// Sets the jitter fraction (0 for exact waits).
    #[must_use]
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets the quiet time after which the step is reset.
    #[must_use]
    pub fn reset_after(mut self, reset_after: Duration) -> Self {
        self.reset_after = reset_after;
        self
    }
}

/// The state of one reflector's backoff. Not shared: the reflector's run
/// loop owns it.
#[derive(Debug)]
pub(crate) struct Backoff {
    options: BackoffOptions,
    step: Duration,
    last_wait: Option<Instant>,
    clock: Arc<dyn Clock>,
    random: Random,
}

impl Backoff {
    pub(crate) fn new(options: BackoffOptions, clock: Arc<dyn Clock>) -> Self {
        Backoff {
            options,
            step: options.initial,
            last_wait: None,
            clock,
            random: Random::new(),
        }
    }

    /// The next wait, advancing the step.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = self.clock.now();
        if self
            .last_wait
            .is_some_and(|last| now.saturating_duration_since(last) > self.options.reset_after)
        {
            self.step = self.options.initial;
        }
        self.last_wait = Some(now);
        let step = self.step;
        let grown = step.mul_f64(self.options.factor.max(1.0));
        self.step = grown.min(self.options.cap);
        jittered(step, self.options.jitter, self.random.fraction())
    }
}

/// `step + fraction × jitter × step`, saturating.
fn jittered(step: Duration, jitter: f64, fraction: f64) -> Duration {
    if jitter <= 0.0 {
        return step;
    }
    let extra = step.as_secs_f64() * jitter * fraction;
    step.saturating_add(Duration::try_from_secs_f64(extra).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use clientgo_apimachinery::clock::FakeClock;

    use super::*;

    #[test]
    fn steps_double_from_800ms_to_the_30s_cap_within_their_jitter_range() {
        let clock = Arc::new(FakeClock::new());
        let mut backoff = Backoff::new(BackoffOptions::default(), clock.clone());
        let expected_steps = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0];
        for step in expected_steps {
            let delay = backoff.next_delay().as_secs_f64();
            assert!(
                delay >= step && delay < 2.0 * step + 1e-9,
                "{delay} not in [{step}, {})",
                2.0 * step
            );
            clock.step(Duration::from_secs(1));
        }
    }

    #[test]
    fn two_quiet_minutes_reset_the_step() {
        let clock = Arc::new(FakeClock::new());
        let options = BackoffOptions::default().jitter(0.0);
        let mut backoff = Backoff::new(options, clock.clone());
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
        assert_eq!(backoff.next_delay(), Duration::from_millis(1600));
        clock.step(Duration::from_secs(120));
        assert_eq!(
            backoff.next_delay(),
            Duration::from_millis(3200),
            "exactly 2 minutes is not more than 2 minutes"
        );
        clock.step(Duration::from_secs(121));
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
    }

    #[test]
    fn jitter_spreads_waits_over_the_whole_range() {
        let mut random = Random::new();
        let fractions: Vec<f64> = (0..10_000).map(|_| random.fraction()).collect();
        assert!(fractions.iter().all(|f| (0.0..1.0).contains(f)));
        let low = fractions.iter().filter(|f| **f < 0.1).count();
        let high = fractions.iter().filter(|f| **f >= 0.9).count();
        assert!(low > 800 && high > 800, "low {low}, high {high}");
        assert_eq!(
            jittered(Duration::from_secs(2), 1.0, 0.5),
            Duration::from_secs(3)
        );
        assert_eq!(
            jittered(Duration::from_secs(2), 0.0, 0.5),
            Duration::from_secs(2)
        );
    }
}
