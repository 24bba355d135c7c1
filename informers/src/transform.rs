//! Transforms applied to objects before they are cached: the built-in
//! [`strip_managed_fields`], and [`transform_metadata`] for any change to
//! the metadata.

use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_store::TransformFunc;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A change to an object's metadata, usable for every resource type (a
/// factory's [`transform`](crate::InformerFactoryOptions::transform)).
/// It runs once per object as it arrives (and on a saved state's objects,
/// which may have been through it before), so it should be idempotent.
pub type MetadataTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

/// Drops `metadata.managedFields`, which servers fill for every object
/// and controllers rarely read (often a third of a pod's JSON).
///
/// A freshly decoded object is changed in place; an object without
/// managed fields (for example a saved state's, on a warm restart) is
/// returned as is, so nothing is copied.
pub fn strip_managed_fields<K>() -> TransformFunc<K>
where
    K: Object + Clone + Send + Sync + 'static,
{
    Arc::new(|mut object: Arc<K>| {
        if object.meta().managed_fields.is_some() {
            Arc::make_mut(&mut object).meta_mut().managed_fields = None;
        }
        Ok(object)
    })
}

/// A transform that applies `change` to each object's metadata.
///
/// When the informer holds the only reference to the object (always for
/// a freshly decoded one) it is changed in place. A shared object (a saved
/// state's, on a warm restart) is copied only if `change` would actually
/// alter its metadata.
pub fn transform_metadata<K>(change: MetadataTransform) -> TransformFunc<K>
where
    K: Object + Clone + Send + Sync + 'static,
{
    Arc::new(move |mut object: Arc<K>| {
        if let Some(owned) = Arc::get_mut(&mut object) {
            change(owned.meta_mut());
            return Ok(object);
        }
        let mut meta = object.meta().clone();
        change(&mut meta);
        if &meta != object.meta() {
            *Arc::make_mut(&mut object).meta_mut() = meta;
        }
        Ok(object)
    })
}

/// `change` as a transform of the objects an informer ingests, without
/// copying: a fresh decode (held by the informer alone) is changed in
/// place; a shared object is a saved state's (warm restart: the cache's
/// own objects, changed when they were cached, and a snapshot taken under
/// another transform is refused), and is returned as is. So it needs no
/// `Clone` of the object, and works on compact entries too.
pub(crate) fn ingest_metadata_transform<E>(change: MetadataTransform) -> TransformFunc<E>
where
    E: Object + Send + Sync + 'static,
{
    Arc::new(move |mut object: Arc<E>| {
        if let Some(owned) = Arc::get_mut(&mut object) {
            change(owned.meta_mut());
        }
        Ok(object)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    fn managed() -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                managed_fields: Some(vec![ManagedFieldsEntry::default()]),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn strips_in_place_and_never_copies_a_clean_shared_object()
    -> Result<(), Box<dyn std::error::Error>> {
        let strip = strip_managed_fields::<ConfigMap>();
        let fresh = Arc::new(managed());
        let address = Arc::as_ptr(&fresh);
        let stripped = strip(fresh)?;
        assert!(stripped.metadata.managed_fields.is_none());
        assert_eq!(Arc::as_ptr(&stripped), address, "changed in place");

        let shared = Arc::clone(&stripped);
        let again = strip(shared)?;
        assert!(
            Arc::ptr_eq(&again, &stripped),
            "a clean shared object is not copied"
        );
        Ok(())
    }

    #[test]
    fn metadata_transform_copies_shared_objects_only_when_it_changes_them()
    -> Result<(), Box<dyn std::error::Error>> {
        let drop_annotations =
            transform_metadata::<ConfigMap>(Arc::new(|meta: &mut ObjectMeta| {
                meta.annotations = None
            }));
        let cached = Arc::new(ConfigMap::default());
        let kept = drop_annotations(Arc::clone(&cached))?;
        assert!(Arc::ptr_eq(&kept, &cached));

        let mut annotated = ConfigMap::default();
        annotated.metadata.annotations = Some([("a".to_string(), "b".to_string())].into());
        let annotated = Arc::new(annotated);
        let changed = drop_annotations(Arc::clone(&annotated))?;
        assert!(changed.metadata.annotations.is_none());
        assert!(
            annotated.metadata.annotations.is_some(),
            "the shared original is untouched"
        );
        Ok(())
    }
}
