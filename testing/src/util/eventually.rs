//! Waiting in tests: [`eventually`] a condition holds, or it
//! [`never_within`] a window. Both poll every 10 ms on the calling task,
//! with Tokio's clock (a paused clock advances through them).

use std::time::Duration;

/// How long [`eventually`] waits before it fails the test: generous, so a
/// loaded CI machine is not mistaken for a bug.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// How often the conditions are asked.
const POLL: Duration = Duration::from_millis(10);

/// Waits until `done` answers `true`, asking every 10 ms; panics naming
/// `what` after [`PATIENCE`]. `done` may be an async closure or a closure
/// returning a future (`|| async { .. }`).
pub async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {PATIENCE:?} waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Checks every 10 ms for `window` that `happened` stays `false`; panics
/// naming `what` the first time it is `true`. Prefer waiting for an
/// observable count with [`eventually`] where one exists: this is for
/// what can only be shown by its absence.
pub async fn never_within(what: &str, window: Duration, mut happened: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + window;
    loop {
        assert!(!happened().await, "{what} happened within {window:?}");
        if tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(start_paused = true)]
    async fn eventually_returns_once_the_condition_holds() {
        let polls = AtomicUsize::new(0);
        eventually("three polls", async || {
            polls.fetch_add(1, Ordering::SeqCst) >= 2
        })
        .await;
        assert_eq!(polls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "timed out after 30s waiting for nothing")]
    async fn eventually_fails_after_its_patience() {
        eventually("nothing", async || false).await;
    }

    #[tokio::test(start_paused = true)]
    async fn never_within_watches_the_whole_window() {
        let polls = AtomicUsize::new(0);
        never_within("a miracle", Duration::from_millis(100), async || {
            polls.fetch_add(1, Ordering::SeqCst);
            false
        })
        .await;
        assert_eq!(polls.load(Ordering::SeqCst), 11);
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "the fifth poll happened within")]
    async fn never_within_fails_when_it_happens() {
        let polls = AtomicUsize::new(0);
        never_within("the fifth poll", Duration::from_secs(1), async || {
            polls.fetch_add(1, Ordering::SeqCst) == 4
        })
        .await;
    }
}
