//! client-go's informer-gen and lister-gen for clientgo-informers: reads a
//! Kubernetes OpenAPI v2 document or CustomResourceDefinition manifests and
//! works out every resource's group, version, kind, plural, scope, verbs,
//! subresources and Rust type, from which typed informers, listers and
//! factory accessors are generated.
//!
//! ```
//! use clientgo_codegen::{TypeMapping, resources_from_crds};
//!
//! let crd = r#"
//! apiVersion: apiextensions.k8s.io/v1
//! kind: CustomResourceDefinition
//! metadata: {name: crontabs.stable.example.com}
//! spec:
//!   group: stable.example.com
//!   scope: Namespaced
//!   names: {plural: crontabs, kind: CronTab}
//!   versions:
//!     - {name: v1, served: true, storage: true, subresources: {status: {}}}
//! "#;
//! let types = TypeMapping::from([("CronTab".to_string(), "my_crate::CronTab".to_string())]);
//! let resources = resources_from_crds("crontab.yaml", crd, &types)?;
//! assert_eq!(resources[0].plural, "crontabs");
//! assert!(resources[0].is_watchable());
//! # Ok::<(), clientgo_codegen::Error>(())
//! ```

mod cluster;
mod crd;
mod error;
mod generate;
mod k8s_openapi_versions;
mod model;
mod naming;
mod openapi;
mod output;

pub use cluster::{ClusterOptions, fetch_openapi};
pub use crd::{TypeMapping, resources_from_crds};
pub use error::Error;
pub use generate::{GenerateOptions, GeneratedFile, Target, generate};
pub use model::{Resource, Stability};
pub use openapi::{k8s_openapi_type_path, resources_from_openapi};
pub use output::{compare_output, write_output};
