//! envtest: a real kube-apiserver and etcd for tests, as
//! controller-runtime's `pkg/envtest` starts them (feature `envtest`).
//!
//! [`ControlPlane`] finds the binaries ([`Assets::find`]: the options'
//! folder, `CLIENTGO_ENVTEST_ASSETS`, then `KUBEBUILDER_ASSETS`, the folder
//! controller-runtime users fill with `setup-envtest`), makes a CA, a
//! serving certificate and a service-account key pair in Rust, writes an
//! admin token, picks free ports, starts etcd (its own data folder, no
//! fsync) and kube-apiserver (RBAC on), and waits for `/readyz`. It hands
//! out an admin [`Config`](clientgo_rest::Config), configurations for any
//! user and groups (RBAC tests), a kubeconfig for programs, fresh
//! namespaces, and [`install_crds`](ControlPlane::install_crds); it
//! restarts kube-apiserver with other flags and compacts etcd, for restart
//! and 410 tests.
//!
//! An operator's test:
//!
//! ```no_run
//! use clientgo_testing::envtest::ControlPlane;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! // None when the binaries are not there: the test skips.
//! let Some(plane) = ControlPlane::shared().await? else { return Ok(()) };
//! let namespace = plane.create_namespace("my-test").await?;
//! let client = plane.client()?;
//! // ... run the controller on `client` in `namespace`, assert on what
//! // the real API server holds.
//! # let _ = (namespace, client);
//! # Ok(())
//! # }
//! ```
//!
//! What only the test server does (faults: dropped watches, 17 MiB
//! frames, 429 storms) stays on [`TestApiServer`](crate::TestApiServer);
//! where both answer, they agree, except as the crate documentation's
//! table of divergences says.
//!
//! | file | what |
//! |---|---|
//! | `assets.rs` | [`Assets`]: finding the binaries, checking their versions |
//! | `process.rs` | a started binary that never outlives the test process |
//! | `control_plane.rs` | [`ControlPlane`], [`ControlPlaneOptions`] |
//! | `crds.rs` | [`ControlPlane::install_crds`] |
//! | `backend.rs` | [`Backend`]: one test body on the test server and on the real server |
//! | `shared.rs` | [`ControlPlane::shared`]: one plane per test binary |
//! | `error.rs` | [`Error`] |

mod assets;
mod backend;
mod control_plane;
mod crds;
mod error;
mod process;
mod shared;

pub use assets::{
    ASSETS_VARIABLE, AssetSearch, Assets, KUBEBUILDER_ASSETS_VARIABLE, REQUIRED_VARIABLE,
    assets_required, repository_unpack_script,
};
pub use backend::{Backend, for_each_backend};
pub use control_plane::{ControlPlane, ControlPlaneOptions};
pub use error::Error;
