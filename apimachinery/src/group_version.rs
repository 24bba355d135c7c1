//! Group, version, kind and resource names: `GroupVersion`,
//! `GroupVersionKind`, `GroupVersionResource` and `GroupResource`.
//!
//! Display and parsing follow the string forms of k8s.io/apimachinery's
//! `schema` package, so values print the way Kubernetes logs and errors print
//! them, and every printed value parses back to itself:
//!
//! | type | form | example |
//! |---|---|---|
//! | [`GroupVersion`] | `group/version`, or `version` for the core group | `apps/v1`, `v1` |
//! | [`GroupVersionKind`] | `group/version, Kind=kind` | `apps/v1, Kind=Deployment`, `/v1, Kind=Pod` |
//! | [`GroupVersionResource`] | `group/version, Resource=resource` | `apps/v1, Resource=deployments` |
//! | [`GroupResource`] | `resource.group`, or `resource` for the core group | `deployments.apps`, `pods` |

use std::fmt;
use std::str::FromStr;

/// Why a group, version, kind or resource string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupVersionParseError {
    /// A group/version string had more than one `/`.
    #[error("invalid group/version {input:?}: expected `version` or `group/version`")]
    TooManySlashes {
        /// The text that was parsed.
        input: String,
    },
    /// A group/version string had an empty version.
    #[error("invalid group/version {input:?}: the version is empty")]
    EmptyVersion {
        /// The text that was parsed.
        input: String,
    },
    /// A kind or resource string lacked its `, Kind=` or `, Resource=` part.
    #[error("invalid {what} {input:?}: expected `group/version{marker}name`")]
    MissingMarker {
        /// What was being parsed ("group/version/kind" or "group/version/resource").
        what: &'static str,
        /// The marker that was looked for.
        marker: &'static str,
        /// The text that was parsed.
        input: String,
    },
    /// The kind or resource after the marker was empty.
    #[error("invalid {what} {input:?}: the name after {marker:?} is empty")]
    EmptyName {
        /// What was being parsed.
        what: &'static str,
        /// The marker after which a name was expected.
        marker: &'static str,
        /// The text that was parsed.
        input: String,
    },
    /// A group/resource string had an empty resource.
    #[error("invalid group/resource {input:?}: the resource is empty")]
    EmptyResource {
        /// The text that was parsed.
        input: String,
    },
}

/// An API group and version, such as `apps/v1`; the core group is the empty
/// string, so `v1` is the core group's version 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GroupVersion {
    /// The API group; empty for the core ("legacy") group.
    pub group: String,
    /// The version within the group, such as `v1` or `v1beta1`.
    pub version: String,
}

impl GroupVersion {
    /// A group and version.
    pub fn new(group: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
        }
    }

    /// The `apiVersion` string objects of this group and version carry:
    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        self.to_string()
    }

    /// Parses an `apiVersion` string (`v1`, `apps/v1`).
    pub fn parse_api_version(api_version: &str) -> Result<Self, GroupVersionParseError> {
        api_version.parse()
    }

    /// This group and version with a kind.
    pub fn with_kind(&self, kind: impl Into<String>) -> GroupVersionKind {
        GroupVersionKind {
            group: self.group.clone(),
            version: self.version.clone(),
            kind: kind.into(),
        }
    }

    /// This group and version with a resource (plural name).
    pub fn with_resource(&self, resource: impl Into<String>) -> GroupVersionResource {
        GroupVersionResource {
            group: self.group.clone(),
            version: self.version.clone(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.version)
        } else {
            write!(f, "{}/{}", self.group, self.version)
        }
    }
}

impl FromStr for GroupVersion {
    type Err = GroupVersionParseError;

    /// Parses `version` or `group/version`. A leading `/` (as in the core
    /// group's `/v1` inside a kind string) means the empty group.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let mut parts = input.split('/');
        let first = parts.next().unwrap_or_default();
        let (group, version) = match (parts.next(), parts.next()) {
            (None, _) => ("", first),
            (Some(version), None) => (first, version),
            (Some(_), Some(_)) => {
                return Err(GroupVersionParseError::TooManySlashes {
                    input: input.to_string(),
                });
            }
        };
        if version.is_empty() {
            return Err(GroupVersionParseError::EmptyVersion {
                input: input.to_string(),
            });
        }
        Ok(Self::new(group, version))
    }
}

/// Splits `group/version<marker>name` into its group/version and its name.
fn split_marked<'a>(
    input: &'a str,
    what: &'static str,
    marker: &'static str,
) -> Result<(GroupVersion, &'a str), GroupVersionParseError> {
    let (group_version, name) =
        input
            .split_once(marker)
            .ok_or_else(|| GroupVersionParseError::MissingMarker {
                what,
                marker,
                input: input.to_string(),
            })?;
    if name.is_empty() {
        return Err(GroupVersionParseError::EmptyName {
            what,
            marker,
            input: input.to_string(),
        });
    }
    Ok((group_version.parse()?, name))
}

/// A kind within a group and version, such as `apps/v1, Kind=Deployment`:
/// what a serialized object says it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GroupVersionKind {
    /// The API group; empty for the core group.
    pub group: String,
    /// The version within the group.
    pub version: String,
    /// The kind, in CamelCase (`Deployment`).
    pub kind: String,
}

impl GroupVersionKind {
    /// A group, version and kind.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// The group, version and kind an object with this `apiVersion` and
    /// `kind` has.
    pub fn from_api_version_kind(
        api_version: &str,
        kind: impl Into<String>,
    ) -> Result<Self, GroupVersionParseError> {
        let group_version: GroupVersion = api_version.parse()?;
        Ok(group_version.with_kind(kind))
    }

    /// The group and version part.
    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(self.group.clone(), self.version.clone())
    }

    /// The `apiVersion` string objects of this kind carry.
    pub fn api_version(&self) -> String {
        self.group_version().api_version()
    }
}

impl fmt::Display for GroupVersionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

impl FromStr for GroupVersionKind {
    type Err = GroupVersionParseError;

    /// Parses the Display form `group/version, Kind=kind`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let (group_version, kind) = split_marked(input, "group/version/kind", ", Kind=")?;
        Ok(group_version.with_kind(kind))
    }
}

/// A resource (the plural, lower-case name used in URLs) within a group and
/// version, such as `apps/v1, Resource=deployments`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GroupVersionResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The version within the group.
    pub version: String,
    /// The resource: the plural name in URLs (`deployments`).
    pub resource: String,
}

impl GroupVersionResource {
    /// A group, version and resource.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }

    /// The group and version part.
    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(self.group.clone(), self.version.clone())
    }

    /// The group and resource part, as used in error messages.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.group.clone(), self.resource.clone())
    }
}

impl fmt::Display for GroupVersionResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}, Resource={}",
            self.group, self.version, self.resource
        )
    }
}

impl FromStr for GroupVersionResource {
    type Err = GroupVersionParseError;

    /// Parses the Display form `group/version, Resource=resource`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let (group_version, resource) =
            split_marked(input, "group/version/resource", ", Resource=")?;
        Ok(group_version.with_resource(resource))
    }
}

/// A resource within a group, without a version, such as
/// `deployments.apps`: how API errors name what they are about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GroupResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The resource: the plural name in URLs.
    pub resource: String,
}

impl GroupResource {
    /// A group and resource.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

impl FromStr for GroupResource {
    type Err = GroupVersionParseError;

    /// Parses `resource.group` (split at the first `.`) or `resource`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let (resource, group) = input.split_once('.').unwrap_or((input, ""));
        if resource.is_empty() {
            return Err(GroupVersionParseError::EmptyResource {
                input: input.to_string(),
            });
        }
        Ok(Self::new(group, resource))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_version_parses_core_and_named_groups() {
        assert_eq!(
            "v1".parse::<GroupVersion>().unwrap(),
            GroupVersion::new("", "v1")
        );
        assert_eq!(
            "apps/v1".parse::<GroupVersion>().unwrap(),
            GroupVersion::new("apps", "v1")
        );
        assert_eq!(
            "/v1".parse::<GroupVersion>().unwrap(),
            GroupVersion::new("", "v1")
        );
        assert_eq!(GroupVersion::new("", "v1").api_version(), "v1");
        assert_eq!(GroupVersion::new("apps", "v1").to_string(), "apps/v1");
    }

    #[test]
    fn group_version_rejects_bad_forms() {
        assert!(matches!(
            "a/b/c".parse::<GroupVersion>(),
            Err(GroupVersionParseError::TooManySlashes { .. })
        ));
        assert!(matches!(
            "apps/".parse::<GroupVersion>(),
            Err(GroupVersionParseError::EmptyVersion { .. })
        ));
        assert!(matches!(
            "".parse::<GroupVersion>(),
            Err(GroupVersionParseError::EmptyVersion { .. })
        ));
    }

    #[test]
    fn kind_display_matches_kubernetes_and_parses_back() {
        let deployment = GroupVersionKind::new("apps", "v1", "Deployment");
        assert_eq!(deployment.to_string(), "apps/v1, Kind=Deployment");
        let pod = GroupVersionKind::new("", "v1", "Pod");
        assert_eq!(pod.to_string(), "/v1, Kind=Pod");
        for gvk in [deployment, pod] {
            assert_eq!(gvk.to_string().parse::<GroupVersionKind>().unwrap(), gvk);
        }
    }

    #[test]
    fn kind_from_api_version() {
        let gvk = GroupVersionKind::from_api_version_kind("batch/v1", "Job").unwrap();
        assert_eq!(gvk, GroupVersionKind::new("batch", "v1", "Job"));
        assert_eq!(gvk.api_version(), "batch/v1");
        assert_eq!(
            GroupVersionKind::from_api_version_kind("v1", "Pod")
                .unwrap()
                .api_version(),
            "v1"
        );
    }

    #[test]
    fn kind_parse_errors_name_the_problem() {
        let err = "apps/v1 Deployment"
            .parse::<GroupVersionKind>()
            .unwrap_err();
        assert!(matches!(err, GroupVersionParseError::MissingMarker { .. }));
        assert!(err.to_string().contains("apps/v1 Deployment"));
        assert!(matches!(
            "apps/v1, Kind=".parse::<GroupVersionKind>(),
            Err(GroupVersionParseError::EmptyName { .. })
        ));
    }

    #[test]
    fn resource_display_and_parse() {
        let gvr = GroupVersionResource::new("apps", "v1", "deployments");
        assert_eq!(gvr.to_string(), "apps/v1, Resource=deployments");
        assert_eq!(
            gvr.to_string().parse::<GroupVersionResource>().unwrap(),
            gvr
        );
        assert_eq!(gvr.group_resource().to_string(), "deployments.apps");
        assert_eq!(gvr.group_version(), GroupVersion::new("apps", "v1"));
    }

    #[test]
    fn group_resource_display_and_parse() {
        let core = GroupResource::new("", "pods");
        assert_eq!(core.to_string(), "pods");
        assert_eq!("pods".parse::<GroupResource>().unwrap(), core);
        let crd = GroupResource::new("stable.example.com", "crontabs");
        assert_eq!(crd.to_string(), "crontabs.stable.example.com");
        assert_eq!(
            "crontabs.stable.example.com"
                .parse::<GroupResource>()
                .unwrap(),
            crd
        );
        assert!(matches!(
            ".apps".parse::<GroupResource>(),
            Err(GroupVersionParseError::EmptyResource { .. })
        ));
    }
}
