//! The schema of an enum in each of serde's representations, structural
//! by construction. A structural schema has one `type` per node and may
//! not name types inside `oneOf`/`anyOf`, so each representation is
//! mapped to the one node that holds every variant's form, plus
//! alternatives (see `type_guard`) that tell the variants apart.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSON, JSONSchemaProps};

use crate::crd::object_schema::{add_property, same_shape, union_of_objects};
use crate::crd::schema::{any_value, typed};
use crate::crd::type_guard::alternative;

/// How serde writes the enum (its container attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tagging {
    /// The default: a unit variant as its name, another as `{"Name": payload}`.
    External,
    /// `#[serde(tag = "…")]`: the name in a field beside the variant's fields.
    Internal {
        /// The field naming the variant.
        tag: &'static str,
    },
    /// `#[serde(tag = "…", content = "…")]`: `{"tag": "Name", "content": payload}`.
    Adjacent {
        /// The field naming the variant.
        tag: &'static str,
        /// The field holding the payload.
        content: &'static str,
    },
    /// `#[serde(untagged)]`: the payload alone; the first variant that reads wins.
    Untagged,
}

/// One variant, as serde names it.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Its name on the wire (after `rename` and `rename_all`).
    pub name: &'static str,
    /// Its doc comment.
    pub description: Option<&'static str>,
    /// What it carries.
    pub payload: Payload,
}

/// What a variant carries.
#[derive(Debug, Clone)]
pub enum Payload {
    /// Nothing (`A`).
    Unit,
    /// One value (`A(T)`) or a tuple (`A(T, U)`): that value's schema.
    Value(JSONSchemaProps),
    /// Named fields (`A { x: T }`): their object schema.
    Fields(JSONSchemaProps),
}

impl Payload {
    fn schema(&self) -> Option<&JSONSchemaProps> {
        match self {
            Payload::Unit => None,
            Payload::Value(schema) | Payload::Fields(schema) => Some(schema),
        }
    }
}

/// The enum's schema, described by `description` and its variants' docs.
pub fn enum_schema(
    description: Option<&str>,
    tagging: Tagging,
    variants: &[Variant],
) -> JSONSchemaProps {
    let mut schema = match tagging {
        Tagging::External => external(variants),
        Tagging::Internal { tag } => internal(tag, variants),
        Tagging::Adjacent { tag, content } => adjacent(tag, content, variants),
        Tagging::Untagged => untagged(variants),
    };
    schema.description = describe(description, variants);
    schema
}

/// The enum's doc followed by one line per documented variant.
fn describe(description: Option<&str>, variants: &[Variant]) -> Option<String> {
    let mut text = description.unwrap_or_default().to_owned();
    for variant in variants {
        if let Some(doc) = variant.description {
            if !text.is_empty() {
                text.push_str(if text.contains("\n- ") { "\n" } else { "\n\n" });
            }
            text.push_str(&format!("- {}: {}", variant.name, doc.replace('\n', " ")));
        }
    }
    (!text.is_empty()).then_some(text)
}

fn names(variants: &[&Variant]) -> Vec<JSON> {
    variants
        .iter()
        .map(|variant| JSON(variant.name.into()))
        .collect()
}

fn string_enum(values: Vec<JSON>) -> JSONSchemaProps {
    JSONSchemaProps {
        enum_: Some(values),
        ..typed("string")
    }
}

/// Alternatives that hold when the object's field `field` is `value`.
fn field_is(field: &str, value: &str) -> JSONSchemaProps {
    let mut alternative = JSONSchemaProps::default();
    add_property(
        &mut alternative,
        field,
        JSONSchemaProps {
            enum_: Some(vec![JSON(value.into())]),
            ..JSONSchemaProps::default()
        },
        false,
    );
    alternative
}

fn external(variants: &[Variant]) -> JSONSchemaProps {
    let (units, data): (Vec<&Variant>, Vec<&Variant>) = variants
        .iter()
        .partition(|variant| matches!(variant.payload, Payload::Unit));
    if data.is_empty() {
        return string_enum(names(&units));
    }
    if units.is_empty() {
        let mut schema = typed("object");
        for variant in &data {
            if let Some(payload) = variant.payload.schema() {
                add_property(&mut schema, variant.name, payload.clone(), false);
            }
        }
        schema.max_properties = Some(1);
        schema.one_of = Some(
            data.iter()
                .map(|variant| JSONSchemaProps {
                    required: Some(vec![variant.name.to_owned()]),
                    ..JSONSchemaProps::default()
                })
                .collect(),
        );
        return schema;
    }
    // Names as strings and `{"Name": payload}` objects in one node: no
    // type can hold both, so the node keeps any value and its
    // alternatives admit exactly those two forms (the payload is checked
    // by serde when read).
    let mut alternatives = vec![alternative(&string_enum(names(&units)))];
    for variant in &data {
        alternatives.push(alternative(&JSONSchemaProps {
            required: Some(vec![variant.name.to_owned()]),
            max_properties: Some(1),
            ..typed("object")
        }));
    }
    JSONSchemaProps {
        one_of: Some(alternatives),
        ..any_value()
    }
}

fn internal(tag: &str, variants: &[Variant]) -> JSONSchemaProps {
    let objects: Vec<&JSONSchemaProps> = variants
        .iter()
        .filter_map(|variant| variant.payload.schema())
        .filter(|schema| schema.type_.as_deref() == Some("object"))
        .collect();
    let mut schema = union_of_objects(objects);
    let all: Vec<&Variant> = variants.iter().collect();
    add_property(&mut schema, tag, string_enum(names(&all)), true);
    let mut alternatives = Vec::new();
    for variant in variants {
        let mut branch = field_is(tag, variant.name);
        match variant.payload.schema() {
            Some(payload) if payload.type_.as_deref() == Some("object") => {
                branch.required = payload.required.clone().filter(|list| !list.is_empty());
            }
            Some(_) => schema.x_kubernetes_preserve_unknown_fields = Some(true),
            None => {}
        }
        alternatives.push(branch);
    }
    schema.one_of = Some(alternatives);
    schema
}

fn adjacent(tag: &str, content: &str, variants: &[Variant]) -> JSONSchemaProps {
    let payloads: Vec<&JSONSchemaProps> = variants
        .iter()
        .filter_map(|variant| variant.payload.schema())
        .collect();
    let mut schema = typed("object");
    let all: Vec<&Variant> = variants.iter().collect();
    add_property(&mut schema, tag, string_enum(names(&all)), true);
    if !payloads.is_empty() {
        add_property(&mut schema, content, common_node(&payloads), false);
    }
    let alternatives = variants
        .iter()
        .map(|variant| {
            let mut branch = field_is(tag, variant.name);
            if let Some(payload) = variant.payload.schema() {
                add_property(&mut branch, content, alternative(payload), true);
            }
            branch
        })
        .collect();
    schema.one_of = Some(alternatives);
    schema
}

fn untagged(variants: &[Variant]) -> JSONSchemaProps {
    // serde writes a unit variant of an untagged enum as null, which the
    // API server drops from a field that is not nullable.
    let payloads: Vec<&JSONSchemaProps> = variants
        .iter()
        .filter_map(|variant| variant.payload.schema())
        .collect();
    let mut schema = common_node(&payloads);
    let one_schema = payloads
        .split_first()
        .is_some_and(|(first, rest)| rest.iter().all(|p| same_shape(p, first)));
    let objects = schema.type_.as_deref() == Some("object");
    if objects && !one_schema {
        let required: Vec<JSONSchemaProps> = payloads
            .iter()
            .map(|payload| JSONSchemaProps {
                required: payload.required.clone(),
                ..JSONSchemaProps::default()
            })
            .collect();
        if required.iter().all(|branch| {
            branch
                .required
                .as_ref()
                .is_some_and(|list| !list.is_empty())
        }) {
            schema.any_of = Some(required);
        }
    } else if !one_schema && !payloads.is_empty() {
        let mut alternatives: Vec<JSONSchemaProps> = Vec::new();
        for branch in payloads.iter().map(|payload| alternative(payload)) {
            if !alternatives.contains(&branch) {
                alternatives.push(branch);
            }
        }
        if alternatives
            .iter()
            .all(|branch| *branch != JSONSchemaProps::default())
        {
            schema.any_of = Some(alternatives);
        }
    }
    schema
}

/// One node that holds every value of `payloads`: their schema if they
/// agree; a union of properties if all are objects; one scalar type, or
/// `x-kubernetes-int-or-string` for integers and strings; else any value.
fn common_node(payloads: &[&JSONSchemaProps]) -> JSONSchemaProps {
    let Some((first, rest)) = payloads.split_first() else {
        return any_value();
    };
    if rest.iter().all(|payload| same_shape(payload, first)) {
        return JSONSchemaProps {
            description: None,
            ..(*first).clone()
        };
    }
    let types: Vec<Option<&str>> = payloads
        .iter()
        .map(|payload| {
            if payload.x_kubernetes_int_or_string == Some(true) {
                Some("int-or-string")
            } else {
                payload.type_.as_deref()
            }
        })
        .collect();
    let all = |wanted: &[&str]| {
        types
            .iter()
            .all(|type_| type_.is_some_and(|t| wanted.contains(&t)))
    };
    let plain_objects = payloads
        .iter()
        .all(|payload| payload.additional_properties.is_none());
    if all(&["object"]) && plain_objects {
        return union_of_objects(payloads.iter().copied());
    }
    if all(&["string"]) {
        let mut values = Vec::new();
        for payload in payloads {
            match &payload.enum_ {
                Some(list) => values.extend(list.iter().cloned()),
                None => return typed("string"),
            }
        }
        return string_enum(values);
    }
    if all(&["integer"]) {
        return typed("integer");
    }
    if all(&["integer", "number"]) {
        return typed("number");
    }
    if all(&["integer", "string", "int-or-string"]) {
        return JSONSchemaProps {
            x_kubernetes_int_or_string: Some(true),
            ..JSONSchemaProps::default()
        };
    }
    if all(&["array"]) {
        return JSONSchemaProps {
            items: Some(
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(
                    Box::new(any_value()),
                ),
            ),
            ..typed("array")
        };
    }
    any_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::object_schema::object;

    fn unit(name: &'static str) -> Variant {
        Variant {
            name,
            description: None,
            payload: Payload::Unit,
        }
    }

    fn value(name: &'static str, schema: JSONSchemaProps) -> Variant {
        Variant {
            name,
            description: None,
            payload: Payload::Value(schema),
        }
    }

    fn fields(name: &'static str, properties: &[(&str, &str)]) -> Variant {
        let mut schema = object(None);
        for (field, type_) in properties {
            add_property(&mut schema, field, typed(type_), true);
        }
        Variant {
            name,
            description: None,
            payload: Payload::Fields(schema),
        }
    }

    #[test]
    fn unit_variants_are_a_string_enum() {
        let schema = enum_schema(None, Tagging::External, &[unit("A"), unit("B")]);
        assert_eq!(schema.type_.as_deref(), Some("string"));
        assert_eq!(schema.enum_.map(|values| values.len()), Some(2));
    }

    #[test]
    fn external_data_variants_are_one_key_objects() {
        let schema = enum_schema(
            None,
            Tagging::External,
            &[
                value("A", typed("string")),
                fields("B", &[("x", "integer")]),
            ],
        );
        assert_eq!(schema.type_.as_deref(), Some("object"));
        assert_eq!(schema.max_properties, Some(1));
        assert_eq!(schema.one_of.map(|branches| branches.len()), Some(2));
    }

    #[test]
    fn external_mixed_variants_are_any_value_with_alternatives() {
        let schema = enum_schema(
            None,
            Tagging::External,
            &[unit("U"), value("A", typed("string"))],
        );
        assert_eq!(schema.type_, None);
        assert_eq!(schema.x_kubernetes_preserve_unknown_fields, Some(true));
        let branches = schema.one_of.unwrap_or_default();
        assert_eq!(branches.len(), 2);
        assert!(branches.iter().all(|branch| branch.type_.is_none()));
    }

    #[test]
    fn internal_tags_require_the_tag_and_each_variants_fields() {
        let schema = enum_schema(
            None,
            Tagging::Internal { tag: "type" },
            &[fields("A", &[("a", "integer")]), unit("U")],
        );
        assert_eq!(schema.required, Some(vec!["type".into()]));
        let branches = schema.one_of.unwrap_or_default();
        assert_eq!(branches[0].required, Some(vec!["a".into()]));
        assert_eq!(branches[1].required, None);
    }

    #[test]
    fn untagged_integer_or_string_is_int_or_string() {
        let schema = enum_schema(
            None,
            Tagging::Untagged,
            &[value("I", typed("integer")), value("S", typed("string"))],
        );
        assert_eq!(schema.x_kubernetes_int_or_string, Some(true));
        assert_eq!(schema.any_of.map(|branches| branches.len()), Some(2));
    }

    #[test]
    fn variant_docs_join_the_description() {
        let mut a = unit("A");
        a.description = Some("the first");
        let schema = enum_schema(Some("Which."), Tagging::External, &[a, unit("B")]);
        assert_eq!(
            schema.description.as_deref(),
            Some("Which.\n\n- A: the first")
        );
    }
}
