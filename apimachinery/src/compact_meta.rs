//! [`CompactMeta`]: an object's metadata packed for a cache that keeps it
//! for every object, read in place through accessors.
//!
//! k8s-openapi's `ObjectMeta` is 360 bytes inline, an allocation per
//! string, and a `BTreeMap` node of about 560 bytes for each of the labels
//! and the annotations however few they are: about 1,700 bytes of
//! allocations for a pod whose metadata text is 300. A `CompactMeta` keeps
//! every string (name, namespace, uid, resourceVersion, generateName,
//! selfLink, the labels and the annotations, sorted by key) in one text,
//! owner references included (as [`OwnerRefs`] says), after the end
//! offsets that cut it apart (written as text, as `packed_ends` says), so
//! a pod's metadata is one allocation; the deletion fields and
//! finalizers, which few objects set, are in a box of their own (with the
//! finalizers' strings). It converts both ways without loss (`managedFields` aside: it never keeps them; a
//! [`Compact`](crate::Compact) entry keeps them in its body).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::StrMap;
use crate::owner_refs::{OwnerRef, OwnerRefs, PACKED_STRINGS};
use crate::packed_ends::{self, Ends};

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
const CREATION_TIMESTAMP: u16 = 1 << 12;
const DELETION_TIMESTAMP: u16 = 1 << 13;

/// What an unset timestamp holds (never read: its presence bit is clear).
const UNSET_TIME: Time = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);

/// An object's metadata without `managedFields`, packed; see the module
/// documentation. Immutable: build it from an `ObjectMeta`, change that,
/// and build again.
#[derive(Clone, PartialEq)]
pub struct CompactMeta {
    /// The end offset of each string in the text (`strings` of them,
    /// written by `packed_ends`), then the text: the strings one after
    /// another, the six fixed ones, then each label's key and value in
    /// key order, then each annotation's, then each owner reference's five
    /// ([`OwnerRefs`]). One allocation, where offsets and text apart were
    /// two (and 16 bytes more inline).
    packed: Box<str>,
    /// How many strings (and so offsets).
    strings: u32,
    /// How many labels.
    labels: u32,
    /// How many owner references (the annotations are the strings
    /// between the labels' and theirs).
    owners: u32,
    /// Which optional fields are set (`None` and empty differ on the
    /// wire, so a round trip keeps the difference).
    present: u16,
    generation: i64,
    /// Meaningful when its bit is set (an `Option<Time>` is 8 bytes
    /// larger than a `Time`, and every cached object keeps one).
    creation_timestamp: Time,
    /// The fields of an object being deleted or guarded against it, boxed:
    /// most objects have none, and every cached object keeps a
    /// `CompactMeta` (32 bytes fewer inline than keeping them here).
    deletion: Option<Box<Deletion>>,
}

/// [`CompactMeta`]'s fields that few objects set. Each is meaningful when
/// its bit of `present` is set.
#[derive(Clone, PartialEq)]
struct Deletion {
    deletion_grace_period_seconds: i64,
    deletion_timestamp: Time,
    finalizers: Box<[String]>,
}

impl Default for CompactMeta {
    /// Metadata with nothing set, allocating nothing (the accessors read
    /// missing offsets as unset).
    fn default() -> Self {
        CompactMeta {
            packed: Box::default(),
            strings: 0,
            labels: 0,
            owners: 0,
            present: 0,
            generation: 0,
            creation_timestamp: UNSET_TIME,
            deletion: None,
        }
    }
}

impl CompactMeta {
    /// `metadata` packed; its `managedFields` are left out.
    ///
    /// Offsets reach 256 MiB: a string ending past that in the metadata's
    /// text, and every one after it, would read back empty (no API server
    /// sends such metadata: it limits a whole object to a few MiB).
    pub fn new(metadata: &ObjectMeta) -> Self {
        let mut fields = MetaFields::borrowing(metadata);
        fields.finalizers = metadata.finalizers.clone();
        CompactMeta::pack(fields)
    }

    /// [`new`](Self::new), moving the finalizers out of `metadata`
    /// instead of copying them.
    pub fn from_owned(mut metadata: ObjectMeta) -> Self {
        let finalizers = metadata.finalizers.take();
        let mut fields = MetaFields::borrowing(&metadata);
        fields.finalizers = finalizers;
        CompactMeta::pack(fields)
    }

    /// Packs `fields` (see [`MetaFields`] for how repeated label and
    /// annotation keys are read).
    pub fn pack(mut fields: MetaFields<'_>) -> Self {
        let fixed = [
            fields.name,
            fields.namespace,
            fields.uid,
            fields.resource_version,
            fields.generate_name,
            fields.self_link,
        ];
        for pairs in [&mut fields.labels, &mut fields.annotations]
            .into_iter()
            .flatten()
        {
            settle(pairs);
        }
        let count = |pairs: &Option<Vec<(&str, Option<&str>)>>| pairs.as_ref().map_or(0, Vec::len);
        let pairs = || {
            [&fields.labels, &fields.annotations]
                .into_iter()
                .flatten()
                .flatten()
        };
        let owners = fields.owner_references.as_deref().unwrap_or_default();
        let length = fixed.iter().map(|s| s.map_or(0, str::len)).sum::<usize>()
            + pairs()
                .map(|(key, value)| key.len() + value.map_or(0, str::len))
                .sum::<usize>()
            + owners
                .iter()
                .map(|o| o.api_version.len() + o.kind.len() + o.name.len() + o.uid.len() + 1)
                .sum::<usize>();
        let strings = FIXED
            + 2 * (count(&fields.labels) + count(&fields.annotations))
            + PACKED_STRINGS * owners.len();
        let head = strings * packed_ends::WIDTH;
        // The offsets go first, once known: a placeholder of their size
        // (ASCII, so the text after it starts on a character boundary),
        // written over at the end from `ends`.
        let mut text = String::with_capacity(head + length);
        text.extend(std::iter::repeat_n('\0', head));
        let mut ends = String::with_capacity(head);
        let mut push = |text: &mut String, s: &str| {
            text.push_str(s);
            let end = text.len() - head;
            packed_ends::push(&mut ends, u32::try_from(end).unwrap_or(u32::MAX));
        };
        let mut present = 0;
        for (index, string) in fixed.into_iter().enumerate() {
            if string.is_some() {
                present |= 1 << index;
            }
            push(&mut text, string.unwrap_or_default());
        }
        for (bit, map) in [(LABELS, &fields.labels), (ANNOTATIONS, &fields.annotations)] {
            if let Some(map) = map {
                present |= bit;
                for (key, value) in map {
                    push(&mut text, key);
                    push(&mut text, value.unwrap_or_default());
                }
            }
        }
        for owner in owners {
            for string in [owner.api_version, owner.kind, owner.name, owner.uid] {
                push(&mut text, string);
            }
            let mut flags = [0; 4];
            push(&mut text, owner.flags().encode_utf8(&mut flags));
        }
        let mut set = |bit: u16, is: bool| {
            if is {
                present |= bit;
            }
        };
        set(FINALIZERS, fields.finalizers.is_some());
        set(OWNER_REFERENCES, fields.owner_references.is_some());
        set(GENERATION, fields.generation.is_some());
        set(
            DELETION_GRACE,
            fields.deletion_grace_period_seconds.is_some(),
        );
        set(CREATION_TIMESTAMP, fields.creation_timestamp.is_some());
        set(DELETION_TIMESTAMP, fields.deletion_timestamp.is_some());
        // An empty finalizers list needs no box: its bit says it is set.
        let deletion = (fields.finalizers.as_ref().is_some_and(|f| !f.is_empty())
            || fields.deletion_grace_period_seconds.is_some()
            || fields.deletion_timestamp.is_some())
        .then(|| {
            Box::new(Deletion {
                deletion_grace_period_seconds: fields
                    .deletion_grace_period_seconds
                    .unwrap_or_default(),
                deletion_timestamp: fields.deletion_timestamp.unwrap_or(UNSET_TIME),
                finalizers: fields.finalizers.unwrap_or_default().into(),
            })
        });
        // Both are `strings` offsets long, all ASCII.
        text.replace_range(..head, &ends);
        CompactMeta {
            packed: text.into_boxed_str(),
            strings: u32::try_from(strings).unwrap_or(u32::MAX),
            labels: u32::try_from(count(&fields.labels)).unwrap_or(u32::MAX),
            owners: u32::try_from(owners.len()).unwrap_or(u32::MAX),
            present,
            generation: fields.generation.unwrap_or_default(),
            creation_timestamp: fields.creation_timestamp.unwrap_or(UNSET_TIME),
            deletion,
        }
    }

    /// The metadata as k8s-openapi's `ObjectMeta` (without
    /// `managedFields`): a new one, built field by field.
    pub fn to_object_meta(&self) -> ObjectMeta {
        let string = |index: usize| self.fixed(index).map(str::to_string);
        let map = |bit: u16, view: StrMap<'_>| self.has(bit).then(|| view.to_map());
        ObjectMeta {
            annotations: map(ANNOTATIONS, self.annotations()),
            creation_timestamp: self.creation_timestamp().cloned(),
            deletion_grace_period_seconds: self.deletion_grace_period_seconds(),
            deletion_timestamp: self.deletion_timestamp().cloned(),
            finalizers: self.has(FINALIZERS).then(|| self.finalizers().to_vec()),
            generate_name: string(GENERATE_NAME),
            generation: self.generation(),
            labels: map(LABELS, self.labels()),
            managed_fields: None,
            name: string(NAME),
            namespace: string(NAMESPACE),
            owner_references: self
                .has(OWNER_REFERENCES)
                .then(|| self.owner_references().to_vec()),
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
        let deletion = self.deletion.as_ref()?;
        self.has(DELETION_GRACE)
            .then_some(deletion.deletion_grace_period_seconds)
    }

    /// `metadata.creationTimestamp`.
    pub fn creation_timestamp(&self) -> Option<&Time> {
        self.has(CREATION_TIMESTAMP)
            .then_some(&self.creation_timestamp)
    }

    /// `metadata.deletionTimestamp`.
    pub fn deletion_timestamp(&self) -> Option<&Time> {
        let deletion = self.deletion.as_ref()?;
        self.has(DELETION_TIMESTAMP)
            .then_some(&deletion.deletion_timestamp)
    }

    /// `metadata.labels`, in key order.
    pub fn labels(&self) -> StrMap<'_> {
        let end = FIXED + 2 * self.labels as usize;
        self.pairs(FIXED, end)
    }

    /// `metadata.annotations`, in key order.
    pub fn annotations(&self) -> StrMap<'_> {
        let start = FIXED + 2 * self.labels as usize;
        self.pairs(start, self.owners_start())
    }

    /// `metadata.ownerReferences`, in order.
    pub fn owner_references(&self) -> OwnerRefs<'_> {
        let start = self.owners_start();
        let ends = self.ends();
        let first = ends.get(start.wrapping_sub(1)).unwrap_or(0);
        OwnerRefs::packed(self.text(), ends.from(start), first)
    }

    /// Where the owner references' strings begin in the offsets.
    fn owners_start(&self) -> usize {
        self.ends()
            .len()
            .saturating_sub(PACKED_STRINGS * self.owners as usize)
    }

    /// Where the text begins in `packed`.
    fn head(&self) -> usize {
        (self.strings as usize).saturating_mul(packed_ends::WIDTH)
    }

    /// The end offsets of the strings.
    fn ends(&self) -> Ends<'_> {
        let bytes = self.packed.as_bytes();
        Ends::new(bytes.get(..self.head()).unwrap_or(bytes))
    }

    /// The strings, one after another.
    fn text(&self) -> &str {
        self.packed.get(self.head()..).unwrap_or_default()
    }

    /// `metadata.finalizers`.
    pub fn finalizers(&self) -> &[String] {
        self.deletion
            .as_ref()
            .map_or(&[], |deletion| &deletion.finalizers)
    }

    /// The bytes this metadata holds on the heap (its offsets and text,
    /// and deletion fields with their finalizers; not the allocator's
    /// overhead).
    pub fn heap_bytes(&self) -> usize {
        self.packed.len()
            + self
                .deletion
                .as_ref()
                .map_or(0, |_| std::mem::size_of::<Deletion>())
            + self
                .finalizers()
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
        let ends = self.ends();
        let start = match index {
            0 => 0,
            _ => ends.get(index - 1).map_or(0, |end| end as usize),
        };
        let end = ends.get(index).map_or(0, |end| end as usize);
        self.text().get(start..end).unwrap_or_default()
    }

    /// The pairs held in `ends[start..end]`.
    fn pairs(&self, start: usize, end: usize) -> StrMap<'_> {
        let ends = self.ends();
        let first = ends.get(start.wrapping_sub(1)).unwrap_or(0);
        StrMap::packed(self.text(), ends.to(end).from(start), first)
    }
}

/// The fields of one object's metadata, borrowed from wherever they were
/// read (an `ObjectMeta`, or a protobuf message's bytes), for
/// [`CompactMeta::pack`]. `None` is an absent field.
///
/// Labels and annotations are `(key, value)` pairs in the order read, as a
/// protobuf map arrives: packing sorts them by key, and of pairs with the
/// same key the last wins; a pair without a value (a map entry with no
/// value field) holds `""`, as Go's generated decoders read it.
#[derive(Debug, Default)]
pub struct MetaFields<'a> {
    /// `metadata.name`.
    pub name: Option<&'a str>,
    /// `metadata.namespace`.
    pub namespace: Option<&'a str>,
    /// `metadata.uid`.
    pub uid: Option<&'a str>,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<&'a str>,
    /// `metadata.generateName`.
    pub generate_name: Option<&'a str>,
    /// `metadata.selfLink`.
    pub self_link: Option<&'a str>,
    /// `metadata.labels`, as read.
    pub labels: Option<Vec<(&'a str, Option<&'a str>)>>,
    /// `metadata.annotations`, as read.
    pub annotations: Option<Vec<(&'a str, Option<&'a str>)>>,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// `metadata.deletionGracePeriodSeconds`.
    pub deletion_grace_period_seconds: Option<i64>,
    /// `metadata.creationTimestamp`.
    pub creation_timestamp: Option<Time>,
    /// `metadata.deletionTimestamp`.
    pub deletion_timestamp: Option<Time>,
    /// `metadata.ownerReferences`, in order.
    pub owner_references: Option<Vec<OwnerRef<'a>>>,
    /// `metadata.finalizers`.
    pub finalizers: Option<Vec<String>>,
}

impl<'a> MetaFields<'a> {
    /// `metadata`'s fields, borrowed; its finalizers are left for the
    /// caller to move or copy in.
    fn borrowing(metadata: &'a ObjectMeta) -> Self {
        let pairs = |map: &'a Option<BTreeMap<String, String>>| {
            map.as_ref().map(|map| {
                map.iter()
                    .map(|(key, value)| (key.as_str(), Some(value.as_str())))
                    .collect()
            })
        };
        MetaFields {
            name: metadata.name.as_deref(),
            namespace: metadata.namespace.as_deref(),
            uid: metadata.uid.as_deref(),
            resource_version: metadata.resource_version.as_deref(),
            generate_name: metadata.generate_name.as_deref(),
            self_link: metadata.self_link.as_deref(),
            labels: pairs(&metadata.labels),
            annotations: pairs(&metadata.annotations),
            generation: metadata.generation,
            deletion_grace_period_seconds: metadata.deletion_grace_period_seconds,
            creation_timestamp: metadata.creation_timestamp.clone(),
            deletion_timestamp: metadata.deletion_timestamp.clone(),
            owner_references: metadata
                .owner_references
                .as_ref()
                .map(|owners| owners.iter().map(OwnerRef::from).collect()),
            finalizers: None,
        }
    }
}

/// Sorts `pairs` by key and keeps one pair a key, as [`MetaFields`] says.
fn settle(pairs: &mut Vec<(&str, Option<&str>)>) {
    if pairs.is_sorted_by(|a, b| a.0 < b.0) {
        return;
    }
    // Stable: pairs of one key stay in the order read.
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut settled: Vec<(&str, Option<&str>)> = Vec::with_capacity(pairs.len());
    for (key, value) in pairs.drain(..) {
        match settled.last_mut() {
            Some(last) if last.0 == key => last.1 = value,
            _ => settled.push((key, value)),
        }
    }
    *pairs = settled;
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
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

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
            // Offsets of one, two and three digits (past 127 and 16,383),
            // with strings after the long one.
            ObjectMeta {
                annotations: Some(
                    [
                        ("a".to_string(), "é".repeat(100)),
                        ("last-applied".to_string(), "x".repeat(20_000)),
                        ("z".to_string(), "after".to_string()),
                    ]
                    .into(),
                ),
                ..full()
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
    fn pairs_read_out_of_order_are_sorted_and_the_last_of_a_key_wins() {
        let fields = MetaFields {
            labels: Some(vec![
                ("b", Some("1")),
                ("a", Some("first")),
                ("b", Some("2")),
                ("a", None),
                ("c", None),
            ]),
            annotations: Some(vec![]),
            ..MetaFields::default()
        };
        let packed = CompactMeta::pack(fields);
        let labels: Vec<_> = packed.labels().iter().collect();
        assert_eq!(labels, [("a", ""), ("b", "2"), ("c", "")]);
        let metadata = packed.to_object_meta();
        assert_eq!(metadata.annotations, Some(BTreeMap::new()));
        assert_eq!(CompactMeta::new(&metadata), packed);
    }

    #[test]
    fn the_empty_default_reads_as_nothing_set() {
        let empty = CompactMeta::default();
        assert_eq!(empty.name(), None);
        assert!(empty.labels().is_empty() && empty.annotations().is_empty());
        assert!(empty.owner_references().is_empty());
        assert_eq!(empty.creation_timestamp(), None);
        assert_eq!(empty.to_object_meta(), ObjectMeta::default());
        assert_eq!(empty.heap_bytes(), 0);
    }

    #[test]
    fn deletion_fields_and_finalizers_round_trip_apart() {
        let deleting = ObjectMeta {
            deletion_timestamp: Some(Time("2026-11-28T00:00:00Z".parse().unwrap())),
            deletion_grace_period_seconds: Some(0),
            ..ObjectMeta::default()
        };
        let guarded = ObjectMeta {
            finalizers: Some(vec!["a/b".into()]),
            ..ObjectMeta::default()
        };
        let grace_only = ObjectMeta {
            deletion_grace_period_seconds: Some(30),
            ..ObjectMeta::default()
        };
        for metadata in [deleting, guarded, grace_only] {
            let packed = CompactMeta::new(&metadata);
            assert_eq!(packed.to_object_meta(), metadata);
            assert_eq!(
                packed.deletion_timestamp(),
                metadata.deletion_timestamp.as_ref()
            );
            assert_eq!(
                packed.deletion_grace_period_seconds(),
                metadata.deletion_grace_period_seconds
            );
            assert_eq!(
                packed.finalizers(),
                metadata.finalizers.as_deref().unwrap_or_default()
            );
            assert_eq!(packed, CompactMeta::from_owned(metadata.clone()));
            assert!(packed.heap_bytes() >= std::mem::size_of::<Deletion>());
        }
        // Set but empty: kept as set, without a box.
        let empty = ObjectMeta {
            finalizers: Some(Vec::new()),
            ..ObjectMeta::default()
        };
        let packed = CompactMeta::new(&empty);
        assert_eq!(packed.to_object_meta(), empty);
        assert_eq!(
            packed.heap_bytes(),
            CompactMeta::new(&ObjectMeta::default()).heap_bytes()
        );
    }

    #[test]
    fn it_keeps_far_less_than_object_meta() {
        assert!(std::mem::size_of::<CompactMeta>() <= 64);
        let packed = CompactMeta::new(&full());
        // Text (one owner reference's included) and offsets.
        assert!(packed.heap_bytes() < 400, "{}", packed.heap_bytes());
    }
}
