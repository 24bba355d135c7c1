//! [`ControlPlane::install_crds`]: CustomResourceDefinitions applied and
//! waited for until the API server serves them.

use clientgo_rest::api::{CrdInstallOptions, install_crds};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::envtest::control_plane::ControlPlane;
use crate::envtest::error::Error;

impl ControlPlane {
    /// Applies each CRD (replacing one of the same name) and waits until
    /// each is `Established` and every served version lists its plural in
    /// discovery, as controller-runtime's envtest does: after this
    /// returns, clients and informers of the new kinds work at once. This
    /// is [`install_crds`] with its default options; a CRD the structural
    /// check or the server refuses (an invalid schema, a bad CEL rule) is
    /// an [`Error::Crd`] naming the problem.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<(), Error> {
        let client = self.client()?;
        install_crds(&client, crds, &CrdInstallOptions::default()).await?;
        Ok(())
    }
}
