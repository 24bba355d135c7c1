//! client-go's `tools/watch`, in one place: [`RetryWatcher`] (a watch
//! that resumes from the last resourceVersion it saw), [`until`] and
//! [`until_without_retry`] (wait on a watch for a condition), and
//! [`until_with_sync`] (the same over an informer's cache, which survives
//! a 410 by relisting).

mod retry_watcher;
mod until;
mod until_with_sync;

pub use retry_watcher::{MIN_RESTART_DELAY, RetryWatcher};
pub use until::{UntilError, until, until_without_retry};
pub use until_with_sync::until_with_sync;
