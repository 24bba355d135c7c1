//! [`StrMap`]: a read-only view of an object's labels or annotations,
//! whether they are kept in a `BTreeMap` (a decoded object) or packed
//! ([`CompactMeta`](crate::CompactMeta), a cached entry).
//!
//! client-go hands labels out as a Go `map[string]string`; a Rust
//! `BTreeMap<String, String>` costs a 560-byte node for even one entry,
//! twice an object (labels and annotations), which was a third of a cached
//! pod's memory. Readers that only look keys up or iterate see both forms
//! through this one type.

use std::collections::BTreeMap;
use std::fmt;

use crate::packed_ends::Ends;

/// A read-only, key-sorted map of strings: an object's labels or
/// annotations. `Copy`; borrowing from the object it came from.
#[derive(Clone, Copy)]
pub struct StrMap<'a>(Form<'a>);

#[derive(Clone, Copy)]
enum Form<'a> {
    Map(Option<&'a BTreeMap<String, String>>),
    /// Sorted by key: `pairs[i]` is the `(key, value)` pair whose strings
    /// are `text[ends[2i-1]..ends[2i]]` and `text[ends[2i]..ends[2i+1]]`,
    /// with `start` where the first key begins.
    Packed {
        text: &'a str,
        ends: Ends<'a>,
        start: u32,
    },
}

impl<'a> StrMap<'a> {
    /// The empty map.
    pub const EMPTY: StrMap<'static> = StrMap(Form::Map(None));

    /// A view of `map`.
    pub fn of(map: &'a BTreeMap<String, String>) -> Self {
        StrMap(Form::Map(Some(map)))
    }

    /// A view of `map`, empty when `None`.
    pub fn of_option(map: Option<&'a BTreeMap<String, String>>) -> Self {
        StrMap(Form::Map(map))
    }

    /// A view of packed pairs: `ends` holds, for each pair in key order,
    /// the end offset in `text` of its key and then of its value; the
    /// first key starts at `start`. Offsets must lie on `text`'s character
    /// boundaries and not decrease ([`CompactMeta`](crate::CompactMeta)
    /// builds them so); a bad offset reads as an empty string.
    pub(crate) fn packed(text: &'a str, ends: Ends<'a>, start: u32) -> Self {
        StrMap(Form::Packed { text, ends, start })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        match self.0 {
            Form::Map(map) => map.map_or(0, BTreeMap::len),
            Form::Packed { ends, .. } => ends.len() / 2,
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        match self.0 {
            Form::Map(map) => map?.get(key).map(String::as_str),
            Form::Packed { .. } => {
                let (mut low, mut high) = (0, self.len());
                while low < high {
                    let middle = (low + high) / 2;
                    let (found, value) = self.pair(middle);
                    match found.cmp(key) {
                        std::cmp::Ordering::Equal => return Some(value),
                        std::cmp::Ordering::Less => low = middle + 1,
                        std::cmp::Ordering::Greater => high = middle,
                    }
                }
                None
            }
        }
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in key order.
    pub fn iter(&self) -> StrMapIter<'a> {
        StrMapIter {
            map: *self,
            next: 0,
            map_iter: match self.0 {
                Form::Map(Some(map)) => Some(map.iter()),
                _ => None,
            },
        }
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.iter().map(|(key, _)| key)
    }

    /// An owned copy, as k8s-openapi's `ObjectMeta` keeps it.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect()
    }

    /// Pair `index` of a packed map.
    fn pair(&self, index: usize) -> (&'a str, &'a str) {
        let Form::Packed { text, ends, start } = self.0 else {
            return ("", "");
        };
        let at = |i: usize| ends.get(i).map_or(0, |end| end as usize);
        let key_start = if index == 0 {
            start as usize
        } else {
            at(2 * index - 1)
        };
        let key_end = at(2 * index);
        let value_end = at(2 * index + 1);
        (
            text.get(key_start..key_end).unwrap_or_default(),
            text.get(key_end..value_end).unwrap_or_default(),
        )
    }
}

impl<'a> From<&'a BTreeMap<String, String>> for StrMap<'a> {
    fn from(map: &'a BTreeMap<String, String>) -> Self {
        StrMap::of(map)
    }
}

impl Default for StrMap<'_> {
    fn default() -> Self {
        StrMap::EMPTY
    }
}

impl<'a> IntoIterator for StrMap<'a> {
    type Item = (&'a str, &'a str);
    type IntoIter = StrMapIter<'a>;

    fn into_iter(self) -> StrMapIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &StrMap<'a> {
    type Item = (&'a str, &'a str);
    type IntoIter = StrMapIter<'a>;

    fn into_iter(self) -> StrMapIter<'a> {
        self.iter()
    }
}

impl std::ops::Index<&str> for StrMap<'_> {
    type Output = str;

    /// The value of `key`; panics when it is absent, as `BTreeMap`'s
    /// index does (use [`get`](StrMap::get) on input).
    fn index(&self, key: &str) -> &str {
        match self.get(key) {
            Some(value) => value,
            None => panic!("no entry {key:?} in the map"),
        }
    }
}

impl PartialEq for StrMap<'_> {
    /// Equal entries, whatever the forms.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for StrMap<'_> {}

impl PartialEq<BTreeMap<String, String>> for StrMap<'_> {
    fn eq(&self, other: &BTreeMap<String, String>) -> bool {
        *self == StrMap::of(other)
    }
}

impl fmt::Debug for StrMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The entries of a [`StrMap`] in key order.
pub struct StrMapIter<'a> {
    map: StrMap<'a>,
    next: usize,
    map_iter: Option<std::collections::btree_map::Iter<'a, String, String>>,
}

impl<'a> Iterator for StrMapIter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        if let Some(iter) = &mut self.map_iter {
            return iter
                .next()
                .map(|(key, value)| (key.as_str(), value.as_str()));
        }
        if self.next >= self.map.len() {
            return None;
        }
        let pair = self.map.pair(self.next);
        self.next += 1;
        Some(pair)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match &self.map_iter {
            Some(iter) => iter.len(),
            None => self.map.len().saturating_sub(self.next),
        };
        (left, Some(left))
    }
}

impl ExactSizeIterator for StrMapIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed_ends::encoded;

    fn packed(pairs: &[(&str, &str)]) -> (String, Vec<u32>) {
        let mut text = String::from("prefix");
        let mut ends = Vec::new();
        for (key, value) in pairs {
            text.push_str(key);
            ends.push(text.len() as u32);
            text.push_str(value);
            ends.push(text.len() as u32);
        }
        (text, ends)
    }

    #[test]
    fn both_forms_read_alike() {
        let pairs = [("app", "web"), ("tier", ""), ("zone", "a")];
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (text, ends) = packed(&pairs);
        let ends = encoded(&ends);
        let views = [
            StrMap::of(&map),
            StrMap::packed(&text, Ends::new(ends.as_bytes()), 6),
        ];
        for view in views {
            assert_eq!(view.len(), 3);
            assert_eq!(view.get("app"), Some("web"));
            assert_eq!(view.get("tier"), Some(""));
            assert_eq!(view.get("zone"), Some("a"));
            assert_eq!(view.get("apps"), None);
            assert_eq!(view.get(""), None);
            assert_eq!(&view["app"], "web");
            assert_eq!(view.keys().collect::<Vec<_>>(), ["app", "tier", "zone"]);
            assert_eq!(view.to_map(), map);
            assert_eq!(view, map);
        }
        assert_eq!(views[0], views[1]);
    }

    #[test]
    fn empty_forms_are_equal_and_empty() {
        let (text, ends) = packed(&[]);
        let ends = encoded(&ends);
        let map = BTreeMap::new();
        for view in [
            StrMap::EMPTY,
            StrMap::of(&map),
            StrMap::packed(&text, Ends::new(ends.as_bytes()), 6),
        ] {
            assert!(view.is_empty());
            assert_eq!(view.iter().count(), 0);
            assert_eq!(view, StrMap::EMPTY);
            assert_eq!(view.get("x"), None);
        }
    }

    #[test]
    fn offsets_out_of_range_read_as_empty_strings_not_panics() {
        let ends = encoded(&[3, 99, 2, 1]);
        let view = StrMap::packed("abcdef", Ends::new(ends.as_bytes()), 0);
        assert_eq!(view.iter().count(), 2);
        assert_eq!(view.pair(0), ("abc", ""));
        assert_eq!(view.pair(1), ("", ""));
    }
}
