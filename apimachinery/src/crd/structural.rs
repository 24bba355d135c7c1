//! The structural check: what the API server would refuse in a CRD's
//! schema, said before a request is made. It follows the server's rules
//! for `apiextensions.k8s.io/v1` (structural schemas, defaults, list and
//! map types, printer columns, selectable fields, scale paths); the
//! server stays the authority, and CEL rules are compiled only there.

use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

/// One thing the server would refuse, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, as the server names it (`spec.versions[v1].schema…properties[spec]`).
    pub path: String,
    /// What is wrong, and why the server refuses it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every violation in `crd`: each version's schema, printer columns,
/// selectable fields and scale paths.
pub fn check_crd(crd: &CustomResourceDefinition) -> Vec<Violation> {
    let mut found = Vec::new();
    for version in &crd.spec.versions {
        let base = format!("spec.versions[{}]", version.name);
        let Some(root) = version
            .schema
            .as_ref()
            .and_then(|schema| schema.open_api_v3_schema.as_ref())
        else {
            found.push(Violation {
                path: format!("{base}.schema.openAPIV3Schema"),
                message: "a v1 CRD needs a schema for every version".into(),
            });
            continue;
        };
        let path = format!("{base}.schema.openAPIV3Schema");
        if root.type_.as_deref() != Some("object") {
            found.push(violation(&path, "the root must be type: object"));
        }
        if root.nullable == Some(true) || root.additional_properties.is_some() {
            found.push(violation(
                &path,
                "the root may not be nullable nor have additionalProperties",
            ));
        }
        check_schema_at(root, &path, &mut found);
        for column in version.additional_printer_columns.iter().flatten() {
            if !column.json_path.starts_with('.') {
                found.push(violation(
                    &format!("{base}.additionalPrinterColumns[{}]", column.name),
                    &format!("jsonPath {} must start with `.`", column.json_path),
                ));
            }
        }
        for field in version.selectable_fields.iter().flatten() {
            let at = format!("{base}.selectableFields[{}]", field.json_path);
            match resolve(root, &field.json_path) {
                None => found.push(violation(
                    &at,
                    "must be a path from the root starting with `.` (`.spec.name`) to a field of the schema",
                )),
                Some(node) if !matches!(node.type_.as_deref(), Some("string" | "integer" | "boolean")) => {
                    found.push(violation(&at, "must name a string, integer or boolean field"));
                }
                Some(_) => {}
            }
        }
        if version
            .selectable_fields
            .as_ref()
            .is_some_and(|fields| fields.len() > 8)
        {
            found.push(violation(
                &format!("{base}.selectableFields"),
                "at most 8 selectable fields",
            ));
        }
        let scale = version
            .subresources
            .as_ref()
            .and_then(|subresources| subresources.scale.as_ref());
        if let Some(scale) = scale {
            let paths = [
                (
                    Some(&scale.spec_replicas_path),
                    ".spec.",
                    "specReplicasPath",
                ),
                (
                    Some(&scale.status_replicas_path),
                    ".status.",
                    "statusReplicasPath",
                ),
                (scale.label_selector_path.as_ref(), ".", "labelSelectorPath"),
            ];
            for (value, prefix, name) in paths {
                let Some(value) = value else { continue };
                if !value.starts_with(prefix) || resolve(root, value).is_none() {
                    found.push(violation(
                        &format!("{base}.subresources.scale.{name}"),
                        &format!("{value} must start with {prefix} and name a field of the schema"),
                    ));
                }
            }
        }
    }
    if crd
        .spec
        .versions
        .iter()
        .filter(|version| version.storage)
        .count()
        != 1
    {
        found.push(violation(
            "spec.versions",
            "exactly one version must be the storage version",
        ));
    }
    found
}

/// Every violation in one schema (a version's `openAPIV3Schema`).
pub fn check_schema(schema: &JSONSchemaProps) -> Vec<Violation> {
    let mut found = Vec::new();
    check_schema_at(schema, "openAPIV3Schema", &mut found);
    found
}

fn violation(path: &str, message: &str) -> Violation {
    Violation {
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

fn check_schema_at(node: &JSONSchemaProps, path: &str, found: &mut Vec<Violation>) {
    let preserve = node.x_kubernetes_preserve_unknown_fields == Some(true);
    let int_or_string = node.x_kubernetes_int_or_string == Some(true);
    let mut bad = |message: &str| found.push(violation(path, message));
    match node.type_.as_deref() {
        None | Some("") if !preserve && !int_or_string => bad(
            "must have a type (a node without one needs x-kubernetes-preserve-unknown-fields or x-kubernetes-int-or-string)",
        ),
        None | Some("" | "object" | "array" | "string" | "integer" | "number" | "boolean") => {}
        Some(other) => bad(&format!("unknown type {other:?}")),
    }
    let type_ = node.type_.as_deref().unwrap_or_default();
    if int_or_string && !type_.is_empty() {
        bad("x-kubernetes-int-or-string may not have a type");
    }
    if node.x_kubernetes_preserve_unknown_fields == Some(false) {
        bad("x-kubernetes-preserve-unknown-fields must be true or absent");
    }
    if node.properties.is_some() && type_ != "object" {
        bad("properties need type: object");
    }
    if node.properties.as_ref().is_some_and(|p| !p.is_empty())
        && node.additional_properties.is_some()
    {
        bad("properties and additionalProperties are mutually exclusive");
    }
    match &node.additional_properties {
        Some(JSONSchemaPropsOrBool::Bool(false)) => {
            bad("additionalProperties: false is not allowed")
        }
        Some(_) if type_ != "object" => bad("additionalProperties needs type: object"),
        _ => {}
    }
    match &node.items {
        Some(JSONSchemaPropsOrArray::Schemas(_)) => {
            bad("items must be one schema, not a list (tuples are not structural)")
        }
        Some(_) if type_ != "array" => bad("items need type: array"),
        None if type_ == "array" => bad("type: array needs items"),
        _ => {}
    }
    if node.ref_path.is_some() || node.definitions.is_some() {
        bad("$ref and definitions are not allowed (a structural schema is inlined)");
    }
    if node.dependencies.is_some()
        || node.pattern_properties.is_some()
        || node.additional_items.is_some()
        || node.id.is_some()
    {
        bad("dependencies, patternProperties, additionalItems and id are not allowed");
    }
    if node.unique_items == Some(true) {
        bad("uniqueItems: true is not allowed (use x-kubernetes-list-type: set)");
    }
    if node.x_kubernetes_map_type.is_some() && type_ != "object" {
        bad("x-kubernetes-map-type needs type: object");
    }
    if node.x_kubernetes_embedded_resource == Some(true) && type_ != "object" {
        bad("x-kubernetes-embedded-resource needs type: object");
    }
    if node.x_kubernetes_validations.is_some() && type_.is_empty() && !int_or_string {
        bad("x-kubernetes-validations need a typed node (CEL cannot type an untyped one)");
    }
    check_list_type(node, path, found);
    if let Some(default) = &node.default {
        for problem in validate_value(&default.0, node, &format!("{path}.default")) {
            found.push(problem);
        }
    }
    for (name, property) in node.properties.iter().flatten() {
        check_schema_at(property, &format!("{path}.properties[{name}]"), found);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = &node.additional_properties {
        check_schema_at(values, &format!("{path}.additionalProperties"), found);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(item)) = &node.items {
        check_schema_at(item, &format!("{path}.items"), found);
    }
    let junctors = [
        ("allOf", &node.all_of),
        ("anyOf", &node.any_of),
        ("oneOf", &node.one_of),
    ];
    for (name, branches) in junctors {
        for (index, branch) in branches.iter().flatten().enumerate() {
            let int_or_string_pair = name == "anyOf"
                && int_or_string
                && branch.type_.is_some()
                && branch_is_only_type(branch);
            if !int_or_string_pair {
                check_junctor(branch, node, &format!("{path}.{name}[{index}]"), found);
            }
        }
    }
    if let Some(not) = &node.not {
        check_junctor(not, node, &format!("{path}.not"), found);
    }
}

fn branch_is_only_type(branch: &JSONSchemaProps) -> bool {
    *branch
        == JSONSchemaProps {
            type_: branch.type_.clone(),
            ..JSONSchemaProps::default()
        }
}

fn check_list_type(node: &JSONSchemaProps, path: &str, found: &mut Vec<Violation>) {
    let item = match &node.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => Some(item.as_ref()),
        _ => None,
    };
    let list_type = node.x_kubernetes_list_type.as_deref();
    if list_type.is_some() && node.type_.as_deref() != Some("array") {
        found.push(violation(path, "x-kubernetes-list-type needs type: array"));
        return;
    }
    match (list_type, item) {
        (Some("set"), Some(item)) => {
            let refused = match item.type_.as_deref() {
                Some("object") => item.x_kubernetes_map_type.as_deref() != Some("atomic"),
                Some("array") => item
                    .x_kubernetes_list_type
                    .as_deref()
                    .is_some_and(|list| list != "atomic"),
                _ => false,
            };
            if refused {
                found.push(violation(
                    path,
                    "the items of a set must be scalars or atomic (objects with x-kubernetes-map-type: atomic)",
                ));
            }
        }
        (Some("map"), Some(item)) => {
            let keys = node.x_kubernetes_list_map_keys.clone().unwrap_or_default();
            if keys.is_empty() {
                found.push(violation(
                    path,
                    "x-kubernetes-list-type: map needs x-kubernetes-list-map-keys",
                ));
            }
            for key in keys {
                let property = item.properties.as_ref().and_then(|p| p.get(&key));
                let required = item
                    .required
                    .as_ref()
                    .is_some_and(|list| list.contains(&key));
                match property {
                    None => found.push(violation(
                        path,
                        &format!("map key {key:?} is not a property of the items"),
                    )),
                    Some(property) if !required && property.default.is_none() => {
                        found.push(violation(
                            path,
                            &format!("map key {key:?} must be required or have a default"),
                        ));
                    }
                    Some(property)
                        if matches!(property.type_.as_deref(), Some("array" | "object")) =>
                    {
                        found.push(violation(
                            path,
                            &format!("map key {key:?} must be a scalar"),
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
        (Some("atomic") | None, _) | (Some(_), None) => {}
        (Some(other), _) => found.push(violation(
            path,
            &format!("unknown x-kubernetes-list-type {other:?}"),
        )),
    }
    if node.x_kubernetes_list_map_keys.is_some() && list_type != Some("map") {
        found.push(violation(
            path,
            "x-kubernetes-list-map-keys need x-kubernetes-list-type: map",
        ));
    }
}

/// A branch of `allOf`/`anyOf`/`oneOf`/`not`: value checks only, over
/// fields `skeleton` declares.
fn check_junctor(
    branch: &JSONSchemaProps,
    skeleton: &JSONSchemaProps,
    path: &str,
    found: &mut Vec<Violation>,
) {
    let mut bad = |message: &str| found.push(violation(path, message));
    if branch.type_.is_some()
        || branch.description.is_some()
        || branch.default.is_some()
        || branch.nullable.is_some()
    {
        bad("type, description, default and nullable are not allowed inside allOf/anyOf/oneOf/not");
    }
    if branch.additional_properties.is_some() {
        bad("additionalProperties is not allowed inside allOf/anyOf/oneOf/not");
    }
    let extensions = branch.x_kubernetes_preserve_unknown_fields.is_some()
        || branch.x_kubernetes_int_or_string.is_some()
        || branch.x_kubernetes_embedded_resource.is_some()
        || branch.x_kubernetes_list_type.is_some()
        || branch.x_kubernetes_list_map_keys.is_some()
        || branch.x_kubernetes_map_type.is_some()
        || branch.x_kubernetes_validations.is_some();
    if extensions {
        bad("x-kubernetes-* extensions are not allowed inside allOf/anyOf/oneOf/not");
    }
    for (name, property) in branch.properties.iter().flatten() {
        match skeleton.properties.as_ref().and_then(|p| p.get(name)) {
            Some(declared) => check_junctor(
                property,
                declared,
                &format!("{path}.properties[{name}]"),
                found,
            ),
            None => found.push(violation(
                path,
                &format!("property {name:?} inside a junctor must also be declared outside it"),
            )),
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(item)) = &branch.items {
        match &skeleton.items {
            Some(JSONSchemaPropsOrArray::Schema(declared)) => {
                check_junctor(item, declared, &format!("{path}.items"), found)
            }
            _ => found.push(violation(
                path,
                "items inside a junctor must also be declared outside it",
            )),
        }
    }
    for (name, nested) in [
        ("allOf", &branch.all_of),
        ("anyOf", &branch.any_of),
        ("oneOf", &branch.one_of),
    ] {
        for (index, inner) in nested.iter().flatten().enumerate() {
            check_junctor(inner, skeleton, &format!("{path}.{name}[{index}]"), found);
        }
    }
    if let Some(not) = &branch.not {
        check_junctor(not, skeleton, &format!("{path}.not"), found);
    }
}

/// The node a JSON path from the root (`.spec.image`) names, if the
/// schema declares it.
pub(crate) fn resolve<'a>(
    root: &'a JSONSchemaProps,
    json_path: &str,
) -> Option<&'a JSONSchemaProps> {
    let rest = json_path.strip_prefix('.')?;
    let mut node = root;
    for part in rest.split('.') {
        if part.is_empty() || part.contains('[') {
            return None;
        }
        node = match node.properties.as_ref().and_then(|p| p.get(part)) {
            Some(next) => next,
            None if node.x_kubernetes_preserve_unknown_fields == Some(true) => return Some(node),
            None => return None,
        };
    }
    Some(node)
}

/// The problems of `value` against `schema` that the server checks of a
/// default: type, enum, bounds, lengths, required fields and nested
/// values (not patterns or formats: the server is the authority there).
pub fn validate_value(
    value: &serde_json::Value,
    schema: &JSONSchemaProps,
    path: &str,
) -> Vec<Violation> {
    use serde_json::Value;
    let mut found = Vec::new();
    let mut bad = |message: String| found.push(violation(path, &message));
    if schema.x_kubernetes_int_or_string == Some(true) {
        if !(value.is_i64() || value.is_u64() || value.is_string()) {
            bad(format!("{value} is not an integer or a string"));
        }
        return found;
    }
    let type_ok = match (schema.type_.as_deref(), value) {
        (None | Some(""), _) => true,
        (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_))
        | (Some("string"), Value::String(_))
        | (Some("boolean"), Value::Bool(_))
        | (Some("number"), Value::Number(_)) => true,
        (Some("integer"), Value::Number(number)) => number.is_i64(),
        (_, Value::Null) => schema.nullable == Some(true),
        _ => false,
    };
    if !type_ok {
        bad(format!(
            "{value} is not of type {}",
            schema.type_.as_deref().unwrap_or_default()
        ));
        return found;
    }
    if let Some(values) = &schema.enum_
        && !values.iter().any(|allowed| allowed.0 == *value)
    {
        bad(format!("{value} is not one of the enum's values"));
    }
    if let Some(number) = value.as_f64() {
        if schema.minimum.is_some_and(|minimum| number < minimum) {
            bad(format!("{value} is below the minimum"));
        }
        if schema.maximum.is_some_and(|maximum| number > maximum) {
            bad(format!("{value} is above the maximum"));
        }
    }
    if let Value::String(text) = value {
        let length = i64::try_from(text.chars().count()).unwrap_or(i64::MAX);
        if schema.min_length.is_some_and(|minimum| length < minimum)
            || schema.max_length.is_some_and(|maximum| length > maximum)
        {
            bad(format!("{value} has a length outside the schema's bounds"));
        }
    }
    if let Value::Array(items) = value {
        let length = i64::try_from(items.len()).unwrap_or(i64::MAX);
        if schema.min_items.is_some_and(|minimum| length < minimum)
            || schema.max_items.is_some_and(|maximum| length > maximum)
        {
            bad(format!(
                "{value} has a number of items outside the schema's bounds"
            ));
        }
        if let Some(JSONSchemaPropsOrArray::Schema(item_schema)) = &schema.items {
            for (index, item) in items.iter().enumerate() {
                found.extend(validate_value(
                    item,
                    item_schema,
                    &format!("{path}[{index}]"),
                ));
            }
        }
    }
    if let Value::Object(fields) = value {
        for name in schema.required.iter().flatten() {
            let defaulted = schema
                .properties
                .as_ref()
                .and_then(|p| p.get(name))
                .is_some_and(|p| p.default.is_some());
            if !fields.contains_key(name) && !defaulted {
                found.push(violation(
                    path,
                    &format!("required field {name:?} is missing"),
                ));
            }
        }
        for (name, field) in fields {
            if let Some(property) = schema.properties.as_ref().and_then(|p| p.get(name)) {
                found.extend(validate_value(field, property, &format!("{path}.{name}")));
            } else if let Some(JSONSchemaPropsOrBool::Schema(values)) =
                &schema.additional_properties
            {
                found.extend(validate_value(field, values, &format!("{path}.{name}")));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::object_schema::{add_property, object};
    use crate::crd::schema::{any_value, typed};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON;

    fn messages(schema: &JSONSchemaProps) -> Vec<String> {
        check_schema(schema)
            .into_iter()
            .map(|v| v.message)
            .collect()
    }

    #[test]
    fn the_servers_structural_rules() {
        let untyped = JSONSchemaProps::default();
        let tuple = JSONSchemaProps {
            items: Some(JSONSchemaPropsOrArray::Schemas(vec![typed("string")])),
            ..typed("array")
        };
        let closed = JSONSchemaProps {
            additional_properties: Some(JSONSchemaPropsOrBool::Bool(false)),
            ..typed("object")
        };
        let typed_branch = JSONSchemaProps {
            one_of: Some(vec![typed("string")]),
            ..any_value()
        };
        let undeclared = JSONSchemaProps {
            one_of: Some(vec![JSONSchemaProps {
                required: Some(vec!["a".into()]),
                properties: Some(
                    [("a".to_owned(), JSONSchemaProps::default())]
                        .into_iter()
                        .collect(),
                ),
                ..JSONSchemaProps::default()
            }]),
            ..object(None)
        };
        let rules_untyped = JSONSchemaProps {
            x_kubernetes_validations: Some(vec![Default::default()]),
            ..any_value()
        };
        let table: Vec<(JSONSchemaProps, &str)> = vec![
            (untyped, "must have a type"),
            (tuple, "items must be one schema"),
            (closed, "additionalProperties: false"),
            (typed_branch, "not allowed inside"),
            (undeclared, "must also be declared outside"),
            (rules_untyped, "need a typed node"),
            (typed("array"), "needs items"),
        ];
        for (schema, expected) in table {
            let found = messages(&schema);
            assert!(
                found.iter().any(|m| m.contains(expected)),
                "{expected:?} not in {found:?}"
            );
        }
        assert!(messages(&any_value()).is_empty());
    }

    #[test]
    fn defaults_are_checked_against_their_schema() {
        let mut schema = object(None);
        let mut count = JSONSchemaProps {
            minimum: Some(1.0),
            ..typed("integer")
        };
        count.default = Some(JSON(0.into()));
        add_property(&mut schema, "count", count, false);
        let found = messages(&schema);
        assert!(
            found.iter().any(|m| m.contains("below the minimum")),
            "{found:?}"
        );
    }

    #[test]
    fn map_lists_need_required_scalar_keys() {
        let mut item = object(None);
        add_property(&mut item, "name", typed("string"), false);
        let list = JSONSchemaProps {
            items: Some(JSONSchemaPropsOrArray::Schema(Box::new(item))),
            x_kubernetes_list_type: Some("map".into()),
            x_kubernetes_list_map_keys: Some(vec!["name".into()]),
            ..typed("array")
        };
        assert!(
            messages(&list)
                .iter()
                .any(|m| m.contains("must be required or have a default"))
        );
    }
}
