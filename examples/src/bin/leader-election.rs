//! `leader-election`: client-go's `tools/leaderelection` over a `Lease`.
//! Two candidates in one process campaign for the same lease; one leads,
//! the other waits. The leader then steps down (releasing the lease, as
//! `ReleaseOnCancel` does), and the other takes over at once instead of
//! after the lease expires.

use std::time::Duration;

use clientgo::leaderelection::{Callbacks, LeaderElectionConfig, LeaseLock};
use clientgo::rest::RestClient;
use clientgo_examples::{
    Campaign, CommonFlags, Connection, EmbeddedOptions, Failure, run_main, say,
};
use tokio::sync::mpsc;

/// Two candidates for one lease; the leader steps down and the other leads.
#[derive(Debug, clap::Parser)]
#[command(name = "leader-election", version)]
struct Flags {
    /// The lease's name (in --namespace, else default)
    #[arg(long, value_name = "NAME", default_value = "clientgo-example")]
    lease: String,
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("leader-election", run)
}

/// Starts campaigning as `identity`; `leading` hears the identity when it
/// starts leading.
fn campaign(
    client: &RestClient,
    namespace: &str,
    lease: &str,
    identity: &str,
    leading: mpsc::UnboundedSender<String>,
) -> Result<Campaign, Failure> {
    // client-go's 15 s / 10 s / 2 s, shortened for the example.
    let config = LeaderElectionConfig::default()
        .lease_duration(Duration::from_secs(6))
        .renew_deadline(Duration::from_secs(4))
        .retry_period(Duration::from_millis(500))
        .release_on_cancel(true);
    let name = identity.to_string();
    let callbacks = Callbacks::new().on_started_leading(move |_token| {
        let _ = leading.send(name.clone());
    });
    let lock = LeaseLock::new(client.clone(), namespace, lease, identity.to_string());
    Campaign::start(lock, config, callbacks)
}

async fn run(flags: Flags) -> Result<(), Failure> {
    let connection = Connection::open(&flags.common, EmbeddedOptions::default()).await?;
    let namespace = flags.common.namespace.as_deref().unwrap_or("default");
    let (leading, mut started) = mpsc::unbounded_channel();
    let mut candidates = Vec::new();
    for identity in ["candidate-a", "candidate-b"] {
        let candidate = campaign(
            &connection.client,
            namespace,
            &flags.lease,
            identity,
            leading.clone(),
        )?;
        candidates.push((identity, candidate));
    }
    let wait = Duration::from_secs(30);
    let first = tokio::time::timeout(wait, started.recv())
        .await
        .ok()
        .flatten()
        .ok_or("nobody became the leader within 30 s")?;
    say!("{first} leads (lease {namespace}/{})", flags.lease);
    // The leader steps down: its campaign ends and the lease is released.
    let position = candidates
        .iter()
        .position(|(identity, _)| *identity == first)
        .ok_or("the leader is not a candidate")?;
    let (_, leader) = candidates.remove(position);
    leader.end().await;
    say!("{first} stepped down and released the lease");
    let second = tokio::time::timeout(wait, started.recv())
        .await
        .ok()
        .flatten()
        .ok_or("nobody took over within 30 s")?;
    say!("{second} leads now");
    for (identity, candidate) in candidates {
        let elector = candidate.end().await;
        say!(
            "{identity}: {} leader changes seen",
            elector.stats().transitions_observed
        );
    }
    Ok(())
}
