//! [`IdleTimer`]: the one place a watch's silence is measured.

use std::time::Duration;

use clientgo_apimachinery::WatchEvent;
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::error::Error;
use crate::event_stream::EventStream;

/// What waiting for a watch's next event gave.
#[derive(Debug)]
pub enum Next<K> {
    /// An event (bookmarks included).
    Event(WatchEvent<K>),
    /// The stream failed: an ERROR event, a bad frame, a broken
    /// connection. It yields nothing more.
    Failed(Error),
    /// The source ended the stream cleanly.
    Ended,
    /// Nothing at all arrived for the idle limit.
    Idle,
}

/// Measures how long a watch has been silent: the time since its stream
/// last made [progress](EventStream::progress) or yielded anything.
///
/// The timer lives outside the wait, so a caller may drop a pending
/// [`next`](Self::next) (in a `select!` with a resync tick or a log line)
/// and call it again without restarting the count. Time is tokio's, so
/// tests may pause it.
#[derive(Debug)]
pub struct IdleTimer {
    last_progress: Instant,
    progress_seen: u64,
}

impl Default for IdleTimer {
    fn default() -> Self {
        IdleTimer::new()
    }
}

impl IdleTimer {
    /// A timer starting now.
    pub fn new() -> Self {
        IdleTimer {
            last_progress: Instant::now(),
            progress_seen: 0,
        }
    }

    /// The stream's next item, or [`Next::Idle`] once `limit` has passed
    /// since its last progress (never without a limit). The limit is given
    /// per call, since a caller may learn only on this very stream that
    /// silence means a dead connection. Cancel-safe.
    pub async fn next<K, S: EventStream<K>>(
        &mut self,
        stream: &mut S,
        limit: Option<Duration>,
    ) -> Next<K> {
        loop {
            let item = match limit {
                None => stream.next().await,
                Some(limit) => {
                    match tokio::time::timeout_at(self.last_progress + limit, stream.next()).await {
                        Ok(item) => item,
                        Err(_) if stream.progress() != self.progress_seen => {
                            // Part of a large event arrived: not idle.
                            self.mark(stream.progress());
                            continue;
                        }
                        Err(_) => return Next::Idle,
                    }
                }
            };
            self.mark(stream.progress());
            return match item {
                Some(Ok(event)) => Next::Event(event),
                Some(Err(error)) => Next::Failed(error),
                None => Next::Ended,
            };
        }
    }

    fn mark(&mut self, progress: u64) {
        self.progress_seen = progress;
        self.last_progress = Instant::now();
    }
}
