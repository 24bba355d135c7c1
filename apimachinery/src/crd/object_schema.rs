//! Object schemas as a struct's fields make them: properties, required
//! fields, flattened fields, and unions of several objects' properties.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use crate::crd::schema::{any_value, typed};

/// An object with no properties yet, described by `description`.
pub fn object(description: Option<&str>) -> JSONSchemaProps {
    JSONSchemaProps {
        description: description.map(str::to_owned),
        properties: Some(BTreeMap::new()),
        ..typed("object")
    }
}

/// Adds the property `name` to `parent` (an [`object`]), required or not.
pub fn add_property(
    parent: &mut JSONSchemaProps,
    name: &str,
    schema: JSONSchemaProps,
    required: bool,
) {
    parent
        .properties
        .get_or_insert_with(BTreeMap::new)
        .insert(name.to_owned(), schema);
    if required {
        let list = parent.required.get_or_insert_with(Vec::new);
        if !list.iter().any(|field| field == name) {
            list.push(name.to_owned());
        }
    }
}

/// Merges a `#[serde(flatten)]` field's schema into `parent`: its
/// properties (required unless the field is `optional`), its
/// alternatives and its rules. A flattened map or any-value keeps the
/// parent's unknown fields (`x-kubernetes-preserve-unknown-fields`), since
/// a structural object cannot have both properties and
/// `additionalProperties`.
pub fn flatten(parent: &mut JSONSchemaProps, child: JSONSchemaProps, optional: bool) {
    let is_object = child.type_.as_deref() == Some("object");
    if !is_object
        || child.additional_properties.is_some()
        || child.x_kubernetes_preserve_unknown_fields == Some(true)
    {
        parent.x_kubernetes_preserve_unknown_fields = Some(true);
    }
    if !is_object {
        return;
    }
    for (name, schema) in child.properties.unwrap_or_default() {
        let merged = match parent.properties.as_ref().and_then(|p| p.get(&name)) {
            Some(existing) if !same_shape(existing, &schema) => any_value(),
            _ => schema,
        };
        add_property(parent, &name, merged, false);
    }
    if !optional {
        for name in child.required.unwrap_or_default() {
            let list = parent.required.get_or_insert_with(Vec::new);
            if !list.contains(&name) {
                list.push(name);
            }
        }
        for (alternatives, all_of_key) in [(child.one_of, true), (child.any_of, false)] {
            let Some(alternatives) = alternatives else {
                continue;
            };
            let slot = if all_of_key {
                &mut parent.one_of
            } else {
                &mut parent.any_of
            };
            if slot.is_none() {
                *slot = Some(alternatives);
            } else {
                let wrapper = if all_of_key {
                    JSONSchemaProps {
                        one_of: Some(alternatives),
                        ..JSONSchemaProps::default()
                    }
                } else {
                    JSONSchemaProps {
                        any_of: Some(alternatives),
                        ..JSONSchemaProps::default()
                    }
                };
                parent.all_of.get_or_insert_with(Vec::new).push(wrapper);
            }
        }
    }
    if let Some(rules) = child.x_kubernetes_validations {
        parent
            .x_kubernetes_validations
            .get_or_insert_with(Vec::new)
            .extend(rules);
    }
}

/// Whether two schemas agree on everything but their descriptions.
pub(crate) fn same_shape(a: &JSONSchemaProps, b: &JSONSchemaProps) -> bool {
    let strip = |schema: &JSONSchemaProps| JSONSchemaProps {
        description: None,
        ..schema.clone()
    };
    strip(a) == strip(b)
}

/// One object whose properties are those of every object in `objects`
/// (a property two of them give different schemas keeps any value), with
/// none required: what is required of each is for the caller's
/// alternatives to say.
pub(crate) fn union_of_objects<'a>(
    objects: impl IntoIterator<Item = &'a JSONSchemaProps>,
) -> JSONSchemaProps {
    let mut union = object(None);
    for schema in objects {
        if schema.x_kubernetes_preserve_unknown_fields == Some(true)
            || schema.additional_properties.is_some()
        {
            union.x_kubernetes_preserve_unknown_fields = Some(true);
        }
        for (name, property) in schema.properties.iter().flatten() {
            // A default would be filled into every variant's objects.
            let property = &JSONSchemaProps {
                default: None,
                ..property.clone()
            };
            let merged = match union.properties.as_ref().and_then(|p| p.get(name)) {
                Some(existing) if !same_shape(existing, property) => any_value(),
                Some(existing) => existing.clone(),
                None => property.clone(),
            };
            add_property(&mut union, name, merged, false);
        }
    }
    union
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(properties: &[(&str, &str)], required: &[&str]) -> JSONSchemaProps {
        let mut schema = object(None);
        for (name, type_) in properties {
            add_property(&mut schema, name, typed(type_), required.contains(name));
        }
        schema
    }

    #[test]
    fn a_flattened_struct_adds_its_fields() {
        let mut parent = with(&[("a", "string")], &["a"]);
        flatten(&mut parent, with(&[("b", "integer")], &["b"]), false);
        assert_eq!(parent.required, Some(vec!["a".into(), "b".into()]));
        assert_eq!(parent.properties.map(|p| p.len()), Some(2));
        assert_eq!(parent.x_kubernetes_preserve_unknown_fields, None);
    }

    #[test]
    fn an_optional_flattened_struct_requires_nothing() {
        let mut parent = object(None);
        flatten(&mut parent, with(&[("b", "integer")], &["b"]), true);
        assert_eq!(parent.required, None);
    }

    #[test]
    fn a_flattened_map_keeps_unknown_fields() {
        let mut parent = with(&[("a", "string")], &[]);
        let map = JSONSchemaProps {
            additional_properties: Some(
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrBool::Bool(true),
            ),
            ..typed("object")
        };
        flatten(&mut parent, map, false);
        assert_eq!(parent.x_kubernetes_preserve_unknown_fields, Some(true));
        assert!(parent.additional_properties.is_none());
    }

    #[test]
    fn a_union_keeps_any_value_where_objects_disagree() {
        let a = with(&[("x", "string"), ("y", "integer")], &["x"]);
        let b = with(&[("x", "integer")], &["x"]);
        let union = union_of_objects([&a, &b]);
        let properties = union.properties.unwrap_or_default();
        assert_eq!(properties["x"].type_, None);
        assert_eq!(properties["y"].type_.as_deref(), Some("integer"));
        assert_eq!(union.required, None);
    }
}
