//! Watch decoding throughput: `cargo bench -p clientgo-listwatch`.
//!
//! The same bytes, a stream of MODIFIED events for realistic pods (about
//! 5 KB of JSON each), decoded three ways:
//! - `serde_json_lines`: the stream already split into lines, each decoded
//!   with `serde_json::from_slice::<WatchEvent<Pod>>`: the bound for typed
//!   decoding, with no framing at all;
//! - `watch_decoder_typed`: the stream cut into 16 KiB chunks and fed to
//!   [`WatchDecoder<Pod>`], which frames by structure and decodes;
//! - `watch_decoder_typed_skip_managed_fields`: the same with
//!   `skip_managed_fields`, which leaves `metadata.managedFields` out of
//!   the bytes before decoding (what the factory's
//!   `keep_managed_fields(false)` turns on);
//! - `watch_decoder_framing`: the same with `IgnoredAny` objects, which
//!   measures framing plus JSON validation without building pods.

use std::hint::black_box;

use clientgo_apimachinery::WatchEvent;
use clientgo_listwatch::WatchDecoder;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use serde::de::IgnoredAny;

const EVENTS: usize = 2_000;
const CHUNK: usize = 16 * 1024;

fn stream() -> Vec<u8> {
    let mut bytes = Vec::new();
    for index in 0..EVENTS {
        let pod = clientgo_testing::realistic_pod(index, "bench");
        let event = serde_json::json!({"type": "MODIFIED", "object": pod});
        bytes.extend_from_slice(&serde_json::to_vec(&event).unwrap_or_default());
        bytes.push(b'\n');
    }
    bytes
}

fn decode_chunks<K: serde::de::DeserializeOwned>(bytes: &[u8], skip_managed_fields: bool) -> usize {
    let mut decoder = WatchDecoder::<K>::default().skip_managed_fields(skip_managed_fields);
    let mut events = 0;
    for chunk in bytes.chunks(CHUNK) {
        decoder.push(chunk);
        while let Some(event) = decoder.next_event() {
            if event.is_ok() {
                events += 1;
            }
        }
    }
    events
}

fn watch_decoding(c: &mut Criterion) {
    let bytes = stream();
    let lines: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        decode_chunks::<Pod>(&bytes, false),
        EVENTS,
        "the stream decodes"
    );
    assert_eq!(
        decode_chunks::<Pod>(&bytes, true),
        EVENTS,
        "the stream decodes"
    );

    let mut group = c.benchmark_group("watch_decode");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.sample_size(20);
    group.bench_function("serde_json_lines", |b| {
        b.iter(|| {
            let mut events = 0;
            for line in &lines {
                if let Ok(event) = serde_json::from_slice::<WatchEvent<Pod>>(line) {
                    black_box(&event);
                    events += 1;
                }
            }
            events
        });
    });
    group.bench_function("watch_decoder_typed", |b| {
        b.iter(|| black_box(decode_chunks::<Pod>(&bytes, false)));
    });
    group.bench_function("watch_decoder_typed_skip_managed_fields", |b| {
        b.iter(|| black_box(decode_chunks::<Pod>(&bytes, true)));
    });
    group.bench_function("watch_decoder_framing", |b| {
        b.iter(|| black_box(decode_chunks::<IgnoredAny>(&bytes, false)));
    });
    group.finish();
}

criterion_group!(benches, watch_decoding);
criterion_main!(benches);
