//! [`LeaderElectionRecord`]: what a lock stores (client-go's
//! `resourcelock.LeaderElectionRecord`).

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

/// Who holds a lock, since when and for how long.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// The holder; empty when released.
    pub holder_identity: String,
    /// How long the holder may go without renewing.
    pub lease_duration_seconds: i32,
    /// When the holder acquired it.
    pub acquire_time: Option<Timestamp>,
    /// When the holder last renewed it.
    pub renew_time: Option<Timestamp>,
    /// How many times the holder has changed.
    pub leader_transitions: i32,
}

impl LeaderElectionRecord {
    /// The record a Lease's spec holds (missing fields empty or zero).
    pub fn from_lease_spec(spec: &LeaseSpec) -> Self {
        LeaderElectionRecord {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.as_ref().map(|time| time.0),
            renew_time: spec.renew_time.as_ref().map(|time| time.0),
            leader_transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    /// A Lease spec holding this record.
    pub fn to_lease_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder_identity.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.leader_transitions),
            ..LeaseSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_a_lease_spec() {
        let record = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(Timestamp::UNIX_EPOCH),
            renew_time: Some(Timestamp::now()),
            leader_transitions: 3,
        };
        assert_eq!(
            LeaderElectionRecord::from_lease_spec(&record.to_lease_spec()),
            record
        );
        assert_eq!(
            LeaderElectionRecord::from_lease_spec(&LeaseSpec::default()),
            LeaderElectionRecord::default()
        );
    }
}
