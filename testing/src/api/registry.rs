//! [`ResourceRegistry`]: which resources the test server serves.

use std::collections::BTreeMap;

use clientgo_apimachinery::ApiResource;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ComponentStatus, ConfigMap, Endpoints, Event, LimitRange, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, PodTemplate, ReplicationController, ResourceQuota, Secret, Service,
    ServiceAccount,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::events::v1::Event as EventsEvent;
use k8s_openapi::api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
use k8s_openapi::api::networking::v1::{
    IPAddress, Ingress, IngressClass, NetworkPolicy, ServiceCIDR,
};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{
    CSIDriver, CSINode, CSIStorageCapacity, StorageClass, VolumeAttachment,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;

/// The resources a test server serves, by group, version and plural.
#[derive(Debug, Clone, Default)]
pub struct ResourceRegistry {
    resources: BTreeMap<(String, String, String), ApiResource>,
    /// The keys of the resources [`with_builtins`](Self::with_builtins)
    /// added: served as compiled-in types, whose list items carry no
    /// `apiVersion` and `kind`.
    builtins: std::collections::BTreeSet<(String, String, String)>,
    /// The short names and categories a custom resource's definition gave
    /// it, by group and plural (discovery serves them).
    names: BTreeMap<(String, String), DiscoveryNames>,
}

/// A custom resource's short names and categories, from its definition's
/// `spec.names`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryNames {
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.categories`.
    pub categories: Vec<String>,
}

fn key_of(resource: &ApiResource) -> (String, String, String) {
    (
        resource.group().to_string(),
        resource.version().to_string(),
        resource.plural().to_string(),
    )
}

impl ResourceRegistry {
    /// Every GA built-in resource that can be listed and exists in every
    /// Kubernetes version this crate supports (1.33 and later): the core,
    /// admissionregistration, apiextensions, apiregistration, apps,
    /// autoscaling, batch, certificates, coordination, discovery, events,
    /// flowcontrol, networking, node, policy, rbac, scheduling and storage
    /// groups. (Types that became GA later, and beta or alpha versions, can
    /// be added with [`register`](Self::register).)
    pub fn with_builtins() -> Self {
        let mut registry = ResourceRegistry::default();
        for resource in [
            ApiResource::of::<Pod>(),
            ApiResource::of::<ConfigMap>(),
            ApiResource::of::<Secret>(),
            ApiResource::of::<Service>(),
            ApiResource::of::<ServiceAccount>(),
            ApiResource::of::<Endpoints>(),
            ApiResource::of::<Event>(),
            ApiResource::of::<Namespace>(),
            ApiResource::of::<Node>(),
            ApiResource::of::<PersistentVolume>(),
            ApiResource::of::<PersistentVolumeClaim>(),
            ApiResource::of::<Deployment>(),
            ApiResource::of::<ReplicaSet>(),
            ApiResource::of::<StatefulSet>(),
            ApiResource::of::<DaemonSet>(),
            ApiResource::of::<Job>(),
            ApiResource::of::<CronJob>(),
            ApiResource::of::<Lease>(),
            ApiResource::of::<Role>(),
            ApiResource::of::<RoleBinding>(),
            ApiResource::of::<ClusterRole>(),
            ApiResource::of::<ClusterRoleBinding>(),
            ApiResource::of::<CustomResourceDefinition>(),
            ApiResource::of::<LimitRange>(),
            ApiResource::of::<PodTemplate>(),
            ApiResource::of::<ReplicationController>(),
            ApiResource::of::<ResourceQuota>(),
            ApiResource::of::<ControllerRevision>(),
            ApiResource::of::<HorizontalPodAutoscaler>(),
            ApiResource::of::<CertificateSigningRequest>(),
            ApiResource::of::<EndpointSlice>(),
            ApiResource::of::<EventsEvent>(),
            ApiResource::of::<Ingress>(),
            ApiResource::of::<IngressClass>(),
            ApiResource::of::<NetworkPolicy>(),
            ApiResource::of::<RuntimeClass>(),
            ApiResource::of::<PodDisruptionBudget>(),
            ApiResource::of::<PriorityClass>(),
            ApiResource::of::<StorageClass>(),
            ApiResource::of::<CSIDriver>(),
            ApiResource::of::<CSINode>(),
            ApiResource::of::<VolumeAttachment>(),
            ApiResource::of::<MutatingWebhookConfiguration>(),
            ApiResource::of::<ValidatingWebhookConfiguration>(),
            ApiResource::of::<ValidatingAdmissionPolicy>(),
            ApiResource::of::<ValidatingAdmissionPolicyBinding>(),
            ApiResource::of::<FlowSchema>(),
            ApiResource::of::<PriorityLevelConfiguration>(),
            ApiResource::of::<APIService>(),
            ApiResource::of::<CSIStorageCapacity>(),
            ApiResource::of::<IPAddress>(),
            ApiResource::of::<ServiceCIDR>(),
            ApiResource::of::<ComponentStatus>(),
        ] {
            registry.builtins.insert(key_of(&resource));
            registry.register(resource);
        }
        registry
    }

    /// Whether `resource` is one of [`with_builtins`](Self::with_builtins)'
    /// (a compiled-in type), not a custom resource.
    pub fn is_builtin(&self, resource: &ApiResource) -> bool {
        self.builtins.contains(&key_of(resource))
    }

    /// Serves another resource (a custom resource, say); replaces a
    /// resource with the same group, version and plural.
    pub fn register(&mut self, resource: ApiResource) {
        self.resources.insert(key_of(&resource), resource);
    }

    /// Gives the resources of `group` and `plural` the names discovery
    /// lists for them.
    pub fn set_names(&mut self, group: &str, plural: &str, names: DiscoveryNames) {
        self.names
            .insert((group.to_string(), plural.to_string()), names);
    }

    /// The names [`set_names`](Self::set_names) gave, if any.
    pub fn names(&self, group: &str, plural: &str) -> Option<&DiscoveryNames> {
        self.names.get(&(group.to_string(), plural.to_string()))
    }

    /// Stops serving a resource.
    pub fn unregister(&mut self, resource: &ApiResource) {
        self.resources.remove(&key_of(resource));
    }

    /// The resource served at a group, version and plural.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ApiResource> {
        self.resources
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// Whether any resource is served at this group and version (the real
    /// server answers a plain-text 404 for paths under one that is not).
    pub fn serves(&self, group: &str, version: &str) -> bool {
        self.resources
            .keys()
            .any(|(g, v, _)| g == group && v == version)
    }

    /// Every served resource.
    pub fn iter(&self) -> impl Iterator<Item = &ApiResource> {
        self.resources.values()
    }
}
