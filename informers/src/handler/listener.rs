//! [`Listener`]: one registered handler, its pending queue and the thread
//! that delivers to it (client-go's `processorListener`).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clientgo_apimachinery::Object;
use clientgo_store::ResourceEventHandler;
use parking_lot::{Condvar, Mutex};
use tokio_util::sync::CancellationToken;

use crate::handler::notification::Notification;
use crate::handler::pending_queue::{HandlerQueue, PendingQueue};
use crate::handler::sync_signal::SyncSignal;
use crate::metrics::provider::{HistogramMetric, SettableGaugeMetric};

/// A handler call slower than this, while more than
/// [`SLOW_HANDLER_PENDING`] notifications wait, is logged (client-go's
/// thresholds).
const SLOW_HANDLER_CALL: Duration = Duration::from_millis(100);
const SLOW_HANDLER_PENDING: usize = 1024;

/// Counters of one handler's deliveries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandlerStats {
    /// Notifications waiting (queued, or taken and not yet delivered).
    pub pending: usize,
    /// Notifications the handler has been called with.
    pub delivered: u64,
    /// Notifications merged into later ones by a coalescing queue.
    pub coalesced: u64,
    /// Handler calls that panicked (the panic is caught and logged, and
    /// delivery goes on with the next notification).
    pub panics: u64,
}

struct QueueState<K> {
    queue: PendingQueue<K>,
    closed: bool,
}

/// When a handler is next due for a resync.
struct ResyncState {
    /// What the handler asked for (after raising it to the minimum).
    requested: Duration,
    /// What it gets, reconciled with the informer's check period.
    period: Duration,
    next: Instant,
    syncing: bool,
}

/// One registered handler.
///
/// **Threads.** The informer's processing task pushes notifications under
/// the queue lock and wakes the handler's thread; the thread takes every
/// pending notification at once and calls the handler without any lock
/// held, so the informer never waits for a handler.
pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    pub(crate) name: String,
    state: Mutex<QueueState<K>>,
    wakeup: Condvar,
    closed: AtomicBool,
    in_flight: AtomicUsize,
    initial_in_flight: AtomicUsize,
    delivered: AtomicU64,
    panics: AtomicU64,
    resync: Mutex<ResyncState>,
    done: CancellationToken,
    pending_metric: Arc<dyn SettableGaugeMetric>,
    latency_metric: Arc<dyn HistogramMetric>,
    /// Signalled when the initial adds have all been delivered, and on
    /// close.
    sync_signal: SyncSignal,
}

/// What a handler's registration reads of its listener, whatever type
/// the listener delivers (a registration of `K` may sit on a listener of
/// compact entries).
pub(crate) trait ListenerView: Send + Sync {
    /// The listener's id in its informer's processor.
    fn id(&self) -> u64;
    /// The handler's name.
    fn name(&self) -> &str;
    /// Whether every initial add queued so far has been delivered.
    fn initial_delivered(&self) -> bool;
    /// The delivery counters.
    fn stats(&self) -> HandlerStats;
    /// The resync period asked for, and the one in effect.
    fn resync_periods(&self) -> (Duration, Duration);
    /// Whether the listener was closed.
    fn is_closed(&self) -> bool;
    /// Cancelled once the listener's thread has ended.
    fn done(&self) -> &CancellationToken;
}

impl<K: Object + Send + Sync + 'static> ListenerView for Listener<K> {
    fn id(&self) -> u64 {
        self.id
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn initial_delivered(&self) -> bool {
        Listener::initial_delivered(self)
    }

    fn stats(&self) -> HandlerStats {
        Listener::stats(self)
    }

    fn resync_periods(&self) -> (Duration, Duration) {
        Listener::resync_periods(self)
    }

    fn is_closed(&self) -> bool {
        Listener::is_closed(self)
    }

    fn done(&self) -> &CancellationToken {
        &self.done
    }
}

/// What a listener is built from.
pub(crate) struct ListenerSettings {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) queue: HandlerQueue,
    pub(crate) requested_resync: Duration,
    pub(crate) resync_period: Duration,
    pub(crate) now: Instant,
    pub(crate) pending_metric: Arc<dyn SettableGaugeMetric>,
    pub(crate) latency_metric: Arc<dyn HistogramMetric>,
    pub(crate) sync_signal: SyncSignal,
}

impl<K> Listener<K> {
    /// Stops delivery: pending notifications are dropped, the call in
    /// progress (if any) finishes, then the thread ends. Idempotent.
    pub(crate) fn close(&self) {
        let mut state = self.state.lock();
        state.closed = true;
        state.queue.clear();
        self.closed.store(true, Ordering::Release);
        drop(state);
        self.wakeup.notify_all();
        self.sync_signal.notify();
    }

    /// Whether `close` was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

impl<K: Object + Send + Sync + 'static> Listener<K> {
    /// Creates the listener and starts its thread, which enters the tokio
    /// runtime the caller runs in (if any).
    pub(crate) fn spawn(
        settings: ListenerSettings,
        handler: Box<dyn ResourceEventHandler<K>>,
    ) -> std::io::Result<Arc<Self>> {
        let listener = Arc::new(Listener {
            id: settings.id,
            name: settings.name,
            state: Mutex::new(QueueState {
                queue: PendingQueue::new(settings.queue),
                closed: false,
            }),
            wakeup: Condvar::new(),
            closed: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            initial_in_flight: AtomicUsize::new(0),
            delivered: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            resync: Mutex::new(ResyncState {
                requested: settings.requested_resync,
                period: settings.resync_period,
                next: settings.now + settings.resync_period,
                syncing: false,
            }),
            done: CancellationToken::new(),
            pending_metric: settings.pending_metric,
            latency_metric: settings.latency_metric,
            sync_signal: settings.sync_signal,
        });
        let runtime = tokio::runtime::Handle::try_current().ok();
        let thread_listener = Arc::clone(&listener);
        std::thread::Builder::new()
            .name(format!("handler {}", listener.name))
            .spawn(move || {
                let _runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
                thread_listener.deliver_until_closed(handler);
                thread_listener.done.cancel();
            })?;
        Ok(listener)
    }

    /// Queues a notification; ignored once the listener is closed.
    pub(crate) fn push(&self, notification: Notification<K>) {
        self.push_all([notification]);
    }

    /// Queues several notifications under one lock and wakes the thread
    /// once; ignored once the listener is closed.
    pub(crate) fn push_all(&self, notifications: impl IntoIterator<Item = Notification<K>>) {
        let mut state = self.state.lock();
        if state.closed {
            return;
        }
        for notification in notifications {
            state.queue.push(notification);
        }
        let pending = state.queue.len() + self.in_flight.load(Ordering::Relaxed);
        drop(state);
        self.pending_metric.set(pending as f64);
        self.wakeup.notify_one();
    }

    /// Waits until the thread has ended.
    pub(crate) async fn finished(&self) {
        self.done.cancelled().await;
    }

    /// Whether every initial-list add queued so far has been delivered.
    pub(crate) fn initial_delivered(&self) -> bool {
        let state = self.state.lock();
        state.queue.initial() == 0 && self.initial_in_flight.load(Ordering::Acquire) == 0
    }

    pub(crate) fn stats(&self) -> HandlerStats {
        let state = self.state.lock();
        HandlerStats {
            pending: state.queue.len() + self.in_flight.load(Ordering::Relaxed),
            delivered: self.delivered.load(Ordering::Relaxed),
            coalesced: state.queue.coalesced(),
            panics: self.panics.load(Ordering::Relaxed),
        }
    }

    /// The resync period the handler asked for, and the one in effect.
    pub(crate) fn resync_periods(&self) -> (Duration, Duration) {
        let resync = self.resync.lock();
        (resync.requested, resync.period)
    }

    /// Sets the period in effect (before the informer starts, when its
    /// check period changes).
    pub(crate) fn set_resync_period(&self, period: Duration, now: Instant) {
        let mut resync = self.resync.lock();
        resync.period = period;
        resync.next = now + period;
    }

    /// Marks the listener as syncing iff its resync is due at `now`, and
    /// schedules the next one; returns whether it is syncing.
    pub(crate) fn should_resync(&self, now: Instant) -> bool {
        let mut resync = self.resync.lock();
        resync.syncing = false;
        if resync.period.is_zero() || now < resync.next {
            return false;
        }
        resync.syncing = true;
        resync.next = now + resync.period;
        true
    }

    /// Whether resync notifications go to this listener now.
    pub(crate) fn is_syncing(&self) -> bool {
        self.resync.lock().syncing
    }

    /// The thread's loop.
    fn deliver_until_closed(&self, mut handler: Box<dyn ResourceEventHandler<K>>) {
        while let Some(batch) = self.next_batch() {
            self.deliver(&mut *handler, batch);
        }
        tracing::debug!(handler = %self.name, "handler stopped");
    }

    /// Waits for pending notifications and takes them all; `None` once
    /// closed.
    fn next_batch(&self) -> Option<VecDeque<Notification<K>>> {
        let mut state = self.state.lock();
        loop {
            if state.closed {
                return None;
            }
            if !state.queue.is_empty() {
                let initial = state.queue.initial();
                let batch = state.queue.take();
                self.in_flight.store(batch.len(), Ordering::Relaxed);
                self.initial_in_flight.store(initial, Ordering::Release);
                return Some(batch);
            }
            self.wakeup.wait(&mut state);
        }
    }

    fn deliver(&self, handler: &mut dyn ResourceEventHandler<K>, batch: VecDeque<Notification<K>>) {
        let total = batch.len();
        for notification in batch {
            if self.is_closed() {
                self.in_flight.store(0, Ordering::Relaxed);
                self.initial_in_flight.store(0, Ordering::Release);
                return;
            }
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| notification.deliver(handler)));
            let elapsed = started.elapsed();
            self.latency_metric.observe(elapsed.as_secs_f64());
            self.delivered.fetch_add(1, Ordering::Relaxed);
            let remaining = self
                .in_flight
                .fetch_sub(1, Ordering::Relaxed)
                .saturating_sub(1);
            if notification.is_initial()
                && self.initial_in_flight.fetch_sub(1, Ordering::AcqRel) == 1
            {
                self.sync_signal.notify();
            }
            if outcome.is_err() {
                self.panics.fetch_add(1, Ordering::Relaxed);
                tracing::error!(
                    handler = %self.name,
                    "the handler panicked; the notification is skipped and delivery goes on"
                );
            }
            if elapsed > SLOW_HANDLER_CALL && remaining > SLOW_HANDLER_PENDING {
                tracing::warn!(
                    handler = %self.name,
                    elapsed_ms = elapsed.as_millis() as u64,
                    pending = remaining,
                    batch = total,
                    "slow handler with many notifications waiting"
                );
            }
        }
        let pending = self.state.lock().queue.len();
        self.pending_metric.set(pending as f64);
    }
}
