//! Three replicas of a sharded controller in one process over the test
//! server: the shards spread evenly, a killed replica's shards are taken
//! over once their leases expire, a new replica gets its share from the
//! others, and throughout no shard is worked on by two replicas at once
//! (sampled every 10 ms) while every object ends up reconciled by its
//! shard's current owner.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clientgo_apimachinery::{GroupResource, ListOptions};
use clientgo_leaderelection::{LeaderElectionConfig, Shard, ShardElector, ShardElectorOptions};
use clientgo_rest::{Config, ResourceClient, RestClient};
use clientgo_testing::TestApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const SHARDS: u32 = 16;
const OBJECTS: usize = 600;

/// What every replica's shard work reports.
#[derive(Default)]
struct World {
    /// Which replica works on each shard now.
    working: Mutex<HashMap<u32, String>>,
    /// Two replicas found working on one shard.
    overlaps: AtomicU64,
    /// The last replica that reconciled each object, by key.
    reconciled: Mutex<BTreeMap<String, (String, u32)>>,
}

/// The shard work of replica `me`: lists its shard's config maps (the
/// server filters: the gate is on) and "reconciles" each, every 100 ms,
/// until told to stop.
async fn work(
    world: Arc<World>,
    client: RestClient,
    me: String,
    shard: Shard,
    stop: CancellationToken,
) {
    if let Some(other) = world.working.lock().insert(shard.index, me.clone()) {
        world.overlaps.fetch_add(1, Ordering::SeqCst);
        panic!("shard {} worked on by {other} and {me}", shard.index);
    }
    let maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
    loop {
        let options = ListOptions {
            shard_selector: Some(shard.selector.to_string()),
            ..ListOptions::default()
        };
        if let Ok(list) = maps.list(&options).await {
            let mut reconciled = world.reconciled.lock();
            for map in list.items {
                let key = map.metadata.name.unwrap_or_default();
                reconciled.insert(key, (me.clone(), shard.index));
            }
        }
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
    world.working.lock().remove(&shard.index);
}

fn replica(server: &TestApiServer, world: &Arc<World>, me: &str) -> ShardElector {
    let client = RestClient::new(Config::new(server.url())).unwrap();
    let election = LeaderElectionConfig::default()
        .lease_duration(Duration::from_millis(4000))
        .renew_deadline(Duration::from_millis(3000))
        .retry_period(Duration::from_millis(200));
    let config = ShardElectorOptions::new("default", "sharded")
        .shards(SHARDS)
        .election(election);
    let (world, work_client, name) = (Arc::clone(world), client.clone(), me.to_string());
    ShardElector::start(client, me, config, move |shard, stop| {
        work(
            Arc::clone(&world),
            work_client.clone(),
            name.clone(),
            shard,
            stop,
        )
    })
    .unwrap()
}

/// Waits until `condition` holds of the replicas' held shards, checking
/// every 10 ms that no shard is held by two of them.
async fn until(
    replicas: &BTreeMap<&str, ShardElector>,
    what: &str,
    condition: impl Fn(&BTreeMap<&str, Vec<u32>>) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let held: BTreeMap<&str, Vec<u32>> =
            replicas.iter().map(|(name, r)| (*name, r.held())).collect();
        let mut seen = HashMap::new();
        for (name, shards) in &held {
            for shard in shards {
                if let Some(other) = seen.insert(*shard, *name) {
                    panic!("shard {shard} held by {other} and {name} at once: {held:?}");
                }
            }
        }
        if condition(&held) {
            return;
        }
        assert!(Instant::now() < deadline, "{what} did not happen: {held:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn total(held: &BTreeMap<&str, Vec<u32>>) -> usize {
    held.values().map(Vec::len).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_take_over_and_hand_over_shards() {
    let server = TestApiServer::builder()
        .sharded_list_and_watch(true)
        .start()
        .await
        .unwrap();
    for index in 0..OBJECTS {
        server
            .storage()
            .create(
                &GroupResource::new("", "configmaps"),
                "default",
                json!({"metadata": {"name": format!("cm-{index:04}")}}),
            )
            .unwrap();
    }
    let world = Arc::new(World::default());
    let mut replicas: BTreeMap<&str, ShardElector> = ["a", "b", "c"]
        .into_iter()
        .map(|name| (name, replica(&server, &world, name)))
        .collect();
    until(&replicas, "three replicas share the shards", |held| {
        total(held) == SHARDS as usize
            && held.values().all(|shards| (5..=6).contains(&shards.len()))
    })
    .await;

    // c dies without releasing: a and b take its shards once the leases
    // (and c's membership) expire.
    let dead = replicas.remove("c").unwrap();
    let orphaned = dead.held();
    dead.abandon();
    // Its work stopped with it (the process is gone).
    world
        .working
        .lock()
        .retain(|shard, _| !orphaned.contains(shard));
    let killed = Instant::now();
    until(&replicas, "a and b take c's shards", |held| {
        total(held) == SHARDS as usize && held.values().all(|shards| shards.len() == 8)
    })
    .await;
    assert!(
        killed.elapsed() >= Duration::from_millis(3500),
        "taken before the leases expired"
    );

    // d joins: a and b release their excess to it.
    replicas.insert("d", replica(&server, &world, "d"));
    until(&replicas, "d gets its share", |held| {
        // 16 over 3: 6, 5 and 5.
        total(held) == SHARDS as usize
            && held.values().all(|shards| (5..=6).contains(&shards.len()))
    })
    .await;

    // Every object is reconciled by its shard's current owner.
    let settled = Instant::now() + Duration::from_secs(20);
    loop {
        let owners: HashMap<u32, String> = replicas
            .iter()
            .flat_map(|(name, replica)| {
                replica
                    .held()
                    .into_iter()
                    .map(move |shard| (shard, name.to_string()))
            })
            .collect();
        let reconciled = world.reconciled.lock().clone();
        let done = reconciled.len() == OBJECTS
            && reconciled
                .values()
                .all(|(who, shard)| owners.get(shard) == Some(who));
        if done {
            break;
        }
        assert!(
            Instant::now() < settled,
            "objects left unreconciled or with a former owner"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);

    // Stopping releases at once: the last replica standing takes all.
    let leaving: Vec<&str> = vec!["a", "b"];
    for name in leaving {
        replicas.remove(name).unwrap().stop().await;
    }
    let quick = Instant::now();
    until(&replicas, "d takes every shard", |held| {
        held["d"].len() == SHARDS as usize
    })
    .await;
    assert!(
        quick.elapsed() < Duration::from_millis(3500),
        "released shards waited for expiry"
    );
    for (_, replica) in replicas {
        replica.stop().await;
    }
}
