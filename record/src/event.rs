//! Event types and object references.

use clientgo_apimachinery::{ApiResource, Object};
use k8s_openapi::api::core::v1::ObjectReference;

/// An event's type: client-go accepts only these two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Something went as it should.
    Normal,
    /// Something the user may need to look at.
    Warning,
}

impl EventType {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// A reference to `object` for an event's `involvedObject` (client-go's
/// `ref.GetReference`): its kind, apiVersion, namespace, name, uid and
/// resourceVersion. For typed objects, whole or compact; for dynamic ones
/// see [`object_reference_as`].
pub fn object_reference<K>(object: &K) -> ObjectReference
where
    K: Object + k8s_openapi::Resource,
{
    reference(object, K::API_VERSION, K::KIND)
}

/// A reference to `object` as an object of `resource` (for a
/// `DynamicObject` or `PartialObjectMetadata`, whose type is known only at
/// run time).
pub fn object_reference_as(object: &impl Object, resource: &ApiResource) -> ObjectReference {
    reference(object, resource.api_version(), resource.kind())
}

fn reference(object: &impl Object, api_version: &str, kind: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some(api_version.to_string()),
        kind: Some(kind.to_string()),
        namespace: object.namespace().map(str::to_string),
        name: object.name().map(str::to_string),
        uid: object.uid().map(str::to_string),
        resource_version: object.resource_version().map(str::to_string),
        field_path: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_apimachinery::{Compact, DynamicObject};
    use k8s_openapi::api::apps::v1::Deployment;

    #[test]
    fn typed_compact_and_dynamic_objects_give_the_same_reference() {
        let json = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"n","uid":"u","resourceVersion":"7"}}"#;
        let typed: Deployment = serde_json::from_str(json).expect("valid");
        let compact: Compact<Deployment> = Compact::from_json(json).expect("valid");
        let dynamic: DynamicObject = serde_json::from_str(json).expect("valid");
        let expected = object_reference(&typed);
        assert_eq!(expected.kind.as_deref(), Some("Deployment"));
        assert_eq!(expected.api_version.as_deref(), Some("apps/v1"));
        assert_eq!(expected.uid.as_deref(), Some("u"));
        assert_eq!(object_reference(&compact), expected);
        assert_eq!(
            object_reference_as(&dynamic, &ApiResource::of::<Deployment>()),
            expected
        );
    }
}
