//! Finding a member in an object's JSON without parsing it: the
//! `metadata` of an object, so [`Compact`](crate::Compact) parses only
//! that; and `metadata.managedFields`, so the list and watch decoders can
//! leave it out before decoding when the caller will drop it anyway (the
//! informer factory's `keep_managed_fields(false)`). Building the field
//! manager's `fieldsV1` trees costs a third of a pod's decode time and,
//! once dropped, leaves holes in the heap; not building them costs one
//! scan of the bytes before `managedFields` and one copy of the rest.
//!
//! The scan reads JSON's structure only (strings, escapes, brackets). It
//! never panics and never fails: anything unexpected (bad JSON, an escaped
//! key, no metadata) means "not found", the bytes are decoded as they are,
//! and serde reports what is wrong with them.

use std::ops::Range;

/// Where the object sits in the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectAt {
    /// The bytes are the object (a list item).
    Root,
    /// The bytes are a watch event; the object is its `object` member.
    EventObject,
}

/// The bytes to remove to leave out `metadata.managedFields` of the object:
/// the member with one adjoining comma, so what remains is valid JSON.
/// `None` when there is none (or the bytes are not what they should be).
pub fn managed_fields_member(json: &[u8], at: ObjectAt) -> Option<Range<usize>> {
    let root = skip_whitespace(json, 0)?;
    let object = match at {
        ObjectAt::Root => root,
        ObjectAt::EventObject => find_member(json, root, b"object")?.value.start,
    };
    let metadata = find_member(json, object, b"metadata")?.value.start;
    let member = find_member(json, metadata, b"managedFields")?;
    Some(member.removal)
}

/// The bytes of the value of the object's top-level member `key` (`None`
/// when there is none, or the bytes are not what they should be). Scans
/// only up to the end of that member. The key is compared as written, so
/// a key spelled with escapes is not found.
pub fn member_value(json: &[u8], key: &[u8]) -> Option<Range<usize>> {
    let root = skip_whitespace(json, 0)?;
    Some(find_member(json, root, key)?.value)
}

/// A watch event's `type` and its object's `apiVersion` and `kind`, as
/// written between their quotes; each `None` when absent, not a string, or
/// spelled with escapes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EventTypes<'a> {
    /// The event's `type` (`ADDED`, `ERROR`, ...).
    pub event_type: Option<&'a [u8]>,
    /// The object's `apiVersion`.
    pub api_version: Option<&'a [u8]>,
    /// The object's `kind`.
    pub kind: Option<&'a [u8]>,
}

/// Reads a watch event's `type` and its object's `apiVersion` and `kind`
/// without parsing the object: the scan stops inside the object as soon as
/// both are found (the API server writes them first), so it costs a few
/// dozen bytes per event. `None` when the bytes are not an object.
pub fn watch_event_types(event: &[u8]) -> Option<EventTypes<'_>> {
    let root = skip_whitespace(event, 0)?;
    let mut types = EventTypes::default();
    let mut object_seen = false;
    walk_members(event, root, |key, value| {
        match key {
            b"type" => types.event_type = string_at(event, value),
            b"object" => {
                object_seen = true;
                let _ = walk_members(event, value, |key, value| {
                    match key {
                        b"apiVersion" => types.api_version = string_at(event, value),
                        b"kind" => types.kind = string_at(event, value),
                        _ => {}
                    }
                    types.api_version.is_some() && types.kind.is_some()
                });
            }
            _ => {}
        }
        types.event_type.is_some() && object_seen
    })?;
    Some(types)
}

/// The contents of the string starting at `start`; `None` when it is not
/// a string or holds an escape.
fn string_at(json: &[u8], start: usize) -> Option<&[u8]> {
    let end = skip_string(json, start)?;
    let inner = json.get(start + 1..end - 1)?;
    (!inner.contains(&b'\\')).then_some(inner)
}

/// Hands each key of the object at `start` (its `{`) and the start of its
/// value to `visit`, until `visit` returns `true` or the object ends. A
/// value is skipped only when the walk goes on past it. `None` when the
/// bytes are not an object.
fn walk_members(
    json: &[u8],
    start: usize,
    mut visit: impl FnMut(&[u8], usize) -> bool,
) -> Option<()> {
    if json.get(start) != Some(&b'{') {
        return None;
    }
    let mut position = skip_whitespace(json, start + 1)?;
    if json.get(position) == Some(&b'}') {
        return Some(());
    }
    loop {
        let key_end = skip_string(json, position)?;
        let key = json.get(position + 1..key_end - 1)?;
        position = skip_whitespace(json, key_end)?;
        if json.get(position) != Some(&b':') {
            return None;
        }
        let value_start = skip_whitespace(json, position + 1)?;
        if visit(key, value_start) {
            return Some(());
        }
        let value_end = skip_value(json, value_start)?;
        let after = skip_whitespace(json, value_end)?;
        match json.get(after) {
            Some(b',') => {}
            Some(b'}') => return Some(()),
            _ => return None,
        }
        position = skip_whitespace(json, after + 1)?;
    }
}

/// One member of an object.
struct Member {
    /// The value's bytes.
    value: Range<usize>,
    /// The member and one adjoining comma.
    removal: Range<usize>,
}

/// Finds the member `key` of the object starting at `start` (its `{`).
fn find_member(json: &[u8], start: usize, key: &[u8]) -> Option<Member> {
    if json.get(start) != Some(&b'{') {
        return None;
    }
    let mut position = skip_whitespace(json, start + 1)?;
    if json.get(position) == Some(&b'}') {
        return None;
    }
    // Where the previous member's value ended (for removing the last one
    // with the comma before it).
    let mut previous_end: Option<usize> = None;
    loop {
        let member_start = position;
        let key_end = skip_string(json, position)?;
        let this_key = json.get(position + 1..key_end - 1)?;
        position = skip_whitespace(json, key_end)?;
        if json.get(position) != Some(&b':') {
            return None;
        }
        let value_start = skip_whitespace(json, position + 1)?;
        let value_end = skip_value(json, value_start)?;
        let after = skip_whitespace(json, value_end)?;
        let last = match json.get(after) {
            Some(b',') => false,
            Some(b'}') => true,
            _ => return None,
        };
        if this_key == key {
            let removal = if !last {
                // The member, its comma and the space up to the next key.
                member_start..skip_whitespace(json, after + 1)?
            } else if let Some(end) = previous_end {
                // The comma before it, then the member.
                end..value_end
            } else {
                // The only member.
                member_start..value_end
            };
            return Some(Member {
                value: value_start..value_end,
                removal,
            });
        }
        if last {
            return None;
        }
        previous_end = Some(value_end);
        position = skip_whitespace(json, after + 1)?;
    }
}

/// The index of the first non-whitespace byte at or after `position`
/// (which may be the end).
fn skip_whitespace(json: &[u8], mut position: usize) -> Option<usize> {
    while let Some(byte) = json.get(position) {
        if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
            return Some(position);
        }
        position += 1;
    }
    (position <= json.len()).then_some(position)
}

/// The index just past the string starting at `start` (its `"`).
fn skip_string(json: &[u8], start: usize) -> Option<usize> {
    if json.get(start) != Some(&b'"') {
        return None;
    }
    let mut position = start + 1;
    loop {
        let offset = memchr::memchr2(b'"', b'\\', json.get(position..)?)?;
        position += offset;
        if json[position] == b'\\' {
            position += 2;
        } else {
            return Some(position + 1);
        }
    }
}

/// The index just past the value starting at `start`.
fn skip_value(json: &[u8], start: usize) -> Option<usize> {
    match json.get(start)? {
        b'"' => skip_string(json, start),
        b'{' | b'[' => {
            let mut depth = 0_usize;
            let mut position = start;
            loop {
                match json.get(position)? {
                    b'"' => {
                        position = skip_string(json, position)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(position + 1);
                        }
                    }
                    _ => {}
                }
                position += 1;
            }
        }
        _ => {
            // A number, true, false or null: up to the next delimiter.
            let mut position = start;
            while let Some(byte) = json.get(position) {
                if matches!(byte, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    break;
                }
                position += 1;
            }
            (position > start).then_some(position)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn without(json: &str, at: ObjectAt) -> Option<Value> {
        let range = managed_fields_member(json.as_bytes(), at)?;
        let mut bytes = json.as_bytes().to_vec();
        bytes.drain(range);
        Some(serde_json::from_slice(&bytes).unwrap())
    }

    const ENTRY: &str =
        r#"[{"manager":"kubectl","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:a\"}":{}}}}}]"#;

    #[test]
    fn removes_the_member_wherever_it_sits() {
        let first = format!(r#"{{"metadata":{{"managedFields":{ENTRY},"name":"a"}},"spec":{{}}}}"#);
        let middle = format!(
            r#"{{"kind":"Pod","metadata":{{"name":"a", "managedFields" : {ENTRY} , "uid":"u"}}}}"#
        );
        let last = format!(r#"{{"metadata":{{"name":"a","managedFields":{ENTRY}}}}}"#);
        let only = format!(r#"{{"metadata":{{"managedFields":{ENTRY}}}}}"#);
        assert_eq!(
            without(&first, ObjectAt::Root).unwrap(),
            json!({"metadata": {"name": "a"}, "spec": {}})
        );
        assert_eq!(
            without(&middle, ObjectAt::Root).unwrap(),
            json!({"kind": "Pod", "metadata": {"name": "a", "uid": "u"}})
        );
        assert_eq!(
            without(&last, ObjectAt::Root).unwrap(),
            json!({"metadata": {"name": "a"}})
        );
        assert_eq!(
            without(&only, ObjectAt::Root).unwrap(),
            json!({"metadata": {}})
        );
    }

    #[test]
    fn finds_the_object_of_a_watch_event() {
        let event = format!(
            r#"{{"type":"MODIFIED","object":{{"apiVersion":"v1","metadata":{{"name":"a","managedFields":{ENTRY}}},"data":{{"managedFields":"kept"}}}}}}"#
        );
        assert_eq!(
            without(&event, ObjectAt::EventObject).unwrap(),
            json!({"type": "MODIFIED", "object": {"apiVersion": "v1", "metadata": {"name": "a"}, "data": {"managedFields": "kept"}}})
        );
    }

    #[test]
    fn finds_a_top_level_member_value() {
        let json = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"}"}},"spec":{"metadata":1}}"#;
        let range = member_value(json, b"metadata").unwrap();
        assert_eq!(&json[range], br#"{"name":"a","labels":{"x":"}"}}"#);
        assert_eq!(
            member_value(br#"{"spec":{"metadata":{}}}"#, b"metadata"),
            None
        );
        assert_eq!(member_value(br#"{"metadata":"#, b"metadata"), None);
    }

    #[test]
    fn only_metadata_managed_fields_count() {
        let elsewhere = r#"{"spec":{"managedFields":[1]},"metadata":{"name":"a"}}"#;
        assert_eq!(
            managed_fields_member(elsewhere.as_bytes(), ObjectAt::Root),
            None
        );
        let in_a_string = r#"{"metadata":{"name":"\"managedFields\":[]"}}"#;
        assert_eq!(
            managed_fields_member(in_a_string.as_bytes(), ObjectAt::Root),
            None
        );
    }

    #[test]
    fn bad_bytes_are_never_found_and_never_panic() {
        let samples: [&[u8]; 12] = [
            b"",
            b"{",
            b"{\"metadata\"",
            b"{\"metadata\":{\"managedFields\":[",
            b"{\"metadata\":{\"managedFields\":[1,2]",
            b"{\"metadata\":{\"managedFields\"}}",
            b"{\"metadata\":{\"managedFields\":\"\\",
            b"[1,2]",
            b"{\"object\":5}",
            b"{\"metadata\":{\"managedFields\":]}}",
            b"\xff\xfe{",
            b"{\"metadata\":{\"a\":1 \"managedFields\":[]}}",
        ];
        for sample in samples {
            assert_eq!(
                managed_fields_member(sample, ObjectAt::Root),
                None,
                "{sample:?}"
            );
            assert_eq!(
                managed_fields_member(sample, ObjectAt::EventObject),
                None,
                "{sample:?}"
            );
        }
    }

    #[test]
    fn event_types_are_read_without_the_rest_of_the_object() {
        let event = br#"{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}"#;
        let types = watch_event_types(event).unwrap();
        assert_eq!(types.event_type, Some(&b"ADDED"[..]));
        assert_eq!(types.api_version, Some(&b"v1"[..]));
        assert_eq!(types.kind, Some(&b"Pod"[..]));
        // The object first, the kind last, an escaped kind, no object.
        let late = br#"{"object":{"metadata":{"name":"a"},"apiVersion":"v1","kind":"Pod"},"type":"MODIFIED"}"#;
        let types = watch_event_types(late).unwrap();
        assert_eq!(types.event_type, Some(&b"MODIFIED"[..]));
        assert_eq!(types.kind, Some(&b"Pod"[..]));
        let escaped = br#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"P\u006fd"}}"#;
        assert_eq!(watch_event_types(escaped).unwrap().kind, None);
        let bare = br#"{"type":"BOOKMARK"}"#;
        assert_eq!(watch_event_types(bare).unwrap().api_version, None);
        assert_eq!(watch_event_types(b"[1]"), None);
        assert_eq!(watch_event_types(b"{\"type\":"), None);
    }
}
