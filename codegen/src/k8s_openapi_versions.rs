//! Which built-in types every k8s-openapi version feature has.
//!
//! k8s-openapi 0.29 supports Kubernetes 1.33 to 1.37, one version feature
//! at a time, chosen by the final binary. A few GA types of the 1.36 spec
//! only exist from a later version on; the code generated for them is put
//! behind `#[cfg(k8s_openapi_ge_1_<minor>)]`, which clientgo-informers'
//! build script sets from the version k8s-openapi was built with, so the
//! crate compiles with every supported feature.

/// The oldest Kubernetes minor version k8s-openapi 0.29 supports (its
/// `v1_33` feature).
pub(crate) const OLDEST_SUPPORTED_MINOR: u32 = 33;

/// The newest Kubernetes minor version k8s-openapi 0.29 supports (its
/// `v1_37` feature); checked by a test only.
#[cfg(test)]
const NEWEST_SUPPORTED_MINOR: u32 = 37;

/// GA built-in types k8s-openapi 0.29 has only from a later minor version
/// on, with that version. Every other GA type of the 1.36 spec exists in
/// all supported versions; a test checks this table against
/// k8s-openapi's source when it is at hand.
const LATER_TYPES: [(&str, u32); 7] = [
    (
        "k8s_openapi::api::admissionregistration::v1::MutatingAdmissionPolicy",
        36,
    ),
    (
        "k8s_openapi::api::admissionregistration::v1::MutatingAdmissionPolicyBinding",
        36,
    ),
    ("k8s_openapi::api::resource::v1::DeviceClass", 34),
    ("k8s_openapi::api::resource::v1::ResourceClaim", 34),
    ("k8s_openapi::api::resource::v1::ResourceClaimTemplate", 34),
    ("k8s_openapi::api::resource::v1::ResourceSlice", 34),
    ("k8s_openapi::api::storage::v1::VolumeAttributesClass", 34),
];

/// The minor version from which k8s-openapi has `type_path`, when that is
/// later than the oldest supported one; `None` when every supported
/// version has it (or it is not a k8s-openapi type).
pub(crate) fn first_minor_with(type_path: &str) -> Option<u32> {
    LATER_TYPES
        .iter()
        .find(|(path, _)| *path == type_path)
        .map(|(_, minor)| *minor)
        .filter(|minor| *minor > OLDEST_SUPPORTED_MINOR)
}

/// The `cfg` that clientgo-informers' build script sets when k8s-openapi
/// was built for Kubernetes 1.`minor` or later.
pub(crate) fn cfg_name(minor: u32) -> String {
    format!("k8s_openapi_ge_1_{minor}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_types_are_known_and_others_are_not() {
        assert_eq!(
            first_minor_with("k8s_openapi::api::resource::v1::ResourceClaim"),
            Some(34)
        );
        assert_eq!(first_minor_with("k8s_openapi::api::core::v1::Pod"), None);
        assert_eq!(cfg_name(34), "k8s_openapi_ge_1_34");
    }

    /// k8s-openapi's `src` directory, found through `cargo metadata`.
    fn k8s_openapi_source() -> Option<std::path::PathBuf> {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
        Some(crate::k8s_openapi_source_dir(workspace)?.join("src"))
    }

    /// Whether k8s-openapi's tree for 1.`minor` defines `type_path`.
    fn defines(source: &std::path::Path, minor: u32, type_path: &str) -> bool {
        let Some(rest) = type_path.strip_prefix("k8s_openapi::") else {
            return false;
        };
        let Some((module, kind)) = rest.rsplit_once("::") else {
            return false;
        };
        let directory = source
            .join(format!("v1_{minor}"))
            .join(module.replace("::", "/"));
        let needle = format!("pub struct {kind} {{");
        std::fs::read_dir(directory)
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| {
                std::fs::read_to_string(entry.path()).is_ok_and(|text| text.contains(&needle))
            })
    }

    #[test]
    fn the_table_matches_k8s_openapis_source_for_every_ga_type() {
        let spec = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/openapi/kubernetes-v1.36.0-swagger.json");
        let Ok(bytes) = std::fs::read(&spec) else {
            println!("skipped: {} is absent", spec.display());
            return;
        };
        let Some(source) = k8s_openapi_source() else {
            println!("skipped: cargo metadata did not locate k8s-openapi's source");
            return;
        };
        let resources = crate::resources_from_openapi("spec", &bytes).unwrap();
        let mut checked = 0;
        for resource in resources
            .iter()
            .filter(|r| r.is_watchable() && r.stability() == Some(crate::Stability::Ga))
        {
            let expected = first_minor_with(&resource.type_path).unwrap_or(OLDEST_SUPPORTED_MINOR);
            let present: Vec<u32> = (OLDEST_SUPPORTED_MINOR..=NEWEST_SUPPORTED_MINOR)
                .filter(|minor| defines(&source, *minor, &resource.type_path))
                .collect();
            let from_expected: Vec<u32> = (expected..=NEWEST_SUPPORTED_MINOR).collect();
            assert_eq!(
                present, from_expected,
                "{} ({}): k8s-openapi has it in these 1.x versions",
                resource, resource.type_path
            );
            checked += 1;
        }
        assert_eq!(checked, 60);
    }
}
