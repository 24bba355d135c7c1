//! [`Callbacks`]: what an elector tells its user.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

type Started = Arc<dyn Fn(CancellationToken) + Send + Sync>;
type Stopped = Arc<dyn Fn() + Send + Sync>;
type NewLeader = Arc<dyn Fn(&str) + Send + Sync>;

/// The elector's callbacks (client-go's `LeaderCallbacks`). Each is called
/// on the elector's task and must not block: start work on a task of its
/// own.
#[derive(Clone, Default)]
pub struct Callbacks {
    pub(crate) started_leading: Option<Started>,
    pub(crate) stopped_leading: Option<Stopped>,
    pub(crate) new_leader: Option<NewLeader>,
}

impl fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callbacks")
            .field("started_leading", &self.started_leading.is_some())
            .field("stopped_leading", &self.stopped_leading.is_some())
            .field("new_leader", &self.new_leader.is_some())
            .finish()
    }
}

impl Callbacks {
    /// No callbacks.
    pub fn new() -> Self {
        Callbacks::default()
    }

    /// Called once this candidate leads, with a token that is cancelled
    /// when it stops leading (the renewal failed, or `run` was cancelled):
    /// the work must stop then.
    #[must_use]
    pub fn on_started_leading(
        mut self,
        started: impl Fn(CancellationToken) + Send + Sync + 'static,
    ) -> Self {
        self.started_leading = Some(Arc::new(started));
        self
    }

    /// Called when `run` returns, whether or not this candidate ever led
    /// (as client-go does).
    #[must_use]
    pub fn on_stopped_leading(mut self, stopped: impl Fn() + Send + Sync + 'static) -> Self {
        self.stopped_leading = Some(Arc::new(stopped));
        self
    }

    /// Called when the holder this candidate observes changes (itself
    /// included), with the new holder's identity.
    #[must_use]
    pub fn on_new_leader(mut self, new_leader: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.new_leader = Some(Arc::new(new_leader));
        self
    }
}
