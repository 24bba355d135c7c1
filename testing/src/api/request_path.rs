//! Parsing request paths into the resource, namespace, name and subresource
//! they address.

use clientgo_apimachinery::{ApiResource, Status};

use crate::api::registry::ResourceRegistry;

/// What a resource request path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub resource: ApiResource,
    /// The namespace in the path; `None` for all namespaces or a
    /// cluster-scoped resource.
    pub namespace: Option<String>,
    /// The object's name, for object and subresource requests.
    pub name: Option<String>,
    /// The subresource (`status`).
    pub subresource: Option<String>,
}

/// Parses `/api/v1/...` and `/apis/{group}/{version}/...` paths. `Ok(None)`
/// means the path is not a resource path at all, or names a group and
/// version nothing serves (the caller answers the plain-text 404 of the
/// real server's mux); an unknown resource of a served group version is
/// the JSON NotFound Status.
pub(crate) fn parse(
    path: &str,
    registry: &ResourceRegistry,
) -> Result<Option<ResourcePath>, Status> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Ok(None),
    };
    if rest.is_empty() {
        return Ok(None);
    }
    let lookup = |plural: &str| registry.get(group, version, plural).cloned();
    // As kube-apiserver answers a resource a served group does not have
    // (recorded in `real-apiserver-1.36/list-unknown-resource-404`): a
    // NotFound Status with this message and empty details.
    let not_found = || {
        Status::failure(
            404,
            clientgo_apimachinery::StatusReason::NotFound,
            "the server could not find the requested resource",
        )
        .with_details(clientgo_apimachinery::StatusDetails::default())
    };
    // `namespaces/{ns}/{plural}...` addresses a namespaced resource, unless
    // the third segment is not one (then it is the namespace object's own
    // subresource, as in `namespaces/{name}/status`).
    if let ["namespaces", namespace, plural, tail @ ..] = rest
        && let Some(resource) = lookup(plural).filter(ApiResource::is_namespaced)
    {
        let (name, subresource) = match tail {
            [] => (None, None),
            [name] => (Some(*name), None),
            [name, subresource] => (Some(*name), Some(*subresource)),
            _ => return Ok(None),
        };
        return Ok(Some(ResourcePath {
            resource,
            namespace: Some(namespace.to_string()),
            name: name.map(str::to_string),
            subresource: subresource.map(str::to_string),
        }));
    }
    // Any other `namespaces/{ns}/{x}` is a namespace's subresource only
    // for the core group's `status` and `finalize`; anything else is a
    // resource the group does not have.
    if let ["namespaces", _, third, ..] = rest
        && !(group.is_empty() && matches!(*third, "status" | "finalize"))
        && registry.serves(group, version)
    {
        return Err(not_found());
    }
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, subresource] => (*plural, Some(*name), Some(*subresource)),
        _ => return Ok(None),
    };
    let Some(resource) = lookup(plural) else {
        if !registry.serves(group, version) {
            return Ok(None);
        }
        return Err(not_found());
    };
    Ok(Some(ResourcePath {
        resource,
        namespace: None,
        name: name.map(str::to_string),
        subresource: subresource.map(str::to_string),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> ResourceRegistry {
        ResourceRegistry::with_builtins()
    }

    #[test]
    fn core_and_group_paths() {
        let r = registry();
        let all_pods = parse("/api/v1/pods", &r).unwrap().unwrap();
        assert_eq!(all_pods.resource.plural(), "pods");
        assert_eq!(all_pods.namespace, None);
        let pod = parse("/api/v1/namespaces/ns/pods/web/status", &r)
            .unwrap()
            .unwrap();
        assert_eq!(pod.namespace.as_deref(), Some("ns"));
        assert_eq!(pod.name.as_deref(), Some("web"));
        assert_eq!(pod.subresource.as_deref(), Some("status"));
        let deployments = parse("/apis/apps/v1/namespaces/ns/deployments", &r)
            .unwrap()
            .unwrap();
        assert_eq!(deployments.resource.group(), "apps");
        let node = parse("/api/v1/nodes/n1", &r).unwrap().unwrap();
        assert_eq!(node.name.as_deref(), Some("n1"));
    }

    #[test]
    fn namespaces_are_objects_too() {
        let r = registry();
        let namespace = parse("/api/v1/namespaces/kube-system", &r)
            .unwrap()
            .unwrap();
        assert_eq!(namespace.resource.plural(), "namespaces");
        assert_eq!(namespace.name.as_deref(), Some("kube-system"));
        let status = parse("/api/v1/namespaces/kube-system/status", &r)
            .unwrap()
            .unwrap();
        assert_eq!(status.resource.plural(), "namespaces");
        assert_eq!(status.subresource.as_deref(), Some("status"));
    }

    #[test]
    fn unknown_resources_and_other_paths() {
        let r = registry();
        assert!(parse("/api/v1/widgets", &r).unwrap_err().is_not_found());
        // A group version nothing serves is not an API path at all.
        assert_eq!(
            parse("/apis/example.com/v1/namespaces/ns/widgets", &r).unwrap(),
            None
        );
        assert_eq!(parse("/api/v2/pods", &r).unwrap(), None);
        assert_eq!(parse("/version", &r).unwrap(), None);
        assert_eq!(parse("/api/v1", &r).unwrap(), None);
        assert_eq!(parse("/api/v1/namespaces/ns/pods/a/b/c", &r).unwrap(), None);
    }
}
