//! [`RecordCodec`]: how objects of a type are written into a cache
//! snapshot and read back (warm restart).

/// The functions that save an object as a self-contained record and read
/// it back, with the name of the record format (a snapshot written in
/// another format is refused). A type that can be saved returns one from
/// [`Object::record_codec`](crate::Object::record_codec):
/// [`Compact`](crate::Compact) entries, whose records are their metadata
/// and JSON as kept, so saving and loading decode nothing.
pub struct RecordCodec<K> {
    /// Names the record format.
    pub format: &'static str,
    /// Appends the object's record to the buffer.
    pub write: fn(&K, &mut Vec<u8>) -> Result<(), String>,
    /// Reads an object back from its record; an error (never a panic) for
    /// anything that is not such a record.
    pub read: fn(&[u8]) -> Result<K, String>,
}

impl<K> Clone for RecordCodec<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for RecordCodec<K> {}

impl<K> std::fmt::Debug for RecordCodec<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordCodec")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}
