//! [`Queue`]: a fair, stingy work queue (client-go's `workqueue.Typed`).

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::metrics::{MetricsProvider, QueueMetrics, default_metrics_provider};

/// How often the unfinished-work gauges are refreshed.
const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// The order in which waiting items are handed out: client-go's pluggable
/// `Queue` interface (`Touch`, `Push`, `Pop`, `Len`), for priority queues.
///
/// The work queue guarantees that an item is pushed at most once until it
/// is popped, and calls `touch` when an item that is already waiting is
/// added again (a priority queue may move it; the default does nothing).
pub trait QueueOrder<T>: Send {
    /// An item already waiting was added again.
    fn touch(&mut self, item: &T) {
        let _ = item;
    }
    /// Adds a waiting item.
    fn push(&mut self, item: T);
    /// Removes the next item to hand out.
    fn pop(&mut self) -> Option<T>;
    /// How many items are waiting.
    fn len(&self) -> usize;
    /// Whether no item is waiting.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// First in, first out: the default order.
#[derive(Debug)]
pub struct FifoOrder<T>(VecDeque<T>);

impl<T> Default for FifoOrder<T> {
    fn default() -> Self {
        FifoOrder(VecDeque::new())
    }
}

impl<T: Send> QueueOrder<T> for FifoOrder<T> {
    fn push(&mut self, item: T) {
        self.0.push_back(item);
    }

    fn pop(&mut self) -> Option<T> {
        self.0.pop_front()
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// How a [`Queue`] is built.
pub struct QueueOptions<T> {
    pub(crate) name: String,
    pub(crate) metrics_provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) order: Option<Box<dyn QueueOrder<T>>>,
}

impl<T> Default for QueueOptions<T> {
    /// Unnamed (so without metrics), first in first out.
    fn default() -> Self {
        QueueOptions {
            name: String::new(),
            metrics_provider: None,
            order: None,
        }
    }
}

impl<T> QueueOptions<T> {
    /// Names the queue; only named queues have metrics.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The metrics provider (otherwise the process default, if one was
    /// installed).
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// Another order for waiting items.
    pub fn order(mut self, order: Box<dyn QueueOrder<T>>) -> Self {
        self.order = Some(order);
        self
    }
}

struct State<T> {
    order: Box<dyn QueueOrder<T>>,
    /// Items that need processing: waiting in `order`, or added again while
    /// being processed. Every item in `order` is dirty and not processing.
    dirty: HashSet<T>,
    /// Items handed to a worker and not yet `done`.
    processing: HashSet<T>,
    shutting_down: bool,
    drain: bool,
    metrics: Option<QueueMetrics<T>>,
}

pub(crate) struct Shared<T> {
    name: String,
    state: Mutex<State<T>>,
    /// Wakes workers waiting in `get`.
    ready: Notify,
    /// Wakes `shut_down_with_drain` when processing empties.
    idle: Notify,
}

/// A work queue with client-go's guarantees:
///
/// - **Fair:** items are handed out in the order they were added.
/// - **Stingy:** an item added several times before a worker takes it is
///   processed once, and an item is never handed to two workers at once.
/// - An item added *while* it is being processed is processed again after
///   [`done`](Queue::done).
///
/// `Queue` is a handle: clones share one queue, so producers and workers
/// each hold their own. Items are cheap keys (`namespace/name` strings, in
/// controllers), cloned into the queue's sets.
///
/// **Locking.** One mutex guards the queue; no method holds it across an
/// `.await`. [`get`](Queue::get) waits on a notification.
pub struct Queue<T> {
    pub(crate) shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("name", &self.shared.name)
            .field("waiting", &state.order.len())
            .field("processing", &state.processing.len())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Default for Queue<T> {
    fn default() -> Self {
        Queue::new(QueueOptions::default())
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Queue<T> {
    /// A new queue. A named queue with a metrics provider refreshes its
    /// unfinished-work gauges every 500 ms on a task of the current tokio
    /// runtime (without a runtime those two gauges are not refreshed).
    pub fn new(options: QueueOptions<T>) -> Self {
        let provider = options.metrics_provider.or_else(default_metrics_provider);
        let metrics = match (&provider, options.name.is_empty()) {
            (Some(provider), false) => Some(QueueMetrics::new(&options.name, provider.as_ref())),
            _ => None,
        };
        let has_metrics = metrics.is_some();
        let shared = Arc::new(Shared {
            name: options.name,
            state: Mutex::new(State {
                order: options
                    .order
                    .unwrap_or_else(|| Box::new(FifoOrder::default())),
                dirty: HashSet::new(),
                processing: HashSet::new(),
                shutting_down: false,
                drain: false,
                metrics,
            }),
            ready: Notify::new(),
            idle: Notify::new(),
        });
        if has_metrics {
            spawn_unfinished_work_updater(Arc::downgrade(&shared));
        }
        Queue { shared }
    }

    /// The queue's name (empty when unnamed).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Marks `item` as needing processing. Ignored once the queue is
    /// shutting down. An item already waiting is not added twice; an item
    /// being processed is queued again when its worker calls `done`.
    pub fn add(&self, item: T) {
        let mut state = self.shared.state.lock();
        if state.shutting_down {
            return;
        }
        if state.dirty.contains(&item) {
            if !state.processing.contains(&item) {
                state.order.touch(&item);
            }
            return;
        }
        if let Some(metrics) = &mut state.metrics {
            metrics.add(&item);
        }
        state.dirty.insert(item.clone());
        if state.processing.contains(&item) {
            return;
        }
        state.order.push(item);
        drop(state);
        // One item, one worker: waking every idle worker would make them
        // all race for it. A permit stored while none waits costs one extra
        // look, never a lost wake-up (workers register before looking).
        self.shared.ready.notify_one();
    }

    /// Waits for an item and marks it as being processed; the caller must
    /// call [`done`](Self::done) with it. Returns `None` only when the queue
    /// is shutting down *and* no item is waiting: items queued before the
    /// shutdown are still handed out.
    pub async fn get(&self) -> Option<T> {
        loop {
            let mut ready = pin!(self.shared.ready.notified());
            ready.as_mut().enable();
            {
                let mut state = self.shared.state.lock();
                if let Some(item) = state.order.pop() {
                    if let Some(metrics) = &mut state.metrics {
                        metrics.get(&item);
                    }
                    state.dirty.remove(&item);
                    state.processing.insert(item.clone());
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
            }
            ready.await;
        }
    }

    /// Marks `item` as processed. If it was added again meanwhile, it is
    /// queued again (even while shutting down, so a drain finishes the
    /// work).
    pub fn done(&self, item: &T) {
        let mut state = self.shared.state.lock();
        if let Some(metrics) = &mut state.metrics {
            metrics.done(item);
        }
        state.processing.remove(item);
        if state.dirty.contains(item) {
            state.order.push(item.clone());
            drop(state);
            self.shared.ready.notify_one();
        } else if state.processing.is_empty() {
            drop(state);
            self.shared.idle.notify_waiters();
        }
    }

    /// How many items are waiting (not counting those being processed).
    /// For information only: it can change at once.
    pub fn len(&self) -> usize {
        self.shared.state.lock().order.len()
    }

    /// Whether no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items. Workers still get the items already waiting,
    /// then `None`. Does not wait for work in progress (and ends a
    /// `shut_down_with_drain` that is waiting).
    pub fn shut_down(&self) {
        let mut state = self.shared.state.lock();
        state.drain = false;
        state.shutting_down = true;
        drop(state);
        self.shared.ready.notify_waiters();
        self.shared.idle.notify_waiters();
    }

    /// Stops accepting items and waits until every item being processed is
    /// `done` (workers must keep calling `done`). A later
    /// [`shut_down`](Self::shut_down) ends the wait early.
    pub async fn shut_down_with_drain(&self) {
        {
            let mut state = self.shared.state.lock();
            state.drain = true;
            state.shutting_down = true;
        }
        self.shared.ready.notify_waiters();
        loop {
            let mut idle = pin!(self.shared.idle.notified());
            idle.as_mut().enable();
            {
                let state = self.shared.state.lock();
                if !state.drain || state.processing.is_empty() {
                    return;
                }
            }
            idle.await;
        }
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }

    /// Counts a delayed add in the retries metric.
    pub(crate) fn record_retry(&self) {
        if let Some(metrics) = &self.shared.state.lock().metrics {
            metrics.retry();
        }
    }
}

/// Refreshes the unfinished-work gauges until the queue shuts down or is
/// dropped.
fn spawn_unfinished_work_updater<T: Eq + Hash + Clone + Send + Sync + 'static>(
    shared: Weak<Shared<T>>,
) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::debug!("no tokio runtime: the unfinished-work gauges will not be refreshed");
        return;
    };
    runtime.spawn(async move {
        let mut ticker = tokio::time::interval(UNFINISHED_WORK_UPDATE_PERIOD);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let state = shared.state.lock();
            if state.shutting_down {
                return;
            }
            if let Some(metrics) = &state.metrics {
                metrics.update_unfinished_work();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::test_support::Recorder;

    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn fair_items_come_out_in_the_order_they_went_in() {
        let queue = Queue::default();
        for item in ["a", "b", "c"] {
            queue.add(item);
        }
        assert_eq!(queue.len(), 3);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert_eq!(queue.get().await, Some("c"));
    }

    #[tokio::test]
    async fn stingy_an_item_added_twice_is_processed_once() {
        let queue = Queue::default();
        queue.add("a");
        queue.add("b");
        queue.add("a");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert!(queue.is_empty());
    }

    #[tokio::test]
    async fn re_added_during_processing_is_processed_again_after_done() {
        let queue = Queue::default();
        queue.add("a");
        let item = queue.get().await.unwrap();
        queue.add("a");
        queue.add("a");
        assert_eq!(
            queue.len(),
            0,
            "not handed to a second worker while processing"
        );
        queue.done(&item);
        assert_eq!(queue.len(), 1, "queued again exactly once");
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        assert!(queue.is_empty());
    }

    #[tokio::test]
    async fn get_waits_for_an_add() {
        let queue = Queue::<u32>::default();
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        settle().await;
        queue.add(7);
        assert_eq!(worker.await.unwrap(), Some(7));
    }

    #[tokio::test]
    async fn shut_down_drains_waiting_items_then_returns_none() {
        let queue = Queue::default();
        queue.add("a");
        queue.add("b");
        queue.shut_down();
        assert!(queue.shutting_down());
        queue.add("ignored");
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test]
    async fn shut_down_wakes_waiting_workers() {
        let queue = Queue::<u32>::default();
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        settle().await;
        queue.shut_down();
        assert_eq!(worker.await.unwrap(), None);
    }

    #[tokio::test]
    async fn shut_down_with_drain_waits_for_work_in_progress() {
        let queue = Queue::default();
        queue.add("a");
        let item = queue.get().await.unwrap();
        let drained = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        settle().await;
        assert!(!drained.is_finished(), "still processing");
        queue.done(&item);
        tokio::time::timeout(Duration::from_secs(5), drained)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn drain_with_a_dirty_item_processes_it_before_finishing() {
        let queue = Queue::default();
        queue.add("a");
        let item = queue.get().await.unwrap();
        queue.add("a"); // dirty while processing
        let drained = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        settle().await;
        queue.done(&item);
        // done queued it again even though the queue is shutting down.
        assert_eq!(queue.get().await, Some("a"));
        settle().await;
        assert!(!drained.is_finished());
        queue.done(&"a");
        tokio::time::timeout(Duration::from_secs(5), drained)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test]
    async fn a_later_shut_down_forces_a_waiting_drain_to_return() {
        let queue = Queue::default();
        queue.add("stuck");
        let _item = queue.get().await.unwrap();
        let drained = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        settle().await;
        queue.shut_down();
        tokio::time::timeout(Duration::from_secs(5), drained)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn drain_with_nothing_in_progress_returns_at_once() {
        let queue = Queue::<u8>::default();
        tokio::time::timeout(Duration::from_secs(5), queue.shut_down_with_drain())
            .await
            .unwrap();
    }

    /// An order that records `touch` calls and pops the largest item.
    #[derive(Default)]
    struct Largest {
        items: Vec<u32>,
        touched: Arc<Mutex<Vec<u32>>>,
    }

    impl QueueOrder<u32> for Largest {
        fn touch(&mut self, item: &u32) {
            self.touched.lock().push(*item);
        }
        fn push(&mut self, item: u32) {
            self.items.push(item);
            self.items.sort_unstable();
        }
        fn pop(&mut self) -> Option<u32> {
            self.items.pop()
        }
        fn len(&self) -> usize {
            self.items.len()
        }
    }

    #[tokio::test]
    async fn pluggable_order_and_touch_on_re_add_of_a_waiting_item() {
        let touched = Arc::new(Mutex::new(Vec::new()));
        let queue = Queue::new(QueueOptions::default().order(Box::new(Largest {
            items: vec![],
            touched: Arc::clone(&touched),
        })));
        queue.add(1);
        queue.add(5);
        queue.add(3);
        queue.add(1); // waiting: touched
        assert_eq!(*touched.lock(), [1]);
        assert_eq!(queue.get().await, Some(5));
        queue.add(5); // processing: not touched
        assert_eq!(*touched.lock(), [1]);
        assert_eq!(queue.get().await, Some(3));
    }

    #[tokio::test(start_paused = true)]
    async fn metrics_follow_the_items() {
        let recorder = Recorder::default();
        let queue = Queue::new(
            QueueOptions::default()
                .name("test")
                .metrics_provider(Arc::new(recorder.clone())),
        );
        queue.add("a");
        queue.add("a"); // already waiting: no metric
        queue.add("b");
        {
            let recorded = recorder.0.lock();
            assert_eq!(recorded.adds, 2);
            assert_eq!(recorded.depth, 2);
        }
        tokio::time::advance(Duration::from_millis(300)).await;
        let item = queue.get().await.unwrap();
        {
            let recorded = recorder.0.lock();
            assert_eq!(recorded.depth, 1);
            assert_eq!(recorded.latency.len(), 1);
            assert!(
                (recorded.latency[0] - 0.3).abs() < 1e-6,
                "{:?}",
                recorded.latency
            );
        }
        tokio::time::advance(Duration::from_secs(2)).await;
        settle().await;
        {
            let recorded = recorder.0.lock();
            assert!(
                recorded.unfinished >= 1.5,
                "unfinished {}",
                recorded.unfinished
            );
            assert!(recorded.longest >= 1.5, "longest {}", recorded.longest);
        }
        queue.done(&item);
        {
            let recorded = recorder.0.lock();
            assert_eq!(recorded.work_duration.len(), 1);
            assert!((recorded.work_duration[0] - 2.0).abs() < 1e-6);
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        settle().await;
        assert_eq!(recorder.0.lock().unfinished, 0.0);
    }

    #[tokio::test]
    async fn unnamed_queues_have_no_metrics() {
        let recorder = Recorder::default();
        let queue =
            Queue::new(QueueOptions::default().metrics_provider(Arc::new(recorder.clone())));
        queue.add(1u8);
        assert_eq!(recorder.0.lock().adds, 0);
    }
}
