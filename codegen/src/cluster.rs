//! Fetching a cluster's OpenAPI v2 document (what `kubectl get --raw
//! /openapi/v2` prints), with clientgo-rest's configuration rules.

use clientgo_rest::{
    Config, RestClient,
    config::{ConfigOverrides, InClusterOptions, LoadingRules},
};

use crate::error::Error;

/// Where to find the cluster: kubectl's `--kubeconfig` and `--context`.
/// With neither, `KUBECONFIG` or `~/.kube/config` is used, else the
/// in-cluster service account (client-go's rules).
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// An explicit kubeconfig file.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// The context to use instead of the current one.
    pub context: Option<String>,
}

/// Fetches `/openapi/v2` from the cluster `options` select. Blocks the
/// calling thread (it runs its own single-threaded tokio runtime), so
/// call it from synchronous code only.
pub fn fetch_openapi(options: &ClusterOptions) -> Result<Vec<u8>, Error> {
    let mut rules = LoadingRules::from_env();
    if let Some(path) = &options.kubeconfig {
        rules = rules.explicit_path(path);
    }
    let mut overrides = ConfigOverrides::default();
    if let Some(context) = &options.context {
        overrides = overrides.context(context);
    }
    let config = Config::infer_with(&rules, &overrides, &InClusterOptions::from_env())
        .map_err(|error| Error::Cluster(error.into()))?;
    let client = RestClient::new(config).map_err(Error::Cluster)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let response = runtime
        .block_on(client.get().abs_path("/openapi/v2").send_raw())
        .map_err(Error::Cluster)?;
    Ok(response.body.to_vec())
}
