//! [`RecordCodec`]: how objects of a type are written into a cache
//! snapshot and read back (warm restart).

/// Writes an object as a self-contained record and reads it back, for a
/// snapshot of a cache (clientgo-informers' warm restart). A type that can
/// be saved implements it: [`Compact`](crate::Compact) entries, whose
/// records are their metadata and body as kept, so saving and loading
/// decode nothing. It is its own trait, not part of
/// [`Object`](crate::Object): only snapshots need it.
pub trait RecordCodec: Sized {
    /// Names the record format (a snapshot records it, and one in another
    /// format is refused).
    const RECORD_FORMAT: &'static str;

    /// Why a record could not be written or read.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Appends the object's record to `out`.
    fn write_record(&self, out: &mut Vec<u8>) -> Result<(), Self::Error>;

    /// Reads an object back from a record [`write_record`](Self::write_record)
    /// wrote; an error (never a panic) for anything that is not such a
    /// record.
    fn read_record(record: &[u8]) -> Result<Self, Self::Error>;
}
