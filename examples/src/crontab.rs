//! The CronTab custom resource of `examples/crontab-crd.json`, as a user
//! writes it: serde for the wire, k8s-openapi's `Resource` and `Metadata`
//! for clientgo. Its informers and listers are generated into
//! `src/generated/` by clientgo-codegen.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The CRD manifest, as created through the API by the `crd` example.
pub const CRONTAB_CRD: &str = include_str!("../crontab-crd.json");

/// A CronTab (stable.example.com/v1): run `image` on the `cron_spec`
/// schedule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronTab {
    /// `stable.example.com/v1` (the API server needs it on create).
    #[serde(default)]
    pub api_version: String,
    /// `CronTab`.
    #[serde(default)]
    pub kind: String,
    /// Name, namespace, labels and the rest.
    pub metadata: ObjectMeta,
    /// What it asks for.
    #[serde(default)]
    pub spec: CronTabSpec,
}

/// What a CronTab asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronTabSpec {
    /// When to run, in cron syntax (`*/5 * * * *`).
    #[serde(default)]
    pub cron_spec: String,
    /// The container image to run.
    #[serde(default)]
    pub image: String,
    /// How many copies to run.
    #[serde(default)]
    pub replicas: i32,
}

impl CronTab {
    /// A CronTab named `name` in `namespace`.
    pub fn new(namespace: &str, name: &str, spec: CronTabSpec) -> Self {
        CronTab {
            api_version: <CronTab as k8s_openapi::Resource>::API_VERSION.to_string(),
            kind: <CronTab as k8s_openapi::Resource>::KIND.to_string(),
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace.to_string()),
                ..ObjectMeta::default()
            },
            spec,
        }
    }
}

impl k8s_openapi::Resource for CronTab {
    const API_VERSION: &'static str = "stable.example.com/v1";
    const GROUP: &'static str = "stable.example.com";
    const KIND: &'static str = "CronTab";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "crontabs";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for CronTab {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}
