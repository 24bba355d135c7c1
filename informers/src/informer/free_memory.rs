//! Giving the allocator's free pages back to the system after a sync.
//!
//! A sync is a burst: the frames of a list or watch-list, the decoder's
//! buffers and the batch of initial events are all allocated and freed
//! within a second, beside the entries the cache keeps (what handlers
//! still hold in their queues is freed after, and left to the next trim).
//! glibc's allocator keeps what was freed: a thread's arena (every tokio
//! worker has one) returns memory only from its top, so the freed pages
//! between kept entries stay resident. Measured at 10,000 pods that was
//! about 6 MiB above the heap in use, a quarter of the bytes the cache
//! keeps (BENCHMARKS.md, "Free pages back after a sync").
//!
//! So an informer asks glibc once, when its cache first syncs and after
//! each relist of [`HEAVY_WORK_OBJECTS`](crate::informer::heavy_work::HEAVY_WORK_OBJECTS)
//! objects or more, to hand back every whole free page of every arena
//! (`malloc_trim(0)`, which does so since glibc 2.8). Go's runtime does the
//! same for a client-go process with its scavenger. Elsewhere (musl, macOS,
//! Windows, or a process whose global allocator is not glibc's) this does
//! nothing that matters: their allocators return memory on their own terms,
//! and glibc's own heap is then nearly empty.
//!
//! Sharing and blocking: the walk locks each arena in turn, briefly, and
//! takes milliseconds per hundred MiB of heap, so it runs on tokio's
//! blocking pool, never on the informer's task; while one is pending a
//! second request is dropped (many informers syncing at once trim once).

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::runtime::Handle;

/// Set while a release is queued or running.
static PENDING: AtomicBool = AtomicBool::new(false);

/// Asks for the free pages back, off the caller's thread when a tokio
/// runtime is there (inline otherwise); returns at once. A request made
/// while one is pending is dropped.
pub(crate) fn release_after_burst() {
    if PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    // Clears the mark when the release is done, or dropped unrun (a
    // runtime shutting down refuses blocking work).
    let pending = Pending;
    let release = move || {
        let released = release_free_pages();
        drop(pending);
        tracing::debug!(released, "asked the allocator for its free pages back");
    };
    match Handle::try_current() {
        Ok(handle) => {
            handle.spawn_blocking(release);
        }
        Err(_) => release(),
    }
}

/// Clears [`PENDING`] when dropped.
struct Pending;

impl Drop for Pending {
    fn drop(&mut self) {
        PENDING.store(false, Ordering::Release);
    }
}

/// Hands every whole free page of glibc's arenas back to the system;
/// whether any was.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_pages() -> bool {
    // SAFETY: `malloc_trim` takes no pointer and touches only the
    // allocator's own state, under its own locks (MT-safe per glibc).
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Nothing to ask of other allocators; see the module's docs.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_pages() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;
    use clientgo_testing::process_memory::rss_mib;

    #[test]
    fn freed_pages_between_kept_blocks_go_back() {
        // 64 MiB in 64 KiB blocks (below glibc's mmap threshold, so from an
        // arena), then every other one freed: no freed block is at the
        // arena's top, so glibc keeps them all until asked.
        let mut blocks: Vec<Vec<u8>> = (0..1024).map(|_| vec![1u8; 64 * 1024]).collect();
        let kept: Vec<Vec<u8>> = blocks
            .iter_mut()
            .skip(1)
            .step_by(2)
            .map(std::mem::take)
            .collect();
        drop(blocks);
        let before = rss_mib();
        release_free_pages();
        let released = before - rss_mib();
        // Other tests of this binary may allocate meanwhile: half is
        // enough to tell (without the release, nothing goes back).
        assert!(released >= 16.0, "only {released:.1} MiB of 32 went back");
        assert_eq!(kept.len(), 512);
    }
}
