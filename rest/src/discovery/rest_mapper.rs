//! [`RestMapper`]: from what a person or a manifest names (`po`,
//! `deployments.apps`, kind `Deployment`) to the resource to request, by
//! discovery (client-go's `restmapper`, as kubectl uses it), and
//! [`DeferredRestMapper`], which asks the server again once when a name is
//! not found (client-go's `DeferredDiscoveryRESTMapper`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use clientgo_apimachinery::GroupVersionKind;
use parking_lot::Mutex;

use crate::client::error::Error;
use crate::discovery::aggregated::ApiDiscovery;
use crate::discovery::cache::CachedDiscovery;
use crate::discovery::resource::DiscoveredResource;

/// Why a name could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum MapperError {
    /// No served resource has that name or kind.
    #[error("the server doesn't have a resource type {what:?}")]
    NoMatch {
        /// What was asked for.
        what: String,
    },
    /// Discovery itself failed.
    #[error("discovery failed: {0}")]
    Discovery(#[source] Error),
}

/// Maps names and kinds to resources over one discovery snapshot.
///
/// Where several resources match, the one of the highest-priority group
/// wins (discovery's order: the core group first), and within a group its
/// preferred version, as client-go's priority mapper does: `events` is the
/// core group's, `hpa` autoscaling's preferred version.
#[derive(Debug, Clone)]
pub struct RestMapper {
    discovery: Arc<ApiDiscovery>,
}

/// A resource argument split as kubectl splits it: `name`, `name.group`
/// or `name.version.group`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResourceArgument<'a> {
    name: String,
    version: Option<&'a str>,
    group: Option<&'a str>,
}

/// The readings of `argument`, the most specific first (`deploy.v1.apps`
/// is resource `deploy` of `apps/v1`, or of a group `v1.apps`).
fn readings(argument: &str) -> Vec<ResourceArgument<'_>> {
    let mut found = Vec::new();
    let Some((name, rest)) = argument.split_once('.') else {
        return vec![ResourceArgument {
            name: argument.to_lowercase(),
            version: None,
            group: None,
        }];
    };
    if let Some((version, group)) = rest.split_once('.') {
        found.push(ResourceArgument {
            name: name.to_lowercase(),
            version: Some(version),
            group: Some(group),
        });
    }
    found.push(ResourceArgument {
        name: name.to_lowercase(),
        version: None,
        group: Some(rest),
    });
    found
}

/// Whether `resource` answers to `name`: its plural, singular, a short
/// name, or its kind, lower-cased.
fn named(resource: &DiscoveredResource, name: &str) -> bool {
    resource.resource.plural() == name
        || resource.singular == name
        || resource.resource.kind().to_lowercase() == name
        || resource.short_names.iter().any(|short| short == name)
}

impl RestMapper {
    /// A mapper over `discovery`.
    pub fn new(discovery: Arc<ApiDiscovery>) -> Self {
        RestMapper { discovery }
    }

    /// The resource a kubectl argument names: `pods`, `pod`, `po`, `Pod`,
    /// `deployments.apps`, `deploy.v1.apps`.
    pub fn resource_for(&self, argument: &str) -> Result<DiscoveredResource, MapperError> {
        for reading in readings(argument) {
            let found = self.best(
                |resource| {
                    named(resource, &reading.name)
                        && reading
                            .group
                            .is_none_or(|group| resource.resource.group() == group)
                        && reading
                            .version
                            .is_none_or(|version| resource.resource.version() == version)
                },
                reading.version.is_none(),
            );
            if let Some(found) = found {
                return Ok(found.clone());
            }
        }
        Err(MapperError::NoMatch {
            what: argument.to_string(),
        })
    }

    /// The resource of a kind (a manifest's `apiVersion` and `kind`): that
    /// exact version when `gvk` names one, else the group's preferred
    /// version serving the kind.
    pub fn mapping(&self, gvk: &GroupVersionKind) -> Result<DiscoveredResource, MapperError> {
        let any_version = gvk.version.is_empty();
        self.best(
            |resource| {
                resource.resource.group() == gvk.group
                    && resource.resource.kind() == gvk.kind
                    && (any_version || resource.resource.version() == gvk.version)
            },
            any_version,
        )
        .cloned()
        .ok_or_else(|| MapperError::NoMatch {
            what: gvk.to_string(),
        })
    }

    /// The resources of a category (`all`), one per group and resource, at
    /// the preferred version, in priority order.
    pub fn category(&self, category: &str) -> Vec<DiscoveredResource> {
        self.discovery
            .resources()
            .filter(|(resource, preferred)| {
                *preferred && resource.categories.iter().any(|c| c == category)
            })
            .map(|(resource, _)| resource.clone())
            .collect()
    }

    /// The match of the highest-priority group that has one; within it,
    /// its preferred version's when `prefer` (no version was named), else
    /// the first in its order of preference.
    fn best(
        &self,
        matches: impl Fn(&DiscoveredResource) -> bool,
        prefer: bool,
    ) -> Option<&DiscoveredResource> {
        self.discovery.groups.iter().find_map(|group| {
            let mut found = group.resources().filter(|(resource, _)| matches(resource));
            let first = found.next()?;
            if !prefer || first.1 {
                return Some(first.0);
            }
            Some(found.find(|(_, preferred)| *preferred).unwrap_or(first).0)
        })
    }
}

/// A [`RestMapper`] over [`CachedDiscovery`] that, on a name it cannot
/// map, invalidates the cache and tries once more with fresh discovery (a
/// CRD installed since), as client-go's `DeferredDiscoveryRESTMapper`.
///
/// A miss refreshes at most once per
/// [`DEFAULT_MISS_REFRESH_INTERVAL`] (settable): a controller asking
/// again and again for a kind that does not exist costs the server one
/// discovery per interval. (client-go refreshes only a cache read from
/// disk, so in one process a resource installed after the first read is
/// never found; this finds it.) Cheap to clone; clones share the interval.
#[derive(Debug, Clone)]
pub struct DeferredRestMapper {
    discovery: CachedDiscovery,
    min_refresh_interval: Duration,
    last_refresh: Arc<Mutex<Option<Instant>>>,
}

/// The least time between two refreshes of a [`DeferredRestMapper`]
/// caused by misses.
pub const DEFAULT_MISS_REFRESH_INTERVAL: Duration = Duration::from_secs(5);

impl DeferredRestMapper {
    /// A mapper over `discovery`.
    pub fn new(discovery: CachedDiscovery) -> Self {
        DeferredRestMapper {
            discovery,
            min_refresh_interval: DEFAULT_MISS_REFRESH_INTERVAL,
            last_refresh: Arc::new(Mutex::new(None)),
        }
    }

    /// Sets the least time between two refreshes caused by misses.
    #[must_use]
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh_interval = interval;
        self
    }

    /// The discovery it reads.
    pub fn discovery(&self) -> &CachedDiscovery {
        &self.discovery
    }

    /// [`RestMapper::resource_for`], refreshing discovery once on a miss.
    pub async fn resource_for(&self, argument: &str) -> Result<DiscoveredResource, MapperError> {
        self.with_refresh(|mapper| mapper.resource_for(argument))
            .await
    }

    /// [`RestMapper::mapping`], refreshing discovery once on a miss.
    pub async fn mapping(&self, gvk: &GroupVersionKind) -> Result<DiscoveredResource, MapperError> {
        self.with_refresh(|mapper| mapper.mapping(gvk)).await
    }

    /// [`RestMapper::category`] over the current discovery.
    pub async fn category(&self, category: &str) -> Result<Vec<DiscoveredResource>, MapperError> {
        Ok(self.mapper().await?.category(category))
    }

    async fn mapper(&self) -> Result<RestMapper, MapperError> {
        let discovery = self
            .discovery
            .discovery()
            .await
            .map_err(MapperError::Discovery)?;
        Ok(RestMapper::new(discovery))
    }

    async fn with_refresh<T>(
        &self,
        map: impl Fn(&RestMapper) -> Result<T, MapperError>,
    ) -> Result<T, MapperError> {
        match map(&self.mapper().await?) {
            Err(MapperError::NoMatch { what }) if self.may_refresh() => {
                tracing::debug!(what, "no match; refreshing discovery once");
                self.discovery.invalidate();
                map(&self.mapper().await?)
            }
            result => result,
        }
    }

    /// Whether a miss may refresh now (and, if so, records that it does).
    fn may_refresh(&self) -> bool {
        let mut last = self.last_refresh.lock();
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < self.min_refresh_interval) {
            return false;
        }
        *last = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn kubectl_arguments_split_into_their_readings() {
        let plain = |name: &str| ResourceArgument {
            name: name.to_string(),
            version: None,
            group: None,
        };
        assert_eq!(readings("Pods"), [plain("pods")]);
        assert_eq!(
            readings("deployments.apps"),
            [ResourceArgument {
                name: "deployments".into(),
                version: None,
                group: Some("apps"),
            }]
        );
        assert_eq!(
            readings("deploy.v1.apps"),
            [
                ResourceArgument {
                    name: "deploy".into(),
                    version: Some("v1"),
                    group: Some("apps"),
                },
                ResourceArgument {
                    name: "deploy".into(),
                    version: None,
                    group: Some("v1.apps"),
                },
            ]
        );
    }
}
