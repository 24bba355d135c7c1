//! What the example programs share: flags, the connection (a cluster, or
//! the embedded API server when there is none), progress output and the
//! summary table. The programs are in `src/bin/`:
//!
//! - `controller`: the README's main job, client-go's workqueue
//!   controller;
//! - `informer`: client-go's Deployment informer example;
//! - `crd`: a custom resource derived from its spec struct, installed, and
//!   watched by a typed informer (`--yaml` prints its CRD);
//! - `operator`: a CronTab operator on the controller runtime;
//! - `dynamic`: an informer for any resource, found through discovery;
//!
//! and small programs of one feature each: `lister-indexer` (listers and
//! indexes), `leader-election` (a Lease changing hands), `events`
//! (tools/record), `warm-restart` (an informer resuming from its saved
//! cache) and `protobuf` (the wire format and the cache's storage).
//!
//! Programs print, so the print lints are off here; output goes through
//! [`say!`], which (unlike `println!`) does not panic when stdout is a
//! closed pipe (`controller | head`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

/// `println!` that ignores write errors, such as a closed pipe.
#[macro_export]
macro_rules! say {
    ($($argument:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout().lock(), $($argument)*);
    }};
}

pub mod arguments;
pub mod campaign;
pub mod connection;
pub mod crontab;
pub mod crontab_webhooks;
pub mod demo_cluster;
pub mod embedded;
mod metrics_server;
pub mod progress;

/// The process's shutdown token: cancelled at the first SIGTERM or
/// SIGINT, the process exiting at once at a second
/// ([`setup_signal_handler`](clientgo::controller::signals::setup_signal_handler),
/// installed on first use; call it within the runtime). Every
/// long-running program waits on it, so `kill` and a pod's stop end them
/// as Ctrl-C does: gracefully, with their summary.
pub fn shutdown() -> tokio_util::sync::CancellationToken {
    static TOKEN: std::sync::OnceLock<tokio_util::sync::CancellationToken> =
        std::sync::OnceLock::new();
    TOKEN
        .get_or_init(|| {
            clientgo::controller::signals::setup_signal_handler().unwrap_or_else(|error| {
                say_error(&format!("cannot watch for SIGTERM and SIGINT: {error}"));
                tokio_util::sync::CancellationToken::new()
            })
        })
        .clone()
}

pub use campaign::Campaign;
pub use connection::{CommonFlags, Connection};
pub use embedded::{Embedded, EmbeddedOptions, SeededResource};
pub use metrics_server::MetricsServer;
pub use progress::{Progress, print_table};

/// Parses the command line into `T` (clap: `--help` and `--version`
/// print and exit 0, a flag error exits 2), then runs `main` on a
/// multi-threaded tokio runtime; an error is printed as `<program>:
/// <error>` and exits with status 1, a [`Failure::Usage`] with 2.
pub fn run_main<T, F>(program: &str, main: impl FnOnce(T) -> F) -> std::process::ExitCode
where
    T: clap::Parser,
    F: std::future::Future<Output = Result<(), Failure>>,
{
    let flags = match T::try_parse() {
        Ok(flags) => flags,
        Err(error) => {
            let _ = error.print();
            return std::process::ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    clientgo::testing::install_log_subscriber("warn");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            say_error(&format!(
                "{program}: cannot start the async runtime: {error}"
            ));
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(main(flags)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(Failure::Usage(problem)) => usage_error(program, &problem),
        Err(Failure::Run(problem)) => {
            say_error(&format!("{program}: {problem}"));
            std::process::ExitCode::FAILURE
        }
    }
}

fn usage_error(program: &str, problem: &str) -> std::process::ExitCode {
    say_error(&format!(
        "{program}: {problem}\nRun {program} --help for the flags."
    ));
    std::process::ExitCode::from(2)
}

/// Starts the factory's informers and waits (up to a minute) until each
/// has synced; the token stops them. The error names the informer that did
/// not sync and why (a 403 from RBAC, a 404 for a resource not served).
pub async fn start_and_sync(
    factory: &clientgo::informers::SharedInformerFactory,
) -> Result<tokio_util::sync::CancellationToken, String> {
    let stop = tokio_util::sync::CancellationToken::new();
    factory.start(&stop);
    factory
        .wait_for_cache_sync(std::time::Duration::from_secs(60))
        .await
        .map_err(|error| format!("the cache did not sync: {error}"))?;
    Ok(stop)
}

/// How a delete notification reads: `describe(object)` for a delete the
/// watch saw, or the key with "(seen by a relist)" for a tombstone.
pub fn describe_delete<K>(
    deleted: &clientgo::informers::ObjectOrTombstone<K>,
    describe: impl Fn(&K) -> String,
) -> String {
    match deleted {
        clientgo::informers::ObjectOrTombstone::Object(object) => describe(object),
        clientgo::informers::ObjectOrTombstone::Tombstone(tombstone) => {
            format!("{} (seen by a relist)", tombstone.key)
        }
    }
}

/// Writes `line` to stderr, ignoring write errors.
fn say_error(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Why a program stopped early.
#[derive(Debug)]
pub enum Failure {
    /// A bad flag (exit status 2).
    Usage(String),
    /// Anything else (exit status 1).
    Run(String),
}

impl From<String> for Failure {
    fn from(problem: String) -> Self {
        Failure::Run(problem)
    }
}

impl From<&str> for Failure {
    fn from(problem: &str) -> Self {
        Failure::Run(problem.to_string())
    }
}
