//! client-go's informer-gen and lister-gen for clientgo-informers: reads a
//! Kubernetes OpenAPI v2 document or CustomResourceDefinition manifests,
//! works out every resource's group, version, kind, plural, scope, verbs,
//! subresources and Rust type, and generates typed informers, listers and
//! factory accessors (`factory.stable().v1().crontabs().lister()`).
//!
//! Most users run the `clientgo-codegen` binary (`--help` lists its
//! flags); the library is the same steps, for build scripts and tools:
//!
//! 1. [`resources_from_openapi`] or [`resources_from_crds`] (or
//!    [`fetch_openapi`] first, for a cluster's spec) give [`Resource`]s;
//!    every error names the file and the JSON path of the problem.
//! 2. [`generate`] turns the watchable ones of the versions asked for (GA
//!    by default) into [`GeneratedFile`]s: a root `mod.rs` with the group
//!    accessors, `for_resource` and `register_all`, then `<group>/mod.rs`
//!    and `<group>/<version>.rs`. The output is sorted, formatted with
//!    prettyplease and headed with the command that regenerates it, so the
//!    same input always gives the same bytes.
//! 3. [`write_output`] replaces the output directory through a staging
//!    directory (never half-written, and never over files it did not
//!    generate); [`compare_output`] tells which files are stale.
//!
//! ```
//! use clientgo_codegen::{
//!     DEFAULT_INFORMERS_PATH, GenerateOptions, Target, TypeMapping, generate, resources_from_crds,
//! };
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
//! let types = TypeMapping::from([("CronTab".to_string(), "crate::CronTab".to_string())]);
//! let resources = resources_from_crds("crontab.yaml", crd, &types)?;
//! assert_eq!(resources[0].plural, "crontabs");
//! assert!(resources[0].is_watchable());
//!
//! let files = generate(
//!     &resources,
//!     &GenerateOptions {
//!         target: Target::External {
//!             trait_name: "CronTabInformers".into(),
//!             informers_path: DEFAULT_INFORMERS_PATH.into(),
//!         },
//!         command: "clientgo-codegen --crd crontab.yaml ...".into(),
//!         include_beta: false,
//!         include_alpha: false,
//!     },
//! )?;
//! let paths: Vec<_> = files.iter().map(|f| f.path.display().to_string()).collect();
//! assert_eq!(paths, ["mod.rs", "stable/mod.rs", "stable/v1.rs"]);
//! assert!(files[2].contents.contains("pub fn crontabs(&self, namespace: &str) -> CronTabNamespaceLister"));
//! # Ok::<(), clientgo_codegen::Error>(())
//! ```

mod cluster;
mod crd;
mod error;
mod generate;
mod k8s_openapi_versions;
mod log_subscriber;
mod model;
mod naming;
mod openapi;
mod output;
mod protobuf;

pub use cluster::{ClusterOptions, fetch_openapi};
pub use crd::{TypeMapping, resources_from_crds};
pub use error::Error;
pub use generate::{DEFAULT_INFORMERS_PATH, GenerateOptions, GeneratedFile, Target, generate};
pub use log_subscriber::install_log_subscriber;
pub use model::{DYNAMIC_OBJECT, Resource, Stability};
pub use openapi::{
    OpenApiResources, k8s_openapi_type_path, resources_from_openapi, resources_from_openapi_typed,
};
pub use output::{compare_output, write_output};
pub use protobuf::{
    ProtobufGenError, ProtobufGenOptions, ProtobufSummary, generate_protobuf,
    k8s_openapi_source_dir, learn_value_fields,
};
