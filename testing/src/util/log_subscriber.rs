//! The log subscriber the workspace's programs install: events to stderr,
//! filtered by `RUST_LOG` (for example `RUST_LOG=clientgo_rest=debug` for a
//! line per request), `warn` when it is unset, so that API warnings, the
//! skip-TLS-verify warning and watch errors are seen by default, as klog
//! shows them in Go programs.
//!
//! Libraries never install one; a program does, once, before its work.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// Installs the subscriber; `default` is the filter used when `RUST_LOG` is
/// unset (invalid directives in `RUST_LOG` are skipped). Does nothing when
/// the program already installed one.
pub fn install_log_subscriber(default: &str) {
    let filter = EnvFilter::builder()
        .with_default_directive(default.parse().unwrap_or_else(|_| LevelFilter::WARN.into()))
        .from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
