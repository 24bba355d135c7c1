//! [`ControlPlane::install_crds`]: CustomResourceDefinitions created (or
//! replaced) and waited for until the API server serves them.

use std::time::{Duration, Instant};

use clientgo_rest::{CreateOptions, ResourceClient, RestClient, UpdateOptions};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::envtest::control_plane::ControlPlane;
use crate::envtest::error::Error;

/// How long a CRD may take to be Established and served.
const CRD_READY_TIMEOUT: Duration = Duration::from_secs(30);

impl ControlPlane {
    /// Creates each CRD (replacing one of the same name), then waits until
    /// each reports `Established` and every served version lists its
    /// plural in discovery, as controller-runtime's envtest does: after
    /// this returns, clients and informers of the new kinds work at once.
    /// A CRD the server refuses (an invalid schema, a bad CEL rule) is an
    /// [`Error::Request`] carrying the server's Status.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<(), Error> {
        let client = self.client()?;
        let api = ResourceClient::<CustomResourceDefinition>::all(client.clone());
        for crd in crds {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let created = api.create(&CreateOptions::default(), crd).await;
            match created {
                Ok(_) => {}
                Err(error) if error.status().is_some_and(|status| status.code == 409) => {
                    let existing = api
                        .get(&name)
                        .await
                        .map_err(Error::request(format!("reading CRD {name}")))?;
                    let mut replacement = crd.clone();
                    replacement.metadata.resource_version = existing.metadata.resource_version;
                    api.replace(&name, &UpdateOptions::default(), &replacement)
                        .await
                        .map_err(Error::request(format!("replacing CRD {name}")))?;
                }
                Err(error) => return Err(Error::request(format!("creating CRD {name}"))(error)),
            }
        }
        for crd in crds {
            wait_served(&client, &api, crd).await?;
        }
        Ok(())
    }
}

async fn wait_served(
    client: &RestClient,
    api: &ResourceClient<CustomResourceDefinition>,
    crd: &CustomResourceDefinition,
) -> Result<(), Error> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let began = Instant::now();
    loop {
        let last = match served(client, api, crd).await {
            Ok(None) => return Ok(()),
            Ok(Some(missing)) => missing,
            Err(error) => error.to_string(),
        };
        if began.elapsed() > CRD_READY_TIMEOUT {
            return Err(Error::CrdNotReady {
                name,
                waited: CRD_READY_TIMEOUT,
                last,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `None` when the CRD is Established and each served version lists its
/// plural; else what is missing.
async fn served(
    client: &RestClient,
    api: &ResourceClient<CustomResourceDefinition>,
    crd: &CustomResourceDefinition,
) -> Result<Option<String>, clientgo_rest::Error> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let current = api.get(&name).await?;
    let established = current
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|condition| condition.type_ == "Established" && condition.status == "True")
        });
    if !established {
        return Ok(Some("not Established yet".into()));
    }
    let group = &crd.spec.group;
    let plural = &crd.spec.names.plural;
    for version in crd.spec.versions.iter().filter(|version| version.served) {
        let path = format!("/apis/{group}/{}", version.name);
        let answer = client.get().abs_path(&path).max_retries(0).send_raw().await;
        let listed = match answer {
            Ok(response) if response.status == 200 => response
                .json::<serde_json::Value>()
                .ok()
                .and_then(|list| list["resources"].as_array().cloned())
                .is_some_and(|resources| {
                    resources
                        .iter()
                        .any(|resource| resource["name"].as_str() == Some(plural.as_str()))
                }),
            Ok(_) => false,
            Err(error) if error.status().is_some_and(|status| status.code == 404) => false,
            Err(error) => return Err(error),
        };
        if !listed {
            return Ok(Some(format!("{path} does not list {plural} yet")));
        }
    }
    Ok(None)
}
