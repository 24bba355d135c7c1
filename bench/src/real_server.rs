//! The benches' real kube-apiserver: envtest's kube-apiserver and etcd
//! started on the machine's cores (`--envtest`), how clients reach it (a
//! kubeconfig in place of a URL), how its pods are seeded, and what its
//! processes spend, so a bench can print the server's CPU beside the
//! client's.

use std::future::Future;

use clientgo_rest::RestClient;
use clientgo_testing::envtest::{ControlPlane, ControlPlaneOptions};
use clientgo_testing::process_cpu::cpu_seconds_of_process;
use clientgo_testing::realistic_pod;
use serde_json::{Value, json};

use crate::BoxError;

/// How a server role names a kubeconfig in place of a test server's URL:
/// `kubeconfig:<path>`.
pub const KUBECONFIG: &str = "kubeconfig:";

/// How a server's `ready` line names the processes whose CPU is the
/// server's: `pids=<pid>,<pid>`.
pub const PIDS: &str = "pids=";

/// Writes a seeding keeps in flight.
const IN_FLIGHT: usize = 64;

/// clientgo-rs's configuration for `address`: a test server's URL, or
/// `kubeconfig:<path>`.
pub fn clientgo_config(address: &str) -> Result<clientgo_rest::Config, BoxError> {
    let config = match address.strip_prefix(KUBECONFIG) {
        Some(path) => clientgo_rest::Config::from_kubeconfig_file(path)?,
        None => clientgo_rest::Config::new(address),
    };
    Ok(config.disable_http2(std::env::var_os("E2E_HTTP1").is_some()))
}

/// kube-rs's configuration for the same `address`.
pub async fn kube_config(address: &str) -> Result<kube::Config, BoxError> {
    Ok(match address.strip_prefix(KUBECONFIG) {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path)?;
            kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &kube::config::KubeConfigOptions::default(),
            )
            .await?
        }
        None => kube::Config::new(address.parse::<http::Uri>()?),
    })
}

/// Starts kube-apiserver and etcd (envtest's assets: `CLIENTGO_ENVTEST_ASSETS`,
/// `KUBEBUILDER_ASSETS` or `../shared/envtest`).
pub async fn start() -> Result<ControlPlane, BoxError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(ControlPlane::start(ControlPlaneOptions::default()).await?)
}

/// The `pids=` word naming `plane`'s kube-apiserver and etcd.
pub fn pids_word(plane: &ControlPlane) -> String {
    let pids: Vec<String> = [plane.api_server_pid(), plane.etcd_pid()]
        .into_iter()
        .flatten()
        .map(|pid| pid.to_string())
        .collect();
    format!("{PIDS}{}", pids.join(","))
}

/// The processes whose CPU is the server's: those a `ready` line's words
/// name with [`PIDS`] (kube-apiserver's and etcd's), or else `process`, the
/// server role's own (the test server runs in it).
pub fn server_pids(words: &[&str], process: u32) -> Vec<u32> {
    let named: Vec<u32> = words
        .iter()
        .filter_map(|word| word.strip_prefix(PIDS))
        .flat_map(|list| list.split(','))
        .filter_map(|pid| pid.parse().ok())
        .collect();
    if named.is_empty() {
        vec![process]
    } else {
        named
    }
}

/// The CPU seconds `pids` have used so far, together.
pub fn cpu_seconds_of(pids: &[u32]) -> f64 {
    pids.iter().map(|pid| cpu_seconds_of_process(*pid)).sum()
}

/// Runs `write(index)` for `0..count`, 64 at a time; the first
/// error ends it.
pub async fn for_each_index<F, Fut>(count: usize, write: F) -> Result<(), clientgo_rest::Error>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<(), clientgo_rest::Error>>,
{
    use futures_util::{StreamExt, TryStreamExt};
    futures_util::stream::iter(0..count)
        .map(write)
        .buffer_unordered(IN_FLIGHT)
        .try_for_each(|()| async { Ok(()) })
        .await
}

/// Creates `count` namespaces named `{prefix}{index}`.
pub async fn create_namespaces(
    client: &RestClient,
    prefix: &str,
    count: usize,
) -> Result<(), BoxError> {
    for index in 0..count {
        client
            .post()
            .abs_path("/api/v1/namespaces")
            .json_body(&json!({"metadata": {"name": format!("{prefix}{index}")}}))
            .send::<Value>()
            .await?;
    }
    Ok(())
}

/// Seeds `pods` pods as a cluster leaves them: each created by
/// `kube-controller-manager` without its status, then given its status by
/// `kubelet`, so it carries the server's defaults and two managedFields
/// entries. Pod `index` is [`realistic_pod`] in `namespace-{index %
/// namespaces}`. Returns the JSON bytes the server answered the status
/// writes with (the pods as they are stored).
pub async fn seed_pods(
    client: &RestClient,
    pods: usize,
    namespaces: usize,
) -> Result<u64, BoxError> {
    let bytes = std::sync::atomic::AtomicU64::new(0);
    for_each_index(pods, |index| {
        let bytes = &bytes;
        async move {
            let namespace = format!("namespace-{}", index % namespaces);
            let mut pod = realistic_pod(index, &namespace);
            let status = pod["status"].take();
            if let Some(pod) = pod.as_object_mut() {
                pod.remove("status");
            }
            if let Some(metadata) = pod["metadata"].as_object_mut() {
                metadata.remove("managedFields");
            }
            // Port names are unique in a pod (the server warns otherwise).
            if let Some(port) = pod.pointer_mut("/spec/containers/1/ports/0/name") {
                *port = json!("proxy");
            }
            let name = pod["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let pods = format!("/api/v1/namespaces/{namespace}/pods");
            client
                .post()
                .abs_path(&pods)
                .param("fieldManager", "kube-controller-manager")
                .json_body(&pod)
                .send_raw()
                .await?;
            let stored = client
                .patch()
                .abs_path(format!("{pods}/{name}/status"))
                .param("fieldManager", "kubelet")
                .body(
                    serde_json::to_vec(&json!({ "status": status })).unwrap_or_default(),
                    "application/merge-patch+json",
                )
                .send_raw()
                .await?;
            bytes.fetch_add(
                stored.body.len() as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
            Ok(())
        }
    })
    .await?;
    Ok(bytes.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_pids_are_read_from_the_ready_line() {
        assert_eq!(
            server_pids(&["ready", "kubeconfig:/x", "5", "pids=12,34"], 1),
            [12, 34]
        );
        // None named: the server role's own process.
        assert_eq!(server_pids(&["ready", "http://127.0.0.1:1", "5"], 9), [9]);
        assert_eq!(server_pids(&["pids=7,bad"], 1), [7]);
    }
}
