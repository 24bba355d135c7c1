//! [`Conversion`]: the versions of one kind converted through a hub, as
//! controller-runtime's `conversion.Hub` and `Convertible`: every other
//! version (a spoke) converts to and from the hub with `TryFrom`, and a
//! spoke to another spoke goes through the hub.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

type Step = Box<dyn Fn(Value) -> Result<Value, String> + Send + Sync>;

/// Converts one kind's objects between its versions. Made with
/// [`Conversion::hub`], then one [`spoke`](Conversion::spoke) per other
/// version; given to the server's `/convert` path
/// ([`WebhookServer::conversion`](crate::WebhookServer::conversion)).
pub struct Conversion {
    group: String,
    kind: String,
    /// By `apiVersion`: the object (in that version) to the hub's JSON.
    to_hub: BTreeMap<String, Step>,
    /// By `apiVersion`: the hub's JSON to an object in that version.
    from_hub: BTreeMap<String, Step>,
}

impl std::fmt::Debug for Conversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversion")
            .field("group", &self.group)
            .field("kind", &self.kind)
            .field("versions", &self.to_hub.keys().collect::<Vec<_>>())
            .finish()
    }
}

fn decode<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value)
        .map_err(|error| format!("cannot read it as {}: {error}", std::any::type_name::<T>()))
}

fn encode<T: Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value)
        .map_err(|error| format!("cannot write {}: {error}", std::any::type_name::<T>()))
}

impl Conversion {
    /// The conversions of `H`'s kind, `H` the hub (usually the storage
    /// version).
    pub fn hub<H>() -> Self
    where
        H: k8s_openapi::Resource + Serialize + DeserializeOwned + 'static,
    {
        let mut conversion = Conversion {
            group: H::GROUP.to_owned(),
            kind: H::KIND.to_owned(),
            to_hub: BTreeMap::new(),
            from_hub: BTreeMap::new(),
        };
        let identity = || -> Step { Box::new(|value| encode(&decode::<H>(value)?)) };
        conversion
            .to_hub
            .insert(H::API_VERSION.to_owned(), identity());
        conversion
            .from_hub
            .insert(H::API_VERSION.to_owned(), identity());
        conversion
    }

    /// Adds the spoke `S`, converted to the hub `H` and back by
    /// `TryFrom` (a `From` gives one). A conversion's error is reported on
    /// the object that failed.
    #[must_use]
    pub fn spoke<H, S>(mut self) -> Self
    where
        H: k8s_openapi::Resource + Serialize + DeserializeOwned + TryFrom<S> + 'static,
        S: k8s_openapi::Resource + Serialize + DeserializeOwned + TryFrom<H> + 'static,
        <H as TryFrom<S>>::Error: Display,
        <S as TryFrom<H>>::Error: Display,
    {
        self.to_hub.insert(
            S::API_VERSION.to_owned(),
            Box::new(|value| {
                let spoke = decode::<S>(value)?;
                let hub = H::try_from(spoke).map_err(|error| error.to_string())?;
                encode(&hub)
            }),
        );
        self.from_hub.insert(
            S::API_VERSION.to_owned(),
            Box::new(|value| {
                let hub = decode::<H>(value)?;
                let spoke = S::try_from(hub).map_err(|error| error.to_string())?;
                encode(&spoke)
            }),
        );
        self
    }

    /// The kind's group.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The kind.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// `object` converted to `desired` (an `apiVersion`), its metadata
    /// kept as it was; or why not.
    pub fn convert(&self, object: &Value, desired: &str) -> Result<Value, String> {
        let from = object["apiVersion"].as_str().unwrap_or_default();
        if from == desired {
            return Ok(object.clone());
        }
        let to_hub = self
            .to_hub
            .get(from)
            .ok_or_else(|| format!("no conversion from {from}"))?;
        let from_hub = self
            .from_hub
            .get(desired)
            .ok_or_else(|| format!("no conversion to {desired}"))?;
        let mut converted = from_hub(to_hub(object.clone())?)?;
        // The original metadata, but for labels and annotations, which a
        // conversion may change (kube-apiserver keeps those changes, and a
        // lossy conversion keeps what it cannot express in annotations).
        if let Some(original) = object.get("metadata").and_then(|m| m.as_object()) {
            let mut metadata = original.clone();
            for key in ["labels", "annotations"] {
                match converted["metadata"].get(key) {
                    Some(value) if !value.is_null() => {
                        metadata.insert(key.into(), value.clone());
                    }
                    _ => {
                        metadata.remove(key);
                    }
                }
            }
            if let Some(fields) = converted.as_object_mut() {
                fields.insert("metadata".into(), metadata.into());
            }
        }
        Ok(converted)
    }
}
