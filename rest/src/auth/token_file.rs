//! A bearer token read from a file and read again every
//! [`TOKEN_FILE_REFRESH`] (client-go's `cachingTokenSource` over a file,
//! as a service account's projected token is rotated).

use std::path::PathBuf;

use reqwest::header::HeaderValue;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::auth::authorization::{Authorization, bearer};
use crate::auth::error::{AuthError, AuthFailure};
use crate::config::rest_config::TOKEN_FILE_REFRESH;

/// A bearer token read from a file, cached for [`TOKEN_FILE_REFRESH`].
#[derive(Debug)]
pub(crate) struct TokenFile {
    pub(super) path: PathBuf,
    /// The static token configured beside the file, used when the file was never
    /// readable.
    pub(super) fallback: Option<String>,
    pub(super) cached: Mutex<Option<(HeaderValue, Instant)>>,
}

impl TokenFile {
    pub(super) async fn header(&self) -> Result<HeaderValue, AuthFailure> {
        let mut cached = self.cached.lock().await;
        if let Some((value, read_at)) = cached.as_ref()
            && read_at.elapsed() < TOKEN_FILE_REFRESH
        {
            return Ok(value.clone());
        }
        match self.read().await {
            Ok(value) => {
                *cached = Some((value.clone(), Instant::now()));
                Ok(value)
            }
            Err(error) => {
                // client-go keeps using the token it has when a re-read
                // fails; only the first read is fatal.
                if let Some((value, _)) = cached.as_ref() {
                    tracing::warn!(%error, "cannot re-read the bearer token file; keeping the previous token");
                    return Ok(value.clone());
                }
                if let Some(token) = &self.fallback {
                    tracing::warn!(%error, "cannot read the bearer token file; using the configured token");
                    return Ok(bearer(token)?);
                }
                Err(error)
            }
        }
    }

    async fn read(&self) -> Result<HeaderValue, AuthFailure> {
        let text = tokio::fs::read_to_string(&self.path)
            .await
            .map_err(|source| AuthError::TokenFile {
                path: self.path.clone(),
                source,
            })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(AuthError::EmptyTokenFile {
                path: self.path.clone(),
            }
            .into());
        }
        Ok(bearer(token)?)
    }

    pub(super) async fn invalidate(&self, used: &Authorization) -> bool {
        let mut cached = self.cached.lock().await;
        let stale = matches!((cached.as_ref(), &used.header), (Some((value, _)), Some(used)) if value == used);
        if stale {
            *cached = None;
        }
        stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_token_file_is_read_again_after_a_minute() {
        let path = std::env::temp_dir().join(format!("clientgo-rest-token-{}", std::process::id()));
        std::fs::write(&path, "first\n").unwrap();
        let file = TokenFile {
            path: path.clone(),
            fallback: None,
            cached: Mutex::new(None),
        };
        assert_eq!(file.header().await.unwrap(), "Bearer first");
        std::fs::write(&path, "second").unwrap();
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(file.header().await.unwrap(), "Bearer first", "cached");
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(file.header().await.unwrap(), "Bearer second", "re-read");
        // A failed re-read keeps the last good token.
        std::fs::remove_file(&path).unwrap();
        tokio::time::advance(TOKEN_FILE_REFRESH).await;
        assert_eq!(file.header().await.unwrap(), "Bearer second");
    }
}
