//! [`LeaderElectionConfig`]: the timings and options of an elector.

use std::time::Duration;

use crate::error::ConfigError;

/// How far the acquire loop's wait may be stretched (client-go's
/// `JitterFactor`): between `retry_period` and 2.2 × `retry_period`.
pub const JITTER_FACTOR: f64 = 1.2;

/// An elector's settings, client-go's defaults.
///
/// | setting | default | client-go |
/// |---|---|---|
/// | `lease_duration` | 15 s | the same (typical) |
/// | `renew_deadline` | 10 s | the same |
/// | `retry_period` | 2 s | the same |
/// | `release_on_cancel` | false | `ReleaseOnCancel` |
/// | `name` | "" | `Name` (for logs) |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// How long a lease holds after its last renewal, as non-leaders
    /// measure it (from when they saw the renewal).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up
    /// leadership.
    pub renew_deadline: Duration,
    /// How often to try to acquire or renew.
    pub retry_period: Duration,
    /// Write an empty holder when `run`'s token is cancelled, so a
    /// successor need not wait for the lease to expire. Only safe when the
    /// leader's work stops when the leading token is cancelled.
    pub release_on_cancel: bool,
    /// A name for logs.
    pub name: String,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        LeaderElectionConfig {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            name: String::new(),
        }
    }
}

impl LeaderElectionConfig {
    /// Sets the lease duration.
    #[must_use]
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// Sets the renew deadline.
    #[must_use]
    pub fn renew_deadline(mut self, deadline: Duration) -> Self {
        self.renew_deadline = deadline;
        self
    }

    /// Sets the retry period.
    #[must_use]
    pub fn retry_period(mut self, period: Duration) -> Self {
        self.retry_period = period;
        self
    }

    /// Releases the lease when `run` is cancelled.
    #[must_use]
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// Names the election in logs.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// client-go's checks: every duration positive, `lease_duration >
    /// renew_deadline > 1.2 × retry_period`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, value) in [
            ("lease_duration", self.lease_duration),
            ("renew_deadline", self.renew_deadline),
            ("retry_period", self.retry_period),
        ] {
            if value.is_zero() {
                return Err(ConfigError::Zero(name));
            }
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(ConfigError::LeaseNotLongerThanRenew {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(ConfigError::RenewNotLongerThanRetry {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(lease: u64, renew: u64, retry: u64) -> LeaderElectionConfig {
        LeaderElectionConfig::default()
            .lease_duration(Duration::from_millis(lease))
            .renew_deadline(Duration::from_millis(renew))
            .retry_period(Duration::from_millis(retry))
    }

    #[test]
    fn client_gos_validation_table() {
        let table: [(LeaderElectionConfig, Result<(), &str>); 7] = [
            (LeaderElectionConfig::default(), Ok(())),
            (config(15_000, 10_000, 2_000), Ok(())),
            (config(10_000, 10_000, 2_000), Err("lease")),
            (config(9_000, 10_000, 2_000), Err("lease")),
            (config(15_000, 2_400, 2_000), Err("renew")),
            (config(15_000, 2_401, 2_000), Ok(())),
            (config(15_000, 10_000, 0), Err("zero")),
        ];
        for (config, expected) in table {
            let got = config.validate().map_err(|error| match error {
                ConfigError::LeaseNotLongerThanRenew { .. } => "lease",
                ConfigError::RenewNotLongerThanRetry { .. } => "renew",
                ConfigError::Zero(_) => "zero",
                ConfigError::NoIdentity => "identity",
            });
            assert_eq!(got, expected, "{config:?}");
        }
    }
}
