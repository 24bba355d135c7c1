//! Sets `k8s_openapi_ge_1_<minor>` for every Kubernetes minor version up to
//! the one k8s-openapi was built for, so the generated
//! protobuf codecs can leave out types and fields older k8s-openapi
//! versions do not have.

/// The range of minor versions a `cfg` may name (declared for
/// `check-cfg`); wider than k8s-openapi's so a newer k8s-openapi does not
/// break the build.
const MINORS: std::ops::RangeInclusive<u32> = 20..=60;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for minor in MINORS {
        println!("cargo::rustc-check-cfg=cfg(k8s_openapi_ge_1_{minor})");
    }
    // k8s-openapi publishes the version it was built for as
    // DEP_K8S_OPENAPI_<its version>_VERSION = 0x00_01_<minor>_00.
    let enabled = std::env::vars().find_map(|(key, value)| {
        let is_version = key.starts_with("DEP_K8S_OPENAPI_") && key.ends_with("_VERSION");
        is_version.then(|| value.parse::<u32>().ok()).flatten()
    });
    let Some(version) = enabled else {
        println!(
            "cargo::warning=k8s-openapi did not say which Kubernetes version it was built for; \
             the protobuf codecs of newer types and fields are left out"
        );
        return;
    };
    let minor = (version >> 8) & 0xff;
    for supported in MINORS.filter(|m| *m <= minor) {
        println!("cargo::rustc-cfg=k8s_openapi_ge_1_{supported}");
    }
}
