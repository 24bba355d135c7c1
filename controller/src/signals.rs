//! Stopping on a signal (controller-runtime's `SetupSignalHandler`): a
//! pod is stopped with SIGTERM, a terminal with SIGINT (Ctrl-C).
//!
//! ```no_run
//! # async fn example(manager: clientgo_controller::Manager) -> Result<(), Box<dyn std::error::Error>> {
//! let shutdown = clientgo_controller::signals::setup_signal_handler()?;
//! manager.run(shutdown).await?;
//! # Ok(())
//! # }
//! ```

use tokio_util::sync::CancellationToken;

/// A token cancelled at the first SIGTERM or SIGINT (Ctrl-C only, off
/// Unix), for [`Manager::run`](crate::Manager::run) or any long-running
/// loop: the manager then shuts down gracefully (reconciles in flight
/// finish, the Lease is released). A second signal exits the process at
/// once with status 1, as controller-runtime's does. Call it once, within
/// a Tokio runtime; it fails only when the signal handlers cannot be
/// installed.
pub fn setup_signal_handler() -> std::io::Result<CancellationToken> {
    let token = CancellationToken::new();
    let mut signals = Signals::install()?;
    let cancel = token.clone();
    tokio::spawn(async move {
        let first = signals.next().await;
        tracing::info!(
            signal = first,
            "shutting down; a second signal exits at once"
        );
        cancel.cancel();
        let second = signals.next().await;
        tracing::warn!(signal = second, "second signal: exiting");
        std::process::exit(1);
    });
    Ok(token)
}

/// The signals that stop a program.
struct Signals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn install() -> std::io::Result<Self> {
        Ok(Signals {})
    }

    /// The name of the next signal received.
    #[cfg(unix)]
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
