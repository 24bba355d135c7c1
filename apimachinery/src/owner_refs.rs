//! [`OwnerRefs`]: an object's owner references, read in place whether the
//! object keeps them as k8s-openapi's `OwnerReference`s or packed into a
//! [`CompactMeta`](crate::CompactMeta)'s text, as [`OwnerRef`] views.
//!
//! Packed, an owner reference is five strings of the text: its
//! `apiVersion`, `kind`, `name`, `uid`, and one character for the two
//! optional flags. That saves a cached object five allocations per owner
//! (four strings and the slice), which is most of what an owner reference
//! used to cost: a `ReplicaSet`-owned pod's 104-byte struct and 68 bytes
//! of strings became about 60 bytes of text.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::packed_ends::Ends;

/// One owner reference, borrowed from the object that has it. Fields as
/// `OwnerReference`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OwnerRef<'a> {
    /// `apiVersion` of the owner.
    pub api_version: &'a str,
    /// `kind` of the owner.
    pub kind: &'a str,
    /// `name` of the owner.
    pub name: &'a str,
    /// `uid` of the owner.
    pub uid: &'a str,
    /// `controller`: whether the owner is the managing controller.
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`.
    pub block_owner_deletion: Option<bool>,
}

impl OwnerRef<'_> {
    /// Whether `controller` is `true`.
    pub fn is_controller(&self) -> bool {
        self.controller == Some(true)
    }

    /// An owned `OwnerReference` with the same fields.
    pub fn to_owner_reference(&self) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            name: self.name.to_string(),
            uid: self.uid.to_string(),
            controller: self.controller,
            block_owner_deletion: self.block_owner_deletion,
        }
    }

    /// The two flags as the one character a packed reference keeps.
    pub(crate) fn flags(&self) -> char {
        let bits = |flag: Option<bool>| match flag {
            None => 0,
            Some(false) => 1,
            Some(true) => 3,
        };
        // '0' to '?': ASCII, so one byte of UTF-8.
        char::from(b'0' + (bits(self.controller) | bits(self.block_owner_deletion) << 2))
    }
}

/// The flags of [`OwnerRef::flags`], read back.
fn from_flags(flags: &str) -> (Option<bool>, Option<bool>) {
    let bits = flags.bytes().next().map_or(0, |b| b.wrapping_sub(b'0'));
    let flag = |bits: u8| match bits & 3 {
        0 => None,
        3 => Some(true),
        _ => Some(false),
    };
    (flag(bits), flag(bits >> 2))
}

impl<'a> From<&'a OwnerReference> for OwnerRef<'a> {
    fn from(owner: &'a OwnerReference) -> Self {
        OwnerRef {
            api_version: &owner.api_version,
            kind: &owner.kind,
            name: &owner.name,
            uid: &owner.uid,
            controller: owner.controller,
            block_owner_deletion: owner.block_owner_deletion,
        }
    }
}

/// The strings of one packed reference.
pub(crate) const PACKED_STRINGS: usize = 5;

/// An object's owner references, in order; see the module documentation.
/// Cheap to copy.
#[derive(Clone, Copy)]
pub struct OwnerRefs<'a>(Form<'a>);

#[derive(Clone, Copy)]
enum Form<'a> {
    Slice(&'a [OwnerReference]),
    /// `ends` holds [`PACKED_STRINGS`] end offsets in `text` per
    /// reference; the first string starts at `start`.
    Packed {
        text: &'a str,
        ends: Ends<'a>,
        start: u32,
    },
}

impl<'a> OwnerRefs<'a> {
    /// References packed as the module documentation says.
    pub(crate) fn packed(text: &'a str, ends: Ends<'a>, start: u32) -> Self {
        OwnerRefs(Form::Packed { text, ends, start })
    }

    /// How many.
    pub fn len(&self) -> usize {
        match self.0 {
            Form::Slice(slice) => slice.len(),
            Form::Packed { ends, .. } => ends.len() / PACKED_STRINGS,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reference `index`, in order.
    pub fn get(&self, index: usize) -> Option<OwnerRef<'a>> {
        match self.0 {
            Form::Slice(slice) => slice.get(index).map(OwnerRef::from),
            Form::Packed { text, ends, start } => {
                let base = index.checked_mul(PACKED_STRINGS)?;
                let own = ends.from(base).to(PACKED_STRINGS);
                if own.len() < PACKED_STRINGS {
                    return None;
                }
                let mut from = match base {
                    0 => start,
                    _ => ends.get(base - 1).unwrap_or(start),
                };
                // An offset that reads as none ends an empty string.
                let mut strings = (0..PACKED_STRINGS).map(|at| {
                    let Some(end) = own.get(at) else {
                        return "";
                    };
                    let string = text.get(from as usize..end as usize).unwrap_or_default();
                    from = end;
                    string
                });
                let mut next = || strings.next().unwrap_or_default();
                let (api_version, kind, name, uid) = (next(), next(), next(), next());
                let (controller, block_owner_deletion) = from_flags(next());
                Some(OwnerRef {
                    api_version,
                    kind,
                    name,
                    uid,
                    controller,
                    block_owner_deletion,
                })
            }
        }
    }

    /// Every reference, in order.
    pub fn iter(&self) -> impl Iterator<Item = OwnerRef<'a>> + 'a {
        let refs = *self;
        (0..refs.len()).filter_map(move |index| refs.get(index))
    }

    /// The one whose `controller` is `true`, if any.
    pub fn controller(&self) -> Option<OwnerRef<'a>> {
        self.iter().find(OwnerRef::is_controller)
    }

    /// Owned `OwnerReference`s with the same fields.
    pub fn to_vec(&self) -> Vec<OwnerReference> {
        self.iter()
            .map(|owner| owner.to_owner_reference())
            .collect()
    }
}

impl<'a> From<&'a [OwnerReference]> for OwnerRefs<'a> {
    fn from(slice: &'a [OwnerReference]) -> Self {
        OwnerRefs(Form::Slice(slice))
    }
}

impl<'a> From<&'a Vec<OwnerReference>> for OwnerRefs<'a> {
    fn from(vec: &'a Vec<OwnerReference>) -> Self {
        OwnerRefs(Form::Slice(vec))
    }
}

impl fmt::Debug for OwnerRefs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for OwnerRefs<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<[OwnerReference]> for OwnerRefs<'_> {
    fn eq(&self, other: &[OwnerReference]) -> bool {
        *self == OwnerRefs::from(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed_ends::encoded;

    fn owner(name: &str, controller: Option<bool>, block: Option<bool>) -> OwnerReference {
        OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller,
            block_owner_deletion: block,
        }
    }

    /// `owners` packed after a prefix, as `CompactMeta` packs them.
    fn packed(owners: &[OwnerReference]) -> (String, Vec<u32>) {
        let mut text = String::from("prefix");
        let mut ends = Vec::new();
        for owner in owners {
            let view = OwnerRef::from(owner);
            for string in [view.api_version, view.kind, view.name, view.uid] {
                text.push_str(string);
                ends.push(text.len() as u32);
            }
            text.push(view.flags());
            ends.push(text.len() as u32);
        }
        (text, ends)
    }

    #[test]
    fn packed_references_read_back_as_they_were_with_every_flag() {
        let flags = [None, Some(false), Some(true)];
        let owners: Vec<OwnerReference> = flags
            .iter()
            .flat_map(|&controller| flags.iter().map(move |&block| (controller, block)))
            .enumerate()
            .map(|(index, (controller, block))| owner(&format!("o{index}"), controller, block))
            .collect();
        let (text, ends) = packed(&owners);
        let ends = encoded(&ends);
        let view = OwnerRefs::packed(&text, Ends::new(ends.as_bytes()), 6);
        assert_eq!(view.len(), 9);
        assert_eq!(view.to_vec(), owners);
        assert_eq!(view, *owners.as_slice());
        assert_eq!(view.get(9), None);
        assert_eq!(view.controller().map(|o| o.name), Some("o6"));
    }

    #[test]
    fn a_slice_reads_through_the_same_view() {
        let owners = vec![owner("a", None, None), owner("b", Some(true), None)];
        let view = OwnerRefs::from(&owners);
        assert_eq!(view.len(), 2);
        assert_eq!(view.get(1).map(|o| o.uid), Some("uid-b"));
        assert_eq!(view.controller().map(|o| o.name), Some("b"));
        assert!(OwnerRefs::from(&[][..]).is_empty());
    }

    #[test]
    fn bad_offsets_read_as_empty_strings_not_a_panic() {
        let ends = encoded(&[3, 1, 99, 2, 0]);
        let view = OwnerRefs::packed("abc", Ends::new(ends.as_bytes()), 0);
        let read = view.get(0).unwrap();
        assert_eq!(read.api_version, "abc");
        assert_eq!(read.kind, "");
        assert_eq!(read.controller, None);
    }
}
