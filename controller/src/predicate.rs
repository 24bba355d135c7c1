//! Event filters (controller-runtime's `pkg/predicate`): which changes of
//! a watched object reach the controller's queue.
//!
//! A predicate sees the object's metadata only, as `&dyn Object` (client-go's
//! `metav1.Object`; an informer's
//! [`MetadataView`](clientgo_informers::MetadataView) derefs to it), so
//! filtering decodes nothing. Each event type has its own method; one not
//! overridden lets every event of its type through, as controller-runtime's
//! `Funcs` do, so an update-only predicate passes every create and delete.
//! Predicates given to
//! [`with_event_filter`](crate::Builder::with_event_filter) apply to every
//! watch of the controller and are all required (ANDed). A delete whose
//! last state is unknown (a tombstone without an object) is not filtered.

use std::sync::Arc;

use clientgo_apimachinery::Object;

/// Decides whether an event of a watched object is enqueued.
pub trait Predicate: Send + Sync + 'static {
    /// An object appeared (including the informer's initial list).
    fn create(&self, object: &dyn Object) -> bool {
        let _ = object;
        true
    }

    /// An object changed from `old` to `new` (a resync gives equal
    /// resourceVersions).
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        let _ = (old, new);
        true
    }

    /// An object was deleted; `object` is its last known state.
    fn delete(&self, object: &dyn Object) -> bool {
        let _ = object;
        true
    }
}

impl<P: Predicate + ?Sized> Predicate for Arc<P> {
    fn create(&self, object: &dyn Object) -> bool {
        (**self).create(object)
    }

    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        (**self).update(old, new)
    }

    fn delete(&self, object: &dyn Object) -> bool {
        (**self).delete(object)
    }
}

impl<P: Predicate + ?Sized> Predicate for Box<P> {
    fn create(&self, object: &dyn Object) -> bool {
        (**self).create(object)
    }

    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        (**self).update(old, new)
    }

    fn delete(&self, object: &dyn Object) -> bool {
        (**self).delete(object)
    }
}

/// Combinators for every predicate.
pub trait PredicateExt: Predicate + Sized {
    /// Passes an event when both pass (`other` is not asked when `self`
    /// refuses).
    fn and<P: Predicate>(self, other: P) -> And<Self, P> {
        And(self, other)
    }

    /// Passes an event when either passes (`other` is not asked when
    /// `self` passes).
    fn or<P: Predicate>(self, other: P) -> Or<Self, P> {
        Or(self, other)
    }
}

impl<P: Predicate> PredicateExt for P {}

/// Both predicates ([`PredicateExt::and`]).
#[derive(Debug, Clone, Copy)]
pub struct And<A, B>(A, B);

impl<A: Predicate, B: Predicate> Predicate for And<A, B> {
    fn create(&self, object: &dyn Object) -> bool {
        self.0.create(object) && self.1.create(object)
    }

    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        self.0.update(old, new) && self.1.update(old, new)
    }

    fn delete(&self, object: &dyn Object) -> bool {
        self.0.delete(object) && self.1.delete(object)
    }
}

/// Either predicate ([`PredicateExt::or`]).
#[derive(Debug, Clone, Copy)]
pub struct Or<A, B>(A, B);

impl<A: Predicate, B: Predicate> Predicate for Or<A, B> {
    fn create(&self, object: &dyn Object) -> bool {
        self.0.create(object) || self.1.create(object)
    }

    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        self.0.update(old, new) || self.1.update(old, new)
    }

    fn delete(&self, object: &dyn Object) -> bool {
        self.0.delete(object) || self.1.delete(object)
    }
}

/// The opposite of a predicate, for every event type ([`not`]).
#[derive(Debug, Clone, Copy)]
pub struct Not<P>(P);

/// Passes exactly the events `predicate` refuses (controller-runtime's
/// `Not`): `not(generation_changed())` passes creates and deletes never,
/// since the built-ins pass them.
pub fn not<P: Predicate>(predicate: P) -> Not<P> {
    Not(predicate)
}

impl<P: Predicate> Predicate for Not<P> {
    fn create(&self, object: &dyn Object) -> bool {
        !self.0.create(object)
    }

    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        !self.0.update(old, new)
    }

    fn delete(&self, object: &dyn Object) -> bool {
        !self.0.delete(object)
    }
}

/// Passes updates whose `metadata.generation` changed
/// (`GenerationChangedPredicate`): status-only writes are skipped. Creates
/// and deletes pass. A kind whose objects have no generation (a missing
/// one on both sides) never passes an update.
#[derive(Debug, Clone, Copy, Default)]
pub struct GenerationChanged;

/// [`GenerationChanged`].
pub fn generation_changed() -> GenerationChanged {
    GenerationChanged
}

impl Predicate for GenerationChanged {
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        old.generation() != new.generation()
    }
}

/// Passes updates whose `metadata.resourceVersion` changed
/// (`ResourceVersionChangedPredicate`): drops resyncs. Creates and deletes
/// pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourceVersionChanged;

/// [`ResourceVersionChanged`].
pub fn resource_version_changed() -> ResourceVersionChanged {
    ResourceVersionChanged
}

impl Predicate for ResourceVersionChanged {
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        old.resource_version() != new.resource_version()
    }
}

/// Passes updates whose labels changed (`LabelChangedPredicate`; an
/// absent map equals an empty one). Creates and deletes pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct LabelsChanged;

/// [`LabelsChanged`].
pub fn labels_changed() -> LabelsChanged {
    LabelsChanged
}

impl Predicate for LabelsChanged {
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        old.labels() != new.labels()
    }
}

/// Passes updates whose annotations changed
/// (`AnnotationChangedPredicate`; an absent map equals an empty one).
/// Creates and deletes pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotationsChanged;

/// [`AnnotationsChanged`].
pub fn annotations_changed() -> AnnotationsChanged {
    AnnotationsChanged
}

impl Predicate for AnnotationsChanged {
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        old.annotations() != new.annotations()
    }
}

/// A predicate of one object's metadata, asked of every event type (on
/// an update, of the new object), as controller-runtime's
/// `NewPredicateFuncs`; see [`from_fn`].
pub struct FromFn<F>(F);

/// The predicate `passes`, asked of the object of every create and
/// delete and of the new object of every update.
pub fn from_fn<F>(passes: F) -> FromFn<F>
where
    F: Fn(&dyn Object) -> bool + Send + Sync + 'static,
{
    FromFn(passes)
}

impl<F> Predicate for FromFn<F>
where
    F: Fn(&dyn Object) -> bool + Send + Sync + 'static,
{
    fn create(&self, object: &dyn Object) -> bool {
        (self.0)(object)
    }

    fn update(&self, _old: &dyn Object, new: &dyn Object) -> bool {
        (self.0)(new)
    }

    fn delete(&self, object: &dyn Object) -> bool {
        (self.0)(object)
    }
}

/// A predicate of updates alone, given the old and the new metadata;
/// creates and deletes pass. See [`on_update`].
pub struct OnUpdate<F>(F);

/// The predicate `passes` on updates; every create and delete passes.
pub fn on_update<F>(passes: F) -> OnUpdate<F>
where
    F: Fn(&dyn Object, &dyn Object) -> bool + Send + Sync + 'static,
{
    OnUpdate(passes)
}

impl<F> Predicate for OnUpdate<F>
where
    F: Fn(&dyn Object, &dyn Object) -> bool + Send + Sync + 'static,
{
    fn update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        (self.0)(old, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clientgo_apimachinery::PartialObjectMetadata;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::collections::BTreeMap;

    fn object(metadata: ObjectMeta) -> PartialObjectMetadata {
        PartialObjectMetadata {
            metadata,
            ..PartialObjectMetadata::default()
        }
    }

    fn meta(generation: i64, version: &str, labels: &[(&str, &str)]) -> PartialObjectMetadata {
        object(ObjectMeta {
            name: Some("web".into()),
            generation: Some(generation),
            resource_version: Some(version.into()),
            labels: (!labels.is_empty()).then(|| {
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
            ..ObjectMeta::default()
        })
    }

    #[test]
    fn built_ins_filter_updates_and_pass_creates_and_deletes() {
        let base = meta(1, "10", &[("app", "web")]);
        let status_write = meta(1, "11", &[("app", "web")]);
        let spec_write = meta(2, "12", &[("app", "web")]);
        let relabelled = meta(1, "13", &[("app", "db")]);
        let mut annotated = meta(1, "14", &[("app", "web")]);
        annotated.metadata.annotations = Some([("note".to_string(), "x".to_string())].into());
        let resync = base.clone();
        let table: [(&str, &dyn Predicate, [bool; 5]); 4] = [
            // status write, spec write, relabel, annotation, resync
            (
                "generation",
                &generation_changed(),
                [false, true, false, false, false],
            ),
            (
                "resourceVersion",
                &resource_version_changed(),
                [true, true, true, true, false],
            ),
            (
                "labels",
                &labels_changed(),
                [false, false, true, false, false],
            ),
            (
                "annotations",
                &annotations_changed(),
                [false, false, false, true, false],
            ),
        ];
        for (name, predicate, expected) in table {
            let seen = [&status_write, &spec_write, &relabelled, &annotated, &resync]
                .map(|new| predicate.update(&base, new));
            assert_eq!(seen, expected, "{name}");
            assert!(predicate.create(&base), "{name} passes creates");
            assert!(predicate.delete(&base), "{name} passes deletes");
        }
    }

    #[test]
    fn absent_and_empty_maps_are_equal() {
        let mut empty = meta(1, "1", &[]);
        empty.metadata.labels = Some(BTreeMap::new());
        let absent = meta(1, "2", &[]);
        assert!(!labels_changed().update(&absent, &empty));
        assert!(labels_changed().update(&absent, &meta(1, "3", &[("a", "b")])));
    }

    #[test]
    fn combinators_short_circuit_per_event_type() {
        let base = meta(1, "1", &[]);
        let status = meta(1, "2", &[]);
        let labelled = meta(1, "3", &[("a", "b")]);
        let either = generation_changed().or(labels_changed());
        assert!(!either.update(&base, &status));
        assert!(either.update(&base, &labelled));
        let both = resource_version_changed().and(labels_changed());
        assert!(!both.update(&base, &status));
        assert!(both.update(&base, &labelled));
        let never_on_create = not(generation_changed());
        assert!(!never_on_create.create(&base));
        assert!(never_on_create.update(&base, &status));
        let named = from_fn(|meta: &dyn Object| meta.name() == Some("web"));
        assert!(named.create(&base) && named.update(&base, &status) && named.delete(&base));
        let other = object(ObjectMeta {
            name: Some("db".into()),
            ..ObjectMeta::default()
        });
        assert!(!named.create(&other));
        let growing =
            on_update(|old: &dyn Object, new: &dyn Object| new.generation() > old.generation());
        assert!(growing.create(&base) && !growing.update(&base, &status));
    }
}
