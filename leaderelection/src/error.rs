//! The crate's errors.

use std::time::Duration;

/// A configuration client-go would refuse (`NewLeaderElector`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The lease duration is not longer than the renew deadline.
    #[error(
        "lease_duration ({lease_duration:?}) must be greater than renew_deadline ({renew_deadline:?})"
    )]
    LeaseNotLongerThanRenew {
        /// The lease duration.
        lease_duration: Duration,
        /// The renew deadline.
        renew_deadline: Duration,
    },
    /// The renew deadline does not leave room for a jittered retry.
    #[error(
        "renew_deadline ({renew_deadline:?}) must be greater than 1.2 x retry_period ({retry_period:?})"
    )]
    RenewNotLongerThanRetry {
        /// The renew deadline.
        renew_deadline: Duration,
        /// The retry period.
        retry_period: Duration,
    },
    /// A duration is zero.
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
    /// The lock has no identity.
    #[error("the lock's identity must not be empty")]
    NoIdentity,
}

/// A Lease could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The API answered with an error (409 Conflict included).
    #[error("lease {lease}: {source}")]
    Api {
        /// `namespace/name`.
        lease: String,
        /// The error.
        #[source]
        source: clientgo_rest::Error,
    },
    /// An update was asked before the Lease was read or created.
    #[error("lease {lease}: update before the lease was read")]
    NotObserved {
        /// `namespace/name`.
        lease: String,
    },
}

impl LockError {
    /// Whether the server answered 409 Conflict (a stale resourceVersion,
    /// or a create of a Lease that exists).
    pub fn is_conflict(&self) -> bool {
        match self {
            LockError::Api { source, .. } => source.is_conflict(),
            LockError::NotObserved { .. } => false,
        }
    }
}

/// The health check failed: this process holds the lease but has not
/// renewed it for longer than the lease duration plus the tolerance.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "failed to renew leadership on lease {lease}: last renewed {since:?} ago, tolerance exceeded"
)]
pub struct HealthError {
    /// `namespace/name`.
    pub lease: String,
    /// Time since the last renewal this process observed.
    pub since: Duration,
}
