//! [`ListDecoder`]: decodes a list response as its bytes arrive, one item at
//! a time, so a list never holds its whole JSON text.

use std::marker::PhantomData;

use clientgo_apimachinery::{DecodeError, ObjectList};
use serde::de::DeserializeOwned;

use crate::watch_decoder::FrameError;
use clientgo_apimachinery::json_scan::{ObjectAt, managed_fields_member};

/// The most bytes a list's envelope (everything but its items: kind,
/// apiVersion, metadata) may take.
const MAX_ENVELOPE_BYTES: usize = 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the top-level object starts.
    Start,
    /// Inside the top-level object, outside its items.
    Envelope,
    /// Inside the `items` array.
    Items,
    /// The top-level object has ended.
    Done,
}

/// Decodes a list response (`{"kind":"PodList", "metadata": {...},
/// "items": [...]}`) from chunks split at any byte.
///
/// Each item is decoded into `K` as soon as its last byte arrives and its
/// text dropped, so the memory held is the decoded items plus one item's
/// JSON and the small envelope, never the whole body: an unpaginated relist
/// of 50,000 pods does not hold 250 MB of JSON. Items are framed by their
/// structure (strings and escapes respected), as the watch decoder frames
/// events. An item larger than the frame limit, an envelope over 1 MiB, bad
/// JSON or a body cut off are [`FrameError`]s; bytes are never trusted to
/// be well-formed and nothing panics.
#[derive(Debug)]
pub struct ListDecoder<K> {
    phase: Phase,
    /// The body without the items' contents (`"items":[]` stays).
    envelope: Vec<u8>,
    /// The item being received.
    item: Vec<u8>,
    items: Vec<K>,
    /// Nesting depth of the top-level object (1 directly inside it).
    depth: u32,
    /// Nesting depth within the current item (0 between items).
    item_depth: u32,
    in_string: bool,
    escaped: bool,
    /// The last member key at depth 1 was `"items"` and only `:` followed.
    items_key: bool,
    max_item_bytes: usize,
    failed: bool,
    /// Leave `metadata.managedFields` out of each item.
    skip_managed_fields: bool,
    kind: PhantomData<fn() -> K>,
}

impl<K: DeserializeOwned> ListDecoder<K> {
    /// A decoder refusing items larger than `max_item_bytes`.
    pub fn new(max_item_bytes: usize) -> Self {
        ListDecoder {
            phase: Phase::Start,
            envelope: Vec::new(),
            item: Vec::new(),
            items: Vec::new(),
            depth: 0,
            item_depth: 0,
            in_string: false,
            escaped: false,
            items_key: false,
            max_item_bytes: max_item_bytes.max(2),
            failed: false,
            skip_managed_fields: false,
            kind: PhantomData,
        }
    }

    /// Leaves `metadata.managedFields` out of every item before decoding
    /// it, as [`WatchDecoder::skip_managed_fields`](crate::WatchDecoder::skip_managed_fields)
    /// does for events.
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.skip_managed_fields = skip;
        self
    }

    /// Items decoded so far.
    pub fn decoded(&self) -> usize {
        self.items.len()
    }

    /// Consumes a chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), FrameError> {
        if self.failed {
            return Ok(());
        }
        let result = self.scan(chunk);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// Ends the body: the whole list, or why it is incomplete.
    pub fn finish(self) -> Result<ObjectList<K>, FrameError> {
        if self.phase != Phase::Done {
            return Err(FrameError::Truncated {
                bytes: self.envelope.len() + self.item.len(),
            });
        }
        let mut list: ObjectList<K> = serde_json::from_slice(&self.envelope).map_err(|error| {
            FrameError::Malformed(DecodeError::from_serde("list", &self.envelope, &error))
        })?;
        list.items = self.items;
        Ok(list)
    }

    fn scan(&mut self, data: &[u8]) -> Result<(), FrameError> {
        let mut index = 0;
        // Where the bytes still to be copied (to the envelope or the item)
        // start in `data`.
        let mut segment = 0;
        while index < data.len() {
            match self.phase {
                Phase::Start => {
                    match data[index] {
                        b' ' | b'\n' | b'\r' | b'\t' => {}
                        b'{' => {
                            self.phase = Phase::Envelope;
                            self.depth = 1;
                            self.envelope.push(b'{');
                        }
                        _ => return Err(not_an_object(&data[index..])),
                    }
                    index += 1;
                    segment = index;
                }
                Phase::Done => {
                    if !matches!(data[index], b' ' | b'\n' | b'\r' | b'\t') {
                        return Err(not_an_object(&data[index..]));
                    }
                    index += 1;
                    segment = index;
                }
                Phase::Envelope => {
                    if self.in_string {
                        index = self.skip_string(data, index);
                        if !self.in_string {
                            self.check_items_key(&data[segment..index]);
                        }
                        continue;
                    }
                    let byte = data[index];
                    index += 1;
                    match byte {
                        b'"' => {
                            self.in_string = true;
                            self.items_key = false;
                        }
                        b':' | b' ' | b'\n' | b'\r' | b'\t' => {}
                        b'[' if self.items_key && self.depth == 1 => {
                            self.items_key = false;
                            self.envelope.extend_from_slice(&data[segment..index]);
                            segment = index;
                            self.phase = Phase::Items;
                        }
                        b'{' | b'[' => {
                            self.depth += 1;
                            self.items_key = false;
                        }
                        b'}' | b']' => {
                            self.items_key = false;
                            self.depth = self.depth.saturating_sub(1);
                            if self.depth == 0 {
                                self.envelope.extend_from_slice(&data[segment..index]);
                                segment = index;
                                self.phase = Phase::Done;
                            }
                        }
                        _ => self.items_key = false,
                    }
                }
                Phase::Items => {
                    if self.item_depth == 0 {
                        let byte = data[index];
                        index += 1;
                        match byte {
                            b' ' | b'\n' | b'\r' | b'\t' | b',' => {}
                            b'{' => {
                                self.item_depth = 1;
                                self.item.clear();
                                // The item starts at this brace.
                                segment = index - 1;
                                continue;
                            }
                            b']' => {
                                self.envelope.push(b']');
                                self.phase = Phase::Envelope;
                            }
                            _ => return Err(not_an_object(&data[index - 1..])),
                        }
                        segment = index;
                        continue;
                    }
                    if self.in_string {
                        index = self.skip_string(data, index);
                    } else {
                        match data[index] {
                            b'"' => self.in_string = true,
                            b'{' | b'[' => self.item_depth += 1,
                            b'}' | b']' => {
                                self.item_depth -= 1;
                                if self.item_depth == 0 {
                                    index += 1;
                                    self.item.extend_from_slice(&data[segment..index]);
                                    segment = index;
                                    self.decode_item()?;
                                    continue;
                                }
                            }
                            _ => {}
                        }
                        index += 1;
                    }
                    if self.item.len() + (index - segment) > self.max_item_bytes {
                        return Err(FrameError::TooLarge {
                            limit: self.max_item_bytes,
                            seen: self.item.len() + (index - segment),
                        });
                    }
                }
            }
        }
        // Keep what this chunk left unfinished.
        match self.phase {
            Phase::Envelope => self.envelope.extend_from_slice(&data[segment..]),
            Phase::Items if self.item_depth > 0 => self.item.extend_from_slice(&data[segment..]),
            _ => {}
        }
        if self.envelope.len() > MAX_ENVELOPE_BYTES {
            return Err(FrameError::TooLarge {
                limit: MAX_ENVELOPE_BYTES,
                seen: self.envelope.len(),
            });
        }
        Ok(())
    }

    /// Moves past string bytes from `index`; returns the index after the
    /// closing quote, or the end of `data`.
    fn skip_string(&mut self, data: &[u8], mut index: usize) -> usize {
        while index < data.len() {
            if self.escaped {
                self.escaped = false;
                index += 1;
                continue;
            }
            match memchr::memchr2(b'"', b'\\', &data[index..]) {
                None => return data.len(),
                Some(offset) => {
                    let at = index + offset;
                    if data[at] == b'\\' {
                        self.escaped = true;
                        index = at + 1;
                    } else {
                        self.in_string = false;
                        return at + 1;
                    }
                }
            }
        }
        index
    }

    /// After a string closed in the envelope: was it the key `"items"` at
    /// depth 1? `pending` is this chunk's uncopied envelope bytes.
    fn check_items_key(&mut self, pending: &[u8]) {
        if self.depth != 1 {
            return;
        }
        const KEY: &[u8] = b"\"items\"";
        // The key may straddle chunks: look at the envelope's tail joined
        // with the pending bytes.
        let mut tail = Vec::with_capacity(KEY.len() + 1);
        let needed = KEY.len() + 1;
        if pending.len() < needed {
            let from_envelope = (needed - pending.len()).min(self.envelope.len());
            tail.extend_from_slice(&self.envelope[self.envelope.len() - from_envelope..]);
        }
        tail.extend_from_slice(&pending[pending.len().saturating_sub(needed)..]);
        if tail.ends_with(KEY) {
            let before = tail.len().checked_sub(KEY.len() + 1).map(|at| tail[at]);
            self.items_key = matches!(before, Some(b'{' | b',' | b' ' | b'\n' | b'\r' | b'\t'));
        }
    }

    fn decode_item(&mut self) -> Result<(), FrameError> {
        if self.skip_managed_fields
            && let Some(member) = managed_fields_member(&self.item, ObjectAt::Root)
        {
            self.item.drain(member);
        }
        let item = serde_json::from_slice::<K>(&self.item).map_err(|error| {
            FrameError::Malformed(DecodeError::from_serde("list item", &self.item, &error))
        })?;
        self.items.push(item);
        self.item.clear();
        Ok(())
    }
}

fn not_an_object(bytes: &[u8]) -> FrameError {
    let end = bytes.len().min(64);
    FrameError::NotAnObject {
        found: String::from_utf8_lossy(&bytes[..end])
            .escape_debug()
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn list_json(count: usize) -> Vec<u8> {
        let items: Vec<Value> = (0..count)
            .map(|i| {
                json!({"metadata": {"name": format!("o-{i}"), "annotations": {"tricky": "a\"]}{[\\", "items": "[{"}}, "data": {"n": i}})
            })
            .collect();
        serde_json::to_vec(&json!({
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "42", "continue": "next"},
            "items": items,
        }))
        .unwrap()
    }

    fn decode(chunks: &[&[u8]]) -> Result<ObjectList<Value>, FrameError> {
        let mut decoder = ListDecoder::<Value>::new(1 << 20);
        for chunk in chunks {
            decoder.push(chunk)?;
        }
        decoder.finish()
    }

    #[test]
    fn decodes_the_same_list_as_serde_json() {
        let body = list_json(25);
        let expected: ObjectList<Value> = serde_json::from_slice(&body).unwrap();
        let decoded = decode(&[&body]).unwrap();
        assert_eq!(decoded, expected);
        assert_eq!(decoded.items.len(), 25);
        assert_eq!(decoded.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(decoded.metadata.continue_.as_deref(), Some("next"));
    }

    #[test]
    fn items_before_metadata_and_empty_or_null_items_are_understood() {
        let body =
            br#"{"items":[{"a":1} , {"a":2}],"metadata":{"resourceVersion":"7"},"kind":"L"}"#;
        let decoded = decode(&[body]).unwrap();
        assert_eq!(decoded.items.len(), 2);
        assert_eq!(decoded.metadata.resource_version.as_deref(), Some("7"));
        let empty = decode(&[br#"{"metadata":{},"items":[]}"#]).unwrap();
        assert!(empty.items.is_empty());
        let null = decode(&[br#"{"metadata":{},"items":null}"#]).unwrap();
        assert!(null.items.is_empty());
    }

    #[test]
    fn a_nested_items_key_is_not_the_list_items() {
        let body = br#"{"metadata":{"items":[1,2]},"x":"\"items\"","items":[{"a":1}]}"#;
        let decoded = decode(&[body]).unwrap();
        assert_eq!(decoded.items, [json!({"a": 1})]);
    }

    #[test]
    fn bad_bodies_are_errors() {
        assert!(matches!(
            decode(&[b"<html>"]),
            Err(FrameError::NotAnObject { .. })
        ));
        assert!(matches!(
            decode(&[br#"{"items":[{"a":1},{"a":"#]),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            decode(&[br#"{"items":[3]}"#]),
            Err(FrameError::NotAnObject { .. })
        ));
        assert!(matches!(
            decode(&[br#"{"items":[{"a":}]}"#]),
            Err(FrameError::Malformed(_))
        ));
        let mut small = ListDecoder::<Value>::new(16);
        assert!(matches!(
            small.push(br#"{"items":[{"a":"0123456789abcdef"}]}"#),
            Err(FrameError::TooLarge { limit: 16, .. })
        ));
        assert!(matches!(
            decode(&[br#"{"items":[]} x"#]),
            Err(FrameError::NotAnObject { .. })
        ));
    }

    proptest! {
        #[test]
        fn any_split_decodes_to_the_same_list(cuts in proptest::collection::vec(0usize..4000, 0..12)) {
            let body = list_json(12);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (body.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in cuts {
                chunks.push(&body[from..cut]);
                from = cut;
            }
            chunks.push(&body[from..]);
            let expected: ObjectList<Value> = serde_json::from_slice(&body).unwrap();
            prop_assert_eq!(decode(&chunks).unwrap(), expected);
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), split in 0usize..512) {
            let split = split.min(bytes.len());
            let _ = decode(&[&bytes[..split], &bytes[split..]]);
        }
    }
}
