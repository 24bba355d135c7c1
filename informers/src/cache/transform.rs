//! [`Transform`]: the one change an informer makes to objects before it
//! caches them (client-go's `SetTransform`), to their metadata or to the
//! whole object.

use std::fmt;
use std::sync::Arc;

use clientgo_store::TransformFunc;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A change to an object's metadata, usable for every resource type (the
/// factories' [`transform`](crate::InformerFactoryOptions::transform)).
pub type MetadataTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

/// What an informer does to each object before caching it (client-go's
/// `TransformFunc`), set as
/// [`transform`](crate::SharedIndexInformerOptions::transform) on the
/// informer's options (a factory's
/// [`transform`](crate::InformerFactoryOptions::transform) is a
/// [`Metadata`](Transform::Metadata) one for all its informers).
///
/// **The rule, the same in every [`Storage`](crate::Storage):** a
/// transform runs once for each object version that arrives (a list's
/// items, a watch's events, a saved state's objects on a warm restart),
/// before it is queued and cached; what it returns is what the cache
/// keeps, and handlers and listers never run it again. An unchanged
/// object that a relist finds in the cache is the cache's own, not run
/// again.
///
/// - [`Metadata`](Transform::Metadata) changes the metadata only: it
///   never decodes, in any storage (a compact entry's metadata is parsed
///   once as it arrives; dropping `managedFields` cuts them from its bytes
///   too).
/// - [`Object`](Transform::Object) changes the whole object. In compact
///   storage the entry is decoded for it, and the result kept as its JSON
///   (one decode and one encode per arriving version); it pays for itself
///   when it drops much of the object.
///
/// Either must be idempotent: a saved state's objects have been through
/// it before. They come to it shared (`Arc::get_mut` fails), and one it
/// need not change should be returned as it is, so nothing is copied.
/// `managedFields` are dropped apart from any transform, unless
/// [`keep_managed_fields`](crate::SharedIndexInformerOptions::keep_managed_fields)
/// says otherwise.
pub enum Transform<K> {
    /// A change to the metadata, which never decodes.
    Metadata(MetadataTransform),
    /// A change to the whole object.
    Object(TransformFunc<K>),
}

impl<K> Transform<K> {
    /// A [`Metadata`](Transform::Metadata) transform.
    pub fn metadata(change: impl Fn(&mut ObjectMeta) + Send + Sync + 'static) -> Self {
        Transform::Metadata(Arc::new(change))
    }

    /// An [`Object`](Transform::Object) transform.
    pub fn object(
        transform: impl Fn(Arc<K>) -> Result<Arc<K>, clientgo_store::StoreError> + Send + Sync + 'static,
    ) -> Self {
        Transform::Object(Arc::new(transform))
    }
}

impl<K> Clone for Transform<K> {
    fn clone(&self) -> Self {
        match self {
            Transform::Metadata(change) => Transform::Metadata(Arc::clone(change)),
            Transform::Object(transform) => Transform::Object(Arc::clone(transform)),
        }
    }
}

impl<K> fmt::Debug for Transform<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transform::Metadata(_) => "Transform::Metadata(..)",
            Transform::Object(_) => "Transform::Object(..)",
        })
    }
}

impl<K> From<MetadataTransform> for Transform<K> {
    /// [`Transform::Metadata`].
    fn from(transform: MetadataTransform) -> Self {
        Transform::Metadata(transform)
    }
}

/// What an informer does to each arriving entry, gathered from its
/// options: for [`Stored::ingest`](crate::Stored::ingest).
pub struct Ingest<K> {
    /// The metadata change: dropping managedFields (unless kept), then
    /// the user's metadata transform.
    pub(crate) metadata: Option<MetadataTransform>,
    /// Whether `metadata` is only the drop of managedFields (no metadata
    /// transform of the user's): compact entries then cut them from their
    /// bytes without unpacking their metadata.
    pub(crate) only_drops_managed_fields: bool,
    /// The user's whole-object transform.
    pub(crate) object: Option<TransformFunc<K>>,
    /// Compress compact entries' bytes (LZ4).
    pub(crate) compress: bool,
}

impl<K> fmt::Debug for Ingest<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ingest")
            .field("metadata", &self.metadata.is_some())
            .field("object", &self.object.is_some())
            .field("compress", &self.compress)
            .finish()
    }
}

impl<K> Ingest<K> {
    /// The plan for `transform`, dropping managedFields unless
    /// `keep_managed_fields`, compressing when `compress`.
    pub(crate) fn new(
        transform: Option<Transform<K>>,
        keep_managed_fields: bool,
        compress: bool,
    ) -> Self {
        let (custom, object) = match transform {
            None => (None, None),
            Some(Transform::Metadata(change)) => (Some(change), None),
            Some(Transform::Object(transform)) => (None, Some(transform)),
        };
        let only_drops_managed_fields = !keep_managed_fields && custom.is_none();
        let metadata: Option<MetadataTransform> = match (keep_managed_fields, custom) {
            (true, custom) => custom,
            (false, None) => Some(Arc::new(|meta: &mut ObjectMeta| meta.managed_fields = None)),
            (false, Some(custom)) => Some(Arc::new(move |meta: &mut ObjectMeta| {
                meta.managed_fields = None;
                custom(meta);
            })),
        };
        Ingest {
            metadata,
            only_drops_managed_fields,
            object,
            compress,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cache::stored::Stored;
    use clientgo_apimachinery::{Compact, Object, Protobuf};
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    type Entry = Compact<ConfigMap, Protobuf>;

    const JSON: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"1","managedFields":[{"manager":"m"}]},"data":{"k":"v"}}"#;

    fn entry() -> Arc<Entry> {
        Arc::new(Entry::from_json(JSON).unwrap())
    }

    fn object() -> Arc<ConfigMap> {
        let mut object: ConfigMap = serde_json::from_str(JSON).unwrap();
        object.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        Arc::new(object)
    }

    fn drop_data() -> Transform<ConfigMap> {
        Transform::object(|mut object: Arc<ConfigMap>| {
            if object.data.is_some() {
                Arc::make_mut(&mut object).data = None;
            }
            Ok(object)
        })
    }

    #[test]
    fn managed_fields_are_dropped_unless_kept() {
        let strip = <ConfigMap as Stored<ConfigMap>>::ingest(Ingest::new(None, false, false));
        let stripped = strip.unwrap()(object()).unwrap();
        assert!(stripped.metadata.managed_fields.is_none());
        let keep = <ConfigMap as Stored<ConfigMap>>::ingest(Ingest::new(None, true, false));
        assert!(keep.is_none(), "nothing to do");

        let strip = <Entry as Stored<ConfigMap>>::ingest(Ingest::new(None, false, false));
        let stripped = strip.unwrap()(entry()).unwrap();
        assert!(stripped.decode().unwrap().metadata.managed_fields.is_none());
    }

    /// The rule: a whole-object transform's result is what the cache
    /// keeps, in both storages, so a read never runs it.
    #[test]
    fn an_object_transform_runs_once_at_ingest_in_either_storage() {
        let decoded =
            <ConfigMap as Stored<ConfigMap>>::ingest(Ingest::new(Some(drop_data()), false, false))
                .unwrap();
        let kept = decoded(object()).unwrap();
        assert!(kept.data.is_none());
        assert!(
            <ConfigMap as Stored<ConfigMap>>::object(&kept)
                .unwrap()
                .data
                .is_none()
        );

        let compact =
            <Entry as Stored<ConfigMap>>::ingest(Ingest::new(Some(drop_data()), false, true))
                .unwrap();
        let kept = compact(entry()).unwrap();
        let read = <Entry as Stored<ConfigMap>>::object(&kept).unwrap();
        assert!(read.data.is_none(), "kept transformed");
        assert!(read.metadata.managed_fields.is_none());
        assert_eq!(read.metadata.name.as_deref(), Some("a"));
        assert!(!kept.compressible(), "compressed after the transform");

        // A saved state's entry, already transformed: kept as it is.
        let again = compact(Arc::clone(&kept)).unwrap();
        assert!(Arc::ptr_eq(&again, &kept));
    }

    #[test]
    fn a_metadata_transform_changes_a_fresh_entry_in_place_and_copies_a_shared_one_only_when_needed()
     {
        let label = Transform::<ConfigMap>::metadata(|meta| {
            meta.labels
                .get_or_insert_with(Default::default)
                .insert("seen".into(), "yes".into());
        });
        let ingest =
            <Entry as Stored<ConfigMap>>::ingest(Ingest::new(Some(label), false, true)).unwrap();
        let fresh = entry();
        let address = Arc::as_ptr(&fresh);
        let done = ingest(fresh).unwrap();
        assert_eq!(Arc::as_ptr(&done), address, "in place");
        assert!(!done.compressible(), "compressed");
        assert_eq!(done.labels().get("seen"), Some("yes"));

        let again = ingest(Arc::clone(&done)).unwrap();
        assert!(Arc::ptr_eq(&again, &done), "nothing left to change");

        let resumed = entry();
        let held = Arc::clone(&resumed);
        let copied = ingest(resumed).unwrap();
        assert!(!Arc::ptr_eq(&copied, &held));
        assert!(held.compressible(), "the shared original is untouched");
    }
}
