//! [`EventSink`]: where correlated events are written.

use std::future::Future;

use clientgo_rest::{CreateOptions, Patch, PatchOptions, ResourceClient, RestClient};
use k8s_openapi::api::core::v1::Event;

/// A write that failed.
#[derive(Debug, thiserror::Error)]
#[error("event {namespace}/{name}: {source}")]
pub struct SinkError {
    /// The event's namespace.
    pub namespace: String,
    /// The event's name.
    pub name: String,
    /// What the API answered.
    #[source]
    pub source: clientgo_rest::Error,
}

impl SinkError {
    /// Whether the event was not found (a patch of an event that expired
    /// on the server).
    pub fn is_not_found(&self) -> bool {
        self.source.is_not_found()
    }
}

/// Writes events (client-go's `EventSink`).
pub trait EventSink: Send + Sync + 'static {
    /// Creates `event`; returns what the server stored.
    fn create(&self, event: &Event) -> impl Future<Output = Result<Event, SinkError>> + Send;
    /// Applies `patch` to the event named in `event`.
    fn patch(
        &self,
        event: &Event,
        patch: &serde_json::Value,
    ) -> impl Future<Output = Result<Event, SinkError>> + Send;
}

/// The core/v1 Events API, in each event's namespace.
#[derive(Debug, Clone)]
pub struct ApiSink {
    client: RestClient,
}

impl ApiSink {
    /// Events written through `client`.
    pub fn new(client: RestClient) -> Self {
        ApiSink { client }
    }

    fn events(&self, event: &Event) -> (ResourceClient<Event>, String, String) {
        let namespace = event
            .metadata
            .namespace
            .clone()
            .filter(|namespace| !namespace.is_empty())
            .unwrap_or_else(|| "default".to_string());
        let name = event.metadata.name.clone().unwrap_or_default();
        (
            ResourceClient::namespaced(self.client.clone(), &namespace),
            namespace,
            name,
        )
    }
}

impl EventSink for ApiSink {
    async fn create(&self, event: &Event) -> Result<Event, SinkError> {
        let (events, namespace, name) = self.events(event);
        events
            .create(&CreateOptions::default(), event)
            .await
            .map_err(|source| SinkError {
                namespace,
                name,
                source,
            })
    }

    async fn patch(&self, event: &Event, patch: &serde_json::Value) -> Result<Event, SinkError> {
        let (events, namespace, name) = self.events(event);
        events
            .patch(
                &name,
                &PatchOptions::default(),
                &Patch::Strategic(patch.clone()),
            )
            .await
            .map_err(|source| SinkError {
                namespace,
                name,
                source,
            })
    }
}
