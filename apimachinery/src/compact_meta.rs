//! [`CompactMeta`]: an object's metadata packed for a cache that keeps it
//! for every object, read in place through accessors.
//!
//! k8s-openapi's `ObjectMeta` is 360 bytes inline, an allocation per
//! string, and a `BTreeMap` node of about 560 bytes for each of the labels
//! and the annotations however few they are: about 1,700 bytes of
//! allocations for a pod whose metadata text is 300. A `CompactMeta` keeps
//! every string (name, namespace, uid, resourceVersion, generateName,
//! selfLink, the labels and the annotations, sorted by key) in one text
//! and their end offsets in one list, so a pod's metadata is two
//! allocations plus its owner references. It converts both ways without
//! loss (`managedFields` aside: it never keeps them; a
//! [`Compact`](crate::Compact) entry keeps them in its body).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

use crate::StrMap;

/// The strings at fixed places in [`CompactMeta`]'s text, in order.
const NAME: usize = 0;
const NAMESPACE: usize = 1;
const UID: usize = 2;
const RESOURCE_VERSION: usize = 3;
const GENERATE_NAME: usize = 4;
const SELF_LINK: usize = 5;
const FIXED: usize = 6;

/// Bits of [`CompactMeta::present`]: which optional fields were set (the
/// first six are the fixed strings', by their index).
const LABELS: u16 = 1 << 6;
const ANNOTATIONS: u16 = 1 << 7;
const FINALIZERS: u16 = 1 << 8;
const OWNER_REFERENCES: u16 = 1 << 9;
const GENERATION: u16 = 1 << 10;
const DELETION_GRACE: u16 = 1 << 11;

/// An object's metadata without `managedFields`, packed; see the module
/// documentation. Immutable: build it from an `ObjectMeta`, change that,
/// and build again.
#[derive(Clone, PartialEq, Default)]
pub struct CompactMeta {
    /// The strings, one after another: the six fixed ones, then each
    /// label's key and value in key order, then each annotation's.
    text: Box<str>,
    /// The end offset in `text` of each string, in the same order.
    ends: Box<[u32]>,
    /// How many labels (the annotations are the rest of `ends`).
    labels: u32,
    /// Which optional fields are set (`None` and empty differ on the
    /// wire, so a round trip keeps the difference).
    present: u16,
    generation: i64,
    deletion_grace_period_seconds: i64,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    owner_references: Box<[OwnerReference]>,
    finalizers: Box<[String]>,
}

impl CompactMeta {
    /// `metadata` packed; its `managedFields` are left out.
    ///
    /// Offsets are 32-bit: metadata text beyond 4 GiB (which no API
    /// server sends: it limits a whole object to a few MiB) would read
    /// back as empty strings.
    pub fn new(metadata: &ObjectMeta) -> Self {
        CompactMeta::pack(
            metadata,
            metadata.owner_references.clone(),
            metadata.finalizers.clone(),
        )
    }

    /// [`new`](Self::new), moving the owner references and finalizers
    /// out of `metadata` instead of copying them.
    pub fn from_owned(mut metadata: ObjectMeta) -> Self {
        let owners = metadata.owner_references.take();
        let finalizers = metadata.finalizers.take();
        CompactMeta::pack(&metadata, owners, finalizers)
    }

    fn pack(
        metadata: &ObjectMeta,
        owner_references: Option<Vec<OwnerReference>>,
        finalizers: Option<Vec<String>>,
    ) -> Self {
        let fixed = [
            &metadata.name,
            &metadata.namespace,
            &metadata.uid,
            &metadata.resource_version,
            &metadata.generate_name,
            &metadata.self_link,
        ];
        let pairs = |map: &Option<BTreeMap<String, String>>| map.as_ref().map_or(0, BTreeMap::len);
        let length = fixed
            .iter()
            .map(|s| s.as_ref().map_or(0, String::len))
            .sum::<usize>()
            + [&metadata.labels, &metadata.annotations]
                .into_iter()
                .flatten()
                .flatten()
                .map(|(key, value)| key.len() + value.len())
                .sum::<usize>();
        let mut text = String::with_capacity(length);
        let mut ends = Vec::with_capacity(
            FIXED + 2 * (pairs(&metadata.labels) + pairs(&metadata.annotations)),
        );
        let mut push = |text: &mut String, s: &str| {
            text.push_str(s);
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        };
        let mut present = 0;
        for (index, string) in fixed.into_iter().enumerate() {
            if let Some(string) = string {
                present |= 1 << index;
                push(&mut text, string);
            } else {
                push(&mut text, "");
            }
        }
        for (bit, map) in [
            (LABELS, &metadata.labels),
            (ANNOTATIONS, &metadata.annotations),
        ] {
            if let Some(map) = map {
                present |= bit;
                for (key, value) in map {
                    push(&mut text, key);
                    push(&mut text, value);
                }
            }
        }
        let mut set = |bit: u16, is: bool| {
            if is {
                present |= bit;
            }
        };
        set(FINALIZERS, finalizers.is_some());
        set(OWNER_REFERENCES, owner_references.is_some());
        set(GENERATION, metadata.generation.is_some());
        set(
            DELETION_GRACE,
            metadata.deletion_grace_period_seconds.is_some(),
        );
        CompactMeta {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            labels: u32::try_from(pairs(&metadata.labels)).unwrap_or(u32::MAX),
            present,
            generation: metadata.generation.unwrap_or_default(),
            deletion_grace_period_seconds: metadata
                .deletion_grace_period_seconds
                .unwrap_or_default(),
            creation_timestamp: metadata.creation_timestamp.clone(),
            deletion_timestamp: metadata.deletion_timestamp.clone(),
            owner_references: owner_references.unwrap_or_default().into(),
            finalizers: finalizers.unwrap_or_default().into(),
        }
    }

    /// The metadata as k8s-openapi's `ObjectMeta` (without
    /// `managedFields`): a new one, built field by field.
    pub fn to_object_meta(&self) -> ObjectMeta {
        let string = |index: usize| self.fixed(index).map(str::to_string);
        let map = |bit: u16, view: StrMap<'_>| self.has(bit).then(|| view.to_map());
        ObjectMeta {
            annotations: map(ANNOTATIONS, self.annotations()),
            creation_timestamp: self.creation_timestamp.clone(),
            deletion_grace_period_seconds: self.deletion_grace_period_seconds(),
            deletion_timestamp: self.deletion_timestamp.clone(),
            finalizers: self.has(FINALIZERS).then(|| self.finalizers.to_vec()),
            generate_name: string(GENERATE_NAME),
            generation: self.generation(),
            labels: map(LABELS, self.labels()),
            managed_fields: None,
            name: string(NAME),
            namespace: string(NAMESPACE),
            owner_references: self
                .has(OWNER_REFERENCES)
                .then(|| self.owner_references.to_vec()),
            resource_version: string(RESOURCE_VERSION),
            self_link: string(SELF_LINK),
            uid: string(UID),
        }
    }

    /// `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.fixed(NAME)
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> Option<&str> {
        self.fixed(NAMESPACE)
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> Option<&str> {
        self.fixed(UID)
    }

    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> Option<&str> {
        self.fixed(RESOURCE_VERSION)
    }

    /// `metadata.generateName`.
    pub fn generate_name(&self) -> Option<&str> {
        self.fixed(GENERATE_NAME)
    }

    /// `metadata.generation`.
    pub fn generation(&self) -> Option<i64> {
        self.has(GENERATION).then_some(self.generation)
    }

    /// `metadata.deletionGracePeriodSeconds`.
    pub fn deletion_grace_period_seconds(&self) -> Option<i64> {
        self.has(DELETION_GRACE)
            .then_some(self.deletion_grace_period_seconds)
    }

    /// `metadata.creationTimestamp`.
    pub fn creation_timestamp(&self) -> Option<&Time> {
        self.creation_timestamp.as_ref()
    }

    /// `metadata.deletionTimestamp`.
    pub fn deletion_timestamp(&self) -> Option<&Time> {
        self.deletion_timestamp.as_ref()
    }

    /// `metadata.labels`, in key order.
    pub fn labels(&self) -> StrMap<'_> {
        let end = FIXED + 2 * self.labels as usize;
        self.pairs(FIXED, end)
    }

    /// `metadata.annotations`, in key order.
    pub fn annotations(&self) -> StrMap<'_> {
        let start = FIXED + 2 * self.labels as usize;
        self.pairs(start, self.ends.len())
    }

    /// `metadata.ownerReferences`.
    pub fn owner_references(&self) -> &[OwnerReference] {
        &self.owner_references
    }

    /// `metadata.finalizers`.
    pub fn finalizers(&self) -> &[String] {
        &self.finalizers
    }

    /// The bytes this metadata holds on the heap (its text, offsets, owner
    /// references and finalizers; not the allocator's overhead).
    pub fn heap_bytes(&self) -> usize {
        self.text.len()
            + self.ends.len() * std::mem::size_of::<u32>()
            + self.owner_references.len() * std::mem::size_of::<OwnerReference>()
            + self
                .owner_references
                .iter()
                .map(|owner| {
                    owner.api_version.len() + owner.kind.len() + owner.name.len() + owner.uid.len()
                })
                .sum::<usize>()
            + self
                .finalizers
                .iter()
                .map(|f| f.len() + std::mem::size_of::<String>())
                .sum::<usize>()
    }

    fn has(&self, bit: u16) -> bool {
        self.present & bit != 0
    }

    /// Fixed string `index`, when set.
    fn fixed(&self, index: usize) -> Option<&str> {
        if !self.has(1 << index) {
            return None;
        }
        Some(self.string(index))
    }

    /// String `index` of the text (empty on a bad offset, which `new`
    /// never makes).
    fn string(&self, index: usize) -> &str {
        let start = match index {
            0 => 0,
            _ => self.ends.get(index - 1).map_or(0, |end| *end as usize),
        };
        let end = self.ends.get(index).map_or(0, |end| *end as usize);
        self.text.get(start..end).unwrap_or_default()
    }

    /// The pairs held in `ends[start..end]`.
    fn pairs(&self, start: usize, end: usize) -> StrMap<'_> {
        let first = self.ends.get(start.wrapping_sub(1)).copied().unwrap_or(0);
        let ends = self.ends.get(start..end).unwrap_or_default();
        StrMap::packed(&self.text, ends, first)
    }
}

impl From<&ObjectMeta> for CompactMeta {
    fn from(metadata: &ObjectMeta) -> Self {
        CompactMeta::new(metadata)
    }
}

impl From<&CompactMeta> for ObjectMeta {
    fn from(metadata: &CompactMeta) -> Self {
        metadata.to_object_meta()
    }
}

impl std::fmt::Debug for CompactMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactMeta")
            .field("name", &self.name())
            .field("namespace", &self.namespace())
            .field("resource_version", &self.resource_version())
            .field("labels", &self.labels())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> ObjectMeta {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        ObjectMeta {
            annotations: Some(map(&[("note", "é ✓"), ("a", ""), ("z", "last")])),
            creation_timestamp: Some(Time("2026-11-27T01:02:03Z".parse().unwrap())),
            deletion_grace_period_seconds: Some(30),
            deletion_timestamp: Some(Time("2026-11-28T00:00:00Z".parse().unwrap())),
            finalizers: Some(vec!["example.com/keep".into()]),
            generate_name: Some("web-".into()),
            generation: Some(7),
            labels: Some(map(&[("app", "web"), ("pod-template-hash", "5d8f")])),
            managed_fields: None,
            name: Some("web-1".into()),
            namespace: Some("default".into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: "web".into(),
                uid: "r-1".into(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            resource_version: Some("42".into()),
            self_link: Some(String::new()),
            uid: Some("u-1".into()),
        }
    }

    #[test]
    fn a_round_trip_gives_back_every_field() {
        let cases = [
            full(),
            ObjectMeta::default(),
            ObjectMeta {
                labels: Some(BTreeMap::new()),
                finalizers: Some(Vec::new()),
                owner_references: Some(Vec::new()),
                generation: Some(0),
                name: Some(String::new()),
                ..ObjectMeta::default()
            },
            ObjectMeta {
                annotations: Some([("only".to_string(), "annotations".to_string())].into()),
                ..ObjectMeta::default()
            },
        ];
        for metadata in cases {
            let packed = CompactMeta::new(&metadata);
            assert_eq!(packed.to_object_meta(), metadata);
            assert_eq!(CompactMeta::from_owned(metadata.clone()), packed);
            assert_eq!(CompactMeta::new(&packed.to_object_meta()), packed);
        }
    }

    #[test]
    fn accessors_read_the_packed_fields() {
        let metadata = full();
        let packed = CompactMeta::new(&metadata);
        assert_eq!(packed.name(), Some("web-1"));
        assert_eq!(packed.namespace(), Some("default"));
        assert_eq!(packed.uid(), Some("u-1"));
        assert_eq!(packed.resource_version(), Some("42"));
        assert_eq!(packed.generate_name(), Some("web-"));
        assert_eq!(packed.generation(), Some(7));
        assert_eq!(packed.deletion_grace_period_seconds(), Some(30));
        assert_eq!(packed.labels().get("app"), Some("web"));
        assert_eq!(packed.labels().len(), 2);
        assert_eq!(packed.annotations().get("note"), Some("é ✓"));
        assert_eq!(packed.annotations().get("a"), Some(""));
        assert_eq!(packed.annotations().get("app"), None);
        assert_eq!(packed.annotations().len(), 3);
        assert_eq!(packed.owner_references().len(), 1);
        assert_eq!(packed.finalizers(), ["example.com/keep".to_string()]);
        assert_eq!(
            packed.creation_timestamp(),
            metadata.creation_timestamp.as_ref()
        );
        let empty = CompactMeta::new(&ObjectMeta::default());
        assert_eq!(empty.name(), None);
        assert!(empty.labels().is_empty() && empty.annotations().is_empty());
        assert_eq!(empty.generation(), None);
    }

    #[test]
    fn it_keeps_far_less_than_object_meta() {
        assert!(std::mem::size_of::<CompactMeta>() <= 160);
        let packed = CompactMeta::new(&full());
        // Text, offsets, one owner reference of 120 bytes and its text.
        assert!(packed.heap_bytes() < 400, "{}", packed.heap_bytes());
    }
}
