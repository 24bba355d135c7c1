//! Schemas of one alternative inside `anyOf`/`oneOf`, where a structural
//! schema may not name a `type`: each JSON type other than the wanted one
//! is refused by a pair of bounds no value of that type can meet (a string
//! of at least one and at most zero characters, and so on), which the
//! server ignores for values of the wanted type.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSON, JSONSchemaProps};

/// An alternative that only values of `schema`'s JSON type meet, carrying
/// `schema`'s own value checks (enum, bounds, lengths, pattern, required
/// fields). An untyped `schema` gives an alternative every value meets;
/// `x-kubernetes-int-or-string` one that integers and strings meet.
pub(crate) fn alternative(schema: &JSONSchemaProps) -> JSONSchemaProps {
    let mut branch = JSONSchemaProps {
        enum_: schema.enum_.clone(),
        required: schema.required.clone(),
        minimum: schema.minimum,
        maximum: schema.maximum,
        exclusive_minimum: schema.exclusive_minimum,
        exclusive_maximum: schema.exclusive_maximum,
        multiple_of: schema.multiple_of,
        min_length: schema.min_length,
        max_length: schema.max_length,
        pattern: schema.pattern.clone(),
        min_items: schema.min_items,
        max_items: schema.max_items,
        min_properties: schema.min_properties,
        max_properties: schema.max_properties,
        ..JSONSchemaProps::default()
    };
    let int_or_string = schema.x_kubernetes_int_or_string == Some(true);
    let wanted: &[&str] = match schema.type_.as_deref() {
        _ if int_or_string => &["integer", "string"],
        Some("integer") => &["integer"],
        Some("number") => &["number"],
        Some("string") => &["string"],
        Some("boolean") => &["boolean"],
        Some("array") => &["array"],
        Some("object") => &["object"],
        _ => return branch,
    };
    let allows = |kind: &str| wanted.contains(&kind);
    if !allows("string") {
        branch.min_length = Some(1);
        branch.max_length = Some(0);
    }
    if !allows("integer") && !allows("number") {
        branch.minimum = Some(1.0);
        branch.maximum = Some(0.0);
        branch.exclusive_minimum = None;
        branch.exclusive_maximum = None;
    } else if allows("integer") && branch.multiple_of.is_none() {
        branch.multiple_of = Some(1.0);
    }
    if !allows("object") {
        branch.min_properties = Some(1);
        branch.max_properties = Some(0);
    }
    if !allows("array") {
        branch.min_items = Some(1);
        branch.max_items = Some(0);
    }
    if !allows("boolean") {
        branch.not = Some(Box::new(JSONSchemaProps {
            enum_: Some(vec![JSON(true.into()), JSON(false.into())]),
            ..JSONSchemaProps::default()
        }));
    }
    branch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::schema::typed;

    #[test]
    fn a_string_alternative_refuses_every_other_type() {
        let branch = alternative(&typed("string"));
        assert_eq!((branch.min_length, branch.max_length), (None, None));
        assert_eq!((branch.minimum, branch.maximum), (Some(1.0), Some(0.0)));
        assert_eq!((branch.min_items, branch.max_items), (Some(1), Some(0)));
        assert_eq!(
            (branch.min_properties, branch.max_properties),
            (Some(1), Some(0))
        );
        assert!(branch.not.is_some());
        assert!(branch.type_.is_none());
    }

    #[test]
    fn an_integer_alternative_refuses_fractions() {
        let branch = alternative(&typed("integer"));
        assert_eq!(branch.multiple_of, Some(1.0));
        assert_eq!((branch.minimum, branch.maximum), (None, None));
    }

    #[test]
    fn an_untyped_alternative_takes_anything() {
        let branch = alternative(&crate::crd::schema::any_value());
        assert_eq!(branch, JSONSchemaProps::default());
    }
}
