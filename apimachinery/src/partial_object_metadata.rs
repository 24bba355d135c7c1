//! [`PartialObjectMetadata`]: an object reduced to its metadata, as the API
//! server returns it when asked with an `as=PartialObjectMetadata` media type.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::object::Object;
use crate::object_list::ObjectList;

/// The `Accept` header that asks for one object as [`PartialObjectMetadata`]
/// (a get, or the objects of a watch stream's events).
pub const PARTIAL_OBJECT_METADATA_ACCEPT: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/// The `Accept` header that asks for a list as [`PartialObjectMetadataList`].
pub const PARTIAL_OBJECT_METADATA_LIST_ACCEPT: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// The `apiVersion` of metadata-only objects and lists.
pub const META_API_VERSION: &str = "meta.k8s.io/v1";

/// An object with only its metadata (`kind: PartialObjectMetadata`,
/// `apiVersion: meta.k8s.io/v1`). Caching these instead of whole objects is
/// the cheap way to watch many objects when only names, labels, owners or
/// finalizers matter.
///
/// ```
/// use clientgo_apimachinery::{Object, PartialObjectMetadata};
///
/// let object: PartialObjectMetadata = serde_json::from_str(r#"{
///     "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
///     "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}}
/// }"#).unwrap();
/// assert_eq!(object.labels().get("app"), Some("web"));
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartialObjectMetadata {
    /// `meta.k8s.io/v1` when sent by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `PartialObjectMetadata` when sent by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
}

impl PartialObjectMetadata {
    /// Metadata-only form of an object's metadata, with the server's kind
    /// and apiVersion.
    pub fn from_meta(metadata: ObjectMeta) -> Self {
        PartialObjectMetadata {
            api_version: Some(META_API_VERSION.to_string()),
            kind: Some("PartialObjectMetadata".to_string()),
            metadata,
        }
    }
}

impl Object for PartialObjectMetadata {
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn compactable() -> bool {
        false
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }

    fn fixed_type() -> Option<(&'static str, &'static str)> {
        Some((META_API_VERSION, "PartialObjectMetadata"))
    }

    fn object_type(&self) -> Option<(&str, &str)> {
        Some((self.api_version.as_deref()?, self.kind.as_deref()?))
    }
}

/// A page of metadata-only objects (`kind: PartialObjectMetadataList`).
pub type PartialObjectMetadataList = ObjectList<PartialObjectMetadata>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_metadata_only_list() {
        let list: PartialObjectMetadataList = serde_json::from_str(
            r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",
            "metadata":{"resourceVersion":"31"},
            "items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
                      "metadata":{"name":"a","namespace":"n","resourceVersion":"30"}}]}"#,
        )
        .unwrap();
        assert_eq!(list.kind.as_deref(), Some("PartialObjectMetadataList"));
        assert_eq!(list.resource_version(), Some("31"));
        assert_eq!(list.items[0].name(), Some("a"));
        assert_eq!(list.items[0].resource_version(), Some("30"));
    }

    #[test]
    fn from_meta_sets_the_server_kind() {
        let object = PartialObjectMetadata::from_meta(ObjectMeta {
            name: Some("x".into()),
            ..Default::default()
        });
        let json = serde_json::to_value(&object).unwrap();
        assert_eq!(json["kind"], "PartialObjectMetadata");
        assert_eq!(json["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(json["metadata"]["name"], "x");
    }

    #[test]
    fn accept_headers_name_the_meta_group() {
        assert!(PARTIAL_OBJECT_METADATA_ACCEPT.contains("as=PartialObjectMetadata;"));
        assert!(PARTIAL_OBJECT_METADATA_LIST_ACCEPT.contains("as=PartialObjectMetadataList;"));
        assert!(PARTIAL_OBJECT_METADATA_LIST_ACCEPT.ends_with("g=meta.k8s.io;v=v1"));
    }
}
