//! Access to the standard metadata every Kubernetes object carries.
//!
//! [`Object`] is the counterpart of client-go's `metav1.Object`: stores, key
//! functions, indexers, selectors and handlers read names, namespaces,
//! resource versions and labels through it without knowing the concrete type.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::{OwnerRef, OwnerRefs, StrMap};

/// Anything that carries a Kubernetes [`ObjectMeta`].
///
/// It is implemented for every k8s-openapi resource type (through a blanket
/// implementation over [`k8s_openapi::Metadata`]), for
/// [`DynamicObject`](crate::DynamicObject) and for
/// [`PartialObjectMetadata`](crate::PartialObjectMetadata). A custom resource
/// type gets it by implementing `k8s_openapi::Resource` and
/// `k8s_openapi::Metadata<Ty = ObjectMeta>`, or by implementing this trait
/// directly.
///
/// Only [`meta`](Object::meta) and [`meta_mut`](Object::meta_mut) must be
/// provided; the other methods read fields of the metadata and never
/// allocate. Read fields through them rather than through `meta()`: a
/// [`Compact`](crate::Compact) entry keeps its metadata packed
/// ([`CompactMeta`](crate::CompactMeta)), which the accessors read in
/// place, while its `meta()` builds a whole `ObjectMeta` and keeps it for
/// as long as the entry lives. The trait is dyn-compatible: `&dyn Object`
/// is client-go's `metav1.Object`.
pub trait Object {
    /// The object's metadata as k8s-openapi's `ObjectMeta`.
    fn meta(&self) -> &ObjectMeta;

    /// The object's metadata, for changing it.
    ///
    /// Objects held in a cache are shared (`Arc<K>`) and must not be mutated;
    /// this is for objects the caller owns, such as one about to be sent.
    fn meta_mut(&mut self) -> &mut ObjectMeta;

    /// `metadata.name`, or `None` when unset (for example on an object that
    /// will be created with `generateName`).
    fn name(&self) -> Option<&str> {
        self.meta().name.as_deref()
    }

    /// `metadata.namespace`; `None` for cluster-scoped objects and for
    /// namespaced objects not yet assigned one.
    fn namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }

    /// `metadata.resourceVersion`: the opaque version string the API server
    /// stamps on every write.
    fn resource_version(&self) -> Option<&str> {
        self.meta().resource_version.as_deref()
    }

    /// `metadata.uid`: unique across the cluster's lifetime, so a deleted and
    /// re-created object with the same name has a different one.
    fn uid(&self) -> Option<&str> {
        self.meta().uid.as_deref()
    }

    /// `metadata.generation`: bumped by the server when the desired state
    /// (anything but metadata and status) changes.
    fn generation(&self) -> Option<i64> {
        self.meta().generation
    }

    /// `metadata.labels`; an empty map when the object has none.
    fn labels(&self) -> StrMap<'_> {
        StrMap::of_option(self.meta().labels.as_ref())
    }

    /// `metadata.annotations`; an empty map when the object has none.
    fn annotations(&self) -> StrMap<'_> {
        StrMap::of_option(self.meta().annotations.as_ref())
    }

    /// `metadata.creationTimestamp`.
    fn creation_timestamp(&self) -> Option<&Time> {
        self.meta().creation_timestamp.as_ref()
    }

    /// `metadata.deletionTimestamp`: set when deletion was requested but
    /// finalizers still hold the object.
    fn deletion_timestamp(&self) -> Option<&Time> {
        self.meta().deletion_timestamp.as_ref()
    }

    /// `metadata.ownerReferences`, in order; empty when the object has
    /// no owners.
    fn owner_references(&self) -> OwnerRefs<'_> {
        OwnerRefs::from(self.meta().owner_references.as_deref().unwrap_or_default())
    }

    /// `metadata.finalizers`; empty when there are none.
    fn finalizers(&self) -> &[String] {
        self.meta().finalizers.as_deref().unwrap_or_default()
    }

    /// Gives the object the `apiVersion` and `kind` of the list it came in
    /// when it has neither, as client-go's unstructured list decoding does:
    /// the API server leaves both out of the items of a list of a built-in
    /// type (it keeps them for custom resources). `list_kind` is the list's
    /// kind (`PodList`); the item's is that without the `List` suffix.
    /// Nothing to do for typed objects, whose type fixes both (the default).
    fn fill_type_from_list(&mut self, list_api_version: &str, list_kind: &str) {
        let _ = (list_api_version, list_kind);
    }

    /// The `apiVersion` and `kind` every object of this Rust type has on
    /// the wire, when the type fixes them: a k8s-openapi or custom
    /// resource type's own, `Compact<K>`'s `K`'s, `PartialObjectMetadata`'s.
    /// `None` (the default) for a type that holds objects of any kind
    /// ([`DynamicObject`](crate::DynamicObject)). Watch decoders skip an
    /// event of another type by it before decoding the object, as
    /// client-go's reflector skips an event of an unexpected type.
    fn fixed_type() -> Option<(&'static str, &'static str)>
    where
        Self: Sized,
    {
        None
    }

    /// The `apiVersion` and `kind` this object says it has: its own
    /// fields for a `DynamicObject` or a `PartialObjectMetadata`, else
    /// [`fixed_type`](Object::fixed_type). The reflector skips an event
    /// whose object names another type than the resource it watches.
    fn object_type(&self) -> Option<(&str, &str)>
    where
        Self: Sized,
    {
        Self::fixed_type()
    }

    /// Whether an informer in compact storage may keep objects of this
    /// type as compact entries (bytes plus parsed metadata): true (the
    /// default) for resource types; false for a type that already is an
    /// entry ([`Compact`](crate::Compact)) or holds only metadata
    /// ([`PartialObjectMetadata`](crate::PartialObjectMetadata)).
    fn compactable() -> bool
    where
        Self: Sized,
    {
        true
    }

    /// The owner reference marked `controller: true`, if any.
    fn controller_reference(&self) -> Option<OwnerRef<'_>> {
        self.owner_references().controller()
    }
}

/// An object a reflector, an informer or a lister can hold: an [`Object`]
/// that decodes from and encodes to the API's JSON and may be shared
/// across threads and tasks (`DeserializeOwned + Serialize + Send + Sync +
/// 'static`). Every such type has it; name it in bounds instead of
/// spelling the five out.
pub trait ApiObject:
    Object + serde::de::DeserializeOwned + serde::Serialize + Send + Sync + 'static
{
}

impl<T> ApiObject for T where
    T: Object + serde::de::DeserializeOwned + serde::Serialize + Send + Sync + 'static
{
}

impl<K> Object for K
where
    K: k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    fn meta(&self) -> &ObjectMeta {
        self.metadata()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.metadata_mut()
    }

    fn fixed_type() -> Option<(&'static str, &'static str)> {
        Some((K::API_VERSION, K::KIND))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Node};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn config_map() -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                namespace: Some("default".into()),
                resource_version: Some("42".into()),
                uid: Some("u-1".into()),
                generation: Some(3),
                labels: Some([("app".to_string(), "web".to_string())].into()),
                annotations: Some([("note".to_string(), "x".to_string())].into()),
                finalizers: Some(vec!["example.com/keep".into()]),
                owner_references: Some(vec![
                    OwnerReference {
                        name: "rs-a".into(),
                        controller: Some(false),
                        ..Default::default()
                    },
                    OwnerReference {
                        name: "rs-b".into(),
                        controller: Some(true),
                        ..Default::default()
                    },
                ]),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn reads_every_metadata_field_of_a_typed_object() {
        let cm = config_map();
        assert_eq!(cm.name(), Some("settings"));
        assert_eq!(cm.namespace(), Some("default"));
        assert_eq!(cm.resource_version(), Some("42"));
        assert_eq!(cm.uid(), Some("u-1"));
        assert_eq!(cm.generation(), Some(3));
        assert_eq!(cm.labels().get("app"), Some("web"));
        assert_eq!(cm.annotations().get("note"), Some("x"));
        assert_eq!(cm.finalizers(), ["example.com/keep".to_string()]);
        assert_eq!(cm.owner_references().len(), 2);
        assert_eq!(cm.controller_reference().map(|o| o.name), Some("rs-b"));
        assert!(cm.deletion_timestamp().is_none());
        assert!(cm.creation_timestamp().is_none());
    }

    #[test]
    fn absent_collections_read_as_empty() {
        let node = Node::default();
        assert!(node.labels().is_empty());
        assert!(node.annotations().is_empty());
        assert!(node.owner_references().is_empty());
        assert!(node.finalizers().is_empty());
        assert!(node.controller_reference().is_none());
        assert_eq!(node.name(), None);
        assert_eq!(node.namespace(), None);
    }

    #[test]
    fn meta_mut_changes_the_object() {
        let mut cm = config_map();
        cm.meta_mut().resource_version = Some("43".into());
        assert_eq!(cm.resource_version(), Some("43"));
    }
}
