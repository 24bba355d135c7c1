//! The Status decoder on arbitrary bytes: a Status whose reason, message
//! and code can be read and printed, or an error, never a panic.
#![no_main]

use clientgo_apimachinery::{Status, WatchEvent};
use k8s_openapi::api::core::v1::ConfigMap;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(status) = serde_json::from_slice::<Status>(data) {
        let _ = status.to_string();
        let _ = status.reason.as_str();
        let _ = (status.is_gone(), status.is_not_found(), status.causes().len());
    }
    // The same bytes as a watch event (an ERROR event carries a Status).
    let _ = serde_json::from_slice::<WatchEvent<ConfigMap>>(data);
});
