//! An exec credential plugin's token or client certificate, cached until
//! it expires (client-go's `plugin/pkg/client/auth/exec`).

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderValue;
use tokio::sync::Mutex;

use crate::auth::authorization::{Authorization, bearer};
use crate::auth::error::AuthFailure;
use crate::auth::exec_plugin::{ExecClusterInfo, ExecCredential, run_plugin};
use crate::config::exec::ExecConfig;
use crate::config::pem::certified_key;
use crate::transport::client_certificate::ClientCertificateSlot;

/// A credential is refreshed this long before it expires.
const EXPIRY_LEEWAY: Duration = Duration::from_secs(10);

/// An exec plugin's credential, cached until it expires.
#[derive(Debug)]
pub(crate) struct ExecAuthenticator {
    pub(super) config: ExecConfig,
    pub(super) cluster: ExecClusterInfo,
    pub(super) cached: Mutex<Option<CachedExec>>,
    pub(super) certificate_slot: Arc<ClientCertificateSlot>,
    pub(super) origin: String,
}

#[derive(Debug)]
pub(super) struct CachedExec {
    credential: ExecCredential,
    authorization: Option<HeaderValue>,
}

impl ExecAuthenticator {
    pub(super) async fn authorization(&self) -> Result<Authorization, AuthFailure> {
        // One plugin run at a time; callers queue behind it and share its
        // result.
        let mut cached = self.cached.lock().await;
        if let Some(current) = cached.as_ref()
            && !expired(&current.credential)
        {
            return Ok(Authorization {
                header: current.authorization.clone(),
                certificate_changed: false,
            });
        }
        let credential = run_plugin(&self.config, Some(&self.cluster)).await?;
        let authorization = match &credential.token {
            Some(token) => Some(bearer(token)?),
            None => None,
        };
        let key = match &credential.client_certificate {
            Some((certificate, key)) => Some(certified_key(
                certificate.as_bytes(),
                key.as_bytes(),
                ("status.clientCertificateData", "status.clientKeyData"),
                &format!("exec plugin {:?} ({})", self.config.command, self.origin),
            )?),
            None => None,
        };
        let certificate_changed = key.is_some() && self.certificate_slot.set(key);
        tracing::debug!(
            command = %self.config.command,
            expires = ?credential.expires,
            certificate_changed,
            "exec credential plugin ran"
        );
        *cached = Some(CachedExec {
            credential,
            authorization: authorization.clone(),
        });
        Ok(Authorization {
            header: authorization,
            certificate_changed,
        })
    }

    pub(super) async fn invalidate(&self, used: &Authorization) -> bool {
        let mut cached = self.cached.lock().await;
        match cached.as_ref() {
            // Someone already refreshed since this request was sent.
            Some(current) if current.authorization != used.header => true,
            Some(_) => {
                *cached = None;
                true
            }
            None => true,
        }
    }
}

fn expired(credential: &ExecCredential) -> bool {
    match credential.expires {
        None => false,
        Some(expires) => {
            let leeway = jiff::SignedDuration::try_from(EXPIRY_LEEWAY).unwrap_or_default();
            jiff::Timestamp::now() >= expires.checked_sub(leeway).unwrap_or(expires)
        }
    }
}
