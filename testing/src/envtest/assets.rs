//! [`Assets`]: where the kube-apiserver and etcd binaries are, and whether
//! they are versions envtest can run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::envtest::error::Error;

/// The folder variable of this project, looked at first.
pub const ASSETS_VARIABLE: &str = "CLIENTGO_ENVTEST_ASSETS";
/// controller-runtime's folder variable (what `setup-envtest use -p path`
/// prints), looked at second.
pub const KUBEBUILDER_ASSETS_VARIABLE: &str = "KUBEBUILDER_ASSETS";
/// Set (to anything but `0` or empty) to make absent binaries an error
/// where [`ControlPlane::shared`](crate::envtest::ControlPlane::shared)
/// would skip: this repository's CI sets it.
pub const REQUIRED_VARIABLE: &str = "CLIENTGO_ENVTEST_REQUIRED";

/// The oldest kube-apiserver minor version envtest starts (k8s-openapi's
/// oldest, as the workspace's).
const OLDEST_KUBERNETES_MINOR: u32 = 33;
/// The oldest etcd minor version of the 3.x line kube-apiserver supports.
const OLDEST_ETCD_MINOR: u32 = 5;

/// The two binaries of a control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assets {
    /// kube-apiserver.
    pub kube_apiserver: PathBuf,
    /// etcd.
    pub etcd: PathBuf,
    /// What kube-apiserver said of its version (`v1.36.2`).
    pub kubernetes_version: String,
}

/// Where [`Assets::find`] looks, after an explicit folder.
#[derive(Debug, Clone, Default)]
pub struct AssetSearch {
    /// A folder holding both binaries, looked in first.
    pub folder: Option<PathBuf>,
    /// A script that unpacks the binaries into a folder and prints it
    /// (this repository's `../shared/envtest/unpack.sh`), run last.
    pub unpack_script: Option<PathBuf>,
    /// A version kube-apiserver must report, as a prefix (`v1.36`).
    pub kubernetes_version: Option<String>,
    /// Ignores the two variables (for a test of the search itself).
    pub ignore_environment: bool,
}

/// This repository's unpack script, when this crate is built inside the
/// clientgo-rs repository with its `shared` folder beside it.
pub fn repository_unpack_script() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/envtest/unpack.sh");
    script.is_file().then_some(script)
}

/// Whether [`REQUIRED_VARIABLE`] asks for the binaries.
pub fn assets_required() -> bool {
    std::env::var(REQUIRED_VARIABLE).is_ok_and(|value| !value.is_empty() && value != "0")
}

impl Assets {
    /// Finds the binaries: `search.folder`, then [`ASSETS_VARIABLE`], then
    /// [`KUBEBUILDER_ASSETS_VARIABLE`]; the first folder holding
    /// `kube-apiserver` is taken, and must hold `etcd` too. Only when none
    /// of the three names a folder is `search.unpack_script` run, and the
    /// folder it prints taken (so `CLIENTGO_ENVTEST_ASSETS=/nowhere` turns
    /// the real-server tests off). Then checks their versions.
    pub fn find(search: &AssetSearch) -> Result<Assets, Error> {
        let mut looked = Vec::new();
        let mut candidates: Vec<(String, PathBuf)> = Vec::new();
        if let Some(folder) = &search.folder {
            candidates.push(("the options' folder".into(), folder.clone()));
        }
        for variable in [ASSETS_VARIABLE, KUBEBUILDER_ASSETS_VARIABLE] {
            if search.ignore_environment {
                continue;
            }
            match std::env::var_os(variable) {
                Some(value) if !value.is_empty() => {
                    candidates.push((format!("${variable}"), PathBuf::from(value)));
                }
                _ => looked.push(format!("${variable} (unset)")),
            }
        }
        let chosen = candidates
            .iter()
            .find(|(_, folder)| folder.join("kube-apiserver").is_file())
            .map(|(_, folder)| folder.clone());
        for (source, folder) in &candidates {
            looked.push(format!("{source} = {}", folder.display()));
        }
        // A folder named (by the options or a variable) is what the user
        // wants: without binaries there, nothing else is tried.
        let named = !candidates.is_empty();
        let folder = match chosen {
            Some(folder) => folder,
            None => match &search.unpack_script {
                Some(script) if !named => {
                    let folder = run_unpack(script)?;
                    looked.push(format!("{} printed {}", script.display(), folder.display()));
                    folder
                }
                _ => {
                    return Err(Error::AssetsNotFound {
                        binary: "kube-apiserver",
                        looked: looked.join("; "),
                    });
                }
            },
        };
        let kube_apiserver = folder.join("kube-apiserver");
        let etcd = folder.join("etcd");
        for (binary, path) in [("kube-apiserver", &kube_apiserver), ("etcd", &etcd)] {
            if !path.is_file() {
                looked.push(format!("{}", path.display()));
                return Err(Error::AssetsNotFound {
                    binary,
                    looked: looked.join("; "),
                });
            }
        }
        let kubernetes_version = check_kube_apiserver(&kube_apiserver, search)?;
        check_etcd(&etcd)?;
        Ok(Assets {
            kube_apiserver,
            etcd,
            kubernetes_version,
        })
    }
}

fn run_unpack(script: &Path) -> Result<PathBuf, Error> {
    let output = Command::new(script)
        .output()
        .map_err(Error::io(format!("running {}", script.display())))?;
    if !output.status.success() {
        return Err(Error::Io {
            what: format!("running {}", script.display()),
            source: std::io::Error::other(format!(
                "{}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )),
        });
    }
    let printed = String::from_utf8_lossy(&output.stdout);
    Ok(PathBuf::from(printed.trim()))
}

/// The first line a binary prints for `flag`.
fn version_line(binary: &'static str, path: &Path, flag: &str) -> Result<String, Error> {
    let output = Command::new(path)
        .arg(flag)
        .output()
        .map_err(|source| Error::Spawn {
            binary: path.to_path_buf(),
            source,
        })?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let line = text.lines().next().unwrap_or("").trim().to_string();
    if line.is_empty() {
        return Err(Error::WrongVersion {
            binary,
            path: path.to_path_buf(),
            found: format!("silent for {flag} ({})", output.status),
            wanted: "not a binary envtest knows".into(),
        });
    }
    Ok(line)
}

fn check_kube_apiserver(path: &Path, search: &AssetSearch) -> Result<String, Error> {
    let line = version_line("kube-apiserver", path, "--version")?;
    let wrong = |wanted: String| Error::WrongVersion {
        binary: "kube-apiserver",
        path: path.to_path_buf(),
        found: line.clone(),
        wanted,
    };
    let version = line
        .strip_prefix("Kubernetes ")
        .map(str::to_string)
        .ok_or_else(|| wrong("expected `Kubernetes v1.N.P` from --version".into()))?;
    let minor = kubernetes_minor(&version)
        .ok_or_else(|| wrong("expected `Kubernetes v1.N.P` from --version".into()))?;
    if minor < OLDEST_KUBERNETES_MINOR {
        return Err(wrong(format!(
            "envtest needs v1.{OLDEST_KUBERNETES_MINOR} or later"
        )));
    }
    if let Some(wanted) = &search.kubernetes_version
        && !version.starts_with(wanted.as_str())
    {
        return Err(wrong(format!("the options ask for {wanted}")));
    }
    Ok(version)
}

fn check_etcd(path: &Path) -> Result<(), Error> {
    let line = version_line("etcd", path, "--version")?;
    let minor = line
        .strip_prefix("etcd Version: 3.")
        .and_then(|rest| rest.split('.').next())
        .and_then(|minor| minor.parse::<u32>().ok());
    match minor {
        Some(minor) if minor >= OLDEST_ETCD_MINOR => Ok(()),
        _ => Err(Error::WrongVersion {
            binary: "etcd",
            path: path.to_path_buf(),
            found: line,
            wanted: format!("envtest needs etcd 3.{OLDEST_ETCD_MINOR} or later"),
        }),
    }
}

/// The minor version of `v1.N.P` (or `v1.N.P-suffix`).
fn kubernetes_minor(version: &str) -> Option<u32> {
    let rest = version.strip_prefix("v1.")?;
    rest.split(['.', '-', '+']).next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_minor_versions() {
        for (version, minor) in [
            ("v1.36.2", Some(36)),
            ("v1.33.0-rc.1", Some(33)),
            ("v1.4", Some(4)),
            ("v2.0.0", None),
            ("1.36.2", None),
            ("v1.x", None),
        ] {
            assert_eq!(kubernetes_minor(version), minor, "{version}");
        }
    }
}
