//! [`install_crds`]: CustomResourceDefinitions applied by server-side
//! apply and waited for until the API server serves their kinds, as an
//! operator installs its API at start-up and controller-runtime's envtest
//! installs CRDs before a suite.

use std::time::{Duration, Instant};

use clientgo_apimachinery::crd::{CrdError, check_crd};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::api::{Patch, PatchOptions, ResourceClient};
use crate::client::RestClient;

/// Options of [`install_crds`].
#[derive(Debug, Clone)]
pub struct CrdInstallOptions {
    /// The field manager of the apply (default `clientgo-crd-install`).
    pub field_manager: String,
    /// How long each CRD may take to be served (default 30 s).
    pub timeout: Duration,
    /// How often to look again while waiting (default 100 ms).
    pub poll_interval: Duration,
}

impl Default for CrdInstallOptions {
    fn default() -> Self {
        CrdInstallOptions {
            field_manager: "clientgo-crd-install".into(),
            timeout: Duration::from_secs(30),
            poll_interval: Duration::from_millis(100),
        }
    }
}

/// Why [`install_crds`] failed.
#[derive(Debug, thiserror::Error)]
pub enum CrdInstallError {
    /// The structural check found what the server would refuse; nothing
    /// was sent.
    #[error(transparent)]
    Invalid(#[from] CrdError),
    /// The server refused the apply (its message names the field, or the
    /// CEL rule that does not compile).
    #[error("applying CRD {name}: {source}")]
    Apply {
        /// The CRD.
        name: String,
        /// The server's answer.
        #[source]
        source: crate::Error,
    },
    /// The CRD was applied but is not served yet.
    #[error("CRD {name} not served after {waited:?}: {last}")]
    NotServed {
        /// The CRD.
        name: String,
        /// How long was waited.
        waited: Duration,
        /// What was missing at the last look.
        last: String,
    },
}

/// Applies each CRD (server-side apply with `force`, so this manager owns
/// the definition and a changed type updates it), then waits until each is
/// `Established` and every served version lists its plural in discovery:
/// when this returns, clients and informers of the kinds work at once.
///
/// Each CRD is checked first ([`check_crd`]): a problem is an
/// [`CrdInstallError::Invalid`] that names it, with no request made. The
/// CRDs are applied in order, then waited for together.
pub async fn install_crds(
    client: &RestClient,
    crds: &[CustomResourceDefinition],
    options: &CrdInstallOptions,
) -> Result<(), CrdInstallError> {
    for crd in crds {
        let violations = check_crd(crd);
        if !violations.is_empty() {
            return Err(CrdError::Refused {
                name: crd.metadata.name.clone().unwrap_or_default(),
                violations,
            }
            .into());
        }
    }
    let api = ResourceClient::<CustomResourceDefinition>::all(client.clone());
    let apply = PatchOptions::apply(options.field_manager.clone()).force();
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut body = serde_json::to_value(crd).map_err(|error| CrdInstallError::Apply {
            name: name.clone(),
            source: crate::Error::Request(crate::client::RequestError::Encode(error)),
        })?;
        if let Some(object) = body.as_object_mut() {
            object.insert("apiVersion".into(), "apiextensions.k8s.io/v1".into());
            object.insert("kind".into(), "CustomResourceDefinition".into());
            object.remove("status");
        }
        api.patch(&name, &apply, &Patch::Apply(body))
            .await
            .map_err(|source| CrdInstallError::Apply { name, source })?;
    }
    for crd in crds {
        wait_served(client, &api, crd, options).await?;
    }
    Ok(())
}

async fn wait_served(
    client: &RestClient,
    api: &ResourceClient<CustomResourceDefinition>,
    crd: &CustomResourceDefinition,
    options: &CrdInstallOptions,
) -> Result<(), CrdInstallError> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let began = Instant::now();
    loop {
        let last = match served(client, api, crd).await {
            Ok(None) => return Ok(()),
            Ok(Some(missing)) => missing,
            Err(error) => error.to_string(),
        };
        if began.elapsed() > options.timeout {
            return Err(CrdInstallError::NotServed {
                name,
                waited: options.timeout,
                last,
            });
        }
        tokio::time::sleep(options.poll_interval).await;
    }
}

/// `None` when the CRD is Established and each served version lists its
/// plural; else what is missing.
async fn served(
    client: &RestClient,
    api: &ResourceClient<CustomResourceDefinition>,
    crd: &CustomResourceDefinition,
) -> Result<Option<String>, crate::Error> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let current = api.get(&name).await?;
    let conditions = current
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref());
    let condition =
        |type_: &str| conditions.and_then(|list| list.iter().find(|c| c.type_ == type_));
    if let Some(refused) = condition("NamesAccepted").filter(|c| c.status == "False") {
        return Ok(Some(format!(
            "names not accepted: {}",
            refused.message.clone().unwrap_or_default()
        )));
    }
    if condition("Established").is_none_or(|c| c.status != "True") {
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
