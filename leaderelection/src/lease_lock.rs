//! [`ResourceLock`] and [`LeaseLock`]: where the election's record lives.

use std::future::Future;

use clientgo_rest::{CreateOptions, ResourceClient, RestClient, UpdateOptions};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use parking_lot::Mutex;

use crate::error::LockError;
use crate::record::LeaderElectionRecord;

/// A place to keep a [`LeaderElectionRecord`] with optimistic concurrency
/// (client-go's `resourcelock.Interface`).
///
/// Contract: `update` writes only over the version last seen by `get` or
/// written by `create`/`update`, and fails with a conflict otherwise, so
/// two candidates can never both believe they took the lock.
pub trait ResourceLock: Send + Sync + 'static {
    /// The current record; `None` when the lock does not exist.
    fn get(&self) -> impl Future<Output = Result<Option<LeaderElectionRecord>, LockError>> + Send;
    /// Creates the lock holding `record` (a conflict if it exists).
    fn create(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<(), LockError>> + Send;
    /// Replaces the record seen last (a conflict if it changed since).
    fn update(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<(), LockError>> + Send;
    /// This candidate's identity.
    fn identity(&self) -> &str;
    /// The lock, for logs (`namespace/name`).
    fn describe(&self) -> String;
}

/// A lock over a coordination.k8s.io/v1 Lease (client-go's `LeaseLock`).
pub struct LeaseLock {
    client: ResourceClient<Lease>,
    namespace: String,
    name: String,
    identity: String,
    /// The Lease as last read or written: its resourceVersion is the
    /// precondition of the next update.
    observed: Mutex<Option<Lease>>,
}

impl std::fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseLock")
            .field("lease", &self.describe())
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LeaseLock {
    /// The Lease `namespace/name`, contended for as `identity`.
    pub fn new(
        client: RestClient,
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        let namespace = namespace.into();
        LeaseLock {
            client: ResourceClient::namespaced(client, &namespace),
            namespace,
            name: name.into(),
            identity: identity.into(),
            observed: Mutex::new(None),
        }
    }

    fn error(&self, source: clientgo_rest::Error) -> LockError {
        LockError::Api {
            lease: self.describe(),
            source,
        }
    }
}

impl ResourceLock for LeaseLock {
    async fn get(&self) -> Result<Option<LeaderElectionRecord>, LockError> {
        let lease = self
            .client
            .get_optional(&self.name)
            .await
            .map_err(|error| self.error(error))?;
        let record = lease.as_ref().map(|lease| {
            lease
                .spec
                .as_ref()
                .map(LeaderElectionRecord::from_lease_spec)
                .unwrap_or_default()
        });
        *self.observed.lock() = lease;
        Ok(record)
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(record.to_lease_spec()),
        };
        let created = self
            .client
            .create(&CreateOptions::default(), &lease)
            .await
            .map_err(|error| self.error(error))?;
        *self.observed.lock() = Some(created);
        Ok(())
    }

    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), LockError> {
        let Some(mut lease) = self.observed.lock().clone() else {
            return Err(LockError::NotObserved {
                lease: self.describe(),
            });
        };
        // The observed resourceVersion stays in the metadata: the server
        // refuses the update (409) if the Lease changed since.
        lease.spec = Some(record.to_lease_spec());
        let updated = self
            .client
            .replace(&self.name, &UpdateOptions::default(), &lease)
            .await
            .map_err(|error| self.error(error))?;
        *self.observed.lock() = Some(updated);
        Ok(())
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}
