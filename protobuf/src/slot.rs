//! Where decoded values go and where encoded values come from, whatever
//! shape k8s-openapi gives the field: `T` for a required field,
//! `Option<T>` for an optional one, `Vec<T>` or `Option<Vec<T>>` for a
//! repeated one, `Box<T>` for a recursive one. Generated code calls one
//! helper per protobuf type and these traits fit it to the field.

use std::collections::BTreeMap;

use crate::message::Message;

/// A field a decoded scalar is stored into: set for a single field,
/// appended for a repeated one.
pub trait Slot<T> {
    /// Stores one decoded value (the last one wins, or it is appended).
    fn put(&mut self, value: T);
    /// Marks the field absent: a Go value field with `omitempty` holding
    /// its zero value, which JSON leaves out. A required field gets the
    /// zero value; a repeated one is left as it is.
    fn clear(&mut self);
}

impl<T: Default> Slot<T> for T {
    fn put(&mut self, value: T) {
        *self = value;
    }
    fn clear(&mut self) {
        *self = T::default();
    }
}

impl<T> Slot<T> for Option<T> {
    fn put(&mut self, value: T) {
        *self = Some(value);
    }
    fn clear(&mut self) {
        *self = None;
    }
}

impl<T> Slot<T> for Vec<T> {
    fn put(&mut self, value: T) {
        self.push(value);
    }
    fn clear(&mut self) {}
}

impl<T> Slot<T> for Option<Vec<T>> {
    fn put(&mut self, value: T) {
        self.get_or_insert_with(Vec::new).push(value);
    }
    fn clear(&mut self) {}
}

/// A field a decoded message is merged into: the one value of a single
/// field (created on first sight), a new element of a repeated one.
pub trait MessageSlot<T> {
    /// The value the next occurrence of the field merges into.
    fn next(&mut self) -> &mut T;
    /// Marks the field absent (an empty `Time`).
    fn clear(&mut self);
}

impl<T: Message> MessageSlot<T> for T {
    fn next(&mut self) -> &mut T {
        self
    }
    fn clear(&mut self) {
        *self = T::empty();
    }
}

impl<T: Message> MessageSlot<T> for Option<T> {
    fn next(&mut self) -> &mut T {
        self.get_or_insert_with(T::empty)
    }
    fn clear(&mut self) {
        *self = None;
    }
}

impl<T: Message> MessageSlot<T> for Box<T> {
    fn next(&mut self) -> &mut T {
        self
    }
    fn clear(&mut self) {
        **self = T::empty();
    }
}

impl<T: Message> MessageSlot<T> for Option<Box<T>> {
    fn next(&mut self) -> &mut T {
        self.get_or_insert_with(|| Box::new(T::empty()))
    }
    fn clear(&mut self) {
        *self = None;
    }
}

impl<T: Message> MessageSlot<T> for Vec<T> {
    fn next(&mut self) -> &mut T {
        self.push(T::empty());
        let last = self.len() - 1;
        &mut self[last]
    }
    fn clear(&mut self) {}
}

impl<T: Message> MessageSlot<T> for Option<Vec<T>> {
    fn next(&mut self) -> &mut T {
        self.get_or_insert_with(Vec::new).next()
    }
    fn clear(&mut self) {}
}

/// A map field (`map<string, V>`), optional or required.
pub trait MapSlot<V> {
    /// The value stored under `key`, created empty when missing
    /// ([`map`](crate::field::map) empties it again for a key sent twice:
    /// the last entry wins whole).
    fn entry(&mut self, key: String, empty: fn() -> V) -> &mut V;
    /// The entries, for encoding.
    fn entries(&self) -> Option<&BTreeMap<String, V>>;
}

impl<V> MapSlot<V> for BTreeMap<String, V> {
    fn entry(&mut self, key: String, empty: fn() -> V) -> &mut V {
        BTreeMap::entry(self, key).or_insert_with(empty)
    }
    fn entries(&self) -> Option<&BTreeMap<String, V>> {
        Some(self)
    }
}

impl<V> MapSlot<V> for Option<BTreeMap<String, V>> {
    fn entry(&mut self, key: String, empty: fn() -> V) -> &mut V {
        self.get_or_insert_with(BTreeMap::new)
            .entry(key)
            .or_insert_with(empty)
    }
    fn entries(&self) -> Option<&BTreeMap<String, V>> {
        self.as_ref()
    }
}

/// A field read for encoding: each value it holds, in order.
pub trait Each<T> {
    /// Calls `f` for the value (once), for `Some` (once or never) or for
    /// each element.
    fn each(&self, f: impl FnMut(&T));
    /// The single value, for fields written even when absent.
    fn single(&self) -> Option<&T>;
}

impl<T> Each<T> for T {
    fn each(&self, mut f: impl FnMut(&T)) {
        f(self);
    }
    fn single(&self) -> Option<&T> {
        Some(self)
    }
}

impl<T> Each<T> for Option<T> {
    fn each(&self, mut f: impl FnMut(&T)) {
        if let Some(value) = self {
            f(value);
        }
    }
    fn single(&self) -> Option<&T> {
        self.as_ref()
    }
}

impl<T> Each<T> for Box<T> {
    fn each(&self, mut f: impl FnMut(&T)) {
        f(self);
    }
    fn single(&self) -> Option<&T> {
        Some(self)
    }
}

impl<T> Each<T> for Option<Box<T>> {
    fn each(&self, mut f: impl FnMut(&T)) {
        if let Some(value) = self {
            f(value);
        }
    }
    fn single(&self) -> Option<&T> {
        self.as_deref()
    }
}

impl<T> Each<T> for Vec<T> {
    fn each(&self, f: impl FnMut(&T)) {
        self.iter().for_each(f);
    }
    fn single(&self) -> Option<&T> {
        self.last()
    }
}

impl<T> Each<T> for Option<Vec<T>> {
    fn each(&self, f: impl FnMut(&T)) {
        self.iter().flatten().for_each(f);
    }
    fn single(&self) -> Option<&T> {
        self.as_ref().and_then(|values| values.last())
    }
}

/// A list of strings sent wrapped in a message of its own
/// (`meta.v1.Verbs`, the `ExtraValue`s): `repeated string items = 1`.
pub trait StringsSlot {
    /// The list, created empty on first sight.
    fn strings(&mut self) -> &mut Vec<String>;
    /// The list, for encoding.
    fn get(&self) -> Option<&Vec<String>>;
}

impl StringsSlot for Vec<String> {
    fn strings(&mut self) -> &mut Vec<String> {
        self
    }
    fn get(&self) -> Option<&Vec<String>> {
        Some(self)
    }
}

impl StringsSlot for Option<Vec<String>> {
    fn strings(&mut self) -> &mut Vec<String> {
        self.get_or_insert_with(Vec::new)
    }
    fn get(&self) -> Option<&Vec<String>> {
        self.as_ref()
    }
}
