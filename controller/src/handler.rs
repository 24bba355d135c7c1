//! From a watched object's event to the requests it enqueues
//! (controller-runtime's `pkg/handler`): the object itself
//! ([`EnqueueMapping::Object`]), its controlling owner
//! ([`EnqueueMapping::Owner`]), or whatever a function of its metadata
//! returns ([`EnqueueMapping::Map`]). Everything here reads metadata only.

use std::collections::BTreeSet;
use std::sync::Arc;

use clientgo_apimachinery::Object;
use clientgo_informers::{MetadataView, ObjectOrTombstone, ResourceEventHandler};
use clientgo_workqueue::RateLimitingQueue;

use crate::predicate::Predicate;
use crate::reconcile::Request;

/// A function from a changed object's metadata to the requests it
/// concerns ([`EnqueueMapping::map`]).
pub type MapFn = Arc<dyn Fn(&dyn Object) -> Vec<Request> + Send + Sync>;

/// How an event of a watched object becomes requests
/// ([`Builder::watches`](crate::Builder::watches)).
#[derive(Clone)]
pub enum EnqueueMapping {
    /// The object's own key (`EnqueueRequestForObject`): the reconciled
    /// kind's events.
    Object,
    /// The owner named by the object's controller reference, when it is of
    /// this group and kind (`EnqueueRequestForOwner` with
    /// `OnlyControllerOwner`). The reference's version is ignored, so an
    /// owner served at several versions is matched at all of them; the
    /// request is in the object's namespace when the owner kind is
    /// namespaced, cluster-scoped otherwise.
    Owner {
        /// The owner's API group ("" for the core group).
        group: String,
        /// The owner's kind.
        kind: String,
        /// Whether owners of this kind live in namespaces.
        namespaced: bool,
    },
    /// The requests a function of the object's metadata returns
    /// (`EnqueueRequestsFromMapFunc`).
    Map(MapFn),
}

impl std::fmt::Debug for EnqueueMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnqueueMapping::Object => f.write_str("Object"),
            EnqueueMapping::Owner { group, kind, .. } => {
                write!(f, "Owner({kind}.{group})")
            }
            EnqueueMapping::Map(_) => f.write_str("Map"),
        }
    }
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → "").
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

impl EnqueueMapping {
    /// The requests `map` returns for an object's metadata (of the old
    /// and the new object on an update), each enqueued once per event
    /// (controller-runtime's `EnqueueRequestsFromMapFunc`).
    pub fn map(map: impl Fn(&dyn Object) -> Vec<Request> + Send + Sync + 'static) -> Self {
        EnqueueMapping::Map(Arc::new(map))
    }

    /// The object's controlling owner when it is an `O`
    /// ([`EnqueueMapping::Owner`] for `O`'s group and kind).
    pub fn owner<O>() -> Self
    where
        O: k8s_openapi::Resource,
        O::Scope: clientgo_apimachinery::KnownScope,
    {
        let owner = clientgo_apimachinery::ApiResource::of::<O>();
        EnqueueMapping::Owner {
            group: owner.group().to_string(),
            kind: owner.kind().to_string(),
            namespaced: owner.is_namespaced(),
        }
    }

    /// Adds to `into` the requests `object` maps to.
    pub(crate) fn requests(&self, object: &dyn Object, into: &mut BTreeSet<Request>) {
        match self {
            EnqueueMapping::Object => {
                if let Some(name) = object.name() {
                    into.insert(Request {
                        namespace: object.namespace().map(str::to_string),
                        name: name.to_string(),
                    });
                }
            }
            EnqueueMapping::Owner {
                group,
                kind,
                namespaced,
            } => {
                let owner = object.owner_references().iter().find(|owner| {
                    owner.is_controller()
                        && owner.kind == kind
                        && group_of(owner.api_version) == group
                });
                if let Some(owner) = owner {
                    into.insert(Request {
                        namespace: if *namespaced {
                            object.namespace().map(str::to_string)
                        } else {
                            None
                        },
                        name: owner.name.to_string(),
                    });
                }
            }
            EnqueueMapping::Map(map) => into.extend(map(object)),
        }
    }
}

/// The metadata handler one watch registers with its informer: each event
/// that every predicate passes is mapped to requests, which are added to
/// the controller's queue (each once per event).
pub(crate) struct Enqueuer {
    pub(crate) mapping: EnqueueMapping,
    pub(crate) predicates: Arc<[Arc<dyn Predicate>]>,
    /// Requests outside this namespace are dropped.
    pub(crate) namespace: Option<Arc<str>>,
    pub(crate) queue: RateLimitingQueue<String>,
}

/// Adds `request`'s key to `queue`, unless it is outside `namespace`.
pub(crate) fn enqueue_in(
    namespace: Option<&str>,
    queue: &RateLimitingQueue<String>,
    request: &Request,
) {
    if namespace.is_none_or(|namespace| request.namespace.as_deref() == Some(namespace)) {
        queue.add(request.key());
    }
}

impl Enqueuer {
    fn enqueue(&self, requests: BTreeSet<Request>) {
        for request in &requests {
            enqueue_in(self.namespace.as_deref(), &self.queue, request);
        }
    }
}

impl ResourceEventHandler<MetadataView> for Enqueuer {
    fn on_add(&mut self, object: &Arc<MetadataView>, _is_in_initial_list: bool) {
        if self.predicates.iter().all(|p| p.create(&***object)) {
            let mut requests = BTreeSet::new();
            self.mapping.requests(&***object, &mut requests);
            self.enqueue(requests);
        }
    }

    fn on_update(&mut self, old: &Arc<MetadataView>, new: &Arc<MetadataView>) {
        if self.predicates.iter().all(|p| p.update(&***old, &***new)) {
            // Both sides: a child whose controller reference moved
            // concerns its old owner and its new one.
            let mut requests = BTreeSet::new();
            self.mapping.requests(&***old, &mut requests);
            self.mapping.requests(&***new, &mut requests);
            self.enqueue(requests);
        }
    }

    fn on_delete(&mut self, object: &ObjectOrTombstone<MetadataView>) {
        let mut requests = BTreeSet::new();
        match object.object() {
            Some(last) => {
                if !self.predicates.iter().all(|p| p.delete(&***last)) {
                    return;
                }
                self.mapping.requests(&***last, &mut requests);
            }
            // A deletion found by a relist with no last state: only the
            // object's own key is known (an owner or a map function has
            // nothing to go on: that change is missed until the parent's
            // next event).
            None => {
                if let (EnqueueMapping::Object, ObjectOrTombstone::Tombstone(tombstone)) =
                    (&self.mapping, object)
                {
                    requests.insert(Request::from_key(&tombstone.key));
                }
            }
        }
        self.enqueue(requests);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_apimachinery::PartialObjectMetadata;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

    fn child(owners: Vec<OwnerReference>) -> PartialObjectMetadata {
        PartialObjectMetadata::from_meta(ObjectMeta {
            name: Some("child".into()),
            namespace: Some("team".into()),
            owner_references: Some(owners),
            ..ObjectMeta::default()
        })
    }

    fn owner(
        api_version: &str,
        kind: &str,
        name: &str,
        controller: Option<bool>,
    ) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller,
            ..OwnerReference::default()
        }
    }

    fn mapped(mapping: &EnqueueMapping, object: &dyn Object) -> Vec<String> {
        let mut requests = BTreeSet::new();
        mapping.requests(object, &mut requests);
        requests.iter().map(Request::key).collect()
    }

    #[test]
    fn owners_are_matched_on_group_and_kind_by_their_controller_reference() {
        let generators = EnqueueMapping::Owner {
            group: "example.com".into(),
            kind: "Generator".into(),
            namespaced: true,
        };
        let table = [
            (
                vec![owner("example.com/v1", "Generator", "a", Some(true))],
                vec!["team/a"],
            ),
            // Any version of the group.
            (
                vec![owner("example.com/v2beta1", "Generator", "b", Some(true))],
                vec!["team/b"],
            ),
            // Not the controller.
            (
                vec![owner("example.com/v1", "Generator", "c", None)],
                vec![],
            ),
            (
                vec![owner("example.com/v1", "Generator", "c", Some(false))],
                vec![],
            ),
            // Another group or kind.
            (
                vec![owner("other.com/v1", "Generator", "d", Some(true))],
                vec![],
            ),
            (
                vec![owner("example.com/v1", "Other", "e", Some(true))],
                vec![],
            ),
            (
                vec![
                    owner("example.com/v1", "Generator", "f", None),
                    owner("example.com/v1", "Generator", "g", Some(true)),
                ],
                vec!["team/g"],
            ),
        ];
        for (owners, expected) in table {
            assert_eq!(
                mapped(&generators, &child(owners.clone())),
                expected,
                "{owners:?}"
            );
        }
        let core = EnqueueMapping::Owner {
            group: String::new(),
            kind: "Node".into(),
            namespaced: false,
        };
        assert_eq!(
            mapped(&core, &child(vec![owner("v1", "Node", "n1", Some(true))])),
            vec!["n1"]
        );
    }

    #[test]
    fn objects_and_maps() {
        let object = child(vec![]);
        assert_eq!(mapped(&EnqueueMapping::Object, &object), vec!["team/child"]);
        let everyone = EnqueueMapping::Map(Arc::new(|meta: &dyn Object| {
            let namespace = meta.namespace().unwrap_or_default().to_string();
            vec![
                Request::namespaced(namespace.clone(), "x"),
                Request::namespaced(namespace, "y"),
            ]
        }));
        assert_eq!(mapped(&everyone, &object), vec!["team/x", "team/y"]);
    }
}
