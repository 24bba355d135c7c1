//! What a warm restart is configured with and reports: [`SnapshotOptions`],
//! the [`EntryTypes`] it names, and [`SnapshotStats`].

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where and how often an informer saves its cache.
///
/// | setting | default |
/// |---|---|
/// | `dir` | (required) |
/// | `interval` | 60 s, and once more when the informer stops |
/// | `settle` | 100 ms ([`ReflectorOptions::resume_settle`](clientgo_reflector::ReflectorOptions::resume_settle)) |
/// | `transform_id` | "" |
/// | `entry_types` | none: informers in compact storage save, others do not |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// The directory the informer's snapshot file is kept in (created if
    /// missing). One file per informer, named after it.
    pub dir: PathBuf,
    /// How often the cache is saved while the informer runs (zero: only
    /// when it stops).
    pub interval: Duration,
    /// On resume, how long the watch must be quiet for its replay to count
    /// as consumed (the reflector's
    /// [`resume_settle`](clientgo_reflector::ReflectorOptions::resume_settle),
    /// which also says when it ends on a cluster that is never quiet).
    pub settle: Duration,
    /// Names the informer's transform. A transform changes what is cached,
    /// so a snapshot written under another transform is refused: change
    /// this whenever the transform changes what it keeps.
    pub transform_id: String,
    /// Types that informers keep themselves and that save all the same
    /// (see [`entry_type`](Self::entry_type)).
    pub entry_types: EntryTypes,
}

impl SnapshotOptions {
    /// Snapshots in `dir`, with the defaults above.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SnapshotOptions {
            dir: dir.into(),
            interval: Duration::from_secs(60),
            settle: clientgo_reflector::DEFAULT_RESUME_SETTLE,
            transform_id: String::new(),
            entry_types: EntryTypes::default(),
        }
    }

    /// Saves every `interval` (zero: only when the informer stops).
    #[must_use]
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Sets the resume's settle time.
    #[must_use]
    pub fn settle(mut self, settle: Duration) -> Self {
        self.settle = settle;
        self
    }

    /// Names the transform (see the field).
    #[must_use]
    pub fn transform_id(mut self, transform_id: impl Into<String>) -> Self {
        self.transform_id = transform_id.into();
        self
    }
}

/// Counters of an informer's snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnapshotStats {
    /// Snapshots found valid at start and handed to the reflector.
    pub loaded: u64,
    /// Snapshots found at start and refused (damaged, another format,
    /// source, type or transform).
    pub rejected: u64,
    /// Snapshots written.
    pub written: u64,
    /// Writes that failed (the previous snapshot stays in place).
    pub write_errors: u64,
    /// Bytes of the last snapshot written.
    pub last_bytes: u64,
    /// Microseconds the last write took (reading the cache included).
    pub last_write_micros: u64,
}

/// The entry types named with [`SnapshotOptions::entry_type`]; opaque,
/// printed as their names.
#[derive(Clone, Default)]
pub struct EntryTypes {
    makers: Arc<BTreeMap<TypeId, Maker>>,
}

/// One named type's maker of snapshot sources, type-erased, and its name.
#[derive(Clone)]
struct Maker {
    name: &'static str,
    make: Arc<dyn Any + Send + Sync>,
}

impl EntryTypes {
    /// Adds the type `id`, named `name`, with its type-erased maker.
    pub(crate) fn insert(
        &mut self,
        id: TypeId,
        name: &'static str,
        make: Arc<dyn Any + Send + Sync>,
    ) {
        Arc::make_mut(&mut self.makers).insert(id, Maker { name, make });
    }

    /// The maker of the type `id`, when it was added.
    pub(crate) fn get(&self, id: TypeId) -> Option<&(dyn Any + Send + Sync)> {
        self.makers.get(&id).map(|maker| maker.make.as_ref())
    }
}

impl fmt::Debug for EntryTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.makers.values().map(|maker| maker.name))
            .finish()
    }
}

impl PartialEq for EntryTypes {
    fn eq(&self, other: &Self) -> bool {
        self.makers.keys().eq(other.makers.keys())
    }
}

impl Eq for EntryTypes {}
