//! [`RateLimitingQueue`]: a delaying queue whose retries are timed by a
//! [`RateLimiter`] (client-go's `RateLimitingQueue`).

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use crate::delaying_queue::DelayingQueue;
use crate::queue::QueueOptions;
use crate::rate_limiter::{RateLimiter, recommended_controller_rate_limiter};

/// A [`DelayingQueue`] with rate-limited retries: what a controller's
/// workers take keys from.
///
/// `add_rate_limited` adds an item after the limiter's delay for it;
/// `forget` tells the limiter the item succeeded (you must still call
/// `done`); `num_requeues` says how often it has been retried. Every method
/// of [`DelayingQueue`] and [`Queue`](crate::Queue) is available through
/// `Deref`. Clones share one queue.
pub struct RateLimitingQueue<T> {
    delaying: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            delaying: self.delaying.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("delaying", &self.delaying)
            .finish()
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.delaying
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Default for RateLimitingQueue<T> {
    /// An unnamed queue with [`recommended_controller_rate_limiter`].
    fn default() -> Self {
        RateLimitingQueue::new(
            Arc::new(recommended_controller_rate_limiter()),
            QueueOptions::default(),
        )
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// A queue whose retries are timed by `limiter`.
    pub fn new(limiter: Arc<dyn RateLimiter<T>>, options: QueueOptions<T>) -> Self {
        RateLimitingQueue {
            delaying: DelayingQueue::new(options),
            limiter,
        }
    }

    /// Adds `item` after the delay the limiter gives it now.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.delaying.add_after(item, delay);
    }

    /// Stops the limiter tracking `item` (it succeeded or was given up).
    /// Does not replace `done`.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times `item` was rate-limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}
