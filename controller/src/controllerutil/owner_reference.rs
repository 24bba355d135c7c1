//! Controller references: the owner reference that makes an object a
//! child of its controller (for garbage collection and for
//! [`Builder::owns`](crate::Builder::owns)).

use clientgo_apimachinery::{KnownScope, Object};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// Why an object cannot be given a controller reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OwnerReferenceError {
    /// The owner has no name or no UID yet (it was never created).
    #[error("the owner {kind} has no {missing}: create it first")]
    OwnerNotCreated {
        /// The owner's kind.
        kind: String,
        /// `name` or `uid`.
        missing: &'static str,
    },
    /// The object already has another controller
    /// (controller-runtime's `AlreadyOwnedError`).
    #[error("{object} is already controlled by {kind} {name}")]
    AlreadyOwned {
        /// The object's name.
        object: String,
        /// The current controller's kind.
        kind: String,
        /// The current controller's name.
        name: String,
    },
    /// A namespaced owner in another namespace than the object's, or a
    /// namespaced owner of a cluster-scoped object: the garbage collector
    /// would delete the object at once.
    #[error(
        "owner {owner_namespace:?} and object {object_namespace:?} are in different namespaces"
    )]
    CrossNamespace {
        /// The owner's namespace.
        owner_namespace: Option<String>,
        /// The object's namespace.
        object_namespace: Option<String>,
    },
}

/// The controller reference to `owner`: its apiVersion, kind, name and
/// UID, with `controller` and `blockOwnerDeletion` true.
pub fn controller_reference<O>(owner: &O) -> Result<OwnerReference, OwnerReferenceError>
where
    O: k8s_openapi::Resource + Object,
{
    let missing = |missing| OwnerReferenceError::OwnerNotCreated {
        kind: O::KIND.to_string(),
        missing,
    };
    Ok(OwnerReference {
        api_version: O::API_VERSION.to_string(),
        kind: O::KIND.to_string(),
        name: owner.name().ok_or_else(|| missing("name"))?.to_string(),
        uid: owner.uid().ok_or_else(|| missing("uid"))?.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → "").
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

/// Makes `owner` the controller of `object` (controller-runtime's
/// `SetControllerReference`): adds its controller reference, or updates
/// in place a reference to the same group, kind and name (a stale UID or
/// version is overwritten). Fails when another object is the controller,
/// or when a namespaced owner is in another namespace than the object (or
/// the object is cluster-scoped). Changes only `object` in memory.
pub fn set_controller_reference<O, T>(owner: &O, object: &mut T) -> Result<(), OwnerReferenceError>
where
    O: k8s_openapi::Resource<Scope: KnownScope> + Object,
    T: Object,
{
    let reference = controller_reference(owner)?;
    if <O::Scope as KnownScope>::NAMESPACED && owner.namespace() != object.namespace() {
        return Err(OwnerReferenceError::CrossNamespace {
            owner_namespace: owner.namespace().map(str::to_string),
            object_namespace: object.namespace().map(str::to_string),
        });
    }
    let object_name = object.name().unwrap_or_default().to_string();
    let same = |existing: &OwnerReference| {
        existing.kind == reference.kind
            && existing.name == reference.name
            && group_of(&existing.api_version) == group_of(&reference.api_version)
    };
    let references = object
        .meta_mut()
        .owner_references
        .get_or_insert_with(Vec::new);
    if let Some(other) = references
        .iter()
        .find(|existing| existing.controller == Some(true) && !same(existing))
    {
        return Err(OwnerReferenceError::AlreadyOwned {
            object: object_name,
            kind: other.kind.clone(),
            name: other.name.clone(),
        });
    }
    match references.iter_mut().find(|existing| same(existing)) {
        Some(existing) => *existing = reference,
        None => references.push(reference),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn deployment(namespace: &str, name: &str, uid: &str) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                uid: Some(uid.into()),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        }
    }

    fn config_map(namespace: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some("settings".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn a_reference_is_added_once_and_refreshed_in_place() {
        let mut child = config_map("team");
        set_controller_reference(&deployment("team", "web", "uid-1"), &mut child).unwrap();
        // The same owner re-created: the stale UID is replaced, not doubled.
        set_controller_reference(&deployment("team", "web", "uid-2"), &mut child).unwrap();
        let references = child.metadata.owner_references.unwrap();
        assert_eq!(references.len(), 1);
        let reference = &references[0];
        assert_eq!(
            (
                reference.api_version.as_str(),
                reference.kind.as_str(),
                reference.uid.as_str()
            ),
            ("apps/v1", "Deployment", "uid-2")
        );
        assert_eq!(reference.controller, Some(true));
        assert_eq!(reference.block_owner_deletion, Some(true));
    }

    #[test]
    fn another_controller_or_namespace_is_refused() {
        let mut child = config_map("team");
        set_controller_reference(&deployment("team", "web", "uid-1"), &mut child).unwrap();
        assert_eq!(
            set_controller_reference(&deployment("team", "api", "uid-3"), &mut child),
            Err(OwnerReferenceError::AlreadyOwned {
                object: "settings".into(),
                kind: "Deployment".into(),
                name: "web".into(),
            })
        );
        let mut elsewhere = config_map("other");
        assert!(matches!(
            set_controller_reference(&deployment("team", "web", "uid-1"), &mut elsewhere),
            Err(OwnerReferenceError::CrossNamespace { .. })
        ));
        // A cluster-scoped owner may own a namespaced object.
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some("team".into()),
                uid: Some("uid-ns".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let mut owned = config_map("team");
        set_controller_reference(&namespace, &mut owned).unwrap();
        // An owner never created has no UID.
        let mut orphan = config_map("team");
        let mut unsaved = deployment("team", "web", "");
        unsaved.metadata.uid = None;
        assert_eq!(
            set_controller_reference(&unsaved, &mut orphan),
            Err(OwnerReferenceError::OwnerNotCreated {
                kind: "Deployment".into(),
                missing: "uid",
            })
        );
    }
}
