//! [`Ends`]: end offsets written as text, so that
//! [`CompactMeta`](crate::CompactMeta) keeps its strings and the offsets
//! that cut them apart in one allocation (one `Box<str>`) instead of two.
//!
//! Each offset takes [`WIDTH`] bytes of seven bits each, low bits first:
//! every byte is ASCII, so the offsets are valid UTF-8 and the text after
//! them starts on a character boundary. It is as dense as a `u32` array
//! and needs no `unsafe` to read back. Offsets reach 2^28 - 2 (256 MiB);
//! a larger one is written as [`MAX`], which reads back as no offset, so
//! the string it ends and every one after it read back empty rather than
//! cut short (no API server sends metadata near that size: it limits a
//! whole object to a few MiB).

/// Bytes per offset.
pub(crate) const WIDTH: usize = 4;

/// What an offset too large to write is written as; it reads back as
/// none. Every smaller offset is written as itself.
pub(crate) const MAX: u32 = (1 << (7 * WIDTH)) - 1;

/// Appends `end` to `out` as [`WIDTH`] ASCII bytes.
pub(crate) fn push(out: &mut String, end: u32) {
    let end = end.min(MAX);
    for digit in 0..WIDTH {
        let bits = (end >> (7 * digit)) & 0x7f;
        // Seven bits: always an ASCII character.
        out.push(char::from(u8::try_from(bits).unwrap_or(0)));
    }
}

/// A read-only view of offsets written by [`push`]. `Copy`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ends<'a>(&'a [u8]);

impl<'a> Ends<'a> {
    /// The offsets written in `bytes` (a trailing partial offset is
    /// ignored).
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let whole = bytes.len() - bytes.len() % WIDTH;
        Ends(bytes.get(..whole).unwrap_or_default())
    }

    /// How many offsets.
    pub(crate) fn len(self) -> usize {
        self.0.len() / WIDTH
    }

    /// Offset `index`; `None` past the end, or for an offset that was
    /// too large to write.
    pub(crate) fn get(self, index: usize) -> Option<u32> {
        let at = index.checked_mul(WIDTH)?;
        let digits = self.0.get(at..at.checked_add(WIDTH)?)?;
        let end = digits
            .iter()
            .rev()
            .fold(0, |end, &digit| (end << 7) | u32::from(digit & 0x7f));
        (end != MAX).then_some(end)
    }

    /// Offsets `start..`, empty when out of range.
    pub(crate) fn from(self, start: usize) -> Ends<'a> {
        let at = start.saturating_mul(WIDTH);
        Ends(self.0.get(at..).unwrap_or_default())
    }

    /// Offsets `..end`, all when out of range.
    pub(crate) fn to(self, end: usize) -> Ends<'a> {
        let at = end.saturating_mul(WIDTH);
        Ends(self.0.get(..at).unwrap_or(self.0))
    }

    /// Every offset, in order (those that read as none left out).
    #[cfg(test)]
    pub(crate) fn iter(self) -> impl Iterator<Item = u32> + 'a {
        (0..self.len()).filter_map(move |index| self.get(index))
    }
}

/// `ends` written as [`push`] writes them (for building views in tests).
#[cfg(test)]
pub(crate) fn encoded(ends: &[u32]) -> String {
    let mut out = String::with_capacity(ends.len() * WIDTH);
    for &end in ends {
        push(&mut out, end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_read_back_as_written_and_the_bytes_are_ascii() {
        let ends = [0, 1, 127, 128, 300, 65_535, 1 << 21, MAX - 1];
        let written = encoded(&ends);
        assert_eq!(written.len(), ends.len() * WIDTH);
        assert!(written.is_ascii());
        let view = Ends::new(written.as_bytes());
        assert_eq!(view.len(), ends.len());
        assert_eq!(view.iter().collect::<Vec<_>>(), ends);
        assert_eq!(view.get(ends.len()), None);
    }

    #[test]
    fn an_offset_too_large_to_write_reads_back_as_none() {
        let written = encoded(&[5, MAX, MAX + 1, u32::MAX]);
        let view = Ends::new(written.as_bytes());
        assert_eq!(view.len(), 4);
        assert_eq!(view.get(0), Some(5));
        assert_eq!((view.get(1), view.get(2), view.get(3)), (None, None, None));
    }

    #[test]
    fn ranges_out_of_bounds_are_empty_or_whole_not_panics() {
        let written = encoded(&[3, 5, 8]);
        let view = Ends::new(written.as_bytes());
        assert_eq!(view.from(1).iter().collect::<Vec<_>>(), [5, 8]);
        assert_eq!(view.from(9).len(), 0);
        assert_eq!(view.from(usize::MAX).len(), 0);
        assert_eq!(view.to(2).iter().collect::<Vec<_>>(), [3, 5]);
        assert_eq!(view.to(9).len(), 3);
        assert_eq!(view.get(usize::MAX), None);
        // A trailing partial offset is not read.
        assert_eq!(Ends::new(&written.as_bytes()[..6]).len(), 1);
    }
}
