//! [`CustomResource`]: a Rust type that is one version of a custom
//! resource, and the CustomResourceDefinition made from it; several
//! versions merged into one CRD ([`merge_versions`]).

use std::collections::BTreeSet;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
    SelectableField,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::crd::object_schema::{add_property, object};
use crate::crd::structural::Violation;

/// One version of a custom resource as a Rust type: what
/// `#[derive(CustomResource)]` generates (the root type with `metadata`,
/// `spec` and `status`). With k8s-openapi's `Resource` and `Metadata`,
/// which the derive also implements, informers, listers and
/// `ResourceClient` take it as they take a built-in type.
pub trait CustomResource:
    k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta> + Sized
{
    /// The spec type the derive was put on.
    type Spec;
    /// The status type (`#[resource(status = "…")]`), or `()`.
    type Status;

    /// `<plural>.<group>`: the CRD's name.
    const CRD_NAME: &'static str;

    /// The CRD with this version alone, served and stored. For a kind
    /// with several versions, give each version's CRD to
    /// [`merge_versions`].
    fn crd() -> CustomResourceDefinition;

    /// A new object named `name` with `spec` and no status (namespaced
    /// kinds also have `in_namespace(namespace)`).
    fn new(name: &str, spec: Self::Spec) -> Self;

    /// The spec.
    fn spec(&self) -> &Self::Spec;

    /// The status, if one was written.
    fn status(&self) -> Option<&Self::Status>;
}

/// Why a CRD cannot be made or installed.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// The schema or another part breaks a rule of the API server
    /// ([`check_crd`](crate::crd::check_crd)).
    #[error("CRD {name} would be refused: {}", violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Refused {
        /// The CRD.
        name: String,
        /// Each problem, with where it is.
        violations: Vec<Violation>,
    },
    /// The versions given to [`merge_versions`] are not of one kind.
    #[error("cannot merge {name} and {other}: their {what} differ")]
    NotOneKind {
        /// The first CRD's name.
        name: String,
        /// The CRD that differs.
        other: String,
        /// What differs (group, names, scope).
        what: &'static str,
    },
    /// Two versions have one name, or none is named by `storage`.
    #[error("CRD {name}: {problem}")]
    Versions {
        /// The CRD.
        name: String,
        /// What is wrong with its versions.
        problem: String,
    },
    /// A served version has a field the storage version does not: with no
    /// conversion webhook, the API server would drop it when storing.
    #[error(
        "CRD {name}: {version} has {field}, which the storage version {storage} lacks; the API server would prune it on every write at {version} (add the field to {storage}, or convert with a webhook)"
    )]
    WouldPrune {
        /// The CRD.
        name: String,
        /// The version with the field.
        version: String,
        /// The field, as a path (`spec.replicas`).
        field: String,
        /// The storage version.
        storage: String,
    },
}

/// The parts of one version's CRD, as `#[derive(CustomResource)]`
/// gathers them from its attributes.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct VersionParts {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub printer_columns: Vec<CustomResourceColumnDefinition>,
    pub selectable_fields: &'static [&'static str],
    pub deprecated: bool,
    pub deprecation_warning: Option<&'static str>,
    pub served: bool,
    pub description: Option<&'static str>,
    pub spec: JSONSchemaProps,
    pub status: Option<JSONSchemaProps>,
    /// `(specReplicasPath, statusReplicasPath, labelSelectorPath)`.
    pub scale: Option<(&'static str, &'static str, Option<&'static str>)>,
}

/// The CRD of one version: its root schema is `{spec, status}` (the API
/// server owns `apiVersion`, `kind` and `metadata`), `spec` required.
#[doc(hidden)]
pub fn build_crd(parts: VersionParts) -> CustomResourceDefinition {
    let mut root = object(parts.description);
    add_property(&mut root, "spec", parts.spec, true);
    let has_status = parts.status.is_some();
    if let Some(status) = parts.status {
        add_property(&mut root, "status", status, false);
    }
    let mut printer_columns = parts.printer_columns;
    for column in &mut printer_columns {
        if column.type_.is_empty() {
            column.type_ = column_type(&root, &column.json_path).to_owned();
        }
    }
    let owned =
        |list: &[&str]| (!list.is_empty()).then(|| list.iter().map(|s| (*s).to_owned()).collect());
    let subresources = (has_status || parts.scale.is_some()).then(|| CustomResourceSubresources {
        status: has_status.then(|| CustomResourceSubresourceStatus(serde_json::json!({}))),
        scale: parts
            .scale
            .map(|(spec, status, selector)| CustomResourceSubresourceScale {
                spec_replicas_path: spec.to_owned(),
                status_replicas_path: status.to_owned(),
                label_selector_path: selector.map(str::to_owned),
            }),
    });
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", parts.plural, parts.group)),
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: parts.group.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: parts.kind.to_owned(),
                list_kind: Some(format!("{}List", parts.kind)),
                plural: parts.plural.to_owned(),
                singular: Some(parts.singular.to_owned()),
                short_names: owned(parts.short_names),
                categories: owned(parts.categories),
            },
            scope: if parts.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .to_owned(),
            versions: vec![CustomResourceDefinitionVersion {
                name: parts.version.to_owned(),
                served: parts.served,
                storage: true,
                deprecated: parts.deprecated.then_some(true),
                deprecation_warning: parts.deprecation_warning.map(str::to_owned),
                additional_printer_columns: (!printer_columns.is_empty())
                    .then_some(printer_columns),
                selectable_fields: (!parts.selectable_fields.is_empty()).then(|| {
                    parts
                        .selectable_fields
                        .iter()
                        .map(|path| SelectableField {
                            json_path: (*path).to_owned(),
                        })
                        .collect()
                }),
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: Some(root),
                }),
                subresources,
            }],
            conversion: None,
            preserve_unknown_fields: None,
        },
        status: None,
    }
}

/// A printer column's type, from the field its path names: `date` for
/// a date-time, the field's own scalar type, else `string`.
fn column_type(root: &JSONSchemaProps, json_path: &str) -> &'static str {
    let Some(field) = crate::crd::structural::resolve(root, json_path) else {
        return "string";
    };
    match (field.type_.as_deref(), field.format.as_deref()) {
        (Some("string"), Some("date-time")) => "date",
        (Some("integer"), _) => "integer",
        (Some("number"), _) => "number",
        (Some("boolean"), _) => "boolean",
        _ => "string",
    }
}

/// One CRD holding every version in `crds` (each from one version's
/// [`CustomResource::crd`]), stored at `storage`, with the `None`
/// conversion (the API server changes `apiVersion` only).
///
/// Refused, before any request: CRDs of different groups, names or
/// scopes; two versions of one name; a `storage` none has; a field a
/// served version has and the storage version lacks (the server would
/// prune it on every write at that version).
pub fn merge_versions(
    crds: impl IntoIterator<Item = CustomResourceDefinition>,
    storage: &str,
) -> Result<CustomResourceDefinition, CrdError> {
    merge(crds, storage, None)
}

/// As [`merge_versions`], converted by `conversion` (a webhook's, which
/// keeps fields the storage version lacks, so they are not refused).
pub fn merge_versions_converted(
    crds: impl IntoIterator<Item = CustomResourceDefinition>,
    storage: &str,
    conversion: CustomResourceConversion,
) -> Result<CustomResourceDefinition, CrdError> {
    merge(crds, storage, Some(conversion))
}

fn merge(
    crds: impl IntoIterator<Item = CustomResourceDefinition>,
    storage: &str,
    conversion: Option<CustomResourceConversion>,
) -> Result<CustomResourceDefinition, CrdError> {
    let mut crds = crds.into_iter();
    let Some(mut merged) = crds.next() else {
        return Err(CrdError::Versions {
            name: String::new(),
            problem: "no versions to merge".into(),
        });
    };
    let name = merged.metadata.name.clone().unwrap_or_default();
    for crd in crds {
        let other = crd.metadata.name.clone().unwrap_or_default();
        let differs = |what| CrdError::NotOneKind {
            name: name.clone(),
            other: other.clone(),
            what,
        };
        if crd.spec.group != merged.spec.group {
            return Err(differs("groups"));
        }
        if crd.spec.names != merged.spec.names {
            return Err(differs("names"));
        }
        if crd.spec.scope != merged.spec.scope {
            return Err(differs("scopes"));
        }
        merged.spec.versions.extend(crd.spec.versions);
    }
    let mut seen = BTreeSet::new();
    for version in &mut merged.spec.versions {
        if !seen.insert(version.name.clone()) {
            return Err(CrdError::Versions {
                name,
                problem: format!("version {} is given twice", version.name),
            });
        }
        version.storage = version.name == storage;
    }
    let Some(stored) = merged.spec.versions.iter().find(|version| version.storage) else {
        return Err(CrdError::Versions {
            name,
            problem: format!("no version is named {storage}, the storage version"),
        });
    };
    let stored_schema = version_schema(stored).filter(|_| conversion.is_none());
    for version in merged
        .spec
        .versions
        .iter()
        .filter(|version| version.served && !version.storage)
    {
        if let (Some(schema), Some(stored_schema)) = (version_schema(version), stored_schema)
            && let Some(field) = field_missing_in(schema, stored_schema, "")
        {
            return Err(CrdError::WouldPrune {
                name,
                version: version.name.clone(),
                field,
                storage: storage.to_owned(),
            });
        }
    }
    if merged.spec.versions.len() > 1 {
        merged.spec.conversion = Some(conversion.unwrap_or(CustomResourceConversion {
            strategy: "None".into(),
            webhook: None,
        }));
    }
    Ok(merged)
}

fn version_schema(version: &CustomResourceDefinitionVersion) -> Option<&JSONSchemaProps> {
    version
        .schema
        .as_ref()
        .and_then(|schema| schema.open_api_v3_schema.as_ref())
}

/// The first field `schema` declares that `stored` would prune.
fn field_missing_in(
    schema: &JSONSchemaProps,
    stored: &JSONSchemaProps,
    path: &str,
) -> Option<String> {
    if stored.x_kubernetes_preserve_unknown_fields == Some(true) {
        return None;
    }
    for (name, property) in schema.properties.iter().flatten() {
        let here = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        match stored.properties.as_ref().and_then(|p| p.get(name)) {
            None if !matches!(
                stored.additional_properties,
                Some(JSONSchemaPropsOrBool::Schema(_))
            ) =>
            {
                return Some(here);
            }
            None => {}
            Some(kept) => {
                if let Some(field) = field_missing_in(property, kept, &here) {
                    return Some(field);
                }
            }
        }
    }
    if let (
        Some(JSONSchemaPropsOrArray::Schema(item)),
        Some(JSONSchemaPropsOrArray::Schema(kept)),
    ) = (&schema.items, &stored.items)
    {
        return field_missing_in(item, kept, &format!("{path}[]"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::schema::typed;

    fn version(name: &'static str, fields: &[&str]) -> CustomResourceDefinition {
        let mut spec = object(None);
        for field in fields {
            add_property(&mut spec, field, typed("string"), false);
        }
        build_crd(VersionParts {
            group: "example.com",
            version: name,
            kind: "Widget",
            plural: "widgets",
            singular: "widget",
            namespaced: true,
            served: true,
            spec,
            ..VersionParts::default()
        })
    }

    #[test]
    fn one_version_is_stored_and_served() {
        let crd = version("v1", &["a"]);
        assert_eq!(crd.metadata.name.as_deref(), Some("widgets.example.com"));
        assert!(crd.spec.versions[0].storage);
        assert!(
            crate::crd::check_crd(&crd).is_empty(),
            "{:?}",
            crate::crd::check_crd(&crd)
        );
    }

    #[test]
    fn merged_versions_store_at_the_one_named() {
        let merged = merge_versions([version("v1", &["a", "b"]), version("v2", &["a"])], "v1");
        let merged = merged.map_err(|e| e.to_string());
        let Ok(merged) = merged else {
            panic!("{merged:?}")
        };
        let stored: Vec<bool> = merged.spec.versions.iter().map(|v| v.storage).collect();
        assert_eq!(stored, [true, false]);
        assert_eq!(
            merged.spec.conversion.map(|c| c.strategy).as_deref(),
            Some("None")
        );
    }

    #[test]
    fn a_field_the_storage_version_lacks_is_refused() {
        let merged = merge_versions([version("v1", &["a"]), version("v2", &["a", "b"])], "v1");
        assert!(
            matches!(&merged, Err(CrdError::WouldPrune { field, version, .. }) if field == "spec.b" && version == "v2"),
            "{merged:?}"
        );
    }

    #[test]
    fn other_kinds_and_unknown_storage_are_refused() {
        let mut other = version("v2", &[]);
        other.spec.group = "other.com".into();
        assert!(matches!(
            merge_versions([version("v1", &[]), other], "v1"),
            Err(CrdError::NotOneKind { .. })
        ));
        assert!(matches!(
            merge_versions([version("v1", &[])], "v9"),
            Err(CrdError::Versions { .. })
        ));
        assert!(matches!(
            merge_versions([version("v1", &[]), version("v1", &[])], "v1"),
            Err(CrdError::Versions { .. })
        ));
    }
}
