//! controllerutil's writes: create-or-update, server-side apply with a
//! field manager, and status updates retried on conflict, on the test
//! server and on the real kube-apiserver (one body, two backends).

use std::sync::atomic::{AtomicUsize, Ordering};

use clientgo_controller::controllerutil::{
    ApplyError, ApplyOptions, OperationResult, apply, create_or_update, update_status,
};
use clientgo_rest::{Patch, PatchOptions};
use k8s_openapi::api::apps::v1::DeploymentStatus;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::support::on_each_cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_update_writes_only_a_change() {
    on_each_cluster(|cluster| async move {
        let config_maps = cluster.config_maps();
        let set = |value: &'static str| {
            move |map: &mut ConfigMap| {
                map.data = Some([("key".to_string(), value.to_string())].into());
            }
        };
        let (created, result) = create_or_update(&config_maps, "settings", set("a"))
            .await
            .unwrap();
        assert_eq!(result, OperationResult::Created);
        assert_eq!(
            created.metadata.namespace.as_ref(),
            Some(&cluster.namespace)
        );
        let (same, result) = create_or_update(&config_maps, "settings", set("a"))
            .await
            .unwrap();
        assert_eq!(result, OperationResult::Unchanged);
        assert_eq!(
            same.metadata.resource_version,
            created.metadata.resource_version
        );
        let (updated, result) = create_or_update(&config_maps, "settings", set("b"))
            .await
            .unwrap();
        assert_eq!(result, OperationResult::Updated);
        assert_eq!(updated.data.unwrap()["key"], "b");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_creates_then_updates_and_a_stale_version_is_a_typed_conflict() {
    on_each_cluster(|cluster| async move {
        let config_maps = cluster.config_maps();
        let options = ApplyOptions::new("my-operator");
        let mut desired = ConfigMap {
            metadata: ObjectMeta {
                name: Some("applied".into()),
                namespace: Some(cluster.namespace.clone()),
                ..ObjectMeta::default()
            },
            data: Some([("mode".to_string(), "fast".to_string())].into()),
            ..ConfigMap::default()
        };
        let first = apply(&config_maps, &desired, &options).await.unwrap();
        desired.data = Some([("mode".to_string(), "safe".to_string())].into());
        let second = apply(&config_maps, &desired, &options).await.unwrap();
        assert_eq!(second.data.as_ref().unwrap()["mode"], "safe");
        assert_ne!(
            first.metadata.resource_version,
            second.metadata.resource_version
        );
        // What the client sent: the test server's request log.
        if let Some(server) = cluster.backend().test_server() {
            let applies: Vec<Vec<String>> = server
                .requests()
                .records()
                .iter()
                .filter(|r| {
                    r.header_values("content-type")
                        .iter()
                        .any(|t| t.starts_with("application/apply-patch"))
                })
                .map(|r| vec![r.query.clone()])
                .collect();
            assert_eq!(applies.len(), 2, "{applies:?}");
            for query in applies.iter().flatten() {
                assert!(
                    query.contains("fieldManager=my-operator") && query.contains("force=true"),
                    "{query}"
                );
            }
        }

        desired.metadata.resource_version = first.metadata.resource_version.clone();
        let error = apply(&config_maps, &desired, &options).await.unwrap_err();
        assert!(
            matches!(&error, ApplyError::Conflict { field_manager, conflicts, .. }
                if field_manager == "my-operator" && conflicts.is_empty()),
            "{error}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_over_another_managers_field_conflicts_unless_forced() {
    on_each_cluster(|cluster| async move {
        let config_maps = cluster.config_maps();
        let object = |data: &[(&str, &str)]| ConfigMap {
            metadata: ObjectMeta {
                name: Some("shared".into()),
                namespace: Some(cluster.namespace.clone()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ConfigMap::default()
        };
        let polite = |manager: &str| ApplyOptions::new(manager).force(false);
        apply(
            &config_maps,
            &object(&[("mode", "fast"), ("size", "1")]),
            &polite("alpha"),
        )
        .await
        .unwrap();
        // The same value is shared, not a conflict.
        apply(&config_maps, &object(&[("mode", "fast")]), &polite("beta"))
            .await
            .unwrap();
        let error = apply(
            &config_maps,
            &object(&[("mode", "safe"), ("size", "2")]),
            &polite("beta"),
        )
        .await
        .unwrap_err();
        let ApplyError::Conflict {
            field_manager,
            message,
            conflicts,
        } = &error
        else {
            panic!("not a conflict: {error}");
        };
        assert_eq!(field_manager, "beta");
        assert_eq!(
            message,
            "Apply failed with 2 conflicts: conflicts with \"alpha\":\n- .data.mode\n- .data.size"
        );
        let fields: Vec<(&str, &str)> = conflicts
            .iter()
            .map(|c| (c.manager.as_str(), c.field.as_str()))
            .collect();
        assert_eq!(fields, [("alpha", ".data.mode"), ("alpha", ".data.size")]);
        // A manager's update takes the field it changes: an apply of another
        // value now conflicts with it, named with its version.
        config_maps
            .patch(
                "shared",
                &PatchOptions {
                    field_manager: Some("editor".into()),
                    ..PatchOptions::default()
                },
                &Patch::Merge(serde_json::json!({"data": {"size": "3"}})),
            )
            .await
            .unwrap();
        let error = apply(&config_maps, &object(&[("size", "4")]), &polite("alpha"))
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("conflict with \"editor\" using v1: .data.size"),
            "{error}"
        );
        // Forced, the fields move to `beta`; `alpha`, whose fields were all
        // taken, then applies none of them and removes none.
        let forced = apply(
            &config_maps,
            &object(&[("mode", "safe"), ("size", "2")]),
            &ApplyOptions::new("beta"),
        )
        .await
        .unwrap();
        assert_eq!(forced.data.as_ref().unwrap()["mode"], "safe");
        let after = apply(&config_maps, &object(&[]), &polite("alpha"))
            .await
            .unwrap();
        assert_eq!(
            after.data.unwrap_or_default(),
            [
                ("mode".to_string(), "safe".to_string()),
                ("size".to_string(), "2".to_string())
            ]
            .into()
        );
        // A field only its applier owned goes when the applier stops applying.
        let dropped = apply(&config_maps, &object(&[("mode", "safe")]), &polite("beta"))
            .await
            .unwrap();
        assert_eq!(
            dropped.data.unwrap_or_default(),
            [("mode".to_string(), "safe".to_string())].into()
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_update_is_retried_on_conflict() {
    on_each_cluster(|cluster| async move {
        cluster.create_deployment("web").await;
        let deployments = cluster.deployments();
        let attempts = AtomicUsize::new(0);
        let updated = update_status(&deployments, "web", |deployment| {
            // The first attempt races a writer: its copy goes stale.
            if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
                let deployments = deployments.clone();
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .unwrap()
                            .block_on(deployments.patch(
                                "web",
                                &PatchOptions::default(),
                                &Patch::Merge(
                                    serde_json::json!({"metadata": {"labels": {"racer": "1"}}}),
                                ),
                            ))
                            .unwrap();
                    });
                });
            }
            deployment.status = Some(DeploymentStatus {
                observed_generation: deployment.metadata.generation,
                ..DeploymentStatus::default()
            });
        })
        .await
        .unwrap();
        assert_eq!(
            attempts.load(Ordering::SeqCst),
            2,
            "one conflict, then a retry"
        );
        assert!(updated.status.unwrap().observed_generation.is_some());
        assert_eq!(updated.metadata.labels.unwrap()["racer"], "1");
    })
    .await;
}
