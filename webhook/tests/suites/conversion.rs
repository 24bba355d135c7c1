//! A two-version CRD converted by the webhook: objects written at either
//! version read at the other, lists of mixed stored versions, and a
//! conversion's failure reported on the object that failed.

use clientgo::crd::{CrdInstallOptions, CustomResource, install_crds};
use clientgo::rest::CreateOptions;
use clientgo_webhook::conversion::merge_versions_with_webhook;
use clientgo_webhook::{ClientConfig, Conversion, WebhookServerOptions};
use serde::{Deserialize, Serialize};

use super::support::{plane, start, unique};

pub(crate) mod v1 {
    use super::*;

    /// A gadget of one size.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[resource(
        group = "conversion.webhooks.clientgo.test",
        version = "v1",
        kind = "Gadget",
        namespaced
    )]
    pub(crate) struct GadgetSpec {
        pub(crate) size: i32,
    }
}

pub(crate) mod v2 {
    use super::*;

    /// A gadget with a width and a height (v1's size is both).
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[resource(
        group = "conversion.webhooks.clientgo.test",
        version = "v2",
        kind = "Gadget",
        namespaced
    )]
    pub(crate) struct GadgetSpec {
        pub(crate) width: i32,
        pub(crate) height: i32,
    }
}

/// Where v1 keeps v2's height (a lossy conversion's usual place).
const HEIGHT: &str = "conversion.webhooks.clientgo.test/height";

impl TryFrom<v1::Gadget> for v2::Gadget {
    type Error = String;

    fn try_from(old: v1::Gadget) -> Result<Self, String> {
        if old.spec.size < 0 {
            return Err(format!("a size of {} has no width", old.spec.size));
        }
        // v1 keeps a height it cannot express in an annotation.
        let height = old
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(HEIGHT))
            .and_then(|h| h.parse().ok())
            .unwrap_or(old.spec.size);
        let mut new = v2::Gadget::new(
            "",
            v2::GadgetSpec {
                width: old.spec.size,
                height,
            },
        );
        new.metadata = old.metadata;
        if let Some(annotations) = new.metadata.annotations.as_mut() {
            annotations.remove(HEIGHT);
        }
        Ok(new)
    }
}

impl TryFrom<v2::Gadget> for v1::Gadget {
    type Error = String;

    fn try_from(new: v2::Gadget) -> Result<Self, String> {
        let mut old = v1::Gadget::new(
            "",
            v1::GadgetSpec {
                size: new.spec.width,
            },
        );
        old.metadata = new.metadata;
        old.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(HEIGHT.into(), new.spec.height.to_string());
        Ok(old)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_are_converted_by_the_webhook_both_ways() {
    let Some(plane) = plane().await else { return };
    let running = start(
        plane,
        &unique("conversion"),
        WebhookServerOptions::default(),
        |server| {
            server.conversion(Conversion::hub::<v1::Gadget>().spoke::<v1::Gadget, v2::Gadget>());
        },
    )
    .await;
    let client_config =
        ClientConfig::Url(running.url.clone()).conversion(running.certificates.ca_pem().as_bytes());
    let crd =
        merge_versions_with_webhook([v1::Gadget::crd(), v2::Gadget::crd()], "v1", client_config)
            .unwrap();
    let client = plane.client().unwrap();
    install_crds(&client, &[crd], &CrdInstallOptions::default())
        .await
        .unwrap();
    let namespace = plane.create_namespace("conversion").await.unwrap();
    let at_v1 =
        clientgo::rest::ResourceClient::<v1::Gadget>::namespaced(client.clone(), &namespace);
    let at_v2 =
        clientgo::rest::ResourceClient::<v2::Gadget>::namespaced(client.clone(), &namespace);

    // Written at v1, read at v2; written at v2 (stored at v1), read at both.
    at_v1
        .create(
            &CreateOptions::default(),
            &v1::Gadget::new("small", v1::GadgetSpec { size: 2 }).in_namespace(&namespace),
        )
        .await
        .unwrap();
    assert_eq!(
        at_v2.get("small").await.unwrap().spec,
        v2::GadgetSpec {
            width: 2,
            height: 2
        }
    );
    let created = at_v2
        .create(
            &CreateOptions::default(),
            &v2::Gadget::new(
                "wide",
                v2::GadgetSpec {
                    width: 5,
                    height: 3,
                },
            )
            .in_namespace(&namespace),
        )
        .await
        .unwrap();
    assert_eq!(
        created.spec,
        v2::GadgetSpec {
            width: 5,
            height: 3
        },
        "stored at v1 (the height in an annotation), read back through it"
    );
    let stored = at_v1.get("wide").await.unwrap();
    assert_eq!(stored.spec.size, 5);
    assert_eq!(
        stored
            .metadata
            .annotations
            .and_then(|a| a.get(HEIGHT).cloned())
            .as_deref(),
        Some("3"),
        "labels and annotations a conversion sets are kept"
    );
    // Lists convert every item.
    let listed = at_v2.list(&Default::default()).await.unwrap();
    let mut widths: Vec<i32> = listed
        .items
        .iter()
        .map(|gadget| gadget.spec.width)
        .collect();
    widths.sort();
    assert_eq!(widths, [2, 5]);
    assert_eq!(
        at_v1.list(&Default::default()).await.unwrap().items.len(),
        2
    );

    // A conversion that fails is reported on the object that failed.
    at_v1
        .create(
            &CreateOptions::default(),
            &v1::Gadget::new("broken", v1::GadgetSpec { size: -1 }).in_namespace(&namespace),
        )
        .await
        .unwrap();
    let error = at_v2.get("broken").await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(&format!("Gadget {namespace}/broken")),
        "{message}"
    );
    assert!(message.contains("a size of -1 has no width"), "{message}");
}
