//! Realistic objects for seeding the test server: pods of about 5 KB of
//! JSON, shaped like what a Deployment's ReplicaSet creates.

use serde_json::{Value, json};

/// How many values a [`realistic_pod`]'s `app` label takes: pod `index`
/// is labelled `app: app-{index % REALISTIC_POD_APPS}`.
pub const REALISTIC_POD_APPS: usize = 50;

/// A pod as a cluster would hold it: labels, annotations, an owner
/// reference, a `managedFields` entry with a realistic `fieldsV1` tree, two
/// containers with env, ports, resources and volume mounts, volumes,
/// tolerations, and a status with conditions and container statuses.
/// `index` makes the name, UID-like values and IPs unique. About 5 KB as
/// JSON.
pub fn realistic_pod(index: usize, namespace: &str) -> Value {
    let app = format!("app-{}", index % REALISTIC_POD_APPS);
    let hash = format!(
        "{:08x}",
        (index as u64).wrapping_mul(2_654_435_761) % 0xffff_ffff
    );
    let name = format!("{app}-{hash}-{:05}", index);
    let ip = format!(
        "10.{}.{}.{}",
        (index >> 16) & 255,
        (index >> 8) & 255,
        index & 255
    );
    let container = |container: &str, image: &str, port: u16| {
        json!({
            "name": container,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
            "env": [
                {"name": "APP_NAME", "value": app},
                {"name": "LOG_LEVEL", "value": "info"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}
            ],
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "500m", "memory": "512Mi"}
            },
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/app", "readOnly": true},
                {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}
            ],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
                              "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1,
                              "successThreshold": 1, "failureThreshold": 3},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"
        })
    };
    let container_status = |container: &str, image: &str| {
        json!({
            "name": container,
            "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
            "lastState": {},
            "ready": true,
            "restartCount": 0,
            "image": image,
            "imageID": format!("docker.io/library/{image}@sha256:{hash}{hash}{hash}{hash}{hash}{hash}{hash}{hash}"),
            "containerID": format!("containerd://{hash}{hash}{hash}{hash}{hash}{hash}{hash}{hash}"),
            "started": true
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "app": app,
                "pod-template-hash": hash,
                "tier": if index.is_multiple_of(3) { "frontend" } else { "backend" },
                "version": "v1"
            },
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "8080"
            },
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": format!("{app}-{hash}"),
                "uid": format!("6f1c3a2e-0000-4000-8000-{:012x}", index % 50),
                "controller": true,
                "blockOwnerDeletion": true
            }],
            "managedFields": [{
                "manager": "kube-controller-manager",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-01-01T00:00:01Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:metadata": {
                        "f:generateName": {},
                        "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}, "f:version": {}},
                        "f:ownerReferences": {".": {}, "k:{\"uid\":\"6f1c3a2e\"}": {}}
                    },
                    "f:spec": {
                        "f:containers": {
                            "k:{\"name\":\"app\"}": {".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {},
                                                   "f:name": {}, "f:ports": {}, "f:resources": {}, "f:volumeMounts": {}},
                            "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}
                        },
                        "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                        "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}, "f:volumes": {}
                    }
                }
            }]
        },
        "spec": {
            "containers": [container("app", "example/app:1.4.2", 8080), container("sidecar", "example/proxy:2.0.1", 9090)],
            "volumes": [
                {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}},
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
                ]}}
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": format!("node-{}", index % 20),
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0,
            "enableServiceLinks": true
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-01-01T00:00:02Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:06Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:06Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"}
            ],
            "hostIP": format!("192.168.{}.{}", (index / 250) % 250, index % 250),
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": "2026-01-01T00:00:02Z",
            "containerStatuses": [container_status("app", "example/app:1.4.2"), container_status("sidecar", "example/proxy:2.0.1")],
            "qosClass": "Burstable"
        }
    })
}

/// A Deployment as a cluster would hold it: labels, annotations, a
/// selector, a pod template with one container (env, ports, resources,
/// probes), a rolling-update strategy and a status with conditions.
/// `index` makes the name unique; about 2 KB as JSON.
pub fn realistic_deployment(index: usize, namespace: &str) -> Value {
    let app = format!("app-{}", index % 50);
    let name = format!("{app}-{index:05}");
    let replicas = 1 + index % 5;
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": app, "team": format!("team-{}", index % 7)},
            "annotations": {"deployment.kubernetes.io/revision": "3"}
        },
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": app, "instance": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": app, "instance": name}},
                "spec": {
                    "containers": [{
                        "name": "server",
                        "image": format!("registry.example.com/{app}:1.{}.0", index % 9),
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "env": [{"name": "APP_NAME", "value": app}, {"name": "LOG_LEVEL", "value": "info"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5}
                    }],
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 30
                }
            }
        },
        "status": {
            "observedGeneration": 1,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                 "lastUpdateTime": "2026-01-01T00:00:10Z", "lastTransitionTime": "2026-01-01T00:00:10Z"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                 "lastUpdateTime": "2026-01-01T00:00:10Z", "lastTransitionTime": "2026-01-01T00:00:01Z"}
            ]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_are_about_five_kilobytes_and_unique() {
        let first = serde_json::to_vec(&realistic_pod(1, "default")).unwrap_or_default();
        assert!(
            (4_000..=6_500).contains(&first.len()),
            "{} bytes",
            first.len()
        );
        let a = realistic_pod(7, "ns");
        let b = realistic_pod(8, "ns");
        assert_ne!(a["metadata"]["name"], b["metadata"]["name"]);
        assert_eq!(a["metadata"]["namespace"], "ns");
    }

    #[test]
    fn deployments_decode_as_deployments() {
        let value = realistic_deployment(3, "shop");
        let size = serde_json::to_vec(&value).unwrap_or_default().len();
        assert!((1_200..=3_000).contains(&size), "{size} bytes");
        let deployment: k8s_openapi::api::apps::v1::Deployment =
            serde_json::from_value(value).unwrap();
        assert_eq!(deployment.metadata.namespace.as_deref(), Some("shop"));
        assert_eq!(deployment.spec.and_then(|s| s.replicas), Some(4));
    }
}
