//! [`ControlPlane::shared`]: one control plane per test binary, started by
//! the first test that asks and shared by the rest, as envtest suites do.

use tokio::sync::OnceCell;

use crate::envtest::assets::assets_required;
use crate::envtest::control_plane::{ControlPlane, ControlPlaneOptions};
use crate::envtest::error::Error;

enum Shared {
    Running(Box<ControlPlane>),
    Absent,
    Failed(String),
}

static SHARED: OnceCell<Shared> = OnceCell::const_new();

impl ControlPlane {
    /// The test binary's control plane, started with the default options
    /// on the first call (its start-up time printed to the test log);
    /// every later call, from any test and runtime, gets the same one.
    ///
    /// `Ok(None)` when the binaries are not found: the caller skips (a
    /// one-line notice says why, once), unless
    /// [`REQUIRED_VARIABLE`](crate::envtest::REQUIRED_VARIABLE) is set,
    /// which makes that an error. A start that failed fails every call
    /// with its message.
    ///
    /// The processes die with the test process (a `static` is never
    /// dropped; `process.rs` says how), and their folder is removed by the
    /// next start. Tests sharing it must not restart it: one that restarts
    /// kube-apiserver starts its own with [`start`](Self::start).
    pub async fn shared() -> Result<Option<&'static ControlPlane>, Error> {
        let shared = SHARED
            .get_or_init(|| async {
                match ControlPlane::start(ControlPlaneOptions::default()).await {
                    Ok(plane) => {
                        notice(&format!(
                            "envtest: kube-apiserver {} at {} ready in {:.1} s (shared by this test binary)",
                            plane.kubernetes_version(),
                            plane.url(),
                            plane.started_in().as_secs_f64()
                        ));
                        Shared::Running(Box::new(plane))
                    }
                    Err(error @ Error::AssetsNotFound { .. }) if !assets_required() => {
                        notice(&format!("envtest: real-server tests skipped: {error}"));
                        Shared::Absent
                    }
                    Err(error @ Error::AssetsNotFound { .. }) => {
                        Shared::Failed(Error::Required(Box::new(error)).to_string())
                    }
                    Err(error) => Shared::Failed(error.to_string()),
                }
            })
            .await;
        match shared {
            Shared::Running(plane) => Ok(Some(plane)),
            Shared::Absent => Ok(None),
            Shared::Failed(message) => Err(Error::SharedFailed(message.clone())),
        }
    }
}

/// A line in the test log, always: written to the process's standard
/// error itself, which the test harness does not capture (it captures only
/// the print macros).
fn notice(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
