//! kubectl-lite: kubectl's `get`, `logs`, `exec`, `port-forward`, `scale`
//! and `drain`, each written with the clientgo-rs module client-go's
//! kubectl uses for it: the RESTMapper over cached discovery, pod logs,
//! exec over WebSockets, the port forwarder, the scale client, and
//! eviction with `until`.
//!
//! Against a cluster it uses the kubeconfig (`--kubeconfig`,
//! `KUBECONFIG`, `~/.kube/config`); with none, each run starts the
//! embedded API server holding a small demo cluster
//! (`clientgo_examples::demo_cluster`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::IsTerminal;
use std::net::IpAddr;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use clientgo::apimachinery::{DynamicObject, ListOptions, WatchEvent};
use clientgo::informers::watch::until;
use clientgo::listwatch::ResourceListerWatcher;
use clientgo::rest::{
    DeleteOptions, Patch, PatchOptions, ResourceClient, RestClient,
    api::{EvictionError, LogLines, LogOptions},
    discovery::{CachedDiscovery, DEFAULT_DISCOVERY_CACHE_TTL, DeferredRestMapper},
    scale::ScaleClient,
    tools::portforward::{PortForwarder, PortMapping},
    tools::remotecommand::{RemoteProcess, StreamOptions},
};
use clientgo_examples::demo_cluster::DemoCluster;
use clientgo_examples::{CommonFlags, Connection, EmbeddedOptions};
use k8s_openapi::api::core::v1::{Node, Pod};
use tokio::io::AsyncWriteExt;

#[derive(Debug, Parser)]
#[command(
    name = "kubectl-lite",
    version,
    about = "kubectl's get, logs, exec, port-forward, scale and drain, written with clientgo-rs"
)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists objects of any resource, or shows one: `pods`, `po`,
    /// `deploy`, `nodes`, `pdb`, `crontabs.stable.example.com`
    Get {
        /// The resource: plural, singular, short name or kind, with an
        /// optional `.group`
        resource: String,
        /// One object's name
        name: Option<String>,
        /// Every namespace
        #[arg(short = 'A', long)]
        all_namespaces: bool,
        /// How to print
        #[arg(short, long, value_enum, default_value = "table")]
        output: Output,
    },
    /// Prints a container's log
    Logs {
        /// The pod
        pod: String,
        /// The container (needed when the pod has several)
        #[arg(short, long)]
        container: Option<String>,
        /// Streams new lines as they are written
        #[arg(short, long)]
        follow: bool,
        /// Only the last lines
        #[arg(long)]
        tail: Option<i64>,
        /// Only lines of the last SECONDS
        #[arg(long, value_name = "SECONDS")]
        since: Option<i64>,
        /// The previous instance's log
        #[arg(short, long)]
        previous: bool,
    },
    /// Runs a command in a container: `exec web-0 -it -- sh`
    Exec {
        /// The pod
        pod: String,
        /// The container (needed when the pod has several)
        #[arg(short, long)]
        container: Option<String>,
        /// Passes standard input to the command
        #[arg(short = 'i', long)]
        stdin: bool,
        /// Gives the command a terminal
        #[arg(short, long)]
        tty: bool,
        /// The command and its arguments, after `--`
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Forwards local ports to a pod: `port-forward web-0 8080:8080 :9090`
    PortForward {
        /// The pod
        pod: String,
        /// LOCAL:REMOTE, :REMOTE (a free local port) or PORT
        #[arg(required = true, value_parser = |text: &str| text.parse::<PortMapping>().map_err(|e| e.to_string()))]
        ports: Vec<PortMapping>,
        /// Where to listen
        #[arg(long, default_value = "127.0.0.1")]
        address: IpAddr,
    },
    /// Sets the replicas of anything with a scale subresource:
    /// `scale deploy/web --replicas 5`
    Scale {
        /// RESOURCE/NAME
        target: String,
        /// The new replica count
        #[arg(long)]
        replicas: i32,
    },
    /// Cordons a node and evicts its pods, retrying while disruption
    /// budgets forbid it, then waits for them to go
    Drain {
        /// The node
        node: String,
        /// Leaves DaemonSet pods alone (they would be recreated at once)
        #[arg(long)]
        ignore_daemonsets: bool,
        /// Gives up after SECONDS
        #[arg(long, value_name = "SECONDS", default_value = "300")]
        timeout: u64,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Output {
    Table,
    Name,
    Json,
}

#[tokio::main]
async fn main() {
    let flags = Flags::parse();
    let code = match run(flags).await {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            1
        }
    };
    // Exits at once: a read of stdin still waiting (after `exec -i`)
    // cannot be cancelled and would hold the runtime's shutdown.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::process::exit(i32::from(code));
}

async fn run(flags: Flags) -> Result<u8, String> {
    let (connection, banner) =
        Connection::open_quietly(&flags.common, EmbeddedOptions::default()).await?;
    // The first line goes to stderr: stdout is the command's output.
    let _demo = match &connection.embedded {
        Some(embedded) => {
            eprintln!(
                "embedded API server at {} with a demo cluster (nodes node-1 and node-2, deployment web); pass --kubeconfig to use a cluster",
                embedded.url()
            );
            Some(DemoCluster::seed(embedded.server()).await?)
        }
        None => {
            eprintln!("{banner}");
            None
        }
    };
    let client = connection.client.clone();
    let namespace = flags
        .common
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_string());
    // How long a command that runs until Ctrl-C lasts on the embedded
    // server (`--duration`, else 20 s).
    let limit = connection.duration;
    let mapper = || DeferredRestMapper::new(discovery(&client, connection.embedded.is_some()));
    match flags.command {
        Command::Get {
            resource,
            name,
            all_namespaces,
            output,
        } => {
            let namespace = (!all_namespaces).then_some(namespace.as_str());
            get(
                &client,
                &mapper(),
                &resource,
                name.as_deref(),
                namespace,
                output,
            )
            .await?;
        }
        Command::Logs {
            pod,
            container,
            follow,
            tail,
            since,
            previous,
        } => {
            let mut options = LogOptions::default().follow(follow).previous(previous);
            options.container = container;
            options.tail_lines = tail;
            options.since_seconds = since;
            let pods = ResourceClient::<Pod>::namespaced(client.clone(), &namespace);
            until_limit(limit.filter(|_| follow), logs(&pods, &pod, &options)).await?;
        }
        Command::Exec {
            pod,
            container,
            stdin,
            tty,
            command,
        } => {
            let pods = ResourceClient::<Pod>::namespaced(client.clone(), &namespace);
            let mut options = StreamOptions::default().stdin(stdin).tty(tty);
            options.container = container;
            return exec(&pods, &pod, command, &options).await;
        }
        Command::PortForward {
            pod,
            ports,
            address,
        } => {
            let pods = ResourceClient::<Pod>::namespaced(client.clone(), &namespace);
            let forwarder = PortForwarder::bind(pods, &pod, &ports, address)
                .await
                .map_err(|e| e.to_string())?;
            for port in forwarder.ports() {
                println!("Forwarding from {} -> {}", port.local, port.remote);
            }
            let stopped = until_limit(limit, async {
                clientgo_examples::shutdown().cancelled().await;
                Ok(())
            })
            .await;
            eprintln!(
                "forwarded {} connection(s), {} failed",
                forwarder.stats().connections,
                forwarder.stats().failures
            );
            stopped?;
        }
        Command::Scale { target, replicas } => {
            let (resource, name) = target
                .split_once('/')
                .ok_or_else(|| format!("{target:?}: expected RESOURCE/NAME, as deploy/web"))?;
            let mapper = mapper();
            let found = mapper
                .resource_for(resource)
                .await
                .map_err(|e| e.to_string())?;
            let scales = ScaleClient::new(client.clone(), mapper);
            let before = scales
                .get(resource, Some(&namespace), name)
                .await
                .map_err(|e| e.to_string())?;
            scales
                .scale_to(resource, Some(&namespace), name, replicas)
                .await
                .map_err(|e| e.to_string())?;
            let was = before.spec.and_then(|spec| spec.replicas).unwrap_or(0);
            println!(
                "{}/{name} scaled ({was} -> {replicas})",
                qualified(&found.resource)
            );
        }
        Command::Drain {
            node,
            ignore_daemonsets,
            timeout,
        } => {
            let deadline = Duration::from_secs(timeout);
            drain(&client, &node, ignore_daemonsets, deadline).await?;
        }
    }
    Ok(0)
}

/// Discovery as kubectl keeps it: on disk for 6 hours under the user's
/// cache directory against a cluster; in memory for the embedded server
/// (a new one each run).
fn discovery(client: &RestClient, embedded: bool) -> CachedDiscovery {
    let home = std::env::var_os("HOME").filter(|_| !embedded);
    match home {
        Some(home) => CachedDiscovery::with_disk(
            client.clone(),
            std::path::Path::new(&home).join(".kube/cache/clientgo-discovery"),
            DEFAULT_DISCOVERY_CACHE_TTL,
        ),
        None => CachedDiscovery::new(client.clone()),
    }
}

/// Runs `work`, stopping it quietly after `limit` when there is one.
async fn until_limit(
    limit: Option<Duration>,
    work: impl std::future::Future<Output = Result<(), String>>,
) -> Result<(), String> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, work).await.unwrap_or(Ok(())),
        None => work.await,
    }
}

/// `kind.group` as kubectl names a resource's objects (`deployment.apps`).
fn qualified(resource: &clientgo::apimachinery::ApiResource) -> String {
    let kind = resource.kind().to_lowercase();
    match resource.group() {
        "" => kind,
        group => format!("{kind}.{group}"),
    }
}

async fn get(
    client: &RestClient,
    mapper: &DeferredRestMapper,
    resource: &str,
    name: Option<&str>,
    namespace: Option<&str>,
    output: Output,
) -> Result<(), String> {
    let found = mapper
        .resource_for(resource)
        .await
        .map_err(|e| e.to_string())?;
    let resource = found.resource;
    let objects = ResourceClient::dynamic(client.clone(), resource.clone(), namespace);
    let items = match name {
        Some(name) => vec![objects.get(name).await.map_err(|e| e.to_string())?],
        None => {
            objects
                .list(&ListOptions::default())
                .await
                .map_err(|e| e.to_string())?
                .items
        }
    };
    match output {
        Output::Json => {
            for item in &items {
                let text = serde_json::to_string_pretty(item).map_err(|e| e.to_string())?;
                println!("{text}");
            }
        }
        Output::Name => {
            for item in &items {
                let name = item.metadata.name.as_deref().unwrap_or_default();
                println!("{}/{name}", qualified(&resource));
            }
        }
        Output::Table => {
            if items.is_empty() {
                eprintln!("No resources found.");
                return Ok(());
            }
            let all = namespace.is_none() && resource.is_namespaced();
            let mut rows = vec![header(resource.kind(), all)];
            rows.extend(items.iter().map(|item| row(resource.kind(), item, all)));
            print_columns(&rows);
        }
    }
    Ok(())
}

fn header(kind: &str, all_namespaces: bool) -> Vec<String> {
    let mut columns: Vec<&str> = Vec::new();
    if all_namespaces {
        columns.push("NAMESPACE");
    }
    columns.push("NAME");
    columns.extend_from_slice(match kind {
        "Pod" => &["STATUS", "NODE"],
        "Deployment" | "ReplicaSet" | "StatefulSet" => &["REPLICAS"],
        "Node" => &["STATUS"],
        _ => &[],
    });
    columns.push("AGE");
    columns.into_iter().map(str::to_string).collect()
}

fn row(kind: &str, object: &DynamicObject, all_namespaces: bool) -> Vec<String> {
    let text = |value: &serde_json::Value| value.as_str().unwrap_or("<none>").to_string();
    let data = &object.data;
    let mut row = Vec::new();
    if all_namespaces {
        row.push(object.metadata.namespace.clone().unwrap_or_default());
    }
    row.push(object.metadata.name.clone().unwrap_or_default());
    match kind {
        "Pod" => {
            row.push(text(&data["status"]["phase"]));
            row.push(text(&data["spec"]["nodeName"]));
        }
        "Deployment" | "ReplicaSet" | "StatefulSet" => {
            row.push(data["spec"]["replicas"].as_i64().unwrap_or(1).to_string());
        }
        "Node" => {
            let status = if data["spec"]["unschedulable"].as_bool() == Some(true) {
                "Ready,SchedulingDisabled"
            } else {
                "Ready"
            };
            row.push(status.to_string());
        }
        _ => {}
    }
    let age = object.metadata.creation_timestamp.as_ref().map(|created| {
        let seconds = k8s_openapi::jiff::Timestamp::now()
            .duration_since(created.0)
            .as_secs();
        human_age(seconds)
    });
    row.push(age.unwrap_or_else(|| "<unknown>".to_string()));
    row
}

/// An age as kubectl prints it: `42s`, `5m3s`, `17m`, `3h`, `4d`.
fn human_age(seconds: i64) -> String {
    let seconds = seconds.max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn print_columns(rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(String::len)
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("{}", line.join("   ").trim_end());
    }
}

async fn logs(pods: &ResourceClient<Pod>, pod: &str, options: &LogOptions) -> Result<(), String> {
    let stream = pods
        .log_stream(pod, options)
        .await
        .map_err(|e| e.to_string())?;
    let mut lines = LogLines::new(stream);
    while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
        println!("{line}");
    }
    Ok(())
}

async fn exec(
    pods: &ResourceClient<Pod>,
    pod: &str,
    command: Vec<String>,
    options: &StreamOptions,
) -> Result<u8, String> {
    let terminal = options.tty && std::io::stdin().is_terminal();
    let mut process = RemoteProcess::exec(pods, pod, command, options)
        .await
        .map_err(|e| e.to_string())?;
    // Raw mode for as long as the session lasts: keys go to the remote
    // terminal as typed, and it echoes them.
    let raw = if terminal {
        raw_terminal::enter()
    } else {
        None
    };
    if let Some(sizes) = process.terminal_size() {
        tokio::spawn(raw_terminal::send_sizes(sizes));
    }
    if let Some(mut stdin) = process.take_stdin() {
        tokio::spawn(async move {
            let mut local = tokio::io::stdin();
            let _ = tokio::io::copy(&mut local, &mut stdin).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = process.take_stdout().map(|mut remote| {
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut remote, &mut tokio::io::stdout()).await;
        })
    });
    let stderr = process.take_stderr().map(|mut remote| {
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut remote, &mut tokio::io::stderr()).await;
        })
    });
    let status = process.wait().await;
    for copy in [stdout, stderr].into_iter().flatten() {
        let _ = copy.await;
    }
    drop(raw);
    let status = status.map_err(|e| e.to_string())?;
    // kubectl exits with the command's code.
    let code = u8::try_from(status.code).unwrap_or(1);
    if code != 0 && !terminal {
        eprintln!("command terminated with exit code {}", status.code);
    }
    Ok(code)
}

/// The local terminal: raw mode while a TTY session runs, and its size.
#[cfg(unix)]
mod raw_terminal {
    use clientgo::rest::tools::remotecommand::TerminalSize;
    use rustix::termios::{OptionalActions, Termios, tcgetattr, tcgetwinsize, tcsetattr};
    use tokio::sync::mpsc;

    /// Restores the terminal's settings when dropped.
    pub(crate) struct Raw(Termios);

    impl Drop for Raw {
        fn drop(&mut self) {
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.0);
        }
    }

    /// Puts the terminal in raw mode; `None` when it cannot be.
    pub(crate) fn enter() -> Option<Raw> {
        let saved = tcgetattr(std::io::stdin()).ok()?;
        let mut raw = saved.clone();
        raw.make_raw();
        tcsetattr(std::io::stdin(), OptionalActions::Now, &raw).ok()?;
        Some(Raw(saved))
    }

    fn size() -> Option<TerminalSize> {
        let size = tcgetwinsize(std::io::stdout()).ok()?;
        Some(TerminalSize {
            width: size.ws_col,
            height: size.ws_row,
        })
    }

    /// Sends the size now and after every window change (SIGWINCH).
    pub(crate) async fn send_sizes(sizes: mpsc::Sender<TerminalSize>) {
        let Ok(mut changes) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())
        else {
            return;
        };
        loop {
            if let Some(size) = size()
                && sizes.send(size).await.is_err()
            {
                return;
            }
            if changes.recv().await.is_none() {
                return;
            }
        }
    }
}

#[cfg(not(unix))]
mod raw_terminal {
    use clientgo::rest::tools::remotecommand::TerminalSize;
    use tokio::sync::mpsc;

    pub(crate) struct Raw;

    pub(crate) fn enter() -> Option<Raw> {
        None
    }

    pub(crate) async fn send_sizes(sizes: mpsc::Sender<TerminalSize>) {
        let _ = sizes
            .send(TerminalSize {
                width: 80,
                height: 24,
            })
            .await;
    }
}

/// kubectl drain: cordon, evict every pod on the node (DaemonSet pods
/// skipped with `--ignore-daemonsets`, refused otherwise), retrying each
/// eviction a disruption budget refuses after the wait it gives, then
/// waiting for each pod to be deleted.
async fn drain(
    client: &RestClient,
    node: &str,
    ignore_daemonsets: bool,
    timeout: Duration,
) -> Result<(), String> {
    let nodes = ResourceClient::<Node>::all(client.clone());
    nodes
        .patch(
            node,
            &PatchOptions::default(),
            &Patch::Merge(serde_json::json!({"spec": {"unschedulable": true}})),
        )
        .await
        .map_err(|e| e.to_string())?;
    println!("node/{node} cordoned");
    let all_pods = ResourceClient::<Pod>::all(client.clone());
    let on_node = all_pods
        .list(&ListOptions {
            field_selector: Some(format!("spec.nodeName={node}")),
            ..ListOptions::default()
        })
        .await
        .map_err(|e| e.to_string())?
        .items;
    let (daemons, evictable): (Vec<Pod>, Vec<Pod>) = on_node.into_iter().partition(|pod| {
        pod.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|owner| owner.controller == Some(true) && owner.kind == "DaemonSet")
    });
    let daemon_names: Vec<String> = daemons.iter().map(namespaced_name).collect();
    if !daemon_names.is_empty() {
        if !ignore_daemonsets {
            return Err(format!(
                "cannot delete DaemonSet-managed pods (use --ignore-daemonsets to ignore): {}",
                daemon_names.join(", ")
            ));
        }
        eprintln!(
            "Warning: ignoring DaemonSet-managed pods: {}",
            daemon_names.join(", ")
        );
    }
    let evictions = evictable
        .into_iter()
        .map(|pod| evict_and_wait(client.clone(), pod, timeout));
    // All at once, as kubectl evicts; a task that panicked is not
    // dropped silently (join_all resumes its panic).
    let results = evictions
        .collect::<tokio::task::JoinSet<_>>()
        .join_all()
        .await;
    let failed: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if !failed.is_empty() {
        return Err(format!(
            "unable to drain node {node}: {}",
            failed.join("; ")
        ));
    }
    println!("node/{node} drained");
    Ok(())
}

fn namespaced_name(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Evicts one pod, again after each budget refusal, then waits with
/// `until` for its deletion (watched from the version it was evicted at,
/// so a deletion that came first is still seen).
async fn evict_and_wait(client: RestClient, pod: Pod, timeout: Duration) -> Result<(), String> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let resource_version = pod.metadata.resource_version.clone().unwrap_or_default();
    let pods = ResourceClient::<Pod>::namespaced(client, &namespace);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match pods.evict(&name, Some(&DeleteOptions::default())).await {
            Ok(()) => {
                println!("evicting pod {namespace}/{name}");
                break;
            }
            Err(EvictionError::DisruptionBudget {
                status,
                retry_after,
            }) => {
                eprintln!(
                    "error when evicting pods/{name:?} -n {namespace:?} (will retry after {}s): {}",
                    retry_after.as_secs(),
                    status.message
                );
                if tokio::time::Instant::now() + retry_after > deadline {
                    return Err(format!(
                        "{namespace}/{name}: the disruption budget held until the timeout"
                    ));
                }
                tokio::time::sleep(retry_after).await;
            }
            Err(EvictionError::Request(error)) if error.is_not_found() => return Ok(()),
            Err(EvictionError::Request(error)) => {
                return Err(format!("{namespace}/{name}: {error}"));
            }
        }
    }
    let watcher = ResourceListerWatcher::new(pods).tweak_list_options({
        let name = name.clone();
        move |options| options.field_selector = Some(format!("metadata.name={name}"))
    });
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    until(
        left,
        &resource_version,
        watcher,
        |event: &WatchEvent<Pod>| {
            Ok::<_, std::convert::Infallible>(matches!(event, WatchEvent::Deleted(_)))
        },
    )
    .await
    .map_err(|e| format!("{namespace}/{name}: waiting for its deletion: {e}"))?;
    println!("pod/{name} evicted");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_as_kubectl_prints_them() {
        let table = [
            (-3, "0s"),
            (42, "42s"),
            (119, "119s"),
            (303, "5m3s"),
            (1020, "17m"),
            (3 * 3600 + 5, "3h"),
            (5 * 86400, "5d"),
        ];
        for (seconds, want) in table {
            assert_eq!(human_age(seconds), want, "{seconds}");
        }
    }

    #[test]
    fn header_and_rows_line_up() {
        let header = header("Pod", true);
        assert_eq!(header, ["NAMESPACE", "NAME", "STATUS", "NODE", "AGE"]);
        let pod: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "default"},
            "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"},
        }))
        .unwrap();
        let row = row("Pod", &pod, true);
        assert_eq!(row[..4], ["default", "web-0", "Running", "node-1"]);
        assert_eq!(row.len(), header.len());
    }

    #[test]
    fn resources_are_named_as_kubectl_names_them() {
        let deployments =
            clientgo::apimachinery::ApiResource::of::<k8s_openapi::api::apps::v1::Deployment>();
        assert_eq!(qualified(&deployments), "deployment.apps");
        assert_eq!(
            qualified(&clientgo::apimachinery::ApiResource::of::<Pod>()),
            "pod"
        );
    }

    #[test]
    fn the_flags_parse_as_kubectls() {
        let flags = Flags::try_parse_from([
            "kubectl-lite",
            "exec",
            "web-0",
            "-it",
            "--",
            "sh",
            "-c",
            "ls",
        ])
        .unwrap();
        assert!(
            matches!(flags.command, Command::Exec { stdin: true, tty: true, ref command, .. } if command == &["sh", "-c", "ls"])
        );
        let flags =
            Flags::try_parse_from(["kubectl-lite", "port-forward", "web-0", "8080:80", ":9090"])
                .unwrap();
        assert!(
            matches!(flags.command, Command::PortForward { ref ports, .. } if ports.len() == 2)
        );
        assert!(Flags::try_parse_from(["kubectl-lite", "port-forward", "web-0", "x:80"]).is_err());
        assert!(Flags::try_parse_from(["kubectl-lite", "exec", "web-0"]).is_err());
    }
}
