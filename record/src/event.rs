//! Event types and object references.

use clientgo_apimachinery::Object;
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
/// resourceVersion. Works for typed k8s-openapi objects; for an object
/// whose type is not known statically use [`ObjectReference`] directly.
pub fn object_reference<K>(object: &K) -> ObjectReference
where
    K: Object + k8s_openapi::Resource,
{
    ObjectReference {
        api_version: Some(K::API_VERSION.to_string()),
        kind: Some(K::KIND.to_string()),
        namespace: object.namespace().map(str::to_string),
        name: object.name().map(str::to_string),
        uid: object.uid().map(str::to_string),
        resource_version: object.resource_version().map(str::to_string),
        field_path: None,
    }
}
