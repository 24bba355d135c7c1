//! The last synced resourceVersion, readable at any time and awaitable for
//! read-your-writes.

use std::cmp::Ordering;

use tokio::sync::watch;

/// Why [`Reflector::wait_for_resource_version`](crate::Reflector::wait_for_resource_version)
/// gave up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The resourceVersion waited for is not a number. Resource versions
    /// are opaque in general, but every API server built on etcd issues
    /// them as increasing integers, and Kubernetes 1.34+ documents them as
    /// comparable that way.
    #[error("resourceVersion {0:?} is not comparable (not an unsigned integer)")]
    NotComparable(String),
    /// The reflector was dropped before reaching it.
    #[error("the reflector stopped before reaching resourceVersion {0:?}")]
    Stopped(String),
}

/// Compares two resourceVersions as unsigned integers; `None` if either is
/// not one.
pub fn compare_resource_versions(a: &str, b: &str) -> Option<Ordering> {
    let a: u64 = a.parse().ok()?;
    let b: u64 = b.parse().ok()?;
    Some(a.cmp(&b))
}

/// Holds the last synced resourceVersion; readers never wait on the
/// reflector (a watch channel: one write lock per update, reads are a
/// shared borrow).
#[derive(Debug)]
pub(crate) struct ResourceVersionTracker {
    sender: watch::Sender<String>,
}

impl ResourceVersionTracker {
    pub(crate) fn new() -> Self {
        ResourceVersionTracker {
            sender: watch::Sender::new(String::new()),
        }
    }

    pub(crate) fn get(&self) -> String {
        self.sender.borrow().clone()
    }

    pub(crate) fn set(&self, resource_version: &str) {
        self.sender.send_if_modified(|current| {
            if current == resource_version {
                false
            } else {
                resource_version.clone_into(current);
                true
            }
        });
    }

    pub(crate) async fn wait_for(&self, wanted: &str) -> Result<(), WaitError> {
        if wanted.parse::<u64>().is_err() {
            return Err(WaitError::NotComparable(wanted.to_string()));
        }
        let mut receiver = self.sender.subscribe();
        receiver
            .wait_for(|current| {
                compare_resource_versions(current, wanted)
                    .is_some_and(|ordering| ordering != Ordering::Less)
            })
            .await
            .map(|_| ())
            .map_err(|_| WaitError::Stopped(wanted.to_string()))
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
}
