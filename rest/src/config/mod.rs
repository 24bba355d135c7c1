//! Where the API server is and how to talk to it (client-go's
//! `rest.Config` and `tools/clientcmd`): [`Config`] and what its fields
//! name, the kubeconfig format ([`Kubeconfig`]), which files are read
//! ([`LoadingRules`]), how a context becomes a [`Config`]
//! ([`ConfigOverrides`]), and the in-cluster service account
//! ([`InClusterOptions`]).

pub(crate) mod client_config;
pub(crate) mod content_type;
pub(crate) mod credentials;
pub(crate) mod error;
pub(crate) mod exec;
pub(crate) mod in_cluster;
pub(crate) mod kubeconfig;
pub(crate) mod loading_rules;
pub(crate) mod oidc;
pub(crate) mod pem;
pub(crate) mod proxy;
pub(crate) mod rest_config;
pub(crate) mod secret;
pub(crate) mod warnings;

pub use client_config::ConfigOverrides;
pub use content_type::{ContentType, PROTOBUF_ACCEPT};
pub use credentials::Credentials;
pub use error::ConfigError;
pub use exec::{DEFAULT_EXEC_TIMEOUT, EXEC_API_VERSIONS, ExecConfig, ExecEnvVar};
pub use in_cluster::{InClusterOptions, SERVICE_ACCOUNT_DIR};
pub use kubeconfig::{
    AuthInfo, AuthProvider, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};
pub use loading_rules::LoadingRules;
pub use oidc::OidcConfig;
pub use pem::PemSource;
pub use rest_config::{
    Config, DEFAULT_MAX_RETRIES, DEFAULT_TLS_FILE_RELOAD_INTERVAL, DEFAULT_WATCH_HEADER_WAIT,
    Impersonation, Proxy, TOKEN_FILE_REFRESH, TlsConfig, default_user_agent,
};
pub use secret::Secret;
pub use warnings::{
    CollectWarnings, LogWarnings, NoWarnings, Warning, WarningHandler, parse_warning_header,
};
