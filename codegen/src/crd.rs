//! Reading resources from CustomResourceDefinition manifests (YAML or
//! JSON, one or many documents per file).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::error::Error;
use crate::model::{Resource, is_type_path};

/// The verbs the API server serves for every custom resource.
const CUSTOM_RESOURCE_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The Rust types of custom resources, by kind (`CronTab`) or, to tell
/// versions apart, by version and kind (`v1beta1/CronTab`).
pub type TypeMapping = BTreeMap<String, String>;

/// Parses `text` (YAML, which includes JSON) as one or more documents and
/// returns the resources every CustomResourceDefinition among them serves
/// (one per served version). Documents of other kinds are skipped. `file`
/// names the text in errors.
pub fn resources_from_crds(
    file: &str,
    text: &str,
    types: &TypeMapping,
) -> Result<Vec<Resource>, Error> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| Error::Yaml {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let mut resources = Vec::new();
    for (index, document) in documents.iter().enumerate() {
        let here = format!("[{index}]");
        match document.get("kind").and_then(Value::as_str) {
            Some("CustomResourceDefinition") => {
                resources.extend(crd_resources(file, &here, document, types)?);
            }
            Some("List") | Some("CustomResourceDefinitionList") => {
                let items = document
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten();
                for (position, item) in items.enumerate() {
                    if item.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
                    {
                        let here = format!("{here}.items[{position}]");
                        resources.extend(crd_resources(file, &here, item, types)?);
                    }
                }
            }
            _ => {}
        }
    }
    resources.sort();
    Ok(resources)
}

fn crd_resources(
    file: &str,
    here: &str,
    crd: &Value,
    types: &TypeMapping,
) -> Result<Vec<Resource>, Error> {
    let text = |pointer: &str, path: &str| {
        crd.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
            .map(str::to_string)
            .ok_or_else(|| {
                Error::invalid(
                    file,
                    format!("{here}.{path}"),
                    "missing, empty or not a string",
                )
            })
    };
    let group = text("/spec/group", "spec.group")?;
    let kind = text("/spec/names/kind", "spec.names.kind")?;
    if !is_type_path(&kind) || kind.contains("::") {
        return Err(Error::invalid(
            file,
            format!("{here}.spec.names.kind"),
            format!("{kind:?} is not a name a Rust type can have"),
        ));
    }
    let plural = text("/spec/names/plural", "spec.names.plural")?;
    let namespaced = match text("/spec/scope", "spec.scope")?.as_str() {
        "Namespaced" => true,
        "Cluster" => false,
        other => {
            return Err(Error::invalid(
                file,
                format!("{here}.spec.scope"),
                format!("{other:?} is neither Namespaced nor Cluster"),
            ));
        }
    };
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Error::invalid(
                file,
                format!("{here}.spec.versions"),
                "missing, or not a list",
            )
        })?;
    let mut resources = Vec::new();
    for (position, version) in versions.iter().enumerate() {
        if version.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let name = version
            .get("name")
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .ok_or_else(|| {
                Error::invalid(
                    file,
                    format!("{here}.spec.versions[{position}].name"),
                    "missing, empty or not a string",
                )
            })?;
        let type_path = types
            .get(&format!("{name}/{kind}"))
            .or_else(|| types.get(&kind))
            .ok_or_else(|| Error::UnknownTypePath {
                file: file.to_string(),
                path: format!("{here}.spec.names.kind"),
                kind: kind.clone(),
            })?;
        if !is_type_path(type_path) {
            return Err(Error::BadTypePath {
                type_path: type_path.clone(),
            });
        }
        let subresources: BTreeSet<String> = version
            .get("subresources")
            .and_then(Value::as_object)
            .map(|subresources| subresources.keys().cloned().collect())
            .unwrap_or_default();
        resources.push(Resource {
            group: group.clone(),
            version: name.to_string(),
            kind: kind.clone(),
            plural: plural.clone(),
            namespaced,
            verbs: CUSTOM_RESOURCE_VERBS
                .iter()
                .map(|verb| verb.to_string())
                .collect(),
            subresources,
            type_path: type_path.clone(),
        });
    }
    if resources.is_empty() {
        return Err(Error::invalid(
            file,
            format!("{here}.spec.versions"),
            "no version has served: true, so the CRD serves nothing",
        ));
    }
    Ok(resources)
}
