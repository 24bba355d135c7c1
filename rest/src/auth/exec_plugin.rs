//! Exec credential plugins (`client.authentication.k8s.io` v1 and v1beta1):
//! running the plugin a kubeconfig's `exec` section
//! ([`ExecConfig`]) names, and reading the ExecCredential it prints.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;

use crate::auth::error::ExecError;
use crate::config::exec::{EXEC_API_VERSIONS, ExecConfig};

/// Stderr kept for error messages, from the end of the output.
const STDERR_KEPT: usize = 4096;

/// Whether `config` can be run at all: a command, a supported API
/// version, and an interactive mode that fits standard input.
fn check(config: &ExecConfig) -> Result<(), ExecError> {
    let unusable = |message: String| ExecError::Unusable {
        command: config.command.clone(),
        message,
    };
    if config.command.is_empty() {
        return Err(unusable("the command is empty".to_string()));
    }
    if !EXEC_API_VERSIONS.contains(&config.api_version.as_str()) {
        return Err(unusable(format!(
            "apiVersion {:?} is not supported (use {} or {})",
            config.api_version, EXEC_API_VERSIONS[0], EXEC_API_VERSIONS[1]
        )));
    }
    interactive(config).map(|_| ()).map_err(unusable)
}

/// Whether this run of `config` is interactive (see
/// [`ExecConfig::interactive_mode`]).
fn interactive(config: &ExecConfig) -> Result<bool, String> {
    let terminal = config
        .stdin_is_terminal
        .unwrap_or_else(|| std::io::IsTerminal::is_terminal(&std::io::stdin()));
    crate::auth::exec_interactivity::interactive(config.interactive_mode.as_deref(), terminal)
}

/// What a plugin handed out.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ExecCredential {
    pub(crate) token: Option<String>,
    /// Client certificate and key PEM, when the plugin gave them.
    pub(crate) client_certificate: Option<(String, String)>,
    pub(crate) expires: Option<jiff::Timestamp>,
}

impl std::fmt::Debug for ExecCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecCredential")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field(
                "client_certificate",
                &self.client_certificate.as_ref().map(|_| "<redacted>"),
            )
            .field("expires", &self.expires)
            .finish()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialDocument {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    client_certificate_data: Option<String>,
    #[serde(default)]
    client_key_data: Option<String>,
    #[serde(default)]
    expiration_timestamp: Option<String>,
}

/// The cluster as the plugin sees it in `KUBERNETES_EXEC_INFO` when
/// `provideClusterInfo` is set.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExecClusterInfo {
    pub(crate) server: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tls_server_name: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) insecure_skip_tls_verify: bool,
    /// Base64 of the CA bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) certificate_authority_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) proxy_url: Option<String>,
}

/// Runs `config`'s plugin once and reads its credential.
pub(crate) async fn run_plugin(
    config: &ExecConfig,
    cluster: Option<&ExecClusterInfo>,
) -> Result<ExecCredential, ExecError> {
    check(config)?;
    let interactive = interactive(config).map_err(|message| ExecError::Unusable {
        command: config.command.clone(),
        message,
    })?;
    let mut spec = serde_json::json!({ "interactive": interactive });
    if config.provide_cluster_info
        && let Some(cluster) = cluster
    {
        spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    let exec_info = serde_json::json!({
        "apiVersion": config.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    });

    let mut command = tokio::process::Command::new(&config.command);
    command
        .args(&config.args)
        .env("KUBERNETES_EXEC_INFO", exec_info.to_string())
        .stdin(if interactive {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for variable in &config.env {
        command.env(&variable.name, &variable.value);
    }
    let mut child = command.spawn().map_err(|source| ExecError::Spawn {
        command: config.command.clone(),
        source,
        install_hint: config.install_hint.clone(),
    })?;

    // Read both pipes while waiting, so a chatty plugin never blocks on a
    // full pipe and stderr is at hand if it has to be killed.
    let stderr_seen = Arc::new(Mutex::new(Vec::new()));
    let stdout_task = child.stdout.take().map(|mut stdout| {
        tokio::spawn(async move {
            let mut buffer = Vec::new();
            let _ = stdout.read_to_end(&mut buffer).await;
            buffer
        })
    });
    let stderr_task = child.stderr.take().map(|mut stderr| {
        let seen = Arc::clone(&stderr_seen);
        tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            while let Ok(read) = stderr.read(&mut chunk).await {
                if read == 0 {
                    break;
                }
                seen.lock().extend_from_slice(&chunk[..read]);
                if interactive {
                    // The user must see the plugin's prompts.
                    use std::io::Write as _;
                    let _ = std::io::stderr().write_all(&chunk[..read]);
                }
            }
        })
    });

    // An interactive login takes as long as the user does.
    let limit = if interactive {
        Duration::MAX
    } else {
        config.timeout
    };
    let waited = tokio::time::timeout(limit, child.wait()).await;
    let stderr_text = |seen: &Mutex<Vec<u8>>| tail_text(&seen.lock());
    let exit = match waited {
        Err(_elapsed) => {
            let _ = child.kill().await;
            return Err(ExecError::Timeout {
                command: config.command.clone(),
                timeout: config.timeout,
                stderr: stderr_text(&stderr_seen),
            });
        }
        Ok(Err(source)) => {
            return Err(ExecError::Spawn {
                command: config.command.clone(),
                source,
                install_hint: None,
            });
        }
        Ok(Ok(exit)) => exit,
    };
    // The pipes close when the plugin exits (unless it left children
    // holding them); do not wait for those forever.
    let stdout = match stdout_task {
        Some(task) => tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    if let Some(task) = stderr_task {
        let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
    }
    let stderr = stderr_text(&stderr_seen);
    if !exit.success() {
        return Err(ExecError::Failed {
            command: config.command.clone(),
            exit: exit.to_string(),
            stderr,
        });
    }
    if !stderr.is_empty() {
        tracing::debug!(command = %config.command, %stderr, "exec credential plugin wrote to stderr");
    }
    parse_credential(config, &stdout)
}

fn tail_text(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(STDERR_KEPT);
    String::from_utf8_lossy(&bytes[start..]).trim().to_string()
}

/// The start of a plugin's output that is not an ExecCredential, to help
/// find what went wrong (a login page, a usage message), unless it may hold
/// a credential: output cut off in the middle of a token must not end up
/// in an error message or a log.
fn describe_output(stdout: &[u8]) -> String {
    let start = String::from_utf8_lossy(&stdout[..stdout.len().min(200)]).to_string();
    let lowered = start.to_lowercase();
    let sensitive = ["token", "keydata", "private key", "password", "secret"];
    if sensitive.iter().any(|word| lowered.contains(word)) {
        format!(
            "the {} bytes of output are not shown: they may hold a credential",
            stdout.len()
        )
    } else {
        format!("output starts {start:?}")
    }
}

/// Reads and checks the ExecCredential a plugin printed.
pub(crate) fn parse_credential(
    config: &ExecConfig,
    stdout: &[u8],
) -> Result<ExecCredential, ExecError> {
    let invalid = |message: String| ExecError::InvalidOutput {
        command: config.command.clone(),
        message,
    };
    let document: ExecCredentialDocument = serde_json::from_slice(stdout)
        .map_err(|e| invalid(format!("not JSON ({e}); {}", describe_output(stdout))))?;
    if document.kind != "ExecCredential" {
        return Err(invalid(format!(
            "kind is {:?}, expected \"ExecCredential\"",
            document.kind
        )));
    }
    if document.api_version != config.api_version {
        return Err(invalid(format!(
            "apiVersion is {:?} but the kubeconfig asked for {:?}",
            document.api_version, config.api_version
        )));
    }
    let status = document
        .status
        .ok_or_else(|| invalid("it has no status".to_string()))?;
    let expires = match status.expiration_timestamp.as_deref() {
        None | Some("") => None,
        Some(text) => Some(text.parse::<jiff::Timestamp>().map_err(|e| {
            invalid(format!(
                "status.expirationTimestamp {text:?} is not a time: {e}"
            ))
        })?),
    };
    let token = status.token.filter(|token| !token.is_empty());
    let certificate = status.client_certificate_data.filter(|s| !s.is_empty());
    let key = status.client_key_data.filter(|s| !s.is_empty());
    let client_certificate = match (certificate, key) {
        (Some(certificate), Some(key)) => Some((certificate, key)),
        (None, None) => None,
        (Some(_), None) => {
            return Err(invalid(
                "status.clientCertificateData is set without status.clientKeyData".to_string(),
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "status.clientKeyData is set without status.clientCertificateData".to_string(),
            ));
        }
    };
    if token.is_none() && client_certificate.is_none() {
        return Err(invalid(
            "status has neither a token nor a client certificate".to_string(),
        ));
    }
    Ok(ExecCredential {
        token,
        client_certificate,
        expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ExecConfig {
        ExecConfig::new("plugin", "client.authentication.k8s.io/v1")
    }

    #[test]
    fn reads_a_token_with_expiry() {
        let credential = parse_credential(
            &config(),
            br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"abc","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        assert_eq!(credential.token.as_deref(), Some("abc"));
        assert!(credential.expires.is_some());
        assert!(!format!("{credential:?}").contains("abc"));
    }

    #[test]
    fn rejects_what_client_go_rejects() {
        let cases: [(&[u8], &str); 6] = [
            (b"not json", "not JSON"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"Pod","status":{"token":"a"}}"#, "kind"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"a"}}"#, "apiVersion"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}"#, "no status"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}"#, "neither"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"x"}}"#, "without"),
        ];
        for (output, expected) in cases {
            let error = parse_credential(&config(), output).unwrap_err().to_string();
            assert!(
                error.contains(expected),
                "{error} should mention {expected}"
            );
        }
    }

    #[test]
    fn refuses_unsupported_versions_and_always_without_a_terminal() {
        assert!(
            check(&ExecConfig::new(
                "p",
                "client.authentication.k8s.io/v1alpha1"
            ))
            .is_err()
        );
        let mut always = config();
        always.interactive_mode = Some("Always".to_string());
        always.stdin_is_terminal = Some(false);
        assert!(check(&always).unwrap_err().to_string().contains("Always"));
        always.stdin_is_terminal = Some(true);
        assert!(check(&always).is_ok());
    }
}
