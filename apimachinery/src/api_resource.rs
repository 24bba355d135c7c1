//! [`ApiResource`]: everything needed to address a resource on the API server
//! (group, version, kind, plural and scope) and the URL paths built from it.

use std::fmt;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};

use crate::group_version::{GroupResource, GroupVersion, GroupVersionKind, GroupVersionResource};

/// Why a URL path could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// A path segment (namespace, name, subresource, or a part of the
    /// resource itself) is not a valid URL path segment.
    #[error("invalid {what} {value:?} for {resource}: {problem}")]
    InvalidSegment {
        /// Which segment: "namespace", "name", "subresource", "group",
        /// "version" or "resource".
        what: &'static str,
        /// The offending value.
        value: String,
        /// What is wrong with it.
        problem: SegmentProblem,
        /// The resource the path was for (`deployments.apps`).
        resource: GroupResource,
    },
    /// An object of a namespaced resource was addressed without a namespace.
    #[error("{resource} is namespaced: a namespace is required to address {name:?}")]
    NamespaceRequired {
        /// The resource.
        resource: GroupResource,
        /// The object's name.
        name: String,
    },
    /// A namespace was given for a cluster-scoped resource.
    #[error("{resource} is cluster-scoped: it has no namespace {namespace:?}")]
    NamespaceNotAllowed {
        /// The resource.
        resource: GroupResource,
        /// The namespace that was given.
        namespace: String,
    },
}

/// What makes a string unusable as a URL path segment. These are the rules
/// of client-go's `IsValidPathSegmentName` plus "not empty".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentProblem {
    /// The segment is empty.
    Empty,
    /// The segment is `.` or `..`, which would change the path.
    DotSegment,
    /// The segment contains `/`.
    ContainsSlash,
    /// The segment contains `%`, which would be read as an escape.
    ContainsPercent,
}

impl fmt::Display for SegmentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SegmentProblem::Empty => "it is empty",
            SegmentProblem::DotSegment => "it may not be '.' or '..'",
            SegmentProblem::ContainsSlash => "it may not contain '/'",
            SegmentProblem::ContainsPercent => "it may not contain '%'",
        })
    }
}

/// Checks one URL path segment, returning what is wrong with it.
pub fn check_path_segment(segment: &str) -> Result<(), SegmentProblem> {
    if segment.is_empty() {
        Err(SegmentProblem::Empty)
    } else if segment == "." || segment == ".." {
        Err(SegmentProblem::DotSegment)
    } else if segment.contains('/') {
        Err(SegmentProblem::ContainsSlash)
    } else if segment.contains('%') {
        Err(SegmentProblem::ContainsPercent)
    } else {
        Ok(())
    }
}

/// The scope of a k8s-openapi resource type, as a value.
///
/// Implemented for k8s-openapi's namespace and cluster scope markers, so
/// [`ApiResource::of`] accepts exactly the types that have their own
/// collection URL (subresource types such as `Binding` or `Scale` do not).
pub trait KnownScope {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;
}

impl KnownScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl KnownScope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// A resource the API server serves: its group, version, kind, plural name
/// and scope.
///
/// Build it from a k8s-openapi type with [`ApiResource::of`], or by hand for
/// a custom resource with [`ApiResource::namespaced`] or
/// [`ApiResource::cluster_scoped`]. It builds the URL paths of the resource's
/// collections, objects and subresources, validating every segment.
///
/// ```
/// use clientgo_apimachinery::{ApiResource, GroupVersionKind};
/// use k8s_openapi::api::apps::v1::Deployment;
///
/// let deployments = ApiResource::of::<Deployment>();
/// assert_eq!(deployments.plural(), "deployments");
/// assert_eq!(
///     deployments.object_path(Some("default"), "web").unwrap(),
///     "/apis/apps/v1/namespaces/default/deployments/web"
/// );
///
/// let crontabs = ApiResource::namespaced(
///     GroupVersionKind::new("stable.example.com", "v1", "CronTab"),
///     "crontabs",
/// );
/// assert_eq!(
///     crontabs.collection_path(None).unwrap(),
///     "/apis/stable.example.com/v1/crontabs"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ApiResource {
    group: String,
    version: String,
    api_version: String,
    kind: String,
    plural: String,
    namespaced: bool,
}

impl ApiResource {
    /// The resource of a k8s-openapi type (or any type implementing
    /// `k8s_openapi::Resource` with a namespace or cluster scope).
    pub fn of<K>() -> Self
    where
        K: k8s_openapi::Resource,
        K::Scope: KnownScope,
    {
        Self {
            group: K::GROUP.to_string(),
            version: K::VERSION.to_string(),
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            plural: K::URL_PATH_SEGMENT.to_string(),
            namespaced: <K::Scope as KnownScope>::NAMESPACED,
        }
    }

    /// A namespaced resource of the given kind, served under `plural`.
    pub fn namespaced(gvk: GroupVersionKind, plural: impl Into<String>) -> Self {
        Self::from_parts(gvk, plural.into(), true)
    }

    /// A cluster-scoped resource of the given kind, served under `plural`.
    pub fn cluster_scoped(gvk: GroupVersionKind, plural: impl Into<String>) -> Self {
        Self::from_parts(gvk, plural.into(), false)
    }

    fn from_parts(gvk: GroupVersionKind, plural: String, namespaced: bool) -> Self {
        let api_version = gvk.api_version();
        Self {
            group: gvk.group,
            version: gvk.version,
            api_version,
            kind: gvk.kind,
            plural,
            namespaced,
        }
    }

    /// The API group; empty for the core group.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The version within the group.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The `apiVersion` objects of this resource carry (`apps/v1`, `v1`).
    pub fn api_version(&self) -> &str {
        &self.api_version
    }

    /// The kind (`Deployment`).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The plural name used in URLs (`deployments`).
    pub fn plural(&self) -> &str {
        &self.plural
    }

    /// Whether objects of this resource live in namespaces.
    pub fn is_namespaced(&self) -> bool {
        self.namespaced
    }

    /// The group, version and kind.
    pub fn group_version_kind(&self) -> GroupVersionKind {
        GroupVersionKind::new(&*self.group, &*self.version, &*self.kind)
    }

    /// The group, version and resource.
    pub fn group_version_resource(&self) -> GroupVersionResource {
        GroupVersionResource::new(&*self.group, &*self.version, &*self.plural)
    }

    /// The group and resource, as API errors name it.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&*self.group, &*self.plural)
    }

    /// The group and version.
    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(&*self.group, &*self.version)
    }

    /// The path of the group/version: `/api/v1` for the core group,
    /// `/apis/{group}/{version}` otherwise.
    pub fn group_version_path(&self) -> Result<String, PathError> {
        if self.group.is_empty() {
            self.check("version", &self.version)?;
            Ok(format!("/api/{}", self.version))
        } else {
            self.check("group", &self.group)?;
            self.check("version", &self.version)?;
            Ok(format!("/apis/{}/{}", self.group, self.version))
        }
    }

    /// The path of a collection: every object of the resource in one
    /// namespace, or in all namespaces (and for cluster-scoped resources)
    /// when `namespace` is `None` or empty.
    ///
    /// A namespace given for a cluster-scoped resource is an error rather
    /// than silently dropped.
    pub fn collection_path(&self, namespace: Option<&str>) -> Result<String, PathError> {
        let mut path = self.group_version_path()?;
        match namespace.filter(|ns| !ns.is_empty()) {
            Some(namespace) if self.namespaced => {
                self.check("namespace", namespace)?;
                path.push_str("/namespaces/");
                path.push_str(namespace);
            }
            Some(namespace) => {
                return Err(PathError::NamespaceNotAllowed {
                    resource: self.group_resource(),
                    namespace: namespace.to_string(),
                });
            }
            None => {}
        }
        self.check("resource", &self.plural)?;
        path.push('/');
        path.push_str(&self.plural);
        Ok(path)
    }

    /// The path of one object. Objects of a namespaced resource need a
    /// namespace; objects of a cluster-scoped resource must have none.
    pub fn object_path(&self, namespace: Option<&str>, name: &str) -> Result<String, PathError> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        if self.namespaced && namespace.is_none() {
            return Err(PathError::NamespaceRequired {
                resource: self.group_resource(),
                name: name.to_string(),
            });
        }
        let mut path = self.collection_path(namespace)?;
        self.check("name", name)?;
        path.push('/');
        path.push_str(name);
        Ok(path)
    }

    /// The path of a subresource of one object (`status`, `scale`, `log`).
    pub fn subresource_path(
        &self,
        namespace: Option<&str>,
        name: &str,
        subresource: &str,
    ) -> Result<String, PathError> {
        let mut path = self.object_path(namespace, name)?;
        self.check("subresource", subresource)?;
        path.push('/');
        path.push_str(subresource);
        Ok(path)
    }

    fn check(&self, what: &'static str, value: &str) -> Result<(), PathError> {
        check_path_segment(value).map_err(|problem| PathError::InvalidSegment {
            what,
            value: value.to_string(),
            problem,
            resource: self.group_resource(),
        })
    }
}

impl fmt::Display for ApiResource {
    /// The group, version and resource (`apps/v1, Resource=deployments`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}, Resource={}",
            self.group, self.version, self.plural
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Node, Pod};

    #[test]
    fn built_from_k8s_openapi_types() {
        let pods = ApiResource::of::<Pod>();
        assert_eq!(pods.group(), "");
        assert_eq!(pods.version(), "v1");
        assert_eq!(pods.api_version(), "v1");
        assert_eq!(pods.kind(), "Pod");
        assert_eq!(pods.plural(), "pods");
        assert!(pods.is_namespaced());

        let nodes = ApiResource::of::<Node>();
        assert!(!nodes.is_namespaced());

        let deployments = ApiResource::of::<Deployment>();
        assert_eq!(deployments.api_version(), "apps/v1");
        assert_eq!(
            deployments.group_version_kind(),
            GroupVersionKind::new("apps", "v1", "Deployment")
        );
        assert_eq!(
            deployments.group_version_resource().to_string(),
            "apps/v1, Resource=deployments"
        );
        assert_eq!(deployments.group_resource().to_string(), "deployments.apps");
        assert_eq!(deployments.to_string(), "apps/v1, Resource=deployments");
    }

    #[test]
    fn built_by_hand_for_custom_resources() {
        let gvk = GroupVersionKind::new("stable.example.com", "v1", "CronTab");
        let crontabs = ApiResource::namespaced(gvk.clone(), "crontabs");
        assert_eq!(crontabs.api_version(), "stable.example.com/v1");
        assert!(crontabs.is_namespaced());
        let cluster = ApiResource::cluster_scoped(gvk, "crontabs");
        assert!(!cluster.is_namespaced());
    }

    #[test]
    fn core_group_paths() {
        let pods = ApiResource::of::<Pod>();
        assert_eq!(pods.collection_path(None).unwrap(), "/api/v1/pods");
        assert_eq!(pods.collection_path(Some("")).unwrap(), "/api/v1/pods");
        assert_eq!(
            pods.collection_path(Some("kube-system")).unwrap(),
            "/api/v1/namespaces/kube-system/pods"
        );
        assert_eq!(
            pods.object_path(Some("ns"), "web-0").unwrap(),
            "/api/v1/namespaces/ns/pods/web-0"
        );
        assert_eq!(
            pods.subresource_path(Some("ns"), "web-0", "status")
                .unwrap(),
            "/api/v1/namespaces/ns/pods/web-0/status"
        );
    }

    #[test]
    fn named_group_and_cluster_scoped_paths() {
        let deployments = ApiResource::of::<Deployment>();
        assert_eq!(
            deployments.collection_path(Some("default")).unwrap(),
            "/apis/apps/v1/namespaces/default/deployments"
        );
        assert_eq!(
            deployments
                .subresource_path(Some("default"), "web", "scale")
                .unwrap(),
            "/apis/apps/v1/namespaces/default/deployments/web/scale"
        );
        let nodes = ApiResource::of::<Node>();
        assert_eq!(nodes.collection_path(None).unwrap(), "/api/v1/nodes");
        assert_eq!(nodes.object_path(None, "n1").unwrap(), "/api/v1/nodes/n1");
    }

    #[test]
    fn scope_mismatches_are_errors() {
        let pods = ApiResource::of::<Pod>();
        assert!(matches!(
            pods.object_path(None, "web"),
            Err(PathError::NamespaceRequired { .. })
        ));
        assert!(matches!(
            pods.object_path(Some(""), "web"),
            Err(PathError::NamespaceRequired { .. })
        ));
        let nodes = ApiResource::of::<Node>();
        let err = nodes.collection_path(Some("default")).unwrap_err();
        assert!(matches!(err, PathError::NamespaceNotAllowed { .. }));
        assert!(err.to_string().contains("nodes is cluster-scoped"));
    }

    #[test]
    fn invalid_segments_are_rejected_with_what_and_why() {
        let pods = ApiResource::of::<Pod>();
        let cases = [
            ("", SegmentProblem::Empty),
            (".", SegmentProblem::DotSegment),
            ("..", SegmentProblem::DotSegment),
            ("a/b", SegmentProblem::ContainsSlash),
            ("a%2F", SegmentProblem::ContainsPercent),
        ];
        for (bad, expected) in cases {
            match pods.object_path(Some("ns"), bad) {
                Err(PathError::InvalidSegment {
                    what,
                    value,
                    problem,
                    ..
                }) => {
                    assert_eq!(what, "name");
                    assert_eq!(value, bad);
                    assert_eq!(problem, expected);
                }
                other => panic!("name {bad:?}: expected InvalidSegment, got {other:?}"),
            }
            assert!(matches!(
                pods.subresource_path(Some("ns"), "web", bad),
                Err(PathError::InvalidSegment {
                    what: "subresource",
                    ..
                })
            ));
        }
        for bad_namespace in [".", "..", "a/b", "a%2F"] {
            assert!(
                matches!(
                    pods.collection_path(Some(bad_namespace)),
                    Err(PathError::InvalidSegment {
                        what: "namespace",
                        ..
                    })
                ),
                "namespace {bad_namespace:?} accepted"
            );
        }
        let bad_plural = ApiResource::namespaced(GroupVersionKind::new("g", "v1", "K"), "a/b");
        assert!(matches!(
            bad_plural.collection_path(None),
            Err(PathError::InvalidSegment {
                what: "resource",
                ..
            })
        ));
        let bad_group = ApiResource::namespaced(GroupVersionKind::new("..", "v1", "K"), "ks");
        assert!(matches!(
            bad_group.collection_path(None),
            Err(PathError::InvalidSegment { what: "group", .. })
        ));
    }
}
