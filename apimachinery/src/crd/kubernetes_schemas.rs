//! [`Schema`] for the k8s-openapi types an operator's API embeds.
//!
//! Scalars with a Kubernetes meaning get that meaning's schema
//! (`IntOrString`, `Quantity`, `Time`, `Condition`, `LabelSelector`).
//! Whole objects (`Pod`, `ConfigMap`, …) are embedded resources. Other
//! nested types (`PodTemplateSpec`, `Container`, …) keep what is written
//! (`x-kubernetes-preserve-unknown-fields`): their full schemas are the
//! cluster's own, and a partial copy would prune fields a newer server
//! adds (and the labels of a template's metadata).

use k8s_openapi::api::{apps, batch, core, rbac};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use k8s_openapi::apimachinery::pkg::{
    api::resource::Quantity, apis::meta::v1 as meta, util::intstr::IntOrString,
};

use crate::crd::object_schema::{add_property, object};
use crate::crd::schema::{Generator, Schema, typed};

/// `x-kubernetes-int-or-string`, with the `anyOf` the server allows it.
fn int_or_string() -> JSONSchemaProps {
    JSONSchemaProps {
        x_kubernetes_int_or_string: Some(true),
        any_of: Some(vec![typed("integer"), typed("string")]),
        ..JSONSchemaProps::default()
    }
}

impl Schema for IntOrString {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        int_or_string()
    }
}

/// The API server's own form of a quantity (`resource.Quantity`'s
/// parser), so `"lots"` is refused on write rather than on read.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

impl Schema for Quantity {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        JSONSchemaProps {
            pattern: Some(QUANTITY_PATTERN.to_owned()),
            ..int_or_string()
        }
    }
}

fn date_time() -> JSONSchemaProps {
    JSONSchemaProps {
        format: Some("date-time".into()),
        ..typed("string")
    }
}

impl Schema for meta::Time {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        date_time()
    }
}

impl Schema for meta::MicroTime {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        date_time()
    }
}

/// `metav1.Condition`, as the API server defines it (a status's
/// `conditions` list, usually `#[schema(list_type = "map", list_map_keys = ["type"])]`).
impl Schema for meta::Condition {
    fn schema(generator: &mut Generator) -> JSONSchemaProps {
        let mut schema = object(Some(
            "One aspect of the object's current state (metav1.Condition).",
        ));
        let string = |max: i64| JSONSchemaProps {
            max_length: Some(max),
            ..typed("string")
        };
        add_property(&mut schema, "type", string(316), true);
        add_property(
            &mut schema,
            "status",
            JSONSchemaProps {
                enum_: Some(
                    ["True", "False", "Unknown"]
                        .map(|value| JSON(value.into()))
                        .to_vec(),
                ),
                ..typed("string")
            },
            true,
        );
        add_property(
            &mut schema,
            "lastTransitionTime",
            generator.subschema::<meta::Time>(),
            true,
        );
        add_property(&mut schema, "reason", string(1024), true);
        add_property(&mut schema, "message", string(32768), true);
        add_property(
            &mut schema,
            "observedGeneration",
            JSONSchemaProps {
                minimum: Some(0.0),
                ..generator.subschema::<i64>()
            },
            false,
        );
        schema
    }
}

/// `metav1.LabelSelector`, compared whole as the API server does.
impl Schema for meta::LabelSelector {
    fn schema(_: &mut Generator) -> JSONSchemaProps {
        let mut requirement = object(None);
        add_property(&mut requirement, "key", typed("string"), true);
        add_property(&mut requirement, "operator", typed("string"), true);
        add_property(
            &mut requirement,
            "values",
            JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(typed("string")))),
                x_kubernetes_list_type: Some("atomic".into()),
                ..typed("array")
            },
            false,
        );
        let mut schema = object(Some("A label query over objects (metav1.LabelSelector)."));
        add_property(
            &mut schema,
            "matchLabels",
            JSONSchemaProps {
                additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(typed(
                    "string",
                )))),
                ..typed("object")
            },
            false,
        );
        add_property(
            &mut schema,
            "matchExpressions",
            JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(requirement))),
                x_kubernetes_list_type: Some("atomic".into()),
                ..typed("array")
            },
            false,
        );
        schema.x_kubernetes_map_type = Some("atomic".into());
        schema
    }
}

/// Whole objects with `apiVersion`, `kind` and `metadata`.
macro_rules! embedded_resources {
    ($($ty:ty),* $(,)?) => {$(
        impl Schema for $ty {
            fn schema(_: &mut Generator) -> JSONSchemaProps {
                JSONSchemaProps {
                    x_kubernetes_embedded_resource: Some(true),
                    x_kubernetes_preserve_unknown_fields: Some(true),
                    ..typed("object")
                }
            }
        }
    )*};
}

embedded_resources!(
    core::v1::Pod,
    core::v1::ConfigMap,
    core::v1::Secret,
    core::v1::Service,
    core::v1::ServiceAccount,
    core::v1::PersistentVolumeClaim,
    apps::v1::Deployment,
    apps::v1::StatefulSet,
    apps::v1::DaemonSet,
    batch::v1::Job,
    batch::v1::CronJob,
    rbac::v1::Role,
    rbac::v1::RoleBinding,
);

/// Nested Kubernetes types, kept as written.
macro_rules! kept_as_written {
    ($($ty:ty),* $(,)?) => {$(
        impl Schema for $ty {
            fn schema(_: &mut Generator) -> JSONSchemaProps {
                JSONSchemaProps {
                    x_kubernetes_preserve_unknown_fields: Some(true),
                    ..typed("object")
                }
            }
        }
    )*};
}

kept_as_written!(
    meta::ObjectMeta,
    meta::OwnerReference,
    core::v1::PodTemplateSpec,
    core::v1::PodSpec,
    core::v1::Container,
    core::v1::ContainerPort,
    core::v1::EnvVar,
    core::v1::EnvFromSource,
    core::v1::ResourceRequirements,
    core::v1::Volume,
    core::v1::VolumeMount,
    core::v1::Toleration,
    core::v1::Affinity,
    core::v1::LocalObjectReference,
    core::v1::ObjectReference,
    core::v1::SecretKeySelector,
    core::v1::ConfigMapKeySelector,
    core::v1::Probe,
    core::v1::SecurityContext,
    core::v1::PodSecurityContext,
    core::v1::ServicePort,
    core::v1::ServiceSpec,
    core::v1::PersistentVolumeClaimSpec,
    core::v1::TypedLocalObjectReference,
    apps::v1::DeploymentSpec,
    apps::v1::StatefulSetSpec,
    batch::v1::JobSpec,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::schema::schema_for;

    #[test]
    fn kubernetes_scalars() {
        assert_eq!(
            schema_for::<IntOrString>().x_kubernetes_int_or_string,
            Some(true)
        );
        assert!(schema_for::<Quantity>().pattern.is_some());
        assert_eq!(
            schema_for::<meta::Time>().format.as_deref(),
            Some("date-time")
        );
    }

    #[test]
    fn whole_objects_are_embedded_resources_and_templates_are_kept() {
        assert_eq!(
            schema_for::<core::v1::Pod>().x_kubernetes_embedded_resource,
            Some(true)
        );
        let template = schema_for::<core::v1::PodTemplateSpec>();
        assert_eq!(template.x_kubernetes_preserve_unknown_fields, Some(true));
        assert_eq!(template.x_kubernetes_embedded_resource, None);
    }
}
