//! `owns`: a changed or deleted child reconciles its controlling owner,
//! which recreates it (on the test server and on the real kube-apiserver:
//! one body, two backends).

use std::collections::BTreeMap;
use std::sync::Arc;

use clientgo_controller::controllerutil::set_controller_reference;
use clientgo_controller::{Action, Controller, EnqueueMapping, Request};
use clientgo_rest::{CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient};
use clientgo_testing::Verb;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use parking_lot::Mutex;

use crate::support::{Cluster, Tally, eventually, on_each_cluster, start, tally};

struct Context {
    config_maps: ResourceClient<ConfigMap>,
    reconciles: Mutex<BTreeMap<String, usize>>,
}

impl Context {
    fn count(&self, name: &str) -> usize {
        self.reconciles.lock().get(name).copied().unwrap_or(0)
    }
}

/// Makes sure the deployment's config map exists, owned by it.
async fn reconcile(deployment: Arc<Deployment>, context: Arc<Context>) -> Result<Action, String> {
    let name = deployment.metadata.name.clone().unwrap_or_default();
    *context.reconciles.lock().entry(name.clone()).or_default() += 1;
    let child_name = format!("{name}-config");
    let existing = context
        .config_maps
        .get_optional(&child_name)
        .await
        .map_err(|e| e.to_string())?;
    if existing.is_none() {
        let mut child = ConfigMap {
            metadata: ObjectMeta {
                name: Some(child_name),
                namespace: deployment.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
            data: Some([("owner".to_string(), name)].into()),
            ..ConfigMap::default()
        };
        set_controller_reference(deployment.as_ref(), &mut child).map_err(|e| e.to_string())?;
        context
            .config_maps
            .create(&CreateOptions::default(), &child)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(Action::done())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_or_deleted_child_reconciles_its_owner() {
    on_each_cluster(|cluster| async move {
        cluster.create_deployment("web").await;
        // A config map owned by nobody changes nothing.
        cluster
            .config_maps()
            .create(
                &CreateOptions::default(),
                &ConfigMap {
                    metadata: ObjectMeta {
                        name: Some("loose".into()),
                        ..ObjectMeta::default()
                    },
                    ..ConfigMap::default()
                },
            )
            .await
            .unwrap();
        let manager = cluster.manager();
        let context = Arc::new(Context {
            config_maps: cluster.config_maps(),
            reconciles: Mutex::default(),
        });
        let handle = Controller::for_::<Deployment>(&manager)
            .owns::<ConfigMap>()
            .complete(reconcile, Arc::clone(&context))
            .unwrap();
        let (stop, running) = start(&manager);

        let config_maps = cluster.config_maps();
        eventually("the child to be created", || async {
            config_maps
                .get_optional("web-config")
                .await
                .unwrap()
                .is_some()
        })
        .await;
        let child = config_maps.get("web-config").await.unwrap();
        let owner = &child.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("Deployment", "web")
        );
        // The child's own creation reconciles the owner once more.
        eventually("the child's creation to reconcile the owner", || async {
            context.count("web") >= 2
        })
        .await;
        assert!(manager.is_ready());

        let before = context.count("web");
        config_maps
            .patch(
                "web-config",
                &PatchOptions::default(),
                &Patch::Merge(serde_json::json!({"metadata": {"labels": {"edited": "yes"}}})),
            )
            .await
            .unwrap();
        eventually("the child's change to reconcile the owner", || async {
            context.count("web") > before
        })
        .await;

        config_maps
            .delete("web-config", &DeleteOptions::default())
            .await
            .unwrap();
        eventually("the deleted child to be recreated", || async {
            config_maps
                .get_optional("web-config")
                .await
                .unwrap()
                .is_some_and(|child| child.metadata.labels.is_none())
        })
        .await;

        // The loose config map never reached the queue as a request (a
        // request for a missing deployment would count as gone).
        assert_eq!(handle.stats().gone, 0, "{:?}", handle.stats());
        assert_eq!(context.reconciles.lock().len(), 1);
        assert!(handle.stats().success >= 3, "{:?}", handle.stats());
        stop.cancel();
        running.await.unwrap().unwrap();
        assert!(!manager.is_ready());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_maps_any_object_and_controllers_share_one_undecoded_informer_per_kind() {
    let cluster = Cluster::start().await;
    let web = cluster.create_deployment("web").await;
    cluster.create_deployment("db").await;
    cluster.create_owned_config_map(&web, "web-config").await;
    let config_maps = cluster.config_maps();
    let manager = cluster.manager();
    let owners = Arc::new(Tally::default());
    let mapped = Arc::new(Tally::default());
    Controller::for_::<Deployment>(&manager)
        .owns::<ConfigMap>()
        .complete(tally, Arc::clone(&owners))
        .unwrap();
    // A config map labelled `for: <name>` reconciles that deployment,
    // owned or not.
    Controller::for_::<Deployment>(&manager)
        .named("mapped")
        .watches::<ConfigMap>(EnqueueMapping::map(|object| {
            let meta = object.meta();
            let target = meta.labels.as_ref().and_then(|labels| labels.get("for"));
            match (meta.namespace.as_deref(), target) {
                (Some(namespace), Some(name)) => vec![Request::namespaced(namespace, name)],
                _ => Vec::new(),
            }
        }))
        .complete(tally, Arc::clone(&mapped))
        .unwrap();
    let (stop, running) = start(&manager);
    // Each deployment once for itself; `web` once more in the owning
    // controller for its child's initial event (merged or not).
    eventually("the initial reconciles", || async {
        owners.count("db") == 1 && mapped.count("web") == 1 && mapped.count("db") == 1
    })
    .await;

    // A loose config map pointing at `db`: the mapping controller
    // reconciles `db`, the owning one nothing. (The owner's reconciles
    // of `web` for itself and its child's initial event are done first.)
    eventually("the owner's initial reconcile of web", || async {
        owners.count("web") >= 1
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let owners_web = owners.count("web");
    let mut loose = ConfigMap {
        metadata: ObjectMeta {
            name: Some("pointer".into()),
            namespace: Some("team".into()),
            labels: Some([("for".to_string(), "db".to_string())].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    loose = config_maps
        .create(&CreateOptions::default(), &loose)
        .await
        .unwrap();
    eventually("the mapped reconcile", || async { mapped.count("db") == 2 }).await;
    // Retargeted: the old and the new object are both mapped, so both
    // deployments are reconciled.
    loose.metadata.labels = Some([("for".to_string(), "web".to_string())].into());
    config_maps
        .replace("pointer", &Default::default(), &loose)
        .await
        .unwrap();
    eventually("the retarget to reach both", || async {
        mapped.count("db") == 3 && mapped.count("web") == 2
    })
    .await;
    // The owned child's change reaches the owner only.
    config_maps
        .patch(
            "web-config",
            &PatchOptions::default(),
            &Patch::Merge(serde_json::json!({"data": {"k": "v"}})),
        )
        .await
        .unwrap();
    eventually("the owner's reconcile", || async {
        owners.count("web") > owners_web
    })
    .await;
    assert_eq!(
        owners.count("db"),
        1,
        "an unowned config map reached the owner"
    );
    assert_eq!(mapped.count("web"), 2, "an unlabelled change was mapped");

    // Two controllers, one informer (one watch) per kind.
    for resource in ["deployments", "configmaps"] {
        let watches = cluster
            .server()
            .requests()
            .of(Verb::Watch)
            .into_iter()
            .filter(|record| record.path.ends_with(resource))
            .count();
        assert_eq!(watches, 1, "watches of {resource}");
    }
    // Both controllers enqueued from config maps' metadata: not one was
    // decoded.
    let decodes = manager
        .factory()
        .informer_for::<ConfigMap>()
        .stats()
        .decodes;
    assert_eq!(
        (decodes.misses, decodes.hits, decodes.handler_decodes),
        (0, 0, 0),
        "{decodes:?}"
    );
    stop.cancel();
    running.await.unwrap().unwrap();
}
