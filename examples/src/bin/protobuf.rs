//! `protobuf`: how built-in objects travel and rest. A client asks for
//! protobuf for built-in types by default (as client-go 1.35+ does), and
//! the default informer keeps each object as the bytes it arrived in with
//! its metadata parsed, decoding whole objects only when asked. The
//! example syncs the same pods three ways, protobuf compact (the default),
//! JSON compact and JSON decoded, and prints what each cache holds.

use clientgo::informers::{InformerFactoryOptions, SharedInformerFactory, Storage};
use clientgo::rest::{ContentType, RestClient};
use clientgo_examples::{
    CommonFlags, Connection, EmbeddedOptions, Failure, SeededResource, run_main, say,
};

/// Syncs pods in three encodings and storages and compares the caches.
#[derive(Debug, clap::Parser)]
#[command(name = "protobuf", version)]
struct Flags {
    #[command(flatten)]
    common: CommonFlags,
}

fn main() -> std::process::ExitCode {
    run_main("protobuf", run)
}

async fn run(flags: Flags) -> Result<(), Failure> {
    let seed = EmbeddedOptions::default().with(SeededResource::pods(1000, 0.0));
    let connection = Connection::open(&flags.common, seed).await?;
    let json = RestClient::new(connection.config.clone().content_type(ContentType::Json))
        .map_err(|error| error.to_string())?;
    let ways = [
        (
            "protobuf, compact (the default)",
            connection.client.clone(),
            Storage::Compact,
        ),
        ("JSON, compact", json.clone(), Storage::Compact),
        ("JSON, decoded", json, Storage::Decoded),
    ];
    for (name, client, storage) in ways {
        let options = InformerFactoryOptions::default().storage(storage);
        let factory = SharedInformerFactory::with_options(client, options);
        let informer = factory.core().v1().pods().informer();
        let stop = clientgo_examples::start_and_sync(&factory).await?;
        let lister = informer.lister();
        // A lister read decodes (and caches) one pod in compact storage.
        if let Some(key) = lister.keys().first() {
            let _ = lister.get_by_key(key);
        }
        let bytes = format!("{} KiB", informer.cache_bytes() / 1024);
        say!(
            "{name}: {} pods, cache {bytes}, decodes {}",
            lister.len(),
            lister.decode_stats().misses
        );
        stop.cancel();
        factory.shutdown().await;
    }
    Ok(())
}
