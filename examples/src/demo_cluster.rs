//! [`DemoCluster`]: what kubectl-lite shows on the embedded API server, a
//! small cluster that behaves enough like a real one for `get`, `logs`,
//! `exec`, `port-forward`, `scale` and `drain` to do what they do there.
//!
//! - Nodes `node-1` and `node-2`.
//! - Deployment `web` (3 replicas) with pods `web-0`…`web-2` on `node-1`,
//!   each writing a log line a second, port 8080 answering HTTP.
//! - PodDisruptionBudget `web` (`minAvailable: 2`), so a drain's second
//!   eviction waits for a replacement.
//! - Pod `db-0` on `node-2` and a DaemonSet's pod `node-agent-node-1`.
//! - A stand-in for the deployment and ReplicaSet controllers: it keeps
//!   as many `app=web` pods as the deployment's replicas, creating new
//!   ones on a schedulable node, so `scale` and `drain` see pods come.

use std::sync::Arc;
use std::time::Duration;

use clientgo::apimachinery::GroupResource;
use clientgo::testing::{ReadAt, TestApiServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The pod port that answers HTTP.
pub const WEB_PORT: u16 = 8080;

/// The demo's objects and the tasks that keep it alive; dropping it stops
/// them.
#[derive(Debug)]
pub struct DemoCluster {
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for DemoCluster {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

fn pod(name: &str, node: &str, app: &str, container: &str, owner: Option<Value>) -> Value {
    let mut pod = json!({
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [{"name": container, "image": "registry.k8s.io/pause:3.10", "ports": [{"containerPort": WEB_PORT}]}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    });
    if let Some(owner) = owner {
        pod["metadata"]["ownerReferences"] = json!([owner]);
    }
    pod
}

impl DemoCluster {
    /// Seeds `server` and starts the log writer, the HTTP answerer and the
    /// stand-in controller.
    pub async fn seed(server: &Arc<TestApiServer>) -> Result<DemoCluster, String> {
        let storage = server.storage();
        let create = |group: &str, resource: &str, namespace: &str, object: Value| {
            storage
                .create(&GroupResource::new(group, resource), namespace, object)
                .map(|_| ())
                .map_err(|status| format!("cannot seed {resource}: {}", status.message))
        };
        for node in ["node-1", "node-2"] {
            create(
                "",
                "nodes",
                "",
                json!({"metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}}, "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
            )?;
        }
        create(
            "apps",
            "deployments",
            "default",
            json!({"metadata": {"name": "web"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}}}}),
        )?;
        create(
            "policy",
            "poddisruptionbudgets",
            "default",
            json!({"metadata": {"name": "web"}, "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}),
        )?;
        for index in 0..3 {
            let name = format!("web-{index}");
            create(
                "",
                "pods",
                "default",
                pod(&name, "node-1", "web", "app", None),
            )?;
            server.pod_logs().append(
                "default",
                &name,
                "app",
                "starting web server\nlistening on :8080\n10.244.0.9 - GET / 200",
            );
        }
        create(
            "",
            "pods",
            "default",
            pod("db-0", "node-2", "db", "postgres", None),
        )?;
        let daemon_set = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "node-agent", "uid": "5c0e7a52-0000-4000-8000-000000000001", "controller": true});
        create(
            "",
            "pods",
            "default",
            pod(
                "node-agent-node-1",
                "node-1",
                "node-agent",
                "agent",
                Some(daemon_set),
            ),
        )?;
        let web = answer_http()
            .await
            .map_err(|error| format!("cannot start the demo's HTTP answerer: {error}"))?;
        // The seeded pods' port leads there from the start; the
        // controller adds the pods it creates.
        for (name, _) in web_pods(server) {
            server
                .port_forwards()
                .insert("default", &name, WEB_PORT, web.0);
        }
        let mut tasks = vec![web.1];
        tasks.push(tokio::spawn(write_logs(Arc::clone(server))));
        tasks.push(tokio::spawn(keep_replicas(Arc::clone(server), web.0)));
        Ok(DemoCluster { tasks })
    }
}

/// A listener answering every request with a line naming the demo.
async fn answer_http() -> std::io::Result<(std::net::SocketAddr, JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let body = "hello from web, through kubectl-lite port-forward\n";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    Ok((address, task))
}

/// Every web pod logs a request line a second.
async fn write_logs(server: Arc<TestApiServer>) {
    // The first a second after the start: the seeded lines come first.
    let period = Duration::from_secs(1);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut count = 0u64;
    loop {
        tick.tick().await;
        count += 1;
        for name in web_pods(&server).into_iter().map(|(name, _)| name) {
            let line = format!("10.244.0.{} - GET /healthz 200 ({count})", count % 250);
            server.pod_logs().append("default", &name, "app", &line);
        }
    }
}

/// The `app=web` pods and their nodes.
fn web_pods(server: &TestApiServer) -> Vec<(String, String)> {
    let Ok((objects, _)) = server
        .storage()
        .list(&pods(), Some("default"), ReadAt::Latest)
    else {
        return Vec::new();
    };
    objects
        .iter()
        .filter(|object| object.labels.get("app").is_some_and(|app| app == "web"))
        .filter_map(|object| object.to_value().ok())
        .map(|pod| {
            (
                pod["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                pod["spec"]["nodeName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// The stand-in deployment controller: as many web pods as the
/// deployment wants, new ones on the schedulable node with the fewest.
async fn keep_replicas(server: Arc<TestApiServer>, web: std::net::SocketAddr) {
    let mut next = 3;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        let deployment = server.storage().get(&clientgo::testing::ObjectKey::new(
            GroupResource::new("apps", "deployments"),
            "default",
            "web",
        ));
        let Some(wanted) = deployment
            .and_then(|d| d.to_value().ok())
            .and_then(|d| d["spec"]["replicas"].as_i64())
        else {
            continue;
        };
        let running = web_pods(&server);
        for (name, _) in &running {
            server
                .port_forwards()
                .insert("default", name, WEB_PORT, web);
        }
        let have = running.len() as i64;
        if have < wanted {
            let Some(node) = schedulable_node(&server, &running) else {
                continue;
            };
            let name = format!("web-{next}");
            next += 1;
            let _ =
                server
                    .storage()
                    .create(&pods(), "default", pod(&name, &node, "web", "app", None));
        } else if have > wanted
            && let Some((name, _)) = running.last()
        {
            let _ = server.storage().delete(
                &clientgo::testing::ObjectKey::new(pods(), "default", name),
                &clientgo::testing::Preconditions::default(),
            );
        }
    }
}

/// The schedulable node running the fewest of `running`.
fn schedulable_node(server: &TestApiServer, running: &[(String, String)]) -> Option<String> {
    let (nodes, _) = server
        .storage()
        .list(&GroupResource::new("", "nodes"), None, ReadAt::Latest)
        .ok()?;
    nodes
        .iter()
        .filter_map(|node| node.to_value().ok())
        .filter(|node| node["spec"]["unschedulable"].as_bool() != Some(true))
        .filter_map(|node| node["metadata"]["name"].as_str().map(str::to_string))
        .min_by_key(|node| running.iter().filter(|(_, on)| on == node).count())
}
