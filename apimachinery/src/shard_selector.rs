//! [`ShardSelector`]: which part of a collection a list or watch asks for
//! (Kubernetes 1.36's `ListOptions.shardSelector`, KEP-5866, feature gate
//! `ShardedListAndWatch`, alpha).
//!
//! # The format
//!
//! One or more ranges joined with ` || `:
//!
//! ```text
//! shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
//! ```
//!
//! An object is in a range when the 64-bit FNV-1a hash of the field's
//! text (its `metadata.uid` or `metadata.namespace`) is at least the start
//! and below the end. The whole space is `['0x0000000000000000',
//! '0x10000000000000000')`: bounds are `0x` and 16 hex digits, the end
//! alone may be `0x10000000000000000` (2^64). kube-apiserver refuses other
//! text (`'0x0'`, which the API's own doc comment writes) with a **500**;
//! [`ShardSelectorError`] words each refusal as the server does.
//!
//! A server that applies the selector echoes it in the list's
//! `metadata.shardInfo.selector`; one that does not (the gate off, an
//! older server) ignores it and sends everything. The hash needs only the
//! metadata, so a client can apply the same selector itself
//! ([`ShardSelector::matches`]).

use std::fmt;
use std::str::FromStr;

/// The field an object's shard is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShardField {
    /// `object.metadata.uid`: spreads objects evenly; an object keeps its
    /// shard for its life.
    Uid,
    /// `object.metadata.namespace`: keeps a namespace's objects together.
    Namespace,
}

impl ShardField {
    /// The field path as the selector writes it.
    pub fn path(self) -> &'static str {
        match self {
            ShardField::Uid => "object.metadata.uid",
            ShardField::Namespace => "object.metadata.namespace",
        }
    }
}

/// The end of the whole hash space, 2^64, as an exclusive bound.
pub const HASH_SPACE_END: u128 = 1 << 64;

/// One `shardRange(field, start, end)`: hashes in `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShardRange {
    /// What is hashed.
    pub field: ShardField,
    /// The first hash in the range.
    pub start: u64,
    /// The first hash after it; at most [`HASH_SPACE_END`].
    pub end: u128,
}

impl ShardRange {
    /// Whether `hash` is in the range.
    pub fn contains(&self, hash: u64) -> bool {
        hash >= self.start && u128::from(hash) < self.end
    }
}

/// A shard selector: the objects in any of its ranges.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardSelector {
    ranges: Vec<ShardRange>,
}

/// Why a shard selector was refused, in kube-apiserver's words (its
/// answer is a 500 Status with `invalid shard selector: ` and this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardSelectorError {
    /// Not a `shardRange(…)` call, or nothing at all.
    #[error("expected shardRange(<field>, '<hexStart>', '<hexEnd>') joined by ||, got {0:?}")]
    Syntax(String),
    /// A field other than the uid or the namespace.
    #[error(
        "unsupported field path {0:?}; supported: object.metadata.uid, object.metadata.namespace"
    )]
    Field(String),
    /// A bound not written as `0x` and 16 hex digits.
    #[error("{which} must be a 0x-prefixed 16-digit hex value, got {text:?}{}", suggestion(.text))]
    Bound {
        /// `hexStart` or `hexEnd`.
        which: &'static str,
        /// The bound as written.
        text: String,
    },
    /// A range whose start is not below its end.
    #[error("hexStart {start:?} must be less than hexEnd {end:?}")]
    Empty {
        /// The start as written.
        start: String,
        /// The end as written.
        end: String,
    },
}

/// kube-apiserver's hint for a short bound: the same value with 16 digits.
fn suggestion(text: &str) -> String {
    let digits = text.strip_prefix("0x").unwrap_or_default();
    if digits.is_empty() || digits.len() >= 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return String::new();
    }
    format!(" (did you mean \"0x{digits:0>16}\"?)")
}

/// The 64-bit FNV-1a hash of `bytes`, the hash shard selectors use.
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

impl ShardSelector {
    /// A selector of the given ranges (none selects nothing).
    pub fn new(ranges: Vec<ShardRange>) -> Self {
        ShardSelector { ranges }
    }

    /// The ranges.
    pub fn ranges(&self) -> &[ShardRange] {
        &self.ranges
    }

    /// Shard `index` of `count` equal shards of the hash space over
    /// `field` (the last one ends at 2^64). `None` when `count` is 0 or
    /// `index` is not below it.
    pub fn shard(field: ShardField, index: u32, count: u32) -> Option<ShardSelector> {
        if index >= count {
            return None;
        }
        let bound = |i: u32| HASH_SPACE_END * u128::from(i) / u128::from(count);
        let start = u64::try_from(bound(index)).ok()?;
        Some(ShardSelector::new(vec![ShardRange {
            field,
            start,
            end: bound(index + 1),
        }]))
    }

    /// The union of several selectors' ranges, adjacent ranges of one
    /// field merged (shards 2 and 3 of 16 become one range).
    pub fn union<'a>(selectors: impl IntoIterator<Item = &'a ShardSelector>) -> ShardSelector {
        let mut ranges: Vec<ShardRange> = selectors
            .into_iter()
            .flat_map(|selector| selector.ranges.iter().copied())
            .collect();
        ranges.sort_by_key(|range| (range.field == ShardField::Namespace, range.start));
        let mut merged: Vec<ShardRange> = Vec::with_capacity(ranges.len());
        for range in ranges {
            match merged.last_mut() {
                Some(last) if last.field == range.field && last.end >= u128::from(range.start) => {
                    last.end = last.end.max(range.end);
                }
                _ => merged.push(range),
            }
        }
        ShardSelector::new(merged)
    }

    /// Whether an object with this uid and namespace is selected; a field
    /// the object lacks hashes as the empty text, as the server reads it.
    pub fn matches(&self, uid: Option<&str>, namespace: Option<&str>) -> bool {
        let mut hashes = [None, None];
        self.ranges.iter().any(|range| {
            let (slot, text) = match range.field {
                ShardField::Uid => (0, uid),
                ShardField::Namespace => (1, namespace),
            };
            let hash =
                *hashes[slot].get_or_insert_with(|| fnv1a_64(text.unwrap_or_default().as_bytes()));
            range.contains(hash)
        })
    }
}

impl fmt::Display for ShardRange {
    /// Always 16-digit bounds (the end of the space as
    /// `0x10000000000000000`), the only form the server takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shardRange({}, '0x{:016x}', '0x{:016x}')",
            self.field.path(),
            self.start,
            self.end
        )
    }
}

impl fmt::Display for ShardSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, range) in self.ranges.iter().enumerate() {
            if index > 0 {
                f.write_str(" || ")?;
            }
            write!(f, "{range}")?;
        }
        Ok(())
    }
}

impl FromStr for ShardSelector {
    type Err = ShardSelectorError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let ranges = text
            .split("||")
            .map(parse_range)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ShardSelector::new(ranges))
    }
}

fn parse_range(text: &str) -> Result<ShardRange, ShardSelectorError> {
    let syntax = || ShardSelectorError::Syntax(text.trim().to_string());
    let arguments = text
        .trim()
        .strip_prefix("shardRange")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix('('))
        .and_then(|rest| rest.strip_suffix(')'))
        .ok_or_else(syntax)?;
    let parts: Vec<&str> = arguments.split(',').map(str::trim).collect();
    let [field, start, end] = parts.as_slice() else {
        return Err(syntax());
    };
    let field = match *field {
        "object.metadata.uid" => ShardField::Uid,
        "object.metadata.namespace" => ShardField::Namespace,
        other => return Err(ShardSelectorError::Field(other.to_string())),
    };
    let quoted = |text: &str| {
        text.strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_string)
            .ok_or_else(syntax)
    };
    let (start_text, end_text) = (quoted(start)?, quoted(end)?);
    // A start is at most 16 digits, so it fits.
    let start = u64::try_from(parse_bound(&start_text, "hexStart", false)?).map_err(|_| {
        ShardSelectorError::Bound {
            which: "hexStart",
            text: start_text.clone(),
        }
    })?;
    let end = parse_bound(&end_text, "hexEnd", true)?;
    if u128::from(start) >= end {
        return Err(ShardSelectorError::Empty {
            start: start_text,
            end: end_text,
        });
    }
    Ok(ShardRange { field, start, end })
}

/// `0x` and 16 hex digits; the end may also be 2^64 (`0x1` and 16 zeros).
fn parse_bound(text: &str, which: &'static str, end: bool) -> Result<u128, ShardSelectorError> {
    let wrong = || ShardSelectorError::Bound {
        which,
        text: text.to_string(),
    };
    if end && text == "0x10000000000000000" {
        return Ok(HASH_SPACE_END);
    }
    let digits = text.strip_prefix("0x").ok_or_else(wrong)?;
    if digits.len() != 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(wrong());
    }
    u64::from_str_radix(digits, 16)
        .map(u128::from)
        .map_err(|_| wrong())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const SHARD_1: &str =
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

    #[test]
    fn fnv1a_as_the_recorded_server_hashed_uids() {
        // From ../shared/fixtures/real-apiserver-1.36 (list-pods-shard*).
        assert_eq!(
            fnv1a_64(b"9e65bf5d-98c1-4959-9c17-43658ca9e584"),
            0xc4bf_151a_702e_3698
        );
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn selectors_print_as_they_parse() {
        let table = [
            SHARD_1,
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
            "shardRange(object.metadata.namespace, '0x00000000000000ff', '0x0000000000000100')",
        ];
        for text in table {
            assert_eq!(text.parse::<ShardSelector>().unwrap().to_string(), text);
        }
        // Spacing is not significant.
        let tight = "shardRange(object.metadata.uid,'0x8000000000000000','0x10000000000000000')";
        assert_eq!(tight.parse::<ShardSelector>().unwrap().to_string(), SHARD_1);
    }

    #[test]
    fn refusals_in_the_servers_words() {
        let table = [
            (
                "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
                "hexStart must be a 0x-prefixed 16-digit hex value, got \"0x0\" (did you mean \"0x0000000000000000\"?)",
            ),
            (
                "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
                "unsupported field path \"object.metadata.name\"; supported: object.metadata.uid, object.metadata.namespace",
            ),
            (
                "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
                "hexStart \"0x8000000000000000\" must be less than hexEnd \"0x8000000000000000\"",
            ),
            (
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')",
                "hexEnd must be a 0x-prefixed 16-digit hex value, got \"0x20000000000000000\"",
            ),
        ];
        for (text, message) in table {
            assert_eq!(
                text.parse::<ShardSelector>().unwrap_err().to_string(),
                message,
                "{text}"
            );
        }
        for text in [
            "",
            "shardRange(object.metadata.uid)",
            "uid in (a)",
            "shardRange(object.metadata.uid, 0x0000000000000000, '0x10000000000000000')",
        ] {
            assert!(
                matches!(
                    text.parse::<ShardSelector>(),
                    Err(ShardSelectorError::Syntax(_))
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn equal_shards_cover_the_space_once() {
        for count in [1, 2, 3, 4, 16, 32] {
            let shards: Vec<ShardSelector> = (0..count)
                .map(|i| ShardSelector::shard(ShardField::Uid, i, count).unwrap())
                .collect();
            assert_eq!(shards[0].ranges()[0].start, 0);
            assert_eq!(shards.last().unwrap().ranges()[0].end, HASH_SPACE_END);
            for pair in shards.windows(2) {
                assert_eq!(
                    u128::from(pair[1].ranges()[0].start),
                    pair[0].ranges()[0].end
                );
            }
            // Each prints in the one form the server takes and reads back.
            for shard in &shards {
                assert_eq!(shard.to_string().parse::<ShardSelector>().unwrap(), *shard);
            }
            for uid in ["a", "9e65bf5d-98c1-4959-9c17-43658ca9e584", ""] {
                let holders = shards.iter().filter(|s| s.matches(Some(uid), None)).count();
                assert_eq!(holders, 1, "{uid} in {count} shards");
            }
        }
        assert!(ShardSelector::shard(ShardField::Uid, 4, 4).is_none());
        assert!(ShardSelector::shard(ShardField::Uid, 0, 0).is_none());
    }

    #[test]
    fn unions_merge_adjacent_ranges() {
        let shard = |i| ShardSelector::shard(ShardField::Uid, i, 16).unwrap();
        let union = ShardSelector::union([&shard(3), &shard(2), &shard(7)]);
        assert_eq!(union.ranges().len(), 2);
        assert_eq!(union.ranges()[0].start, shard(2).ranges()[0].start);
        assert_eq!(union.ranges()[0].end, shard(3).ranges()[0].end);
        let all: Vec<ShardSelector> = (0..16).map(shard).collect();
        let whole = ShardSelector::union(&all);
        assert_eq!(
            whole.to_string(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
        );
    }

    #[test]
    fn the_recorded_shard_one_holds_the_recorded_pods() {
        let shard: ShardSelector = SHARD_1.parse().unwrap();
        // p-2 was in shard 1, p-1 in shard 0.
        assert!(shard.matches(Some("9e65bf5d-98c1-4959-9c17-43658ca9e584"), Some("shards")));
        assert!(!shard.matches(Some("46ec7526-62a1-467a-a324-a9c6dbd1c61f"), Some("shards")));
        // A namespace shard hashes the namespace, not the uid.
        let by_namespace: ShardSelector =
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
                .parse()
                .unwrap();
        let low = fnv1a_64(b"shards") < 0x8000_0000_0000_0000;
        assert_eq!(
            by_namespace.matches(Some("46ec7526-62a1-467a-a324-a9c6dbd1c61f"), Some("shards")),
            low
        );
        assert_eq!(
            by_namespace.matches(Some("9e65bf5d-98c1-4959-9c17-43658ca9e584"), Some("shards")),
            low
        );
    }
}
