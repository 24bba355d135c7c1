//! [`ChurnWriter`]: a background writer that creates, updates and deletes
//! objects of one resource at a steady rate, as a busy cluster does.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clientgo_apimachinery::GroupResource;
use serde_json::Value;

use crate::store::storage::{Preconditions, ReadAt, Storage};
use crate::util::seeded_random::SeededRandom;

/// Makes the object number `index` in `namespace` (for example
/// [`realistic_pod`](crate::realistic_pod)).
pub type ObjectGenerator = fn(index: usize, namespace: &str) -> Value;

/// What a [`ChurnWriter`] does.
#[derive(Debug, Clone)]
pub struct ChurnOptions {
    /// Writes per second.
    pub rate: f64,
    /// New objects go to `namespace-0` … `namespace-<n-1>`.
    pub namespaces: usize,
    /// The index of the first object created (past the seeded ones, so
    /// names do not collide).
    pub first_index: usize,
    /// Percent of writes that create an object.
    pub create_percent: u64,
    /// Percent of writes that delete one.
    pub delete_percent: u64,
    /// Seed of the writer's random choices; the same seed over the same
    /// objects makes the same writes.
    pub seed: u64,
}

impl Default for ChurnOptions {
    /// 10 writes per second over 10 namespaces: 15% creates, 15% deletes,
    /// the rest updates.
    fn default() -> Self {
        ChurnOptions {
            rate: 10.0,
            namespaces: 10,
            first_index: 0,
            create_percent: 15,
            delete_percent: 15,
            seed: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

impl ChurnOptions {
    /// Sets the writes per second.
    #[must_use]
    pub fn rate(mut self, rate: f64) -> Self {
        self.rate = rate;
        self
    }

    /// Sets the number of namespaces.
    #[must_use]
    pub fn namespaces(mut self, namespaces: usize) -> Self {
        self.namespaces = namespaces.max(1);
        self
    }

    /// Sets the index of the first object created.
    #[must_use]
    pub fn first_index(mut self, index: usize) -> Self {
        self.first_index = index;
        self
    }
}

/// How many writes of each kind a [`ChurnWriter`] made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChurnCounts {
    /// Objects created.
    pub creates: u64,
    /// Objects updated (an annotation changed).
    pub updates: u64,
    /// Objects deleted.
    pub deletes: u64,
}

impl ChurnCounts {
    /// All writes.
    pub fn total(&self) -> u64 {
        self.creates + self.updates + self.deletes
    }
}

#[derive(Debug, Default)]
struct Counters {
    creates: AtomicU64,
    updates: AtomicU64,
    deletes: AtomicU64,
}

/// A task writing to [`Storage`] directly (as other clients of a cluster
/// would), until [`stop`](Self::stop)ped or dropped.
///
/// Each tick picks, at random: create a new object (or when none is
/// left), delete a random one, or update a random one's
/// `churn.clientgo.dev/write` annotation. Needs a tokio runtime.
#[derive(Debug)]
pub struct ChurnWriter {
    task: tokio::task::JoinHandle<()>,
    counters: Arc<Counters>,
}

impl ChurnWriter {
    /// Starts writing objects of `resource` made by `generator`. A rate
    /// that is not a positive number writes nothing.
    pub fn start(
        storage: Arc<Storage>,
        resource: GroupResource,
        generator: ObjectGenerator,
        options: ChurnOptions,
    ) -> ChurnWriter {
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(write(
            storage,
            resource,
            generator,
            options,
            Arc::clone(&counters),
        ));
        ChurnWriter { task, counters }
    }

    /// The writes so far.
    pub fn counts(&self) -> ChurnCounts {
        ChurnCounts {
            creates: self.counters.creates.load(Ordering::Relaxed),
            updates: self.counters.updates.load(Ordering::Relaxed),
            deletes: self.counters.deletes.load(Ordering::Relaxed),
        }
    }

    /// Stops writing (no write is in progress once this returns) and
    /// returns the writes made.
    pub async fn stop(mut self) -> ChurnCounts {
        self.task.abort();
        let _ = (&mut self.task).await;
        self.counts()
    }
}

impl Drop for ChurnWriter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn write(
    storage: Arc<Storage>,
    resource: GroupResource,
    generator: ObjectGenerator,
    options: ChurnOptions,
    counters: Arc<Counters>,
) {
    let Ok(period) = Duration::try_from_secs_f64(1.0 / options.rate) else {
        return;
    };
    let mut ticker = tokio::time::interval(period);
    let mut random = SeededRandom::new(options.seed);
    let mut next_index = options.first_index;
    let mut writes: u64 = 0;
    loop {
        ticker.tick().await;
        writes += 1;
        let roll = random.next_u64() % 100;
        let Ok((objects, _)) = storage.list(&resource, None, ReadAt::Latest) else {
            continue;
        };
        if roll < options.create_percent || objects.is_empty() {
            let namespace = format!("namespace-{}", next_index % options.namespaces.max(1));
            if storage
                .create(&resource, &namespace, generator(next_index, &namespace))
                .is_ok()
            {
                counters.creates.fetch_add(1, Ordering::Relaxed);
            }
            next_index += 1;
            continue;
        }
        let target = &objects[(random.next_u64() as usize) % objects.len()];
        if roll < options.create_percent + options.delete_percent {
            if storage
                .delete(&target.key, &Preconditions::default())
                .is_ok()
            {
                counters.deletes.fetch_add(1, Ordering::Relaxed);
            }
        } else if let Ok(mut object) = target.to_value() {
            object["metadata"]["annotations"]["churn.clientgo.dev/write"] =
                Value::String(writes.to_string());
            if storage.update(&target.key, object, false).is_ok() {
                counters.updates.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::realistic::realistic_pod;

    #[tokio::test(start_paused = true)]
    async fn writes_at_the_rate_with_every_kind_of_write() {
        let storage = Arc::new(Storage::default());
        let pods = GroupResource::new("", "pods");
        let writer = ChurnWriter::start(
            Arc::clone(&storage),
            pods.clone(),
            realistic_pod,
            ChurnOptions::default().rate(100.0).namespaces(3),
        );
        tokio::time::sleep(Duration::from_millis(2_005)).await;
        let counts = writer.stop().await;
        assert!((195..=202).contains(&counts.total()), "{counts:?}");
        assert!(counts.creates > 0 && counts.updates > 0 && counts.deletes > 0);
        let (objects, _) = storage.list(&pods, None, ReadAt::Latest).unwrap();
        assert_eq!(objects.len() as u64, counts.creates - counts.deletes);
    }
}
