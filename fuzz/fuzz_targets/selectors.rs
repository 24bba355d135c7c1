//! The label and field selector parsers on arbitrary text: a typed error
//! or a selector, never a panic; a parsed selector prints as text that
//! parses back to the same selector.
#![no_main]

use clientgo_apimachinery::{FieldSelector, LabelSelector};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(selector) = LabelSelector::parse(text) {
        let printed = selector.to_string();
        let again = LabelSelector::parse(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again.to_string(), printed, "from {text:?}");
    }
    if let Ok(selector) = FieldSelector::parse(text) {
        let printed = selector.to_string();
        let again = FieldSelector::parse(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again.to_string(), printed, "from {text:?}");
    }
});
