//! [`Schema`]: the OpenAPI v3 schema of a Rust type as the API server
//! wants it in a CustomResourceDefinition (structural), and the
//! [`Generator`] that walks nested types.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

/// A type whose JSON form (as serde writes and reads it) has a structural
/// schema: one the API server accepts in a CRD and that validates the
/// values serde produces.
///
/// Derive it for your own types with `#[derive(Schema)]` (the spec struct
/// of `#[derive(CustomResource)]` gets it from that derive); the standard
/// library's types, `serde_json::Value` and the k8s-openapi types an
/// operator embeds have it here.
///
/// Contract: [`schema`](Self::schema) is pure (the same schema on every
/// call) and asks for nested schemas through the generator, never by
/// calling `schema` directly, so recursive types end.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no Kubernetes schema",
    label = "this field's type needs `clientgo::crd::Schema`",
    note = "derive it with `#[derive(Schema)]`, or name a type with the same JSON form: `#[schema(with = OtherType)]`",
    note = "128-bit integers have none: the API server keeps integers as 64-bit"
)]
pub trait Schema {
    /// Whether serde reads a missing field of this type (true for
    /// `Option`): such a field is never `required`.
    const OPTIONAL: bool = false;

    /// The schema of this type's JSON form.
    fn schema(generator: &mut Generator) -> JSONSchemaProps;
}

/// Walks nested types for [`Schema::schema`], and ends recursion: a type
/// met again inside itself becomes a node that keeps any value
/// (`x-kubernetes-preserve-unknown-fields`), since a structural schema
/// cannot refer to itself. serde still checks those values when it reads
/// them.
#[derive(Debug, Default)]
pub struct Generator {
    path: Vec<&'static str>,
}

impl Generator {
    /// A generator at the top of a type.
    pub fn new() -> Self {
        Generator::default()
    }

    /// The schema of `T`, or the recursion node when `T` is being
    /// generated already (it encloses this call).
    pub fn subschema<T: Schema + ?Sized>(&mut self) -> JSONSchemaProps {
        let name = std::any::type_name::<T>();
        if self.path.contains(&name) {
            return recursion_node(name);
        }
        self.path.push(name);
        let schema = T::schema(self);
        self.path.pop();
        schema
    }
}

/// The schema of `T` from a fresh [`Generator`].
pub fn schema_for<T: Schema + ?Sized>() -> JSONSchemaProps {
    Generator::new().subschema::<T>()
}

/// What a recursive type's inner occurrence becomes.
fn recursion_node(name: &str) -> JSONSchemaProps {
    let short = name.rsplit("::").next().unwrap_or(name);
    JSONSchemaProps {
        description: Some(format!(
            "A nested {short}: a structural schema cannot refer to itself, so the API server keeps this value as written."
        )),
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..JSONSchemaProps::default()
    }
}

/// A schema of one JSON type (`"string"`, `"object"`, …) and nothing else.
pub fn typed(type_: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(type_.to_owned()),
        ..JSONSchemaProps::default()
    }
}

/// A node that keeps any value: no type, unknown fields preserved.
pub fn any_value() -> JSONSchemaProps {
    JSONSchemaProps {
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..JSONSchemaProps::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Node;

    impl Schema for Node {
        fn schema(generator: &mut Generator) -> JSONSchemaProps {
            let mut schema = typed("object");
            let child = generator.subschema::<Option<Box<Node>>>();
            schema.properties = Some([("child".to_owned(), child)].into_iter().collect());
            schema
        }
    }

    #[test]
    fn a_recursive_type_ends_in_a_node_that_keeps_any_value() {
        let schema = schema_for::<Node>();
        let child = &schema
            .properties
            .as_ref()
            .and_then(|p| p.get("child"))
            .cloned();
        let child = child.clone().unwrap_or_default();
        assert_eq!(child.x_kubernetes_preserve_unknown_fields, Some(true));
        assert_eq!(child.type_, None);
        assert!(child.properties.is_none());
    }

    #[test]
    fn siblings_of_one_type_are_not_recursion() {
        struct Pair;
        impl Schema for Pair {
            fn schema(generator: &mut Generator) -> JSONSchemaProps {
                let mut schema = typed("object");
                let a = generator.subschema::<String>();
                let b = generator.subschema::<String>();
                schema.properties = Some(
                    [("a".to_owned(), a), ("b".to_owned(), b)]
                        .into_iter()
                        .collect(),
                );
                schema
            }
        }
        let schema = schema_for::<Pair>();
        let properties = schema.properties.unwrap_or_default();
        assert!(
            properties
                .values()
                .all(|p| p.type_.as_deref() == Some("string"))
        );
    }
}
