//! [`Schema`] for the standard library's types and `serde_json::Value`, as
//! serde_json writes them.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use crate::crd::schema::{Generator, Schema, any_value, typed};
use crate::crd::tuple_schema::tuple;

impl Schema for bool {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        typed("boolean")
    }
}

impl Schema for String {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        typed("string")
    }
}

impl Schema for str {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        typed("string")
    }
}

impl Schema for char {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        JSONSchemaProps {
            min_length: Some(1),
            max_length: Some(1),
            ..typed("string")
        }
    }
}

/// An integer type's schema: `format` for the widths OpenAPI names, and
/// the bounds of the narrower ones, so the server refuses what serde could
/// not read.
macro_rules! integer {
    ($($ty:ty => $format:expr, $bounds:expr;)*) => {$(
        impl Schema for $ty {
            fn schema(_: &mut Generator) -> JSONSchemaProps {
                let (minimum, maximum): (Option<f64>, Option<f64>) = $bounds;
                JSONSchemaProps {
                    format: $format.map(str::to_owned),
                    minimum,
                    maximum,
                    ..typed("integer")
                }
            }
        }
    )*};
}

integer! {
    i8 => None::<&str>, (Some(i8::MIN.into()), Some(i8::MAX.into()));
    i16 => None::<&str>, (Some(i16::MIN.into()), Some(i16::MAX.into()));
    i32 => Some("int32"), (None, None);
    i64 => Some("int64"), (None, None);
    isize => Some("int64"), (None, None);
    u8 => None::<&str>, (Some(0.0), Some(u8::MAX.into()));
    u16 => None::<&str>, (Some(0.0), Some(u16::MAX.into()));
    u32 => None::<&str>, (Some(0.0), Some(u32::MAX.into()));
    // The API server decodes integers into int64: a u64 above i64::MAX is
    // refused on write ("must be of type integer"), never stored wrong. A
    // `maximum` of 2^63-1 cannot be written (it is not exact as a double).
    u64 => None::<&str>, (Some(0.0), None);
    usize => None::<&str>, (Some(0.0), None);
}

impl Schema for f32 {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        JSONSchemaProps {
            format: Some("float".into()),
            ..typed("number")
        }
    }
}

impl Schema for f64 {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        JSONSchemaProps {
            format: Some("double".into()),
            ..typed("number")
        }
    }
}

/// `None` is written as `null`, which the API server drops from a field
/// that is not `nullable` (so it reads back missing, which serde reads as
/// `None`); the field is optional, not nullable. Ask for `nullable` with
/// `#[schema(nullable)]` where null must be kept.
impl<T: Schema> Schema for Option<T> {
    const OPTIONAL: bool = true;

    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        generator.subschema::<T>()
    }
}

macro_rules! transparent {
    ($($ty:ident),*) => {$(
        impl<T: Schema + ?Sized> Schema for $ty<T> {
            const OPTIONAL: bool = T::OPTIONAL;

            fn schema(generator: &mut Generator) -> JSONSchemaProps {
                generator.subschema::<T>()
            }
        }
    )*};
}

transparent!(Box, Arc, Rc);

impl<T: Schema + ?Sized + ToOwned> Schema for Cow<'_, T> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        generator.subschema::<T>()
    }
}

impl<T: Schema + ?Sized> Schema for &T {
    const OPTIONAL: bool = T::OPTIONAL;

    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        generator.subschema::<T>()
    }
}

/// An array of `T`'s schema.
fn array_of<T: Schema + ?Sized>(generator: &mut Generator) -> JSONSchemaProps {
    JSONSchemaProps {
        items: Some(JSONSchemaPropsOrArray::Schema(Box::new(value_of::<T>(
            generator,
        )))),
        ..typed("array")
    }
}

/// `T`'s schema as an array item or map value, where the API server keeps
/// a null (it drops nulls only from fields): `nullable` when `T` is an
/// `Option`.
fn value_of<T: Schema + ?Sized>(generator: &mut Generator) -> JSONSchemaProps {
    let mut schema = generator.subschema::<T>();
    if T::OPTIONAL {
        schema.nullable = Some(true);
    }
    schema
}

impl<T: Schema> Schema for Vec<T> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        array_of::<T>(generator)
    }
}

impl<T: Schema> Schema for VecDeque<T> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        array_of::<T>(generator)
    }
}

impl<T: Schema> Schema for [T] {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        array_of::<T>(generator)
    }
}

impl<T: Schema, const N: usize> Schema for [T; N] {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        let length = i64::try_from(N).unwrap_or(i64::MAX);
        JSONSchemaProps {
            min_items: Some(length),
            max_items: Some(length),
            ..array_of::<T>(generator)
        }
    }
}

/// A set: the API server keeps its items unique (`x-kubernetes-list-type:
/// set`; `uniqueItems` is not allowed in a CRD). Items that are objects are
/// compared whole (`x-kubernetes-map-type: atomic`), as the server needs.
fn set_of<T: Schema>(generator: &mut Generator) -> JSONSchemaProps {
    let mut item = value_of::<T>(generator);
    if item.type_.as_deref() == Some("object") && item.x_kubernetes_map_type.is_none() {
        item.x_kubernetes_map_type = Some("atomic".into());
    }
    if item.type_.as_deref() == Some("array") && item.x_kubernetes_list_type.is_none() {
        item.x_kubernetes_list_type = Some("atomic".into());
    }
    JSONSchemaProps {
        items: Some(JSONSchemaPropsOrArray::Schema(Box::new(item))),
        x_kubernetes_list_type: Some("set".into()),
        ..typed("array")
    }
}

impl<T: Schema, S> Schema for HashSet<T, S> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        set_of::<T>(generator)
    }
}

impl<T: Schema> Schema for BTreeSet<T> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        set_of::<T>(generator)
    }
}

/// A map: serde writes its keys as strings, whatever their Rust type.
fn map_of<V: Schema>(generator: &mut Generator) -> JSONSchemaProps {
    JSONSchemaProps {
        additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(value_of::<V>(
            generator,
        )))),
        ..typed("object")
    }
}

impl<K, V: Schema, S> Schema for HashMap<K, V, S> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        map_of::<V>(generator)
    }
}

impl<K, V: Schema> Schema for BTreeMap<K, V> {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        map_of::<V>(generator)
    }
}

/// Any JSON value: `x-kubernetes-preserve-unknown-fields` with no type.
impl Schema for serde_json::Value {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        any_value()
    }
}

/// Any JSON object.
impl Schema for serde_json::Map<String, serde_json::Value> {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        JSONSchemaProps {
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..typed("object")
        }
    }
}

macro_rules! tuples {
    ($(($($name:ident),+);)*) => {$(
        impl<$($name: Schema),+> Schema for ($($name,)+) {
            fn schema(generator: &mut Generator) -> JSONSchemaProps {
                tuple(&[$(generator.subschema::<$name>()),+])
            }
        }
    )*};
}

tuples! {
    (A);
    (A, B);
    (A, B, C);
    (A, B, C, D);
    (A, B, C, D, E);
    (A, B, C, D, E, F);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::schema::schema_for;

    #[test]
    fn scalars_and_their_bounds() {
        type Row = (
            JSONSchemaProps,
            &'static str,
            Option<&'static str>,
            Option<f64>,
            Option<f64>,
        );
        let table: Vec<Row> = vec![
            (schema_for::<bool>(), "boolean", None, None, None),
            (schema_for::<String>(), "string", None, None, None),
            (schema_for::<i32>(), "integer", Some("int32"), None, None),
            (schema_for::<i64>(), "integer", Some("int64"), None, None),
            (schema_for::<u8>(), "integer", None, Some(0.0), Some(255.0)),
            (
                schema_for::<i16>(),
                "integer",
                None,
                Some(-32768.0),
                Some(32767.0),
            ),
            (
                schema_for::<u32>(),
                "integer",
                None,
                Some(0.0),
                Some(4294967295.0),
            ),
            (schema_for::<u64>(), "integer", None, Some(0.0), None),
            (schema_for::<f64>(), "number", Some("double"), None, None),
        ];
        for (schema, type_, format, minimum, maximum) in table {
            assert_eq!(schema.type_.as_deref(), Some(type_));
            assert_eq!(schema.format.as_deref(), format, "{type_}");
            assert_eq!(
                (schema.minimum, schema.maximum),
                (minimum, maximum),
                "{type_}"
            );
        }
    }

    #[test]
    fn option_is_optional_and_not_nullable() {
        const { assert!(<Option<String> as Schema>::OPTIONAL) };
        const { assert!(!<String as Schema>::OPTIONAL) };
        assert_eq!(schema_for::<Option<String>>().nullable, None);
    }

    #[test]
    fn sets_keep_their_items_unique_and_objects_whole() {
        let strings = schema_for::<BTreeSet<String>>();
        assert_eq!(strings.x_kubernetes_list_type.as_deref(), Some("set"));
        let maps = schema_for::<HashSet<BTreeMap<String, String>>>();
        let Some(JSONSchemaPropsOrArray::Schema(item)) = maps.items else {
            panic!("a set has one item schema");
        };
        assert_eq!(item.x_kubernetes_map_type.as_deref(), Some("atomic"));
    }

    #[test]
    fn maps_and_any_values() {
        let map = schema_for::<HashMap<String, i32>>();
        assert!(matches!(
            map.additional_properties,
            Some(JSONSchemaPropsOrBool::Schema(_))
        ));
        let value = schema_for::<serde_json::Value>();
        assert_eq!(
            (value.type_, value.x_kubernetes_preserve_unknown_fields),
            (None, Some(true))
        );
    }

    #[test]
    fn fixed_arrays_have_their_length() {
        let pair = schema_for::<[u8; 2]>();
        assert_eq!((pair.min_items, pair.max_items), (Some(2), Some(2)));
    }
}
