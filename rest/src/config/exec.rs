//! [`ExecConfig`]: a kubeconfig user's `exec` section, the exec credential
//! plugin to run (clientcmd's `api.ExecConfig`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The API versions of ExecCredential this client speaks.
pub const EXEC_API_VERSIONS: [&str; 2] = [
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
];

/// How long a plugin may run by default before it is killed.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(60);

/// A kubeconfig user's `exec` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    /// The program to run (looked up in `PATH` unless it has a separator;
    /// relative paths with a separator are resolved against the kubeconfig
    /// file's directory when loaded).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: Vec<ExecEnvVar>,
    /// The ExecCredential API version to ask for and expect.
    pub api_version: String,
    /// Shown to the user when the program cannot be found.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// Pass the cluster's server and CA in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// `Never`, `IfAvailable` (the default when unset) or `Always`: whether
    /// the plugin may talk to the user, as client-go decides it. When
    /// standard input is a terminal (and the mode is not `Never`) the plugin
    /// runs interactively: the terminal is its standard input, its standard
    /// error is shown, `spec.interactive` is true and no timeout applies
    /// (a login can take as long as the user). `Always` without a terminal
    /// is refused with an error saying so.
    #[serde(default)]
    pub interactive_mode: Option<String>,
    /// How long a non-interactive run may take (not a kubeconfig field).
    #[serde(skip, default = "default_timeout")]
    pub timeout: Duration,
    /// Whether standard input is a terminal: `None` (the default) asks the
    /// operating system; `Some` decides for it, for programs that know
    /// better and for tests (not a kubeconfig field).
    #[serde(skip)]
    pub stdin_is_terminal: Option<bool>,
}

fn default_timeout() -> Duration {
    DEFAULT_EXEC_TIMEOUT
}

impl ExecConfig {
    /// A plugin running `command` with ExecCredential `api_version`.
    pub fn new(command: impl Into<String>, api_version: impl Into<String>) -> Self {
        ExecConfig {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            api_version: api_version.into(),
            install_hint: None,
            provide_cluster_info: false,
            interactive_mode: Some("Never".to_string()),
            timeout: DEFAULT_EXEC_TIMEOUT,
            stdin_is_terminal: None,
        }
    }

    /// Adds arguments.
    #[must_use]
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push(ExecEnvVar {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// Sets how long the plugin may run.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// One environment variable for a plugin.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecEnvVar {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

impl fmt::Debug for ExecEnvVar {
    /// Shows the name only: plugins take credentials through their
    /// environment (client-go redacts the values too).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecEnvVar")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}
