//! [`Error`]: why a control plane could not be found, started or used.

use std::path::PathBuf;
use std::time::Duration;

/// What went wrong, with where it happened and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The binaries are not where envtest looked.
    #[error(
        "envtest: no {binary} found; looked in {looked}. Point CLIENTGO_ENVTEST_ASSETS (or \
         KUBEBUILDER_ASSETS) at a folder holding kube-apiserver and etcd: in the clientgo-rs \
         repository `../shared/envtest/unpack.sh` unpacks them and prints that folder; elsewhere \
         `setup-envtest use -p path` (sigs.k8s.io/controller-runtime/tools/setup-envtest) downloads them"
    )]
    AssetsNotFound {
        /// The binary missing (`kube-apiserver` or `etcd`).
        binary: &'static str,
        /// Every place looked, in order.
        looked: String,
    },
    /// A binary answered `--version` with a version envtest cannot use.
    #[error("envtest: {binary} at {path} is {found}; {wanted}")]
    WrongVersion {
        /// The binary (`kube-apiserver` or `etcd`).
        binary: &'static str,
        /// Its path.
        path: PathBuf,
        /// What it said it is.
        found: String,
        /// What envtest needs.
        wanted: String,
    },
    /// A binary could not be started.
    #[error("envtest: cannot start {binary}: {source}")]
    Spawn {
        /// The binary's path.
        binary: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A port a process was to listen on is taken.
    #[error(
        "envtest: {binary} cannot listen on 127.0.0.1:{port}: the port is taken\n--- the end of its log ---\n{log_tail}"
    )]
    PortTaken {
        /// The binary.
        binary: &'static str,
        /// The port.
        port: u16,
        /// The last lines of its output.
        log_tail: String,
    },
    /// A process ended while it was being waited for.
    #[error(
        "envtest: {binary} exited ({status}) before it was ready; its log is {log}\n--- the end of its log ---\n{log_tail}"
    )]
    Exited {
        /// The binary.
        binary: &'static str,
        /// How it ended.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its output.
        log_tail: String,
    },
    /// A process never became ready.
    #[error(
        "envtest: {binary} was not ready after {waited:?} ({last}); its log is {log}\n--- the end of its log ---\n{log_tail}"
    )]
    NotReady {
        /// The binary.
        binary: &'static str,
        /// How long envtest waited.
        waited: Duration,
        /// The last answer or error of its readiness check.
        last: String,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its output.
        log_tail: String,
    },
    /// Preparing a file or folder failed.
    #[error("envtest: {what}: {source}")]
    Io {
        /// What was being done, naming the path.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Making a certificate or key failed.
    #[error("envtest: making certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    /// A request to the control plane failed.
    #[error("envtest: {what}: {source}")]
    Request {
        /// What was asked, naming the object.
        what: String,
        /// The client's error (an API Status among them).
        source: Box<clientgo_rest::Error>,
    },
    /// Installing CustomResourceDefinitions failed: the structural check,
    /// the server's refusal (its Status) or the wait for them to be served.
    #[error("envtest: {0}")]
    Crd(#[from] clientgo_rest::api::CrdInstallError),
    /// The binaries are absent and `CLIENTGO_ENVTEST_REQUIRED` says they
    /// must not be.
    #[error("{0} (CLIENTGO_ENVTEST_REQUIRED is set: absent binaries fail instead of skipping)")]
    Required(Box<Error>),
    /// A test asked a shared control plane for what would disturb the
    /// other tests sharing it (a restart, a compaction).
    #[error(
        "envtest: a shared control plane is not {what} by one test; start one of its own (Backend::both_own)"
    )]
    SharedPlane {
        /// What was asked (`restarted`, `compacted`).
        what: &'static str,
    },
    /// A control plane shared by a test binary failed to start earlier.
    #[error("envtest: the shared control plane failed to start: {0}")]
    SharedFailed(String),
}

impl Error {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let what = what.into();
        move |source| Error::Io { what, source }
    }

    pub(crate) fn request(what: impl Into<String>) -> impl FnOnce(clientgo_rest::Error) -> Error {
        let what = what.into();
        move |source| Error::Request {
            what,
            source: Box::new(source),
        }
    }
}
