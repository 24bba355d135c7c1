//! Reading resources from the hand-written spec and CRD fixtures, from
//! the real 1.36 spec when `../shared` is present, and every bad input.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::Path;

use clientgo_codegen::{
    Error, Stability, TypeMapping, resources_from_crds, resources_from_openapi,
};

const SPEC: &str = include_str!("fixtures/spec.json");
const CRDS: &str = include_str!("fixtures/crontab.yaml");

fn types() -> TypeMapping {
    TypeMapping::from([
        ("CronTab".to_string(), "crate::CronTab".to_string()),
        (
            "ClusterWidget".to_string(),
            "crate::ClusterWidget".to_string(),
        ),
    ])
}

#[test]
fn the_small_spec_gives_group_version_kind_plural_scope_verbs_and_type() {
    let resources = resources_from_openapi("spec.json", SPEC.as_bytes()).unwrap();
    let summary: Vec<String> = resources
        .iter()
        .map(|r| {
            format!(
                "{r} {} namespaced={} watchable={} verbs={:?} sub={:?} {}",
                r.kind,
                r.namespaced,
                r.is_watchable(),
                r.verbs,
                r.subresources,
                r.type_path
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            r#"v1/nodes Node namespaced=false watchable=true verbs={"list", "watch"} sub={} k8s_openapi::api::core::v1::Node"#,
            r#"v1/pods Pod namespaced=true watchable=true verbs={"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} sub={"status"} k8s_openapi::api::core::v1::Pod"#,
            r#"apps/v1beta1/widgets Widget namespaced=true watchable=true verbs={"list", "watch"} sub={} k8s_openapi::api::apps::v1beta1::Widget"#,
            r#"authentication.k8s.io/v1/tokenreviews TokenReview namespaced=false watchable=false verbs={"create"} sub={} k8s_openapi::api::authentication::v1::TokenReview"#,
        ]
    );
    assert_eq!(resources[2].stability(), Some(Stability::Beta));
}

#[test]
fn crds_give_one_resource_per_served_version() {
    let resources = resources_from_crds("crontab.yaml", CRDS, &types()).unwrap();
    let summary: Vec<String> = resources
        .iter()
        .map(|r| {
            format!(
                "{r} {} namespaced={} sub={:?} {}",
                r.kind, r.namespaced, r.subresources, r.type_path
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            r#"example.com/v1alpha1/clusterwidgets ClusterWidget namespaced=false sub={} crate::ClusterWidget"#,
            r#"stable.example.com/v1/crontabs CronTab namespaced=true sub={"scale", "status"} crate::CronTab"#,
        ]
    );
    assert!(resources.iter().all(|r| r.is_watchable()));
}

#[test]
fn the_real_spec_yields_every_built_in_resource() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/openapi/kubernetes-v1.36.0-swagger.json");
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let resources = resources_from_openapi("kubernetes-v1.36.0-swagger.json", &bytes).unwrap();
    let ga_watchable: Vec<_> = resources
        .iter()
        .filter(|r| r.stability() == Some(Stability::Ga) && r.is_watchable())
        .collect();
    println!(
        "{} resources, {} GA and watchable",
        resources.len(),
        ga_watchable.len()
    );
    let find = |group: &str, version: &str, plural: &str| {
        resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .unwrap_or_else(|| panic!("{group}/{version}/{plural} missing"))
    };
    let pods = find("", "v1", "pods");
    assert!(pods.namespaced && pods.is_watchable());
    assert!(pods.subresources.contains("status") && pods.subresources.contains("log"));
    assert_eq!(pods.type_path, "k8s_openapi::api::core::v1::Pod");
    let deployments = find("apps", "v1", "deployments");
    assert!(deployments.subresources.contains("scale"));
    assert!(!find("", "v1", "nodes").namespaced);
    assert!(!find("", "v1", "namespaces").namespaced);
    assert_eq!(
        find("apiextensions.k8s.io", "v1", "customresourcedefinitions").type_path,
        "k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition"
    );
    assert!(!find("authorization.k8s.io", "v1", "subjectaccessreviews").is_watchable());
    assert!(ga_watchable.len() > 50, "{}", ga_watchable.len());
}

#[test]
fn malformed_json_names_the_file_and_position() {
    let error = resources_from_openapi("broken.json", b"{\"paths\": {\n  \"/api/v1/pods\": [}")
        .unwrap_err();
    let Error::Json { file, line, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!((file.as_str(), *line), ("broken.json", 2));
    assert!(error.to_string().starts_with("broken.json:2:"), "{error}");
}

#[test]
fn a_listed_definition_without_group_version_kind_is_named() {
    let broken = SPEC.replace(
        r#""io.k8s.api.core.v1.Node": {"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Node"}]}"#,
        r#""io.k8s.api.core.v1.Node": {"type": "object"}"#,
    );
    let error = resources_from_openapi("spec.json", broken.as_bytes()).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"spec.json: definitions["io.k8s.api.core.v1.Node"]: has no x-kubernetes-group-version-kind, so it is not a resource type"#
    );
    let no_paths = resources_from_openapi("empty.json", b"{}").unwrap_err();
    assert_eq!(
        no_paths.to_string(),
        "empty.json: paths: missing, or not an object"
    );
}

#[test]
fn bad_crds_are_named_by_file_and_path() {
    let unserved = CRDS.replace(
        "    - {name: v1alpha1, served: true, storage: true}",
        "    - {name: v1alpha1, served: false, storage: true}",
    );
    let error = resources_from_crds("crontab.yaml", &unserved, &types()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "crontab.yaml: [1].spec.versions: no version has served: true, so the CRD serves nothing"
    );

    let untyped = TypeMapping::from([("CronTab".to_string(), "crate::CronTab".to_string())]);
    let error = resources_from_crds("crontab.yaml", CRDS, &untyped).unwrap_err();
    assert!(
        matches!(&error, Error::UnknownTypePath { kind, .. } if kind == "ClusterWidget"),
        "{error}"
    );

    let bad_path = TypeMapping::from([
        ("CronTab".to_string(), "my-crate::CronTab".to_string()),
        (
            "ClusterWidget".to_string(),
            "crate::ClusterWidget".to_string(),
        ),
    ]);
    assert!(matches!(
        resources_from_crds("crontab.yaml", CRDS, &bad_path),
        Err(Error::BadTypePath { .. })
    ));

    let not_yaml = resources_from_crds("bad.yaml", "kind: [unclosed", &types()).unwrap_err();
    assert!(
        matches!(not_yaml, Error::Yaml { .. }) && not_yaml.to_string().starts_with("bad.yaml:"),
        "{not_yaml}"
    );

    let no_scope = CRDS.replace("  scope: Namespaced\n", "");
    let error = resources_from_crds("crontab.yaml", &no_scope, &types()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "crontab.yaml: [0].spec.scope: missing, empty or not a string"
    );
}
