//! The log subscriber of the generators: `warn` and worse to stderr
//! unless `RUST_LOG` says otherwise. `--from-cluster` talks to an API
//! server through clientgo-rest, whose warnings (API `Warning` headers, a
//! disabled TLS verification) must be seen.

use std::io::IsTerminal;

/// Installs the subscriber once; later calls do nothing.
pub fn install_log_subscriber() {
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing_subscriber::filter::LevelFilter::WARN.into())
        .from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
