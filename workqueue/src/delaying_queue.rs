//! [`DelayingQueue`]: a work queue that can add items after a delay
//! (client-go's `DelayingQueue`).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::queue::{Queue, QueueOptions};

/// The longest the timer sleeps without looking at the waiting items
/// (client-go's `maxWait` heartbeat).
const HEARTBEAT: Duration = Duration::from_secs(10);

/// A delay too large to represent is treated as this far in the future.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

struct Entry<T> {
    ready_at: Instant,
    /// Insertion order, so equal times pop first-come first-served.
    sequence: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.ready_at == other.ready_at && self.sequence == other.sequence
    }
}

impl<T> Eq for Entry<T> {}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Entry<T> {
    /// Reversed, so the standard max-heap pops the earliest entry.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .ready_at
            .cmp(&self.ready_at)
            .then_with(|| other.sequence.cmp(&self.sequence))
    }
}

struct WaitingItems<T> {
    /// A min-heap by ready time. An item whose ready time was moved earlier
    /// leaves a stale entry behind; it is skipped when popped because its
    /// time no longer matches `ready_at`.
    heap: BinaryHeap<Entry<T>>,
    /// Each waiting item's current ready time.
    ready_at: HashMap<T, Instant>,
    sequence: u64,
}

struct Waiting<T> {
    items: Mutex<WaitingItems<T>>,
    /// Wakes the timer task when an item is added or the queue shuts down.
    wake: Notify,
    timer_started: AtomicBool,
}

/// A [`Queue`] with [`add_after`](DelayingQueue::add_after): items that
/// become ready after a delay.
///
/// Waiting items are kept in a min-heap by ready time and moved into the
/// queue by one timer task, which sleeps until the earliest ready time (and
/// at most 10 seconds). Adding an item that is already waiting keeps the
/// earlier of the two ready times. Unlike client-go, whose delayed adds go
/// through a channel of 1,000 slots and block when it is full, `add_after`
/// never blocks.
///
/// The timer task starts with the first delayed add, on the current tokio
/// runtime, and ends when the queue shuts down or every handle is dropped.
/// Time is tokio's, so tests can pause and advance it. A delayed add outside
/// a tokio runtime cannot be timed: the item is added at once and an error
/// is logged.
///
/// Every method of [`Queue`] is available through `Deref`.
pub struct DelayingQueue<T> {
    queue: Queue<T>,
    waiting: Arc<Waiting<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
            waiting: Arc::clone(&self.waiting),
        }
    }
}

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.queue)
            .field("waiting", &self.waiting.items.lock().ready_at.len())
            .finish()
    }
}

impl<T> Deref for DelayingQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Default for DelayingQueue<T> {
    fn default() -> Self {
        DelayingQueue::new(QueueOptions::default())
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// A new delaying queue.
    pub fn new(options: QueueOptions<T>) -> Self {
        DelayingQueue {
            queue: Queue::new(options),
            waiting: Arc::new(Waiting {
                items: Mutex::new(WaitingItems {
                    heap: BinaryHeap::new(),
                    ready_at: HashMap::new(),
                    sequence: 0,
                }),
                wake: Notify::new(),
                timer_started: AtomicBool::new(false),
            }),
        }
    }

    /// Adds `item` once `delay` has passed; a zero delay adds it at once.
    /// Ignored while shutting down. Every call counts in the retries metric.
    pub fn add_after(&self, item: T, delay: Duration) {
        if self.queue.shutting_down() {
            return;
        }
        self.queue.record_retry();
        if delay.is_zero() {
            self.queue.add(item);
            return;
        }
        if !self.ensure_timer() {
            tracing::error!(
                queue = self.queue.name(),
                "add_after outside a tokio runtime: adding the item at once"
            );
            self.queue.add(item);
            return;
        }
        let now = Instant::now();
        let ready_at = now
            .checked_add(delay)
            .or_else(|| now.checked_add(FAR_FUTURE))
            .unwrap_or(now);
        let mut waiting = self.waiting.items.lock();
        if waiting
            .ready_at
            .get(&item)
            .is_some_and(|existing| *existing <= ready_at)
        {
            return;
        }
        waiting.ready_at.insert(item.clone(), ready_at);
        waiting.sequence += 1;
        let sequence = waiting.sequence;
        waiting.heap.push(Entry {
            ready_at,
            sequence,
            item,
        });
        drop(waiting);
        self.waiting.wake.notify_waiters();
    }

    /// Drops `item`'s pending delayed add, if it has one; true when it had.
    /// An item already in the queue stays there. Not in client-go, whose
    /// delayed adds cannot be taken back: a controller uses it to stop
    /// the requeues of an object that was deleted.
    pub fn cancel_delayed(&self, item: &T) -> bool {
        // The heap's entry stays behind, stale, and is skipped when its
        // time comes (as an entry whose time was moved is).
        self.waiting.items.lock().ready_at.remove(item).is_some()
    }

    /// How many items wait for their delay to pass.
    pub fn waiting_len(&self) -> usize {
        self.waiting.items.lock().ready_at.len()
    }

    /// Shuts the queue down (see [`Queue::shut_down`]) and stops the timer;
    /// items still waiting for their delay are dropped.
    pub fn shut_down(&self) {
        self.queue.shut_down();
        self.waiting.wake.notify_waiters();
    }

    /// Shuts the queue down, waiting for work in progress (see
    /// [`Queue::shut_down_with_drain`]), and stops the timer.
    pub async fn shut_down_with_drain(&self) {
        self.waiting.wake.notify_waiters();
        self.queue.shut_down_with_drain().await;
        self.waiting.wake.notify_waiters();
    }

    /// Starts the timer task if it is not running; false without a runtime.
    fn ensure_timer(&self) -> bool {
        if self.waiting.timer_started.load(AtomicOrdering::Acquire) {
            return true;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        if self
            .waiting
            .timer_started
            .compare_exchange(false, true, AtomicOrdering::AcqRel, AtomicOrdering::Acquire)
            .is_ok()
        {
            runtime.spawn(run_timer(self.queue.clone(), Arc::clone(&self.waiting)));
        }
        true
    }
}

/// Moves items into the queue as they become ready.
async fn run_timer<T: Eq + Hash + Clone + Send + Sync + 'static>(
    queue: Queue<T>,
    waiting: Arc<Waiting<T>>,
) {
    loop {
        // Register for wake-ups before looking, so an add that lands
        // between the look and the sleep is not missed.
        let mut woken = pin!(waiting.wake.notified());
        woken.as_mut().enable();
        // Only this task holds `waiting` once every handle is gone.
        if queue.shutting_down() || Arc::strong_count(&waiting) == 1 {
            return;
        }
        let now = Instant::now();
        let (ready, next) = {
            let mut items = waiting.items.lock();
            let mut ready = Vec::new();
            while items.heap.peek().is_some_and(|top| top.ready_at <= now) {
                let Some(entry) = items.heap.pop() else { break };
                if items.ready_at.get(&entry.item) == Some(&entry.ready_at) {
                    items.ready_at.remove(&entry.item);
                    ready.push(entry.item);
                }
            }
            (ready, items.heap.peek().map(|top| top.ready_at))
        };
        for item in ready {
            queue.add(item);
        }
        let heartbeat = now + HEARTBEAT;
        let deadline = next.map_or(heartbeat, |next| next.min(heartbeat));
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {}
            () = &mut woken => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Lets the timer task run after time moved.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_delayed_add_never_arrives() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("a", ms(50));
        queue.add_after("b", ms(50));
        assert!(queue.cancel_delayed(&"a"));
        assert!(!queue.cancel_delayed(&"a"));
        assert!(!queue.cancel_delayed(&"c"));
        assert_eq!(queue.waiting_len(), 1);
        tokio::time::advance(ms(60)).await;
        settle().await;
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("b"));
        // Added again after the cancel: it arrives at its new time.
        queue.add_after("a", ms(50));
        tokio::time::advance(ms(60)).await;
        settle().await;
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn items_appear_when_their_delay_passes() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("a", ms(50));
        settle().await;
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.waiting_len(), 1);
        tokio::time::advance(ms(49)).await;
        settle().await;
        assert_eq!(queue.len(), 0);
        tokio::time::advance(ms(1)).await;
        settle().await;
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.waiting_len(), 0);
        assert_eq!(queue.get().await, Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_adds_at_once() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("now", Duration::ZERO);
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.waiting_len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_earlier_ready_time_wins() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("a", ms(100));
        queue.add_after("a", ms(10));
        queue.add_after("a", ms(500));
        assert_eq!(queue.waiting_len(), 1);
        tokio::time::advance(ms(10)).await;
        settle().await;
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        // The stale entries at 100 ms and 500 ms add nothing later.
        tokio::time::advance(ms(600)).await;
        settle().await;
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn items_become_ready_in_time_order() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("late", ms(30));
        queue.add_after("early", ms(10));
        queue.add_after("middle", ms(20));
        tokio::time::advance(ms(30)).await;
        settle().await;
        let mut order = Vec::new();
        while let Some(item) = queue.get().await {
            order.push(item);
            queue.done(&item);
            if order.len() == 3 {
                break;
            }
        }
        assert_eq!(order, ["early", "middle", "late"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_delay_is_served_across_heartbeats() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("slow", Duration::from_secs(35));
        for _ in 0..3 {
            tokio::time::advance(Duration::from_secs(10)).await;
            settle().await;
            assert_eq!(queue.len(), 0);
        }
        tokio::time::advance(Duration::from_secs(5)).await;
        settle().await;
        assert_eq!(queue.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn huge_delays_do_not_overflow() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("never", Duration::MAX);
        tokio::time::advance(Duration::from_secs(3600)).await;
        settle().await;
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.waiting_len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_ignores_further_delayed_adds_and_stops_the_timer() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("pending", ms(10));
        queue.shut_down();
        queue.add_after("ignored", ms(10));
        assert_eq!(queue.waiting_len(), 1);
        tokio::time::advance(ms(20)).await;
        settle().await;
        assert_eq!(queue.len(), 0, "the queue accepts nothing after shutdown");
        assert_eq!(queue.get().await, None);
    }

    #[test]
    fn outside_a_runtime_a_delayed_add_happens_at_once() {
        let queue = DelayingQueue::<&str>::default();
        queue.add_after("x", ms(10));
        assert_eq!(queue.len(), 1);
    }
}
