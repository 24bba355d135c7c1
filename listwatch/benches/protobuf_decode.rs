//! Protobuf against JSON for the same pods: `cargo bench -p
//! clientgo-listwatch --bench protobuf_decode`.
//!
//! 2,000 realistic pods (the e2e benchmark's), each as the API server
//! would send it in JSON and in protobuf, decoded into the same
//! k8s-openapi `Pod`:
//! - `pod/json` and `pod/protobuf`: one object at a time
//!   (`serde_json::from_slice` against the generated decoder);
//! - `pod_without_managed_fields/…`: the same without
//!   `metadata.managedFields` (whose `fieldsV1` both formats carry as JSON
//!   text, parsed into a `serde_json::Value`);
//! - `watch/json` and `watch/protobuf`: the same pods as a watch stream of
//!   MODIFIED events cut into 16 KiB chunks, through `WatchDecoder` and
//!   `ProtobufWatchDecoder` (framing included).
//!
//! Throughput is in pods; the bytes per pod of each format are printed
//! first.
#![allow(clippy::print_stderr)]

use std::hint::black_box;

use clientgo_apimachinery::Unknown;
use clientgo_listwatch::{ProtobufWatchDecoder, WatchDecoder};
use clientgo_protobuf::{Message, put};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;

const PODS: usize = 2_000;
const CHUNK: usize = 16 * 1024;

struct Corpus {
    json: Vec<Vec<u8>>,
    protobuf: Vec<Vec<u8>>,
    /// The same pods without `metadata.managedFields`.
    json_stripped: Vec<Vec<u8>>,
    protobuf_stripped: Vec<Vec<u8>>,
    json_stream: Vec<u8>,
    protobuf_stream: Vec<u8>,
}

fn corpus() -> Corpus {
    let mut corpus = Corpus {
        json: Vec::new(),
        protobuf: Vec::new(),
        json_stripped: Vec::new(),
        protobuf_stripped: Vec::new(),
        json_stream: Vec::new(),
        protobuf_stream: Vec::new(),
    };
    for index in 0..PODS {
        let value = clientgo_testing::realistic_pod(index, "bench");
        let json = serde_json::to_vec(&value).unwrap_or_default();
        let pod: Pod = serde_json::from_slice(&json).unwrap_or_default();
        let message = pod.encode();
        let event = serde_json::json!({"type": "MODIFIED", "object": value});
        corpus
            .json_stream
            .extend_from_slice(&serde_json::to_vec(&event).unwrap_or_default());
        corpus.json_stream.push(b'\n');
        corpus.protobuf_stream.extend(protobuf_frame(&message));
        let mut stripped = value.clone();
        if let Some(metadata) = stripped.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            metadata.remove("managedFields");
        }
        let stripped_json = serde_json::to_vec(&stripped).unwrap_or_default();
        let stripped_pod: Pod = serde_json::from_slice(&stripped_json).unwrap_or_default();
        corpus.protobuf_stripped.push(stripped_pod.encode());
        corpus.json_stripped.push(stripped_json);
        corpus.json.push(json);
        corpus.protobuf.push(message);
    }
    corpus
}

fn protobuf_frame(message: &[u8]) -> Vec<u8> {
    let mut event = Vec::new();
    put::put_string(&mut event, 1, &"MODIFIED".to_string());
    let object = Unknown::wrap("v1", "Pod", message);
    put::length_prefixed(&mut event, 2, |out| {
        put::put_bytes(out, 1, &k8s_openapi::ByteString(object));
    });
    let mut frame = (event.len() as u32).to_be_bytes().to_vec();
    frame.extend(event);
    frame
}

fn json_stream(bytes: &[u8]) -> usize {
    let mut decoder = WatchDecoder::<Pod>::default();
    let mut events = 0;
    for chunk in bytes.chunks(CHUNK) {
        decoder.push(chunk);
        while let Some(event) = decoder.next_event() {
            events += usize::from(event.is_ok());
        }
    }
    events
}

fn protobuf_stream(bytes: &[u8], codec: clientgo_protobuf::Codec<Pod>) -> usize {
    let mut decoder = ProtobufWatchDecoder::new(codec, 16 << 20);
    let mut events = 0;
    for chunk in bytes.chunks(CHUNK) {
        decoder.push(chunk);
        while let Some(event) = decoder.next_event() {
            events += usize::from(event.is_ok());
        }
    }
    events
}

fn decoding(c: &mut Criterion) {
    let corpus = corpus();
    let Some(codec) = clientgo_protobuf::codec::<Pod>() else {
        return;
    };
    let json_bytes: usize = corpus.json.iter().map(Vec::len).sum();
    let protobuf_bytes: usize = corpus.protobuf.iter().map(Vec::len).sum();
    eprintln!(
        "bytes per pod: JSON {}, protobuf {} ({:.2}x); watch stream per event: JSON {}, protobuf {}",
        json_bytes / PODS,
        protobuf_bytes / PODS,
        protobuf_bytes as f64 / json_bytes as f64,
        corpus.json_stream.len() / PODS,
        corpus.protobuf_stream.len() / PODS,
    );
    // Both formats give the same pods.
    for (json, protobuf) in corpus.json.iter().zip(&corpus.protobuf) {
        let from_json: Pod = serde_json::from_slice(json).unwrap_or_default();
        assert_eq!(Pod::decode(protobuf).ok(), Some(from_json));
    }
    assert_eq!(json_stream(&corpus.json_stream), PODS);
    assert_eq!(protobuf_stream(&corpus.protobuf_stream, codec), PODS);

    let mut group = c.benchmark_group("pod");
    group.throughput(Throughput::Elements(PODS as u64));
    group.sample_size(20);
    group.bench_function("json", |b| {
        b.iter(|| {
            for bytes in &corpus.json {
                black_box(serde_json::from_slice::<Pod>(bytes).ok());
            }
        });
    });
    group.bench_function("protobuf", |b| {
        b.iter(|| {
            for bytes in &corpus.protobuf {
                black_box(Pod::decode(bytes).ok());
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("pod_without_managed_fields");
    group.throughput(Throughput::Elements(PODS as u64));
    group.sample_size(20);
    group.bench_function("json", |b| {
        b.iter(|| {
            for bytes in &corpus.json_stripped {
                black_box(serde_json::from_slice::<Pod>(bytes).ok());
            }
        });
    });
    group.bench_function("protobuf", |b| {
        b.iter(|| {
            for bytes in &corpus.protobuf_stripped {
                black_box(Pod::decode(bytes).ok());
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("watch");
    group.throughput(Throughput::Elements(PODS as u64));
    group.sample_size(20);
    group.bench_function("json", |b| {
        b.iter(|| black_box(json_stream(&corpus.json_stream)));
    });
    group.bench_function("protobuf", |b| {
        b.iter(|| black_box(protobuf_stream(&corpus.protobuf_stream, codec)));
    });
    group.finish();
}

criterion_group!(benches, decoding);
criterion_main!(benches);
