//! `warm-restart`: an informer that saves its cache and, when the process
//! starts again, resumes from it with a watch instead of listing every
//! object (ours; client-go has no such feature). The example runs the
//! same factory twice over one snapshot directory: the first run lists
//! and saves, the second loads the snapshot and only watches from its
//! resourceVersion.

use std::time::Duration;

use clientgo::informers::{InformerFactoryOptions, SharedInformerFactory, SnapshotOptions};
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, SeededResource, run_main, say,
};

/// Syncs a pod informer, stops it, and starts it again from its snapshot.
#[derive(Debug, clap::Parser)]
#[command(name = "warm-restart", version)]
struct Flags {
    /// Where snapshots go (default: a new directory under the system's
    /// temporary directory)
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("warm-restart", run)
}

async fn run(flags: Flags) -> Result<(), Failure> {
    let seed = EmbeddedOptions::default().with(SeededResource::pods(500, 20.0));
    let connection = Connection::open(&flags.common, seed).await?;
    let dir = flags.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("clientgo-warm-restart-{}", std::process::id()))
    });
    // Saved when the informer stops (interval zero: no periodic saves).
    let options = InformerFactoryOptions::default()
        .snapshot(SnapshotOptions::new(&dir).interval(Duration::ZERO));
    for run in ["first run", "second run"] {
        let factory =
            SharedInformerFactory::with_options(connection.client.clone(), options.clone());
        let informer = factory.core().v1().pods().informer();
        let started = std::time::Instant::now();
        let stop = clientgo_examples::start_and_sync(&factory).await?;
        let synced = started.elapsed();
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.cancel();
        factory.shutdown().await;
        let snapshots = informer.snapshot_stats();
        let stats = informer.stats();
        say!(
            "{run}: {} pods synced in {:.0} ms ({:?}); snapshots loaded {}, written {} ({} bytes)",
            informer.lister().len(),
            synced.as_secs_f64() * 1000.0,
            stats.mode,
            snapshots.loaded,
            snapshots.written,
            snapshots.last_bytes
        );
    }
    if flags.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
