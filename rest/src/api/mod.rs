//! Typed access to API resources (client-go's typed and dynamic clients):
//! [`ResourceClient`] and the options of its calls, and a pod's
//! subresources (eviction, logs); CRDs installed and waited for.

pub(crate) mod crd_install;
pub(crate) mod options;
pub(crate) mod pod_subresources;
pub(crate) mod resource_client;

pub use crd_install::{CrdInstallError, CrdInstallOptions, install_crds};
pub use options::{
    CreateOptions, DeleteOptions, Patch, PatchOptions, Preconditions, PropagationPolicy,
    UpdateOptions,
};
pub use pod_subresources::{
    EVICTION_RETRY_AFTER, EvictionError, LogLines, LogOptions, LogStream, MAX_LOG_LINE_BYTES,
};
pub use resource_client::ResourceClient;
