//! The reconcile contract (controller-runtime's `pkg/reconcile`): what a
//! reconcile is asked about ([`Request`]), what it answers ([`Action`]),
//! what the error policy answers after a failure ([`Retry`]), and what the
//! controller's queue does with each: [`Action::Done`] resets the key's
//! backoff; [`Action::RequeueAfter`] resets it and adds the key after the
//! delay. After a failure, [`Retry::Backoff`] adds the key after its next
//! backoff, [`Retry::After`] after a fixed delay (keeping the backoff: the
//! key is failing), and [`Retry::Never`] resets the backoff and waits for
//! the object to change (a terminal error). A key whose object has left
//! the cache is forgotten, backoff and all, and a requeue still pending
//! for it is dropped.
//!
//! A reconcile has no rate-limited requeue of its own: controller-runtime
//! deprecated `Result.Requeue`, because a reconcile that wants to run
//! again either knows when (`RequeueAfter`) or failed (an error, whose
//! backoff is the error policy's).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The object a reconcile is about: its namespace (none for a
/// cluster-scoped kind) and name (controller-runtime's
/// `reconcile.Request`, a `NamespacedName`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl Request {
    /// The object `name` in `namespace`.
    pub fn namespaced(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Request {
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }

    /// The cluster-scoped object `name`.
    pub fn cluster_scoped(name: impl Into<String>) -> Self {
        Request {
            namespace: None,
            name: name.into(),
        }
    }

    /// The request of a cache key (`namespace/name`, or `name`).
    pub fn from_key(key: &str) -> Self {
        match key.split_once('/') {
            Some((namespace, name)) => Request::namespaced(namespace, name),
            None => Request::cluster_scoped(key),
        }
    }

    /// The cache key: `namespace/name`, or `name` when cluster-scoped (the
    /// queue's items and the informer's keys).
    pub fn key(&self) -> String {
        match &self.namespace {
            Some(namespace) => format!("{namespace}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What a successful reconcile asks for next. One difference from
/// controller-runtime's `Result`: `RequeueAfter(0)` runs the key again at
/// once (controller-runtime treats a zero delay as no requeue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing until the object changes again; the key's backoff is reset.
    Done,
    /// Run again after this long, whatever happens meanwhile (an earlier
    /// change still runs at once); the key's backoff is reset.
    RequeueAfter(Duration),
}

impl Action {
    /// [`Action::Done`].
    pub fn done() -> Self {
        Action::Done
    }

    /// [`Action::RequeueAfter`]`(delay)`.
    pub fn requeue_after(delay: Duration) -> Self {
        Action::RequeueAfter(delay)
    }
}

/// What the error policy asks for after a failed reconcile
/// ([`Builder::error_policy`](crate::Builder::error_policy); the default is
/// [`Retry::Backoff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Run again after the key's next backoff from the controller's rate
    /// limiter (the backoff grows with each failure until a success):
    /// controller-runtime's handling of a returned error.
    Backoff,
    /// Run again after this long; the key's backoff is kept.
    After(Duration),
    /// Do not run again until the object changes; the key's backoff is
    /// reset. controller-runtime's `TerminalError`, except that it keeps
    /// the failure count.
    Never,
}

/// What follows a failed reconcile of a `K` with context `C` and error
/// `E` ([`Builder::error_policy`](crate::Builder::error_policy)): any
/// `Fn(&Arc<K>, &E, &Arc<C>) -> Retry`, or [`BackoffOnError`].
pub trait ErrorPolicy<K, C, E>: Send + Sync + 'static {
    /// What follows the failure `error` of `object`'s reconcile.
    fn retry(&self, object: &Arc<K>, error: &E, context: &Arc<C>) -> Retry;
}

/// The error policy a builder starts with: every failure backs off through
/// the controller's rate limiter ([`Retry::Backoff`]), as
/// controller-runtime handles a returned error.
#[derive(Debug, Clone, Copy, Default)]
pub struct BackoffOnError;

impl<K, C, E> ErrorPolicy<K, C, E> for BackoffOnError {
    fn retry(&self, _: &Arc<K>, _: &E, _: &Arc<C>) -> Retry {
        Retry::Backoff
    }
}

impl<K, C, E, F> ErrorPolicy<K, C, E> for F
where
    F: Fn(&Arc<K>, &E, &Arc<C>) -> Retry + Send + Sync + 'static,
{
    fn retry(&self, object: &Arc<K>, error: &E, context: &Arc<C>) -> Retry {
        self(object, error, context)
    }
}

/// How one reconcile of a key ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The reconcile returned this action.
    Reconciled(Action),
    /// The reconcile failed, or the cached object did not decode; the
    /// error policy answered this.
    Failed(Retry),
    /// The object is no longer in the cache.
    Gone,
    /// Sharded: the object's shard is held by another replica.
    Elsewhere,
}

/// What the queue does with a key after its reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueueStep {
    /// Reset the key's backoff; nothing scheduled.
    Forget,
    /// Reset the key's backoff and drop its pending delayed add: the
    /// object is gone, so its requeues end with it.
    ForgetAndCancel,
    /// Reset the key's backoff, then add the key after the delay.
    ForgetThenAddAfter(Duration),
    /// Add the key after the delay, keeping its backoff.
    AddAfter(Duration),
    /// Add the key after its next backoff.
    AddRateLimited,
}

/// The queue's step after `outcome` (controller-runtime's
/// `reconcileHandler`), as the module documentation says.
pub(crate) fn queue_step(outcome: Outcome) -> QueueStep {
    match outcome {
        Outcome::Gone => QueueStep::ForgetAndCancel,
        Outcome::Elsewhere | Outcome::Reconciled(Action::Done) | Outcome::Failed(Retry::Never) => {
            QueueStep::Forget
        }
        Outcome::Reconciled(Action::RequeueAfter(delay)) => QueueStep::ForgetThenAddAfter(delay),
        Outcome::Failed(Retry::After(delay)) => QueueStep::AddAfter(delay),
        Outcome::Failed(Retry::Backoff) => QueueStep::AddRateLimited,
    }
}

/// The `result` label of `controller_runtime_reconcile_total` for
/// `outcome`: `success`, `error` or `requeue_after` (controller-runtime's
/// `requeue` is never counted: a reconcile has no rate-limited requeue);
/// `None` for a gone object or another replica's, which is not a
/// reconcile.
pub(crate) fn result_label(outcome: Outcome) -> Option<&'static str> {
    match outcome {
        Outcome::Gone | Outcome::Elsewhere => None,
        Outcome::Failed(_) => Some("error"),
        Outcome::Reconciled(Action::Done) => Some("success"),
        Outcome::Reconciled(Action::RequeueAfter(_)) => Some("requeue_after"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_has_one_queue_step_and_one_label() {
        let second = Duration::from_secs(1);
        let table = [
            (
                Outcome::Reconciled(Action::Done),
                QueueStep::Forget,
                Some("success"),
            ),
            (
                Outcome::Reconciled(Action::RequeueAfter(second)),
                QueueStep::ForgetThenAddAfter(second),
                Some("requeue_after"),
            ),
            (
                Outcome::Failed(Retry::Backoff),
                QueueStep::AddRateLimited,
                Some("error"),
            ),
            (
                Outcome::Failed(Retry::Never),
                QueueStep::Forget,
                Some("error"),
            ),
            (
                Outcome::Failed(Retry::After(second)),
                QueueStep::AddAfter(second),
                Some("error"),
            ),
            (Outcome::Gone, QueueStep::ForgetAndCancel, None),
            (Outcome::Elsewhere, QueueStep::Forget, None),
        ];
        for (outcome, step, label) in table {
            assert_eq!(queue_step(outcome), step, "{outcome:?}");
            assert_eq!(result_label(outcome), label, "{outcome:?}");
        }
    }

    #[test]
    fn requests_and_keys_round_trip() {
        for (request, key) in [
            (Request::namespaced("default", "web"), "default/web"),
            (Request::cluster_scoped("node-1"), "node-1"),
        ] {
            assert_eq!(request.key(), key);
            assert_eq!(request.to_string(), key);
            assert_eq!(Request::from_key(key), request);
        }
    }
}
