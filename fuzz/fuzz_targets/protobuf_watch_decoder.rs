//! The protobuf watch decoder and list decoder on arbitrary bytes, cut
//! into arbitrary chunks, as typed pods: they must return events (or a
//! list) or typed errors, never panic, and never buffer a frame past the
//! limit.
#![no_main]

use clientgo_listwatch::{ProtobufListDecoder, ProtobufWatchDecoder};
use k8s_openapi::api::core::v1::Pod;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let Some(codec) = clientgo_protobuf::codec::<Pod>() else {
        return;
    };
    // The first byte picks the chunk size, so the fuzzer explores splits.
    let chunk = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let mut watch = ProtobufWatchDecoder::new(codec, LIMIT);
    'watch: for piece in data.chunks(chunk) {
        watch.push(piece);
        while let Some(event) = watch.next_event() {
            if event.is_err() {
                break 'watch;
            }
        }
        assert!(watch.buffered() <= LIMIT + 4 + chunk);
    }
    let _ = watch.finish();
    let mut list = ProtobufListDecoder::new(codec, LIMIT);
    for piece in data.chunks(chunk) {
        if list.push(piece).is_err() {
            return;
        }
    }
    let _ = list.finish();
});
