//! Custom resources from Rust types: an operator's API in one file.
//!
//! Put `#[derive(CustomResource)]` on the spec struct. It generates the
//! root type (named after the kind: `metadata`, `spec`, `status`), its
//! k8s-openapi `Resource` and `Metadata` (so `ResourceClient`, informers,
//! listers and the controller take it as they take `Pod`), and
//! [`CustomResource::crd`]: the CustomResourceDefinition, schema included.
//! Nested types get their schema from `#[derive(Schema)]`.
//!
//! ```
//! use clientgo::crd::{CustomResource, Schema};
//! use serde::{Deserialize, Serialize};
//!
//! /// Run `image` on a schedule.
//! #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
//! #[resource(group = "stable.example.com", version = "v1", kind = "CronTab", namespaced)]
//! #[resource(status = "CronTabStatus", short_name = "ct", category = "all")]
//! #[resource(printer_column(name = "Schedule", json_path = ".spec.cronSpec"))]
//! #[resource(scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"))]
//! #[serde(rename_all = "camelCase")]
//! #[schema(rule(rule = "self.replicas <= 10 || self.cronSpec != ''", message = "many replicas need a schedule"))]
//! pub struct CronTabSpec {
//!     /// When to run, in cron syntax.
//!     #[schema(min_length = 1, max_length = 64)]
//!     pub cron_spec: String,
//!     /// The image to run.
//!     pub image: String,
//!     /// How many copies to run (the server fills in 1).
//!     #[serde(default = "one")]
//!     #[schema(minimum = 0)]
//!     pub replicas: i32,
//!     /// How a failed run is retried.
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub retry: Option<Retry>,
//! }
//!
//! fn one() -> i32 { 1 }
//!
//! /// How a failed run is retried: internally tagged, as serde writes it.
//! #[derive(Schema, Clone, Debug, PartialEq, Serialize, Deserialize)]
//! #[serde(tag = "policy", rename_all = "camelCase")]
//! pub enum Retry {
//!     /// Not at all.
//!     Never,
//!     /// Up to `limit` times.
//!     Limited { limit: u32 },
//! }
//!
//! /// What the operator last saw.
//! #[derive(Schema, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
//! pub struct CronTabStatus {
//!     /// Copies running.
//!     #[serde(default)]
//!     pub replicas: i32,
//! }
//!
//! let crontab = CronTab::new("every-minute", CronTabSpec {
//!     cron_spec: "* * * * *".into(),
//!     image: "busybox".into(),
//!     replicas: 1,
//!     retry: Some(Retry::Limited { limit: 3 }),
//! })
//! .in_namespace("default");
//! assert_eq!(serde_json::to_value(&crontab).unwrap()["apiVersion"], "stable.example.com/v1");
//!
//! let crd = CronTab::crd();
//! assert_eq!(crd.metadata.name.as_deref(), Some(CronTab::CRD_NAME));
//! assert!(clientgo::crd::check_crd(&crd).is_empty()); // what the server would refuse: nothing
//! println!("{}", clientgo::crd::to_yaml(&crd).unwrap()); // for `kubectl apply -f -`
//! ```
//!
//! Then install it and use it like any type
//! (`install_crds(&client, &[CronTab::crd()], &Default::default())`,
//! `ResourceClient::<CronTab>::namespaced(client, "default")`,
//! `factory.informer_for::<CronTab>()`, `Controller::for_::<CronTab>()`):
//! no code generator runs. (`clientgo-codegen` stays for the other
//! direction: typed informers for CRDs you did not write.)
//!
//! # `#[resource(…)]`
//!
//! | item | CRD field | notes |
//! |---|---|---|
//! | `group`, `version`, `kind` (required) | `spec.group`, `versions[].name`, `names.kind` | |
//! | `plural`, `singular` | `names.plural`, `names.singular` | default: the kind in lowercase, plural by English rules |
//! | `namespaced` | `scope` | default cluster-scoped; namespaced kinds get `in_namespace(ns)` |
//! | `root = "Name"` | | the root type's name (default: the kind), for a second version of one kind |
//! | `status = "Type"` | `subresources.status` | a `status: Option<Type>` field |
//! | `scale` / `scale(spec_replicas_path, status_replicas_path, label_selector_path)` | `subresources.scale` | defaults `.spec.replicas`, `.status.replicas` |
//! | `short_name`, `category` (repeatable) | `names.shortNames`, `names.categories` | |
//! | `printer_column(name, json_path, type, description, format, priority)` | `additionalPrinterColumns` | `type` (integer, number, string, boolean or date) comes from the field's schema unless given |
//! | `selectable_field = ".spec.x"` (repeatable) | `selectableFields` | a path from the root, as the server wants it |
//! | `deprecated` / `deprecated = "warning"` | `deprecated`, `deprecationWarning` | |
//! | `served = false` | `served` | |
//! | `derive = "PartialEq"` (repeatable) | | more derives on the root type (it has `Clone` and `Debug`) |
//! | `crate = "path"` | | where this module is, if not `::clientgo::crd` |
//!
//! Several versions of one kind: one spec type per version (each with
//! its own `version` and `root`), merged by
//! [`merge_versions`]`([V1::crd(), V2::crd()], "v1")`, which names the
//! storage version and refuses a field the storage version would prune.
//!
//! # `#[schema(…)]` on a field (or on a container, for its whole node)
//!
//! `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`,
//! `multiple_of`, `min_length`, `max_length`, `pattern`, `format`,
//! `min_items`, `max_items`, `min_properties`, `max_properties`,
//! `values = [..]` (enum), `nullable`, `rule = "CEL"` or
//! `rule(rule, message, message_expression, field_path, reason,
//! optional_old_self)` (`x-kubernetes-validations`), `default = <Rust
//! expression>` (serialized), `list_type = "atomic" | "set" | "map"`,
//! `list_map_keys = [..]`, `map_type = "atomic" | "granular"`,
//! `preserve_unknown_fields`, `embedded_resource`, `int_or_string`,
//! `description = ".."` (else the doc comment), `with = Type` (take
//! another type's schema: for fields with serde's `with`), and on a
//! container `crate = "path"`.
//!
//! # serde's shapes, and what the API server is given
//!
//! Every shape here is installed on a real kube-apiserver in this
//! crate's tests, with objects serde writes accepted and read back equal.
//!
//! | serde shape | schema |
//! |---|---|
//! | struct, `rename`, `rename_all`, doc comments | `type: object`, properties as serde names them, descriptions |
//! | `Option<T>` | a field: T's schema, not required, not nullable (serde's `null` is dropped by the server, read back as `None`); a list item or map value: nullable (the server keeps nulls there) |
//! | `#[serde(default)]` (field or struct), `default = "f"` | not required; the server fills in the serialized default |
//! | `skip`, `skip_serializing`, `skip_serializing_if` | left out, or not required |
//! | `flatten` (struct, enum, map) | merged into the parent; a map keeps the parent's unknown fields |
//! | `transparent`, newtype structs | the inner type's schema |
//! | unit-only enum | `type: string` with `enum` |
//! | externally tagged, data variants | one-key object: a property per variant, `oneOf` of `required` |
//! | externally tagged, unit and data variants mixed | any value, with `oneOf` alternatives that admit exactly a variant name or a one-key object (see below) |
//! | `tag = "t"` | object: the tag's enum required, the union of the variants' fields, `oneOf` per variant |
//! | `tag = "t", content = "c"` | object: tag and content, `oneOf` per variant |
//! | `untagged` | one node for all: the union of objects, `x-kubernetes-int-or-string` for integers and strings, one scalar type, or any value with typed alternatives (a unit variant, written as null, is a compile error) |
//! | `tag = "t"` on a struct | the tag as a required field whose one value is the struct's name |
//! | tuples, `[T; N]` | an array of exactly N; mixed item types as typed alternatives |
//! | `BTreeSet`, `HashSet` | `x-kubernetes-list-type: set` (objects as atomic items) |
//! | `BTreeMap`, `HashMap` | `additionalProperties` |
//! | recursive types | the inner occurrence keeps any value (a structural schema cannot refer to itself) |
//! | `u8`…`u32`, `i8`, `i16` | integer with its bounds; `u64` has `minimum: 0` (the server refuses values past `i64::MAX` on write) |
//! | `u128`, `i128` | a compile error: the server keeps integers as 64-bit |
//! | `deny_unknown_fields` | nothing to add: the server prunes unknown fields (and refuses them under `fieldValidation=Strict`, kubectl's default) |
//! | `serde_json::Value` | `x-kubernetes-preserve-unknown-fields` |
//! | `IntOrString`, `Quantity` | `x-kubernetes-int-or-string`; `Quantity` with the server's own pattern |
//! | `Time`, `MicroTime` | `type: string`, `format: date-time` |
//! | `Condition`, `LabelSelector` | their Kubernetes schemas |
//! | `Pod`, `ConfigMap`, … (whole objects) | `x-kubernetes-embedded-resource` |
//! | `ObjectMeta`, `PodTemplateSpec`, `Container`, … | `type: object`, kept as written (the cluster's schema is theirs; a copy would prune what a newer server adds, and a template's labels) |
//!
//! A structural schema may not name a type inside `oneOf`/`anyOf`, which
//! is what every enum mixing JSON types needs. Here each alternative is
//! typed by value checks only a value of that type can meet (a string of
//! at least 1 and at most 0 characters refuses strings, and so on for
//! numbers, objects, arrays and booleans), so the server still tells the
//! variants apart. What it cannot check there (a mixed enum's payload, a
//! mixed tuple's order) serde checks on read.
//!
//! # What does not compile, and why
//!
//! A shape no structural schema can give serde's meaning is refused where
//! it is written, with the reason:
//!
//! ```compile_fail
//! # use clientgo::crd::Schema;
//! #[derive(Schema, serde::Serialize)]
//! struct Counter {
//!     // "the API server keeps integers as 64-bit …: use i64/u64, or a String"
//!     total: u128,
//! }
//! ```
//!
//! ```compile_fail
//! # use clientgo::crd::Schema;
//! # mod seconds {
//! #     pub fn serialize<S: serde::Serializer>(_: &std::time::SystemTime, s: S) -> Result<S::Ok, S::Error> { s.serialize_u64(0) }
//! # }
//! #[derive(Schema, serde::Serialize)]
//! struct Stamp {
//!     // "serde's `with` gives this field another JSON form: name a type
//!     // of that form with `#[schema(with = Type)]` (here, `u64`)"
//!     #[serde(serialize_with = "seconds::serialize")]
//!     at: std::time::SystemTime,
//! }
//! ```
//!
//! ```compile_fail
//! # use clientgo::crd::Schema;
//! #[derive(Schema, serde::Serialize)]
//! // "serde writes a unit struct as null, which the API server drops"
//! struct Marker;
//! ```
//!
//! ```compile_fail
//! # use clientgo::crd::Schema;
//! #[derive(Schema, serde::Serialize)]
//! #[serde(untagged)]
//! enum Limit {
//!     // "serde writes an untagged unit variant as null, which the API
//!     // server drops …: give the variant a payload, or make the field an
//!     // `Option`"
//!     Unlimited,
//!     Max(u32),
//! }
//! ```
//!
//! ```compile_fail
//! # use clientgo::crd::Schema;
//! #[derive(Schema, serde::Serialize)]
//! struct Limits {
//!     // "the API server refuses a message with line breaks"
//!     #[schema(rule(rule = "self > 0", message = "must be\npositive"))]
//!     cpu: i32,
//! }
//! ```
//!
//! # Compared with kube-derive
//!
//! | | kube-derive 5 | here |
//! |---|---|---|
//! | what you write | `#[derive(CustomResource, JsonSchema)]`, `#[kube(..)]` | `#[derive(CustomResource)]`, `#[resource(..)]`; nested types `#[derive(Schema)]` |
//! | the root type, `Resource`, `crd()`, constructors | yes | yes; also `Metadata`, `ListableResource`, `in_namespace` |
//! | schema generator | schemars, then rewritten to be structural | our own, structural by construction: one place owns the Kubernetes rules, and a schemars upgrade cannot change a CRD |
//! | unsupported shapes | a panic in `crd()`, or a CRD the server refuses | a schema the server accepts, or a compile error that says why |
//! | internally / adjacently tagged, mixed external enums | panic in `crd()` | accepted (tested on kube-apiserver 1.36) |
//! | `Value`, untagged string-or-integer | empty `type`, refused | any value; `x-kubernetes-int-or-string` |
//! | recursive types, tuples | `$ref` / array-form `items`, refused | any-value inner node; fixed-length arrays |
//! | `Option<T>` | `nullable: true` | optional, not nullable (null is dropped, and an optional enum keeps working) |
//! | sets, `u64`, `Quantity` | uniqueness and bounds dropped; any string | `list-type: set`; `minimum: 0`; the server's quantity pattern |
//! | CEL rules | attribute; errors seen at install | attribute; message, field path and reason checked at compile time; the server's compile error returned by [`install_crds`] |
//! | the server's rules | not checked | [`check_crd`] says what the server would refuse, before a request |
//! | several versions | `merge_crds(crds, "v1")` | [`merge_versions`], which also refuses fields the storage version would prune |
//! | installing | by hand | [`install_crds`]: server-side apply, then waits until served |
//! | YAML for `kubectl apply` | a `crdgen` binary with serde_yaml | [`to_yaml`] |
//! | tested against | no API server | kube-apiserver 1.36: every shape above and every attribute |

pub use clientgo_apimachinery::crd::*;
pub use clientgo_derive::{CustomResource, Schema};
#[cfg(feature = "rest")]
pub use clientgo_rest::api::{CrdInstallError, CrdInstallOptions, install_crds};
