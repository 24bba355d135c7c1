//! The end-to-end benchmark behind BENCHMARKS.md: clientgo-rs's informer
//! against kube-rs's watcher and reflector, and against `limit`, a naive
//! single-threaded client that only fetches and decodes, over
//! clientgo-testing's API server on loopback or a real kube-apiserver
//! ([`real_server`]: envtest's, started here, or a cluster's by its
//! kubeconfig).
//!
//! The `e2e` binary runs three kinds of process, all itself:
//! - the **server** ([`server`]): the test API server seeded with realistic
//!   pods, taking orders on its standard input (a burst of writes held back
//!   from the watches, then a forced relist); or kube-apiserver seeded
//!   through its API, where clients only sync;
//! - one **client** process per client and run ([`clients`]), so each
//!   starts with a clean RSS: it syncs, applies a burst of watch events,
//!   goes through a relist, and prints its [`Figures`];
//! - the **orchestrator** ([`orchestrator`]), which starts them, passes the
//!   orders along, and prints the medians as a table and one JSON line per
//!   figure ([`report`]).
//!
//! Linux only: memory comes from `/proc/self/status`
//! ([`clientgo_testing::process_memory`]).

// A benchmark reports progress and results on its terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod clients;
pub mod event_clock;
pub mod figures;
pub mod orchestrator;
pub mod protocol;
pub mod real_server;
pub mod report;
pub mod server;

pub use event_clock::EventClock;
pub use figures::Figures;

/// A multi-threaded tokio runtime with two workers (the machine's cores):
/// what the servers and the controller clients run on.
pub fn two_worker_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Any error, for a benchmark program that reports and exits.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
