//! [`Embedded`]: the clientgo-testing API server run inside the example,
//! seeded with realistic objects and kept busy by background writers and
//! an occasional dropped watch, so an example shows a live cluster's
//! behaviour with no cluster at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clientgo::apimachinery::GroupResource;
use clientgo::testing::{
    ChurnCounts, ChurnOptions, ChurnWriter, ObjectGenerator, TestApiServer, realistic_deployment,
    realistic_pod,
};

/// One resource to seed and churn.
#[derive(Debug, Clone)]
pub struct SeededResource {
    /// The resource.
    pub resource: GroupResource,
    /// Makes its objects.
    pub generator: ObjectGenerator,
    /// Objects created at start.
    pub count: usize,
    /// Background writes per second.
    pub churn_rate: f64,
}

impl SeededResource {
    /// Realistic pods (about 5 KB each).
    pub fn pods(count: usize, churn_rate: f64) -> Self {
        SeededResource {
            resource: GroupResource::new("", "pods"),
            generator: realistic_pod,
            count,
            churn_rate,
        }
    }

    /// Realistic deployments (about 2 KB each).
    pub fn deployments(count: usize, churn_rate: f64) -> Self {
        SeededResource {
            resource: GroupResource::new("apps", "deployments"),
            generator: realistic_deployment,
            count,
            churn_rate,
        }
    }
}

/// What the embedded server holds and how busy it is.
#[derive(Debug, Clone, Default)]
pub struct EmbeddedOptions {
    /// The resources seeded and churned.
    pub resources: Vec<SeededResource>,
    /// Namespaces the objects are spread over (`namespace-0` …); object
    /// 0, 10, 20 … go to `default` as well, so `default` is never empty.
    pub namespaces: usize,
    /// Drop every open watch this often (`None`: never).
    pub drop_watches_every: Option<Duration>,
    /// Turn on the server's `ShardedListAndWatch` gate (shard selectors
    /// applied).
    pub sharded_list_and_watch: bool,
}

impl EmbeddedOptions {
    /// Seeds and churns `resource` too.
    #[must_use]
    pub fn with(mut self, resource: SeededResource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Turns on the server's `ShardedListAndWatch` gate.
    #[must_use]
    pub fn sharded_list_and_watch(mut self, on: bool) -> Self {
        self.sharded_list_and_watch = on;
        self
    }

    /// Drops every watch every `period`.
    #[must_use]
    pub fn drop_watches_every(mut self, period: Duration) -> Self {
        self.drop_watches_every = Some(period);
        self
    }
}

/// The running embedded server and its writers.
#[derive(Debug)]
pub struct Embedded {
    server: Arc<TestApiServer>,
    writers: Vec<ChurnWriter>,
    dropper: Option<tokio::task::JoinHandle<()>>,
    watch_drops: Arc<AtomicU64>,
    description: String,
}

impl Embedded {
    /// Starts the server, seeds it, and starts the writers.
    pub async fn start(options: EmbeddedOptions) -> Result<Embedded, String> {
        let server = TestApiServer::builder()
            .sharded_list_and_watch(options.sharded_list_and_watch)
            .start()
            .await
            .map_err(|error| format!("cannot start the embedded API server: {error}"))?;
        let server = Arc::new(server);
        let namespaces = options.namespaces.max(1);
        let mut seeded = Vec::new();
        for seed in &options.resources {
            for index in 0..seed.count {
                let namespace = if index % 10 == 0 {
                    "default".to_string()
                } else {
                    format!("namespace-{}", index % namespaces)
                };
                server
                    .storage()
                    .create(
                        &seed.resource,
                        &namespace,
                        (seed.generator)(index, &namespace),
                    )
                    .map_err(|error| format!("cannot seed {}: {error}", seed.resource.resource))?;
            }
            seeded.push(format!(
                "{} {}, {} writes/s",
                seed.count, seed.resource.resource, seed.churn_rate
            ));
        }
        let writers = options
            .resources
            .iter()
            .filter(|seed| seed.churn_rate > 0.0)
            .map(|seed| {
                ChurnWriter::start(
                    Arc::clone(server.storage()),
                    seed.resource.clone(),
                    seed.generator,
                    ChurnOptions::default()
                        .rate(seed.churn_rate)
                        .namespaces(namespaces)
                        .first_index(seed.count),
                )
            })
            .collect();
        let watch_drops = Arc::new(AtomicU64::new(0));
        let dropper = options.drop_watches_every.map(|period| {
            let server = Arc::clone(&server);
            let drops = Arc::clone(&watch_drops);
            tokio::spawn(async move {
                let mut ticker =
                    tokio::time::interval_at(tokio::time::Instant::now() + period, period);
                loop {
                    ticker.tick().await;
                    server.faults().drop_watches();
                    drops.fetch_add(1, Ordering::Relaxed);
                }
            })
        });
        let mut description = if seeded.is_empty() {
            "empty".to_string()
        } else {
            seeded.join("; ")
        };
        if let Some(period) = options.drop_watches_every {
            description.push_str(&format!(
                "; every watch dropped every {} s",
                period.as_secs_f64()
            ));
        }
        Ok(Embedded {
            server,
            writers,
            dropper,
            watch_drops,
            description,
        })
    }

    /// The server's URL.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// What was seeded and how busy the server is, in words.
    pub fn describe(&self) -> &str {
        &self.description
    }

    /// The server itself (its storage is the truth a cache is checked
    /// against), shared with tasks that act on it.
    pub fn server(&self) -> &Arc<TestApiServer> {
        &self.server
    }

    /// Watches dropped so far.
    pub fn watch_drops(&self) -> u64 {
        self.watch_drops.load(Ordering::Relaxed)
    }

    /// Stops the writers and the watch drops; returns the writes made.
    pub async fn quiesce(&mut self) -> ChurnCounts {
        if let Some(dropper) = self.dropper.take() {
            dropper.abort();
        }
        let mut total = ChurnCounts::default();
        for writer in self.writers.drain(..) {
            total = add_counts(total, writer.stop().await);
        }
        total
    }
}

fn add_counts(a: ChurnCounts, b: ChurnCounts) -> ChurnCounts {
    ChurnCounts {
        creates: a.creates + b.creates,
        updates: a.updates + b.updates,
        deletes: a.deletes + b.deletes,
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        if let Some(dropper) = self.dropper.take() {
            dropper.abort();
        }
    }
}
