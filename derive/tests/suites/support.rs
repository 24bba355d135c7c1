//! The shared real server, every suite's CRDs installed once, and the
//! two checks every shape gets: what serde writes is accepted and read
//! back equal; what breaks a rule is refused naming the field.

use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};

use clientgo::apimachinery::ApiResource;
use clientgo::apimachinery::KnownScope;
use clientgo::crd::{CrdInstallOptions, CustomResource, check_crd, install_crds};
use clientgo::rest::{CreateOptions, ResourceClient, RestClient};
use clientgo_testing::envtest::ControlPlane;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

/// A namespace on the shared real server, with every suite's CRDs served.
pub(crate) struct Server {
    pub(crate) client: RestClient,
    pub(crate) namespace: String,
}

static INSTALLED: OnceCell<Result<(), String>> = OnceCell::const_new();

fn every_crd() -> Vec<CustomResourceDefinition> {
    let mut crds = super::shapes::crds();
    crds.extend(super::enums::crds());
    crds.extend(super::attributes::crds());
    crds.extend(super::typed::crds());
    crds
}

/// The server, or `None` (the test skips) without envtest's binaries.
pub(crate) async fn server() -> Option<Server> {
    let plane = ControlPlane::shared().await.unwrap()?;
    let client = plane.client().unwrap();
    let installed = INSTALLED
        .get_or_init(|| async {
            let crds = every_crd();
            for crd in &crds {
                let violations = check_crd(crd);
                assert!(
                    violations.is_empty(),
                    "{:?}: {violations:?}",
                    crd.metadata.name
                );
            }
            install_crds(&client, &crds, &CrdInstallOptions::default())
                .await
                .map_err(|error| error.to_string())
        })
        .await;
    if let Err(error) = installed {
        panic!("installing the CRDs: {error}");
    }
    let namespace = plane.create_namespace("derive").await.unwrap();
    Some(Server { client, namespace })
}

fn next_name() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("o{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

impl Server {
    /// A client of `K` in this namespace (or cluster-wide).
    pub(crate) fn api<K>(&self) -> ResourceClient<K>
    where
        K: k8s_openapi::Resource<Scope: KnownScope>,
    {
        if ApiResource::of::<K>().is_namespaced() {
            ResourceClient::namespaced(self.client.clone(), &self.namespace)
        } else {
            ResourceClient::all(self.client.clone())
        }
    }

    /// Creates a `K` with `spec` (as serde writes it), reads it back, and
    /// checks the spec came back equal.
    pub(crate) async fn round_trip<K>(&self, spec: K::Spec) -> K
    where
        K: CustomResource + Serialize + DeserializeOwned + Clone + Debug,
        K::Spec: PartialEq + Debug + Clone,
        K::Scope: KnownScope,
    {
        let mut object = K::new(&next_name(), spec.clone());
        if ApiResource::of::<K>().is_namespaced() {
            object.metadata_mut().namespace = Some(self.namespace.clone());
        }
        let api = self.api::<K>();
        let created = match api.create(&CreateOptions::default(), &object).await {
            Ok(created) => created,
            Err(error) => panic!(
                "{} refused {}: {error}",
                K::KIND,
                serde_json::to_string(&object).unwrap_or_default()
            ),
        };
        let name = created.metadata().name.clone().unwrap();
        let read: K = api.get(&name).await.unwrap();
        assert_eq!(read.spec(), &spec, "{} spec read back", K::KIND);
        read
    }

    /// Sends a `K` whose spec is `spec` (raw JSON) and expects a refusal
    /// whose message has each of `expected`; returns the message.
    pub(crate) async fn refused<K>(&self, spec: Value, expected: &[&str]) -> String
    where
        K: k8s_openapi::Resource<Scope: KnownScope>,
    {
        let answer = self.send::<K>(spec.clone(), "").await;
        let Err(message) = answer else {
            panic!("{} accepted {spec}", K::KIND)
        };
        for part in expected {
            assert!(
                message.contains(part),
                "{:?} not in {message:?} (for {spec})",
                part
            );
        }
        message
    }

    /// Sends a `K` whose spec is `spec` (raw JSON) with `query`; the
    /// stored object's spec, or the server's message.
    pub(crate) async fn send<K>(&self, spec: Value, query: &str) -> Result<Value, String>
    where
        K: k8s_openapi::Resource<Scope: KnownScope>,
    {
        let resource = ApiResource::of::<K>();
        let namespace = resource.is_namespaced().then_some(self.namespace.as_str());
        let path = resource.collection_path(namespace).unwrap();
        let body = json!({
            "apiVersion": K::API_VERSION, "kind": K::KIND,
            "metadata": {"name": next_name()}, "spec": spec,
        });
        let answer = self
            .client
            .post()
            .abs_path(format!("{path}{query}"))
            .json_body(&body)
            .send::<Value>()
            .await;
        match answer {
            Ok(stored) => Ok(stored["spec"].clone()),
            Err(error) => {
                let status = error.status().map(|status| status.code);
                assert!(matches!(status, Some(400 | 422)), "{error}");
                Err(error.to_string())
            }
        }
    }
}
