//! [`ResyncTimer`]: the periodic resync's tick.

use std::pin::Pin;
use std::time::Duration;

use tokio::time::Sleep;

/// The periodic resync: a timer re-armed after each tick.
pub(crate) struct ResyncTimer {
    period: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl ResyncTimer {
    /// Ticks every `period`; never when it is zero.
    pub(crate) fn new(period: Duration) -> Self {
        ResyncTimer {
            period,
            sleep: (!period.is_zero()).then(|| Box::pin(tokio::time::sleep(period))),
        }
    }

    /// Completes at the next tick; never when resync is off. Cancel-safe.
    pub(crate) async fn tick(&mut self) {
        match &mut self.sleep {
            Some(sleep) => {
                sleep.as_mut().await;
                let next = tokio::time::Instant::now() + self.period;
                sleep.as_mut().reset(next);
            }
            None => std::future::pending().await,
        }
    }
}
