//! Reading resources from a Kubernetes OpenAPI v2 document: its paths'
//! `x-kubernetes-action` and `x-kubernetes-group-version-kind`, and its
//! definitions' group-version-kinds for the Rust type.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::crd::TypeMapping;
use crate::error::Error;
use crate::model::Resource;

/// One path of the spec, taken apart.
#[derive(Debug, PartialEq, Eq)]
struct PathParts {
    group: String,
    version: String,
    namespaced: bool,
    plural: String,
    subresource: Option<String>,
}

/// `/api/v1/namespaces/{namespace}/pods/{name}/status` → core, v1,
/// namespaced, pods, status. `None` for paths that are not resources
/// (discovery, `/version`, a group's root).
fn parse_path(path: &str) -> Option<PathParts> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, version, mut rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    if rest.first() == Some(&"watch") {
        rest = &rest[1..];
    }
    let namespaced = rest.len() > 2 && rest[0] == "namespaces" && rest[1] == "{namespace}";
    if namespaced {
        rest = &rest[2..];
    }
    let plural = rest
        .first()
        .filter(|plural| !plural.is_empty() && !plural.starts_with('{'))?;
    let subresource = match rest {
        [_, "{name}", subresource, ..] => Some((*subresource).to_string()),
        _ => None,
    };
    Some(PathParts {
        group: group.to_string(),
        version: version.to_string(),
        namespaced,
        plural: (*plural).to_string(),
        subresource,
    })
}

/// The verb an `x-kubernetes-action` stands for.
fn verb_of(action: &str) -> &str {
    match action {
        "post" => "create",
        "put" => "update",
        "watchlist" => "watch",
        other => other,
    }
}

/// What the paths say about one resource, before its type is found.
#[derive(Default)]
struct Gathered {
    kind: Option<(String, String)>,
    namespaced: bool,
    verbs: BTreeSet<String>,
    subresources: BTreeSet<String>,
    /// The JSON path of its list operation, and the definition it returns.
    list: Option<(String, String)>,
}

/// The definition name a `$ref` (`#/definitions/X`) points at.
fn referenced(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/definitions/")
}

/// `io.k8s.api.core.v1.Pod` → `k8s_openapi::api::core::v1::Pod`.
pub fn k8s_openapi_type_path(definition: &str) -> String {
    let inner = definition.strip_prefix("io.k8s.").unwrap_or(definition);
    let mut path = String::from("k8s_openapi");
    for segment in inner.split('.') {
        path.push_str("::");
        path.push_str(&segment.replace('-', "_"));
    }
    path
}

/// Every built-in resource in an OpenAPI v2 document, sorted by group,
/// version and plural. `file` names the document in errors. Custom
/// resources (definitions outside `io.k8s.*`, which k8s-openapi does not
/// have) are left out; [`resources_from_openapi_typed`] maps them to Rust
/// types or `DynamicObject`.
pub fn resources_from_openapi(file: &str, bytes: &[u8]) -> Result<Vec<Resource>, Error> {
    let found = resources_from_openapi_typed(file, bytes, &TypeMapping::new())?;
    Ok(found
        .resources
        .into_iter()
        .filter(|resource| !resource.is_dynamic())
        .collect())
}

/// What [`resources_from_openapi_typed`] found.
#[derive(Debug, Clone, Default)]
pub struct OpenApiResources {
    /// The resources, sorted by group, version and plural; custom ones with
    /// no Rust type named have [`DYNAMIC_OBJECT`](crate::DYNAMIC_OBJECT).
    pub resources: Vec<Resource>,
    /// Custom resources (`group/version/plural`, with their kind) for which
    /// no Rust type was named, generated as `DynamicObject`s.
    pub untyped: Vec<String>,
}

/// Every resource in an OpenAPI v2 document (a file, or a cluster's
/// `/openapi/v2`): built-in ones typed with k8s-openapi's types, custom
/// ones (a cluster's CRDs, whose definitions are outside `io.k8s.*`) with
/// the Rust type `types` names for their kind (`CronTab`, or
/// `v1/CronTab` for one version), as `--crd` does. Custom resources with
/// no type named get [`DYNAMIC_OBJECT`](crate::DYNAMIC_OBJECT) and are
/// listed in [`OpenApiResources::untyped`]: their informers cache
/// `DynamicObject`s, so the generated code never names a type that does
/// not exist.
pub fn resources_from_openapi_typed(
    file: &str,
    bytes: &[u8],
    types: &TypeMapping,
) -> Result<OpenApiResources, Error> {
    let document: Value = serde_json::from_slice(bytes).map_err(|e| Error::json(file, &e))?;
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::invalid(file, "paths", "missing, or not an object"))?;
    let definitions = document
        .get("definitions")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::invalid(file, "definitions", "missing, or not an object"))?;

    let mut gathered: BTreeMap<(String, String, String), Gathered> = BTreeMap::new();
    for (path, item) in paths {
        let Some(parts) = parse_path(path) else {
            continue;
        };
        let Some(operations) = item.as_object() else {
            return Err(Error::invalid(
                file,
                format!("paths[{path:?}]"),
                "not an object",
            ));
        };
        for (method, operation) in operations {
            let Some(action) = operation.get("x-kubernetes-action").and_then(Value::as_str) else {
                continue;
            };
            let here = format!("paths[{path:?}].{method}");
            let entry = gathered
                .entry((
                    parts.group.clone(),
                    parts.version.clone(),
                    parts.plural.clone(),
                ))
                .or_default();
            entry.namespaced |= parts.namespaced;
            if let Some(subresource) = &parts.subresource {
                entry.subresources.insert(subresource.clone());
                continue;
            }
            entry.verbs.insert(verb_of(action).to_string());
            let gvk = operation
                .get("x-kubernetes-group-version-kind")
                .ok_or_else(|| {
                    Error::invalid(
                        file,
                        format!("{here}.x-kubernetes-group-version-kind"),
                        "missing",
                    )
                })?;
            let field = |name: &str| {
                gvk.get(name)
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        Error::invalid(
                            file,
                            format!("{here}.x-kubernetes-group-version-kind.{name}"),
                            "missing, or not a string",
                        )
                    })
            };
            let (version, kind) = (field("version")?, field("kind")?);
            entry.kind.get_or_insert((version, kind));
            if action == "list" {
                let returned = operation
                    .pointer("/responses/200/schema")
                    .and_then(referenced)
                    .ok_or_else(|| {
                        Error::invalid(
                            file,
                            format!("{here}.responses.200.schema"),
                            "no $ref to a list definition",
                        )
                    })?;
                entry.list = Some((here, returned.to_string()));
            }
        }
    }

    let mut resources = Vec::new();
    let mut untyped = Vec::new();
    for ((group, version, plural), found) in gathered {
        let Some((_, kind)) = found.kind else {
            // Only subresource paths (a resource served elsewhere).
            continue;
        };
        let definition = match &found.list {
            Some((list_path, list_definition)) => item_type(
                file,
                definitions,
                list_path,
                list_definition,
                &group,
                &version,
                &kind,
            )?,
            None => match definition_of_kind(definitions, &group, &version, &kind) {
                Some(definition) => definition.to_string(),
                // Not listable and no typed definition (a virtual
                // resource such as tokenreviews' kin): no informer anyway.
                None => continue,
            },
        };
        let type_path = if definition.starts_with("io.k8s.") {
            k8s_openapi_type_path(&definition)
        } else {
            match types
                .get(&format!("{version}/{kind}"))
                .or_else(|| types.get(&kind))
            {
                Some(path) => path.clone(),
                None => {
                    let name = if group.is_empty() {
                        format!("{version}/{plural}")
                    } else {
                        format!("{group}/{version}/{plural}")
                    };
                    untyped.push(format!("{name} ({kind})"));
                    crate::DYNAMIC_OBJECT.to_string()
                }
            }
        };
        resources.push(Resource {
            group,
            version,
            kind,
            plural,
            namespaced: found.namespaced,
            verbs: found.verbs,
            subresources: found.subresources,
            type_path,
        });
    }
    resources.sort();
    Ok(OpenApiResources { resources, untyped })
}

/// Follows a list definition to its item definition and checks that the
/// item carries the resource's group-version-kind; returns the item's
/// definition name.
fn item_type(
    file: &str,
    definitions: &serde_json::Map<String, Value>,
    list_path: &str,
    list_definition: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<String, Error> {
    let list = definitions.get(list_definition).ok_or_else(|| {
        Error::invalid(
            file,
            format!("{list_path}.responses.200.schema.$ref"),
            format!("definition {list_definition:?} does not exist"),
        )
    })?;
    let item = list
        .pointer("/properties/items/items")
        .and_then(referenced)
        .ok_or_else(|| {
            Error::invalid(
                file,
                format!("definitions[{list_definition:?}].properties.items.items"),
                "no $ref to the item definition",
            )
        })?;
    let item_definition = definitions.get(item).ok_or_else(|| {
        Error::invalid(
            file,
            format!("definitions[{list_definition:?}].properties.items.items.$ref"),
            format!("definition {item:?} does not exist"),
        )
    })?;
    let gvks = item_definition
        .get("x-kubernetes-group-version-kind")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Error::invalid(
                file,
                format!("definitions[{item:?}]"),
                "has no x-kubernetes-group-version-kind, so it is not a resource type",
            )
        })?;
    if !gvks
        .iter()
        .any(|gvk| matches_gvk(gvk, group, version, kind))
    {
        return Err(Error::invalid(
            file,
            format!("definitions[{item:?}].x-kubernetes-group-version-kind"),
            format!("does not include {group}/{version} {kind}, which {list_path} lists"),
        ));
    }
    Ok(item.to_string())
}

fn matches_gvk(gvk: &Value, group: &str, version: &str, kind: &str) -> bool {
    let field = |name: &str| gvk.get(name).and_then(Value::as_str);
    field("group") == Some(group)
        && field("version") == Some(version)
        && field("kind") == Some(kind)
}

/// The one definition carrying exactly this group-version-kind.
fn definition_of_kind<'a>(
    definitions: &'a serde_json::Map<String, Value>,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<&'a str> {
    definitions.iter().find_map(|(name, definition)| {
        let gvks = definition
            .get("x-kubernetes-group-version-kind")?
            .as_array()?;
        (gvks.len() == 1 && matches_gvk(&gvks[0], group, version, kind)).then_some(name.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_taken_apart() {
        let parts = parse_path("/api/v1/namespaces/{namespace}/pods/{name}/status").unwrap();
        assert_eq!(
            parts,
            PathParts {
                group: String::new(),
                version: "v1".into(),
                namespaced: true,
                plural: "pods".into(),
                subresource: Some("status".into()),
            }
        );
        let namespaces = parse_path("/api/v1/namespaces/{name}").unwrap();
        assert!(!namespaces.namespaced);
        assert_eq!(namespaces.plural, "namespaces");
        let watch = parse_path("/apis/apps/v1/watch/namespaces/{namespace}/deployments").unwrap();
        assert_eq!(
            (
                watch.group.as_str(),
                watch.plural.as_str(),
                watch.namespaced
            ),
            ("apps", "deployments", true)
        );
        assert!(parse_path("/apis/apps/v1/").is_none());
        assert!(parse_path("/version/").is_none());
    }

    #[test]
    fn definitions_become_k8s_openapi_paths() {
        assert_eq!(
            k8s_openapi_type_path("io.k8s.api.core.v1.Pod"),
            "k8s_openapi::api::core::v1::Pod"
        );
        assert_eq!(
            k8s_openapi_type_path(
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
            ),
            "k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition"
        );
    }
}
