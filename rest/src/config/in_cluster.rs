//! In-cluster configuration: the service's host and port from the
//! environment and the pod's service-account files, as client-go's
//! `rest.InClusterConfig`; and [`Config::infer`], which tries the kubeconfig
//! first and then this.

use std::path::PathBuf;

use crate::config::client_config::ConfigOverrides;
use crate::config::error::ConfigError;
use crate::config::loading_rules::LoadingRules;
use crate::config::pem::PemSource;
use crate::config::rest_config::Config;

/// Where Kubernetes mounts a pod's service-account files.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// What in-cluster configuration reads. [`InClusterOptions::from_env`]
/// reads the process environment and the standard paths; tests set the
/// fields directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InClusterOptions {
    /// `KUBERNETES_SERVICE_HOST`.
    pub service_host: Option<String>,
    /// `KUBERNETES_SERVICE_PORT`.
    pub service_port: Option<String>,
    /// The service-account token, used as a token file so a rotated
    /// (projected) token is picked up.
    pub token_file: PathBuf,
    /// The cluster's CA bundle.
    pub ca_file: PathBuf,
    /// The pod's namespace.
    pub namespace_file: PathBuf,
}

impl InClusterOptions {
    /// The environment's service variables and the standard file paths.
    pub fn from_env() -> Self {
        let directory = PathBuf::from(SERVICE_ACCOUNT_DIR);
        InClusterOptions {
            service_host: std::env::var("KUBERNETES_SERVICE_HOST")
                .ok()
                .filter(|v| !v.is_empty()),
            service_port: std::env::var("KUBERNETES_SERVICE_PORT")
                .ok()
                .filter(|v| !v.is_empty()),
            token_file: directory.join("token"),
            ca_file: directory.join("ca.crt"),
            namespace_file: directory.join("namespace"),
        }
    }

    /// The same options with the three files under `directory`.
    #[must_use]
    pub fn service_account_dir(mut self, directory: impl Into<PathBuf>) -> Self {
        let directory = directory.into();
        self.token_file = directory.join("token");
        self.ca_file = directory.join("ca.crt");
        self.namespace_file = directory.join("namespace");
        self
    }
}

impl Config {
    /// The in-cluster configuration from the process environment.
    pub fn in_cluster() -> Result<Config, ConfigError> {
        Config::in_cluster_with(&InClusterOptions::from_env())
    }

    /// The in-cluster configuration from `options`: host
    /// `https://<host>:<port>` (IPv6 hosts bracketed), the token file as a
    /// bearer token file, the CA file if readable (a failure to read it is
    /// logged, as client-go does), and the namespace file's namespace.
    pub fn in_cluster_with(options: &InClusterOptions) -> Result<Config, ConfigError> {
        let (Some(host), Some(port)) = (&options.service_host, &options.service_port) else {
            return Err(ConfigError::NotInCluster);
        };
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        // Reading the token now makes a pod without one fail at startup
        // with a clear message rather than on the first request.
        std::fs::metadata(&options.token_file).map_err(|source| ConfigError::ReadFile {
            what: "service-account token".to_string(),
            path: options.token_file.clone(),
            source,
        })?;
        let mut config = Config::new(format!("https://{host}:{port}"))
            .bearer_token_file(options.token_file.clone());
        match std::fs::read(&options.ca_file) {
            Ok(pem) => config.tls.certificate_authority = Some(PemSource::Data(pem)),
            Err(error) => tracing::warn!(
                path = %options.ca_file.display(),
                %error,
                "cannot read the service-account CA; using the system's certificate authorities"
            ),
        }
        if let Ok(namespace) = std::fs::read_to_string(&options.namespace_file) {
            let namespace = namespace.trim();
            if !namespace.is_empty() {
                config.namespace = namespace.to_string();
            }
        }
        config.origin = "in-cluster service account".to_string();
        Ok(config)
    }

    /// The configuration a program should use: the kubeconfig
    /// ([`LoadingRules::from_env`]), else the in-cluster service account.
    /// The error lists what was tried and why each failed.
    pub fn infer() -> Result<Config, ConfigError> {
        Config::infer_with(
            &LoadingRules::from_env(),
            &ConfigOverrides::default(),
            &InClusterOptions::from_env(),
        )
    }

    /// [`Config::infer`] with explicit rules, overrides and in-cluster
    /// options. An explicit kubeconfig path is never skipped: its errors are
    /// returned as they are.
    pub fn infer_with(
        rules: &LoadingRules,
        overrides: &ConfigOverrides,
        in_cluster: &InClusterOptions,
    ) -> Result<Config, ConfigError> {
        let mut tried = Vec::new();
        match rules.load() {
            Ok(Some(kubeconfig)) => {
                match Config::from_kubeconfig_document(&kubeconfig, overrides) {
                    Ok(config) => return Ok(config),
                    Err(error) if rules.explicit_path.is_some() => return Err(error),
                    Err(error) => tried.push(format!("{}: {error}", rules.describe())),
                }
            }
            Ok(None) => tried.push(format!("{}: no such file", rules.describe())),
            Err(error) if rules.explicit_path.is_some() => return Err(error),
            Err(error) => tried.push(format!("{}: {error}", rules.describe())),
        }
        match Config::in_cluster_with(in_cluster) {
            Ok(mut config) => {
                if let Some(namespace) = &overrides.namespace {
                    config.namespace = namespace.clone();
                }
                Ok(config)
            }
            Err(error) => {
                tried.push(format!("in-cluster: {error}"));
                Err(ConfigError::NothingFound { tried })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(directory: &std::path::Path) -> InClusterOptions {
        InClusterOptions {
            service_host: Some("fd00::1".to_string()),
            service_port: Some("443".to_string()),
            token_file: PathBuf::new(),
            ca_file: PathBuf::new(),
            namespace_file: PathBuf::new(),
        }
        .service_account_dir(directory)
    }

    #[test]
    fn not_in_cluster_without_the_service_variables() {
        let options = InClusterOptions {
            service_host: None,
            ..options(std::path::Path::new("/nowhere"))
        };
        assert!(matches!(
            Config::in_cluster_with(&options),
            Err(ConfigError::NotInCluster)
        ));
    }

    #[test]
    fn a_missing_token_is_reported_with_its_path() {
        let error = Config::in_cluster_with(&options(std::path::Path::new("/nowhere/sa")))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/nowhere/sa/token"), "{error}");
    }

    #[test]
    fn infer_lists_everything_it_tried() {
        let rules = LoadingRules {
            explicit_path: None,
            kubeconfig_env: Some("/no/such/kubeconfig".into()),
            home_dir: None,
        };
        let in_cluster = InClusterOptions {
            service_host: None,
            ..options(std::path::Path::new("/nowhere"))
        };
        let error = Config::infer_with(&rules, &ConfigOverrides::default(), &in_cluster)
            .unwrap_err()
            .to_string();
        assert!(error.contains("/no/such/kubeconfig"), "{error}");
        assert!(error.contains("in-cluster"), "{error}");
    }
}
