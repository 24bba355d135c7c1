//! [`Resource`]: what the generator knows about one served resource.

use std::collections::BTreeSet;
use std::fmt;

/// How stable an API version is, from its name (`v1`, `v2beta1`,
/// `v1alpha3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stability {
    /// `v1alpha1` and the like.
    Alpha,
    /// `v1beta1` and the like.
    Beta,
    /// `v1`, `v2`: generally available.
    Ga,
}

impl Stability {
    /// The stability of `version`; `None` for a name that is not
    /// Kubernetes' `v<N>[(alpha|beta)<M>]` form.
    pub fn of(version: &str) -> Option<Stability> {
        let rest = version.strip_prefix('v')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let (_, suffix) = rest.split_at(digits);
        let numbered = |tail: &str| !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit());
        if suffix.is_empty() {
            Some(Stability::Ga)
        } else if suffix.strip_prefix("beta").is_some_and(numbered) {
            Some(Stability::Beta)
        } else if suffix.strip_prefix("alpha").is_some_and(numbered) {
            Some(Stability::Alpha)
        } else {
            None
        }
    }
}

/// One resource a server serves, as the generator needs it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Resource {
    /// The API group ("" for the core group).
    pub group: String,
    /// The version (`v1`).
    pub version: String,
    /// The kind (`Pod`).
    pub kind: String,
    /// The plural used in URLs (`pods`).
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// The verbs the resource supports (`get`, `list`, `watch`, `create`,
    /// `update`, `patch`, `delete`, `deletecollection`).
    pub verbs: BTreeSet<String>,
    /// Its subresources (`status`, `scale`, `log`, ...).
    pub subresources: BTreeSet<String>,
    /// The Rust type of its objects (`k8s_openapi::api::core::v1::Pod`).
    pub type_path: String,
}

/// The `type_path` of a custom resource given no Rust type: its informer
/// caches `DynamicObject`s (clientgo-informers' re-export of
/// clientgo-apimachinery's), created with the resource's group, version,
/// kind and plural instead of from a type.
pub const DYNAMIC_OBJECT: &str = "clientgo_informers::apimachinery::DynamicObject";

impl Resource {
    /// Whether its objects are [`DYNAMIC_OBJECT`]s (no Rust type was named).
    pub fn is_dynamic(&self) -> bool {
        self.type_path == DYNAMIC_OBJECT
    }

    /// Whether it can be listed and watched, so an informer can run on it.
    pub fn is_watchable(&self) -> bool {
        self.verbs.contains("list") && self.verbs.contains("watch")
    }

    /// The stability of its version.
    pub fn stability(&self) -> Option<Stability> {
        Stability::of(&self.version)
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.plural)
        } else {
            write!(f, "{}/{}/{}", self.group, self.version, self.plural)
        }
    }
}

/// Checks that `type_path` looks like a Rust path (`a::b::C`).
pub(crate) fn is_type_path(type_path: &str) -> bool {
    !type_path.is_empty()
        && type_path.split("::").all(|segment| {
            let mut chars = segment.chars();
            chars
                .next()
                .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stability_follows_the_version_name() {
        assert_eq!(Stability::of("v1"), Some(Stability::Ga));
        assert_eq!(Stability::of("v2"), Some(Stability::Ga));
        assert_eq!(Stability::of("v1beta1"), Some(Stability::Beta));
        assert_eq!(Stability::of("v2alpha3"), Some(Stability::Alpha));
        assert_eq!(Stability::of("v1beta"), None);
        assert_eq!(Stability::of("version1"), None);
        assert_eq!(Stability::of("1"), None);
    }

    #[test]
    fn type_paths_are_checked() {
        assert!(is_type_path("k8s_openapi::api::core::v1::Pod"));
        assert!(is_type_path("Widget"));
        assert!(!is_type_path("my-crate::Widget"));
        assert!(!is_type_path("a::::b"));
        assert!(!is_type_path(""));
    }
}
