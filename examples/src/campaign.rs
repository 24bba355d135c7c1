//! [`Campaign`]: a leader election running on a task of its own, as the
//! examples that elect a leader start one.

use std::sync::Arc;

use clientgo::leaderelection::{Callbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use tokio_util::sync::CancellationToken;

use crate::Failure;

/// A campaign for a `Lease`: its elector (for `is_leader` and `stats`),
/// the token that ends it (releasing the lease when the configuration
/// says `release_on_cancel`), and the task running it.
#[derive(Debug)]
pub struct Campaign {
    /// The elector.
    pub elector: Arc<LeaderElector<LeaseLock>>,
    /// Ends the campaign.
    pub stop: CancellationToken,
    /// The task running [`LeaderElector::run`].
    pub task: tokio::task::JoinHandle<()>,
}

impl Campaign {
    /// Builds the elector (a bad configuration is a usage error) and
    /// starts campaigning.
    pub fn start(
        lock: LeaseLock,
        config: LeaderElectionConfig,
        callbacks: Callbacks,
    ) -> Result<Campaign, Failure> {
        let elector = Arc::new(
            LeaderElector::new(lock, config, callbacks)
                .map_err(|error| Failure::Usage(error.to_string()))?,
        );
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (elector, stop) = (Arc::clone(&elector), stop.clone());
            async move { elector.run(stop).await }
        });
        Ok(Campaign {
            elector,
            stop,
            task,
        })
    }

    /// Ends the campaign and waits for its task.
    pub async fn end(self) -> Arc<LeaderElector<LeaseLock>> {
        self.stop.cancel();
        let _ = self.task.await;
        self.elector
    }
}
