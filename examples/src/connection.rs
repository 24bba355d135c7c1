//! [`Connection`]: a client for the cluster the flags, `KUBECONFIG` or
//! the pod's service account point at, or, when there is none, for a real
//! kube-apiserver started on loopback (envtest: `--envtest`, or for a
//! program preferring it when `CLIENTGO_ENVTEST_ASSETS` or
//! `KUBEBUILDER_ASSETS` names its binaries), else for an embedded API
//! server.

use std::path::PathBuf;
use std::time::Duration;

use clientgo::rest::{
    Config, RestClient,
    config::{ConfigError, ConfigOverrides, InClusterOptions, LoadingRules},
};

use clientgo::testing::envtest::{
    ASSETS_VARIABLE, ControlPlane, ControlPlaneOptions, KUBEBUILDER_ASSETS_VARIABLE,
};

use crate::embedded::{Embedded, EmbeddedOptions};

/// The flags every example shares (clap flattens them into each
/// program's own).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CommonFlags {
    /// The kubeconfig to use (default: KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Watch one namespace only (default: all)
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Stop after this long (default: 20 with the embedded server, until
    /// Ctrl-C against a cluster)
    #[arg(long, value_name = "SECONDS", value_parser = crate::arguments::seconds)]
    pub duration: Option<Duration>,
    /// Use the embedded API server even if a kubeconfig exists
    #[arg(long)]
    pub embedded: bool,
    /// Start a real kube-apiserver and etcd on loopback (envtest) instead
    /// of the embedded server (the operator's default with no cluster
    /// configured when CLIENTGO_ENVTEST_ASSETS or KUBEBUILDER_ASSETS is set)
    #[arg(long, conflicts_with = "embedded")]
    pub envtest: bool,
}

/// Where the example runs.
#[derive(Debug)]
pub struct Connection {
    /// The client.
    pub client: RestClient,
    /// The configuration the client was built from.
    pub config: Config,
    /// The embedded server, when there is no cluster.
    pub embedded: Option<Embedded>,
    /// The real control plane started for this run (envtest), when there
    /// is no cluster; stopped when the connection is dropped.
    pub control_plane: Option<Box<ControlPlane>>,
    /// How long to run: `--duration`, else 20 s embedded, else until
    /// Ctrl-C (`None`).
    pub duration: Option<Duration>,
}

/// How long an embedded run lasts without `--duration`.
pub const EMBEDDED_DEFAULT_DURATION: Duration = Duration::from_secs(20);

impl Connection {
    /// Connects as the flags say, falling back to an embedded server
    /// seeded as `seed` says when no configuration is found (and neither
    /// `--kubeconfig` nor `--context` was given). A cluster is asked for
    /// `/version` first, so an unreachable one fails here, naming its URL.
    /// Prints the first line: where it runs.
    pub async fn open(flags: &CommonFlags, seed: EmbeddedOptions) -> Result<Connection, String> {
        let (connection, banner) = Connection::open_quietly(flags, seed).await?;
        crate::say!("{banner}");
        Ok(connection)
    }

    /// As [`open`](Self::open), but with no cluster configured a real
    /// kube-apiserver (envtest) is started when `CLIENTGO_ENVTEST_ASSETS`
    /// or `KUBEBUILDER_ASSETS` names its binaries, the embedded server
    /// otherwise (a program whose scene the real server should play).
    pub async fn open_preferring_envtest(
        flags: &CommonFlags,
        seed: EmbeddedOptions,
    ) -> Result<Connection, String> {
        let (connection, banner) = Connection::open_with(flags, seed, true).await?;
        crate::say!("{banner}");
        Ok(connection)
    }

    /// As [`open`](Self::open), but returns the first line instead of
    /// printing it, for programs whose standard output is data.
    pub async fn open_quietly(
        flags: &CommonFlags,
        seed: EmbeddedOptions,
    ) -> Result<(Connection, String), String> {
        Connection::open_with(flags, seed, false).await
    }

    async fn open_with(
        flags: &CommonFlags,
        seed: EmbeddedOptions,
        prefer_envtest: bool,
    ) -> Result<(Connection, String), String> {
        let config = if flags.embedded || flags.envtest {
            None
        } else {
            cluster_config(flags)?
        };
        if let Some(config) = config {
            let url = config.host.clone();
            let client = RestClient::new(config.clone())
                .map_err(|error| format!("cannot build a client for {url}: {error}"))?;
            let version = client
                .get()
                .abs_path("/version")
                .timeout(Duration::from_secs(15))
                .send_raw()
                .await
                .map_err(|error| format!("cannot reach the cluster at {url}: {error}"))?;
            let git_version = version
                .json::<serde_json::Value>()
                .ok()
                .and_then(|v| v["gitVersion"].as_str().map(str::to_string))
                .unwrap_or_else(|| "unknown version".to_string());
            let banner = format!("cluster at {url} (Kubernetes {git_version})");
            let connection = Connection {
                client,
                config,
                embedded: None,
                control_plane: None,
                duration: flags.duration,
            };
            return Ok((connection, banner));
        }
        if flags.envtest || (prefer_envtest && !flags.embedded && envtest_assets_named()) {
            return Connection::envtest(flags).await;
        }
        let embedded = Embedded::start(seed).await?;
        let banner = format!(
            "embedded API server at {} ({}); pass --kubeconfig to use a cluster",
            embedded.url(),
            embedded.describe()
        );
        let config = Config::new(embedded.url());
        let client = RestClient::new(config.clone())
            .map_err(|error| format!("cannot build a client for the embedded server: {error}"))?;
        let connection = Connection {
            client,
            config,
            embedded: Some(embedded),
            control_plane: None,
            duration: Some(flags.duration.unwrap_or(EMBEDDED_DEFAULT_DURATION)),
        };
        Ok((connection, banner))
    }

    /// A real kube-apiserver and etcd started for this run.
    async fn envtest(flags: &CommonFlags) -> Result<(Connection, String), String> {
        let plane = ControlPlane::start(ControlPlaneOptions::default())
            .await
            .map_err(|error| error.to_string())?;
        let banner = format!(
            "kube-apiserver {} started at {} in {:.1} s (envtest; no controllers, no garbage collector)",
            plane.kubernetes_version(),
            plane.url(),
            plane.started_in().as_secs_f64()
        );
        let config = plane.config();
        let client = RestClient::new(config.clone())
            .map_err(|error| format!("cannot build a client for kube-apiserver: {error}"))?;
        let connection = Connection {
            client,
            config,
            embedded: None,
            control_plane: Some(Box::new(plane)),
            duration: Some(flags.duration.unwrap_or(EMBEDDED_DEFAULT_DURATION)),
        };
        Ok((connection, banner))
    }

    /// Whether this run's server is local and throwaway (embedded or
    /// envtest), so a program may play its scene on it.
    pub fn is_local(&self) -> bool {
        self.embedded.is_some() || self.control_plane.is_some()
    }
}

/// Whether one of envtest's folder variables is set.
fn envtest_assets_named() -> bool {
    [ASSETS_VARIABLE, KUBEBUILDER_ASSETS_VARIABLE]
        .iter()
        .any(|variable| std::env::var_os(variable).is_some_and(|value| !value.is_empty()))
}

/// The configuration of the cluster the flags and environment name, or
/// `None` when there is nothing to find (so the embedded server is used).
fn cluster_config(flags: &CommonFlags) -> Result<Option<Config>, String> {
    let mut rules = LoadingRules::from_env();
    if let Some(path) = &flags.kubeconfig {
        rules = rules.explicit_path(path);
    }
    let mut overrides = ConfigOverrides::default();
    if let Some(context) = &flags.context {
        overrides = overrides.context(context);
    }
    if let Some(namespace) = &flags.namespace {
        overrides = overrides.namespace(namespace);
    }
    let asked_for_a_cluster = flags.kubeconfig.is_some() || flags.context.is_some();
    match Config::infer_with(&rules, &overrides, &InClusterOptions::from_env()) {
        Ok(config) => Ok(Some(config)),
        Err(ConfigError::NothingFound { .. }) if !asked_for_a_cluster => Ok(None),
        Err(error) => Err(format!("cannot configure the client: {error}")),
    }
}
