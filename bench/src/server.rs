//! The server process: clientgo-testing's API server seeded with realistic
//! pods, carrying out the orchestrator's orders from standard input.

use std::io::BufRead;
use std::time::Instant;

use clientgo_apimachinery::GroupResource;
use clientgo_testing::{ObjectKey, TestApiServer, realistic_pod};
use serde_json::json;

use crate::protocol::{BURST, DONE, READY, RELIST, announce};
use crate::{BoxError, real_server};

/// The namespaces the pods are spread over: pod `index` is in
/// `namespace-{index % NAMESPACES}`.
pub const NAMESPACES: usize = 20;

/// What the server holds and writes.
#[derive(Debug, Clone, Copy)]
pub struct ServerPlan {
    /// Pods seeded, spread over [`NAMESPACES`] namespaces.
    pub pods: usize,
    /// Updates written per [`BURST`] order.
    pub events: usize,
}

/// Runs a real kube-apiserver (envtest) seeded with `plan.pods` pods
/// ([`real_server::seed_pods`]) until standard input closes. It announces
/// `ready kubeconfig:<path> <bytes> pids=<kube-apiserver>,<etcd>` and takes
/// no orders: on the real server clients only sync.
pub fn run_real(plan: ServerPlan) -> Result<(), BoxError> {
    let runtime = crate::two_worker_runtime()?;
    runtime.block_on(async {
        let plane = real_server::start().await?;
        let client = plane.client()?;
        real_server::create_namespaces(&client, "namespace-", NAMESPACES).await?;
        let json_bytes = real_server::seed_pods(&client, plan.pods, NAMESPACES).await?;
        let kubeconfig = plane.write_kubeconfig()?;
        announce(&format!(
            "{READY} {}{} {json_bytes} {}",
            real_server::KUBECONFIG,
            kubeconfig.display(),
            real_server::pids_word(&plane)
        ))?;
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin());
        let mut line = String::new();
        use tokio::io::AsyncBufReadExt;
        if lines.read_line(&mut line).await? > 0 {
            return Err(format!("the real server takes no orders, not {:?}", line.trim()).into());
        }
        Ok(())
    })
}

/// Runs the server until its standard input closes.
pub fn run(plan: ServerPlan) -> Result<(), BoxError> {
    let runtime = crate::two_worker_runtime()?;
    // The history must hold one whole burst (and the seeding) so a held
    // watch can replay it.
    // Objects are encoded as protobuf when written, as kube-apiserver
    // holds them ready in either encoding, so protobuf clients' figures do
    // not include the test server turning JSON into protobuf (it costs the
    // writes, which are not measured, about 30 µs each).
    let server = runtime.block_on(
        TestApiServer::builder()
            .watch_list(true)
            .history_limit(plan.events + plan.pods + 1_000)
            .encode_protobuf_on_write(true)
            .start(),
    )?;
    let resource = GroupResource::new("", "pods");
    let mut keys = Vec::with_capacity(plan.pods);
    let mut json_bytes = 0;
    for index in 0..plan.pods {
        let namespace = format!("namespace-{}", index % NAMESPACES);
        let pod = realistic_pod(index, &namespace);
        json_bytes += serde_json::to_vec(&pod)?.len();
        let stored = server.storage().create(&resource, &namespace, pod)?;
        keys.push(ObjectKey::new(
            resource.clone(),
            stored.key.namespace.clone(),
            stored.key.name.clone(),
        ));
    }
    announce(&format!("{READY} {} {json_bytes}", server.url()))?;
    let mut writes = 0_u64;
    let mut write = |key: &ObjectKey| -> Result<(), BoxError> {
        writes += 1;
        let stamp = writes;
        server.storage().modify(key, |pod| {
            pod["metadata"]["annotations"]["bench.clientgo.rs/write"] = json!(stamp.to_string());
        })?;
        Ok(())
    };
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        match line.trim() {
            BURST => {
                let started = Instant::now();
                server.faults().hold_watches();
                server.faults().drop_watches();
                for index in 0..plan.events {
                    write(&keys[index % keys.len()])?;
                }
                server.faults().release_watches();
                announce(&format!(
                    "{DONE} {} writes in {:.1} s",
                    plan.events,
                    started.elapsed().as_secs_f64()
                ))?;
            }
            RELIST => {
                server.faults().hold_watches();
                server.faults().drop_watches();
                write(&keys[0])?;
                write(&keys[keys.len() / 2])?;
                server.compact_history();
                server.faults().release_watches();
                announce(DONE)?;
            }
            other => return Err(format!("unknown order {other:?}").into()),
        }
    }
    Ok(())
}
