//! The watch decoder on arbitrary bytes, cut into arbitrary chunks, as
//! typed pods and as dynamic objects, with and without the managedFields
//! skip: it must return events or typed errors, never panic, and never
//! hold more than its frame limit plus one chunk.
#![no_main]

use clientgo_apimachinery::DynamicObject;
use clientgo_listwatch::WatchDecoder;
use k8s_openapi::api::core::v1::Pod;
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;

const LIMIT: usize = 256 * 1024;

fn run<K: DeserializeOwned>(data: &[u8], skip: bool) {
    let mut decoder = WatchDecoder::<K>::new(LIMIT).skip_managed_fields(skip);
    // The first byte picks the chunk size, so the fuzzer explores splits.
    let chunk = usize::from(data.first().copied().unwrap_or(1)).max(1);
    for piece in data.chunks(chunk) {
        decoder.push(piece);
        while let Some(event) = decoder.next_event() {
            if event.is_err() {
                return;
            }
        }
    }
    let _ = decoder.finish();
}

fuzz_target!(|data: &[u8]| {
    let skip = data.first().is_some_and(|byte| byte & 1 == 1);
    run::<Pod>(data, skip);
    run::<DynamicObject>(data, !skip);
});
