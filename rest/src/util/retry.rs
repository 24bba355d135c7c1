//! client-go's `util/retry`: run a write again when it fails with an error
//! worth retrying, a 409 Conflict above all, with a short backoff between
//! attempts.
//!
//! A controller's update loop reads an object, changes it and writes it
//! back; when someone else wrote in between, the server answers 409
//! Conflict and the whole read-change-write must run again on the fresh
//! object:
//!
//! ```no_run
//! use clientgo_rest::util::retry::{Backoff, retry_on_conflict};
//! use clientgo_rest::{ResourceClient, UpdateOptions};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! # async fn run(config_maps: ResourceClient<ConfigMap>) -> Result<(), clientgo_rest::Error> {
//! retry_on_conflict(Backoff::DEFAULT_RETRY, || async {
//!     let mut current = config_maps.get("settings").await?;
//!     current.data.get_or_insert_default().insert("mode".into(), "on".into());
//!     config_maps.replace("settings", &UpdateOptions::default(), &current).await
//! })
//! .await?;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::time::Duration;

use clientgo_apimachinery::random::Random;

use crate::client::error::Error;

/// How long to wait between attempts and how many to make (client-go's
/// `wait.Backoff` as `util/retry` uses it).
///
/// Attempt `n` (from 1) runs after `n - 1` waits; the first runs at once.
/// Each wait is the current step plus a random extra of up to `jitter`
/// times it; the step is then multiplied by `factor` (a factor of 0 keeps
/// it). With a `cap`, once the next step would pass it no attempt follows
/// (client-go still sleeps that last wait before giving up; this does
/// not). Steps too large for a `Duration` saturate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first step.
    pub duration: Duration,
    /// The growth of the step after each wait.
    pub factor: f64,
    /// The random extra of each wait, as a fraction of its step.
    pub jitter: f64,
    /// The most attempts. Zero is taken as one: there is always an attempt
    /// (client-go returns its timeout error without calling the function,
    /// which gives the caller an error that is not its own).
    pub steps: u32,
    /// The largest step, if any.
    pub cap: Option<Duration>,
}

impl Backoff {
    /// client-go's `retry.DefaultRetry`, for conflicts between writers:
    /// five attempts, about 10 ms apart.
    pub const DEFAULT_RETRY: Backoff = Backoff {
        duration: Duration::from_millis(10),
        factor: 1.0,
        jitter: 0.1,
        steps: 5,
        cap: None,
    };

    /// client-go's `retry.DefaultBackoff`, for errors that need the server
    /// to catch up: four attempts, waits of about 10, 50 and 250 ms.
    pub const DEFAULT_BACKOFF: Backoff = Backoff {
        duration: Duration::from_millis(10),
        factor: 5.0,
        jitter: 0.1,
        steps: 4,
        cap: None,
    };

    /// The waits between attempts, in order, computed as they are needed,
    /// for a `fraction` in `[0, 1)` per wait (the random part of the
    /// jitter): one fewer than the attempts. A pure function of its inputs.
    pub fn waits(self, fraction: impl FnMut() -> f64) -> impl Iterator<Item = Duration> {
        Waits {
            step: self.duration,
            attempts_left: self.steps.max(1),
            backoff: self,
            fraction,
        }
    }
}

/// The iterator of [`Backoff::waits`].
struct Waits<F> {
    backoff: Backoff,
    step: Duration,
    attempts_left: u32,
    fraction: F,
}

/// `duration` times `factor`, saturating, for any factor (a NaN or
/// negative one gives zero).
fn scaled(duration: Duration, factor: f64) -> Duration {
    Duration::try_from_secs_f64(duration.as_secs_f64() * factor).unwrap_or(
        if factor.is_finite() && factor < 0.0 || factor.is_nan() {
            Duration::ZERO
        } else {
            Duration::MAX
        },
    )
}

impl<F: FnMut() -> f64> Iterator for Waits<F> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.attempts_left <= 1 {
            return None;
        }
        self.attempts_left -= 1;
        let backoff = self.backoff;
        let wait = if backoff.jitter > 0.0 && backoff.jitter.is_finite() {
            let fraction = (self.fraction)();
            let fraction = if fraction.is_finite() {
                fraction.clamp(0.0, 1.0)
            } else {
                0.0
            };
            self.step
                .saturating_add(scaled(self.step, backoff.jitter * fraction))
        } else {
            self.step
        };
        if backoff.factor != 0.0 {
            self.step = scaled(self.step, backoff.factor);
        }
        if let Some(cap) = backoff.cap
            && self.step > cap
        {
            // client-go's rule: the step passing the cap ends the retries
            // (client-go sleeps this wait first, to no purpose).
            self.attempts_left = 1;
            return None;
        }
        Some(wait)
    }
}

/// Runs `attempt` until it succeeds, fails with an error `retriable`
/// refuses, or `backoff`'s attempts run out (client-go's `retry.OnError`).
///
/// Returns the success, the first error `retriable` refuses (at once), or
/// the last retriable error when no attempt is left. Waits on tokio's
/// clock between attempts; dropping the future stops the retries.
pub async fn on_error<T, E, F, Fut>(
    backoff: Backoff,
    mut retriable: impl FnMut(&E) -> bool,
    mut attempt: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut random = Random::new();
    let mut waits = backoff.waits(move || random.fraction());
    let mut number = 1_u32;
    loop {
        let error = match attempt().await {
            Ok(done) => return Ok(done),
            Err(error) => error,
        };
        if !retriable(&error) {
            return Err(error);
        }
        let Some(wait) = waits.next() else {
            return Err(error);
        };
        tracing::debug!(attempt = number, ?wait, "retriable error; trying again");
        tokio::time::sleep(wait).await;
        number += 1;
    }
}

/// [`on_error`] retrying 409 Conflicts ([`Error::is_conflict`]) only
/// (client-go's `retry.RetryOnConflict`): `attempt` must read the object
/// afresh each time, as the conflict says the copy it wrote was stale.
/// [`Backoff::DEFAULT_RETRY`] is client-go's usual choice.
pub async fn retry_on_conflict<T, F, Fut>(backoff: Backoff, attempt: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    on_error(backoff, Error::is_conflict, attempt).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use clientgo_apimachinery::StatusReason;

    fn ms(value: u64) -> Duration {
        Duration::from_millis(value)
    }

    #[test]
    fn the_waits_between_attempts() {
        // (backoff, random fraction, waits)
        let capped = Backoff {
            duration: ms(100),
            factor: 2.0,
            jitter: 0.0,
            steps: 10,
            cap: Some(ms(300)),
        };
        let flat = Backoff {
            factor: 0.0,
            jitter: 0.0,
            ..Backoff::DEFAULT_BACKOFF
        };
        let none = Backoff {
            steps: 0,
            ..Backoff::DEFAULT_RETRY
        };
        let huge = Backoff {
            duration: Duration::from_secs(1),
            factor: 1e300,
            jitter: f64::INFINITY,
            steps: 4,
            cap: None,
        };
        let table: [(Backoff, f64, Vec<Duration>); 7] = [
            (Backoff::DEFAULT_RETRY, 0.0, vec![ms(10); 4]),
            (
                Backoff::DEFAULT_RETRY,
                0.5,
                vec![Duration::from_micros(10_500); 4],
            ),
            (Backoff::DEFAULT_BACKOFF, 0.0, vec![ms(10), ms(50), ms(250)]),
            // client-go: attempts after 100 ms and no more (the step
            // passing 300 ms ends it).
            (capped, 0.0, vec![ms(100)]),
            (
                huge,
                0.5,
                vec![Duration::from_secs(1), Duration::MAX, Duration::MAX],
            ),
            (flat, 0.9, vec![ms(10), ms(10), ms(10)]),
            (none, 0.0, vec![]),
        ];
        for (backoff, fraction, expected) in table {
            let waits: Vec<Duration> = backoff.waits(|| fraction).collect();
            assert_eq!(waits, expected, "{backoff:?}");
        }
    }

    fn conflict() -> Error {
        Error::Api(Box::new(clientgo_apimachinery::Status::failure(
            409,
            StatusReason::Conflict,
            "stale",
        )))
    }

    #[test]
    fn a_huge_step_count_is_computed_lazily() {
        let many = Backoff {
            steps: u32::MAX,
            ..Backoff::DEFAULT_RETRY
        };
        assert_eq!(many.waits(|| 0.0).take(3).count(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn conflicts_are_retried_until_the_attempts_run_out() {
        let mut calls = 0;
        let result: Result<(), Error> = retry_on_conflict(Backoff::DEFAULT_RETRY, || {
            calls += 1;
            async { Err(conflict()) }
        })
        .await;
        assert!(result.unwrap_err().is_conflict(), "the last conflict");
        assert_eq!(calls, 5);
    }

    #[tokio::test(start_paused = true)]
    async fn another_error_ends_at_once_and_a_success_is_returned() {
        let mut calls = 0;
        let result: Result<(), Error> = retry_on_conflict(Backoff::DEFAULT_RETRY, || {
            calls += 1;
            async {
                Err(Error::Api(Box::new(
                    clientgo_apimachinery::Status::failure(404, StatusReason::NotFound, "gone"),
                )))
            }
        })
        .await;
        assert!(result.unwrap_err().is_not_found());
        assert_eq!(calls, 1);

        let mut calls = 0;
        let result = on_error(
            Backoff::DEFAULT_BACKOFF,
            |_: &&str| true,
            || {
                calls += 1;
                let outcome = if calls < 3 { Err("busy") } else { Ok(calls) };
                async move { outcome }
            },
        )
        .await;
        assert_eq!(result, Ok(3));
    }
}
