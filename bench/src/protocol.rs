//! The lines the processes exchange. Clients and the server write them on
//! their standard output; the orchestrator writes orders on the server's
//! standard input.

use std::io::Write;

/// Server → orchestrator: `ready <url> <bytes of JSON seeded>`.
pub const READY: &str = "ready";
/// Client → orchestrator: the cache is synced and settled.
pub const SYNCED: &str = "synced";
/// Client → orchestrator: the burst's events are applied.
pub const WATCHED: &str = "watched";
/// Client → orchestrator: `result <Figures as JSON>`; the client exits.
pub const RESULT: &str = "result";
/// Orchestrator → server: hold watches, drop the open ones, write the
/// burst, release. The server answers [`DONE`].
pub const BURST: &str = "burst";
/// Orchestrator → server: hold watches, drop them, write twice, compact
/// the history, release; re-watches then get 410 Gone in the stream and
/// clients relist. The server answers [`DONE`].
pub const RELIST: &str = "relist";
/// Server → orchestrator: an order is carried out.
pub const DONE: &str = "done";

/// For heap profiling: with `E2E_EXIT_AT_SYNCED=1` in its environment a
/// client exits as soon as it announced [`SYNCED`], dropping nothing, so
/// a profiler's "leaked at exit" is what the synced client held.
pub const EXIT_AT_SYNCED: &str = "E2E_EXIT_AT_SYNCED";

/// For heap profiling: a command put before each client process, split on
/// spaces (`E2E_CLIENT_WRAPPER="heaptrack -o /tmp/client"`).
pub const CLIENT_WRAPPER: &str = "E2E_CLIENT_WRAPPER";

/// A command running `program`, put after the words of `wrapper` (a
/// profiler, from [`CLIENT_WRAPPER`]) when there are any.
pub fn wrapped_command(
    program: impl AsRef<std::ffi::OsStr>,
    wrapper: &str,
) -> std::process::Command {
    let mut words = wrapper.split_whitespace();
    match words.next() {
        Some(first) => {
            let mut command = std::process::Command::new(first);
            command.args(words).arg(program);
            command
        }
        None => std::process::Command::new(program),
    }
}

/// Writes one line to standard output and flushes it (and exits after
/// [`SYNCED`] when [`EXIT_AT_SYNCED`] asks to).
pub fn announce(line: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    if line == SYNCED && std::env::var_os(EXIT_AT_SYNCED).is_some() {
        std::process::exit(0);
    }
    Ok(())
}
