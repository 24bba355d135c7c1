//! Custom resources from Rust types: the schema a CRD needs, made from
//! serde's own description of a type and structural by construction; the
//! CRD itself; the server's rules checked before a request.
//!
//! `#[derive(CustomResource)]` and `#[derive(Schema)]` (crate
//! `clientgo-derive`, re-exported as `clientgo::crd`) generate the impls;
//! this module is what they generate against, and what a hand-written
//! impl uses. The guide (one page: a custom resource from its spec to its
//! informer) is the documentation of `clientgo::crd`.
//!
//! | item | what it is |
//! |---|---|
//! | [`Schema`], [`Generator`], [`schema_for`] | a type's structural schema, recursion ended |
//! | [`CustomResource`] | one version of a custom resource as a Rust type, and its CRD |
//! | [`merge_versions`] | several versions of one kind in one CRD, pruning refused |
//! | [`check_crd`], [`check_schema`], [`Violation`] | what the API server would refuse, said first |
//! | [`enum_schema`], [`Tagging`], [`Variant`], [`Payload`] | serde's enum representations as structural schemas |
//! | [`object`], [`add_property`], [`flatten`], [`tuple()`] | object, flattened and tuple schemas |
//! | [`to_yaml`] | a manifest as YAML for `kubectl apply -f` |

mod definition;
mod enum_schema;
mod kubernetes_schemas;
mod object_schema;
mod schema;
mod std_schemas;
mod structural;
mod tuple_schema;
mod type_guard;
mod yaml;

pub use definition::{CrdError, CustomResource, merge_versions, merge_versions_converted};
#[doc(hidden)]
pub use definition::{VersionParts, build_crd};
pub use enum_schema::{Payload, Tagging, Variant, enum_schema};
pub use kubernetes_schemas::QUANTITY_PATTERN;
pub use object_schema::{add_property, flatten, object};
pub use schema::{Generator, Schema, any_value, schema_for, typed};
pub use structural::{Violation, check_crd, check_schema, validate_value};
pub use tuple_schema::tuple;
pub use yaml::to_yaml;

/// What generated code names, so a user's crate needs no direct
/// dependency on these crates. Not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use k8s_openapi;
    pub use serde;
    pub use serde_json;
}
