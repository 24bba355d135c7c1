//! [`block_in_place_if_heavy`]: where an informer runs synchronous work that
//! grows with the cache (a relist's processing, a late handler's replay).

use tokio::runtime::{Handle, RuntimeFlavor};

/// Work on at least this many objects is moved off the async workers.
pub(crate) const HEAVY_WORK_OBJECTS: usize = 1000;

/// Runs `work` where it does not stall other tasks: inside
/// `tokio::task::block_in_place` on a multi-threaded runtime (the worker
/// hands its other tasks to another thread first), inline elsewhere (a
/// current-thread runtime has no other worker to hand them to, and a plain
/// thread blocks nobody). `heavy` says whether the hand-over is worth its
/// cost; light work always runs inline.
pub(crate) fn block_in_place_if_heavy<T>(heavy: bool, work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if heavy && handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_inline_outside_a_runtime() {
        assert_eq!(block_in_place_if_heavy(true, || 7), 7);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn runs_inline_on_a_current_thread_runtime() {
        assert_eq!(block_in_place_if_heavy(true, || 7), 7);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn blocks_in_place_on_a_multi_threaded_runtime() {
        let other = tokio::spawn(async { 1 });
        let value = block_in_place_if_heavy(true, || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            2
        });
        assert_eq!(other.await.ok(), Some(1));
        assert_eq!(value, 2);
    }
}
