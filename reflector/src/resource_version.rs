//! [`ResourceVersionTracker`]: a resourceVersion readable at any time and
//! awaitable for read-your-writes. The reflector tracks the last one it
//! synced with it; an informer tracks its cache's with another.

use std::cmp::Ordering;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Why a wait for a resourceVersion gave up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The resourceVersion waited for is not a number. Resource versions
    /// are opaque in general, but every API server built on etcd issues
    /// them as increasing integers, and Kubernetes 1.34+ documents them as
    /// comparable that way.
    #[error("resourceVersion {0:?} is not comparable (not an unsigned integer)")]
    NotComparable(String),
    /// The tracker's owner (a reflector, an informer) stopped before
    /// reaching it.
    #[error("stopped before reaching resourceVersion {0:?}")]
    Stopped(String),
}

/// Compares two resourceVersions as unsigned integers; `None` if either is
/// not one.
pub fn compare_resource_versions(a: &str, b: &str) -> Option<Ordering> {
    let a: u64 = a.parse().ok()?;
    let b: u64 = b.parse().ok()?;
    Some(a.cmp(&b))
}

/// Holds one resourceVersion, written by one owner and read by anyone:
/// readers never wait on the writer (a watch channel: one short write lock
/// per change, reads are a shared borrow), and [`wait_for`](Self::wait_for)
/// wakes when the value reaches the one asked for or the owner
/// [stops](Self::stop).
#[derive(Debug)]
pub struct ResourceVersionTracker {
    sender: watch::Sender<String>,
    stopped: CancellationToken,
}

impl Default for ResourceVersionTracker {
    fn default() -> Self {
        ResourceVersionTracker {
            sender: watch::Sender::new(String::new()),
            stopped: CancellationToken::new(),
        }
    }
}

impl ResourceVersionTracker {
    /// A tracker at "" (nothing synced yet).
    pub fn new() -> Self {
        Self::default()
    }

    /// The current resourceVersion ("" before the first).
    pub fn get(&self) -> String {
        self.sender.borrow().clone()
    }

    /// Moves to `resource_version`; waiters are woken only if it changed.
    pub fn set(&self, resource_version: &str) {
        self.sender.send_if_modified(|current| {
            if current == resource_version {
                false
            } else {
                resource_version.clone_into(current);
                true
            }
        });
    }

    /// Marks the owner stopped: waits not yet satisfied fail with
    /// [`WaitError::Stopped`].
    pub fn stop(&self) {
        self.stopped.cancel();
    }

    /// Whether [`stop`](Self::stop) was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped.is_cancelled()
    }

    /// Waits until the tracked resourceVersion is `wanted` or a later one
    /// (compared as integers). Fails at once for a non-integer, and when
    /// the owner stops first (a value reached just before stopping still
    /// counts). Wrap it in a timeout to bound the wait.
    pub async fn wait_for(&self, wanted: &str) -> Result<(), WaitError> {
        if wanted.parse::<u64>().is_err() {
            return Err(WaitError::NotComparable(wanted.to_string()));
        }
        let reached = |current: &str| {
            compare_resource_versions(current, wanted).is_some_and(|ordering| ordering.is_ge())
        };
        let mut receiver = self.sender.subscribe();
        let stopped = || WaitError::Stopped(wanted.to_string());
        tokio::select! {
            result = receiver.wait_for(|current| reached(current)) => result.map(|_| ()).map_err(|_| stopped()),
            () = self.stopped.cancelled() => if reached(&self.get()) { Ok(()) } else { Err(stopped()) },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn compares_numerically_not_as_text() {
        assert_eq!(compare_resource_versions("9", "10"), Some(Ordering::Less));
        assert_eq!(compare_resource_versions("10", "10"), Some(Ordering::Equal));
        assert_eq!(compare_resource_versions("x", "10"), None);
        assert_eq!(compare_resource_versions("", "10"), None);
    }

    #[tokio::test]
    async fn waiting_ends_when_the_version_is_reached_or_passed() {
        let tracker = Arc::new(ResourceVersionTracker::new());
        tracker.set("5");
        tracker.wait_for("5").await.unwrap();
        tracker.wait_for("4").await.unwrap();
        let waiter = tokio::spawn({
            let tracker = Arc::clone(&tracker);
            async move { tracker.wait_for("12").await }
        });
        tracker.set("11");
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        tracker.set("13");
        waiter.await.unwrap().unwrap();
        assert_eq!(
            tracker.wait_for("abc").await,
            Err(WaitError::NotComparable("abc".into()))
        );
    }

    #[tokio::test]
    async fn stopping_fails_waits_not_yet_reached_only() {
        let tracker = Arc::new(ResourceVersionTracker::new());
        tracker.set("7");
        let waiter = tokio::spawn({
            let tracker = Arc::clone(&tracker);
            async move { tracker.wait_for("8").await }
        });
        tokio::task::yield_now().await;
        tracker.stop();
        assert_eq!(waiter.await.unwrap(), Err(WaitError::Stopped("8".into())));
        assert_eq!(tracker.wait_for("7").await, Ok(()));
        assert!(tracker.is_stopped());
    }
}
