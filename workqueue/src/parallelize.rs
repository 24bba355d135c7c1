//! [`parallelize_until`]: run a function over many pieces on several
//! threads (client-go's `workqueue.ParallelizeUntil`).

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

/// Options of [`parallelize_until`].
#[derive(Debug, Clone, Copy)]
pub struct ParallelizeOptions {
    chunk_size: usize,
}

impl Default for ParallelizeOptions {
    /// Chunks of one piece.
    fn default() -> Self {
        ParallelizeOptions { chunk_size: 1 }
    }
}

impl ParallelizeOptions {
    /// Hands pieces to workers this many at a time (at least 1), which
    /// costs less coordination for many small pieces.
    pub fn chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size.max(1);
        self
    }
}

/// Calls `work(piece)` for every piece in `0..pieces` on up to `workers`
/// threads, and returns when all are done or `cancel` fires. Each worker
/// checks `cancel` before every piece, so after cancellation at most one
/// piece per worker is still running when it is noticed. No more threads
/// are started than there are chunks; 0 pieces returns at once; 0 workers
/// is treated as 1. A panic in `work` is propagated to the caller once the
/// other workers have stopped.
pub fn parallelize_until<F>(
    cancel: Option<&CancellationToken>,
    workers: usize,
    pieces: usize,
    work: F,
    options: ParallelizeOptions,
) where
    F: Fn(usize) + Sync,
{
    if pieces == 0 {
        return;
    }
    let chunk_size = options.chunk_size.max(1);
    let chunks = pieces.div_ceil(chunk_size);
    let workers = workers.clamp(1, chunks);
    let next_chunk = AtomicUsize::new(0);
    let cancelled = || cancel.is_some_and(CancellationToken::is_cancelled);
    let run = || {
        loop {
            let chunk = next_chunk.fetch_add(1, Ordering::Relaxed);
            if chunk >= chunks {
                return;
            }
            let start = chunk * chunk_size;
            let end = (start + chunk_size).min(pieces);
            for piece in start..end {
                if cancelled() {
                    return;
                }
                work(piece);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(run);
        }
        run();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_piece_runs_exactly_once() {
        for (workers, pieces, chunk) in [
            (4, 1000, 1),
            (3, 999, 10),
            (10, 7, 13),
            (2, 1, 1),
            (0, 5, 2),
        ] {
            let counts: Vec<AtomicUsize> = (0..pieces).map(|_| AtomicUsize::new(0)).collect();
            parallelize_until(
                None,
                workers,
                pieces,
                |piece| {
                    counts[piece].fetch_add(1, Ordering::SeqCst);
                },
                ParallelizeOptions::default().chunk_size(chunk),
            );
            assert!(
                counts.iter().all(|c| c.load(Ordering::SeqCst) == 1),
                "workers {workers}, pieces {pieces}, chunk {chunk}"
            );
        }
    }

    #[test]
    fn zero_pieces_returns_at_once() {
        parallelize_until(
            None,
            4,
            0,
            |_| panic!("no piece to run"),
            ParallelizeOptions::default(),
        );
    }

    #[test]
    fn cancellation_stops_new_pieces() {
        let cancel = CancellationToken::new();
        let ran = Mutex::new(Vec::new());
        parallelize_until(
            Some(&cancel),
            1,
            100,
            |piece| {
                ran.lock().unwrap().push(piece);
                if piece == 9 {
                    cancel.cancel();
                }
            },
            ParallelizeOptions::default(),
        );
        assert_eq!(ran.into_inner().unwrap(), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn a_cancelled_token_runs_nothing() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let ran = AtomicUsize::new(0);
        parallelize_until(
            Some(&cancel),
            4,
            100,
            |_| {
                ran.fetch_add(1, Ordering::SeqCst);
            },
            ParallelizeOptions::default(),
        );
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn panics_reach_the_caller() {
        let result = std::panic::catch_unwind(|| {
            parallelize_until(
                None,
                2,
                10,
                |piece| assert_ne!(piece, 5),
                ParallelizeOptions::default(),
            );
        });
        assert!(result.is_err());
    }
}
