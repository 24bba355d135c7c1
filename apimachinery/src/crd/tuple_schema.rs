//! The schema of a tuple, which serde writes as an array of fixed length.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray,
};

use crate::crd::schema::{any_value, typed};
use crate::crd::type_guard::alternative;

/// An array of exactly `items.len()` values. Items of one schema keep it;
/// items of different schemas (a structural schema has one item schema,
/// not one per position) become values each meeting one of the item
/// schemas' alternatives: the server checks the length and each value's
/// type, serde the order when it reads.
pub fn tuple(items: &[JSONSchemaProps]) -> JSONSchemaProps {
    let length = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let item = match items.split_first() {
        Some((first, rest)) if rest.iter().all(|item| item == first) => first.clone(),
        _ => {
            let mut alternatives: Vec<JSONSchemaProps> = Vec::new();
            for branch in items.iter().map(alternative) {
                if !alternatives.contains(&branch) {
                    alternatives.push(branch);
                }
            }
            JSONSchemaProps {
                any_of: Some(alternatives),
                ..any_value()
            }
        }
    };
    JSONSchemaProps {
        items: Some(JSONSchemaPropsOrArray::Schema(Box::new(item))),
        min_items: Some(length),
        max_items: Some(length),
        ..typed("array")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_item_schema_is_kept() {
        let schema = tuple(&[typed("string"), typed("string")]);
        let Some(JSONSchemaPropsOrArray::Schema(item)) = schema.items else {
            panic!("one item schema");
        };
        assert_eq!(item.type_.as_deref(), Some("string"));
        assert_eq!((schema.min_items, schema.max_items), (Some(2), Some(2)));
    }

    #[test]
    fn mixed_items_become_typed_alternatives() {
        let schema = tuple(&[typed("string"), typed("integer"), typed("string")]);
        let Some(JSONSchemaPropsOrArray::Schema(item)) = schema.items else {
            panic!("one item schema");
        };
        assert_eq!(item.type_, None);
        assert_eq!(item.any_of.map(|branches| branches.len()), Some(2));
    }
}
