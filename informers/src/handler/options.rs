//! [`HandlerOptions`]: how one handler is registered (name, resync period,
//! queue kind), and the shortest resync period a handler gets.

use std::time::Duration;

use crate::handler::pending_queue::HandlerQueue;

/// The shortest per-handler resync period; shorter requests are raised to
/// it (client-go's `minimumResyncPeriod`).
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// How one handler is registered.
#[derive(Debug, Clone, Default)]
pub struct HandlerOptions {
    /// The name in logs and metrics; the handler's type name when unset.
    pub name: Option<String>,
    /// The handler's resync period; the informer's when unset. Raised to
    /// [`MINIMUM_RESYNC_PERIOD`], and reconciled with the informer's check
    /// period (see
    /// [`add_event_handler_with_options`](crate::SharedIndexInformer::add_event_handler_with_options)).
    pub resync_period: Option<Duration>,
    /// How pending notifications are kept.
    pub queue: HandlerQueue,
}

impl HandlerOptions {
    /// Names the handler.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Asks for resync notifications every `period`.
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = Some(period);
        self
    }

    /// Chooses the pending queue.
    #[must_use]
    pub fn queue(mut self, queue: HandlerQueue) -> Self {
        self.queue = queue;
        self
    }
}
