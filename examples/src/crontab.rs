//! The CronTab custom resource, as an operator author writes it: the spec
//! struct and one derive. The root type `CronTab`, its `Resource` and
//! `Metadata`, and `CronTab::crd()` (the CRD with its schema) are
//! generated; informers, listers and clients take it as a built-in type.

use clientgo::crd::CustomResource;
use serde::{Deserialize, Serialize};

/// Run `image` on the `cron_spec` schedule.
#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[resource(
    group = "stable.example.com",
    version = "v1",
    kind = "CronTab",
    namespaced
)]
#[resource(short_name = "ct", derive = "PartialEq")]
#[resource(printer_column(name = "Schedule", json_path = ".spec.cronSpec"))]
#[resource(printer_column(name = "Image", json_path = ".spec.image"))]
#[resource(printer_column(name = "Replicas", json_path = ".spec.replicas"))]
#[serde(rename_all = "camelCase")]
pub struct CronTabSpec {
    /// When to run, in cron syntax (`*/5 * * * *`): five fields.
    #[schema(max_length = 64)]
    #[schema(rule(
        rule = "self.split(' ').size() == 5",
        message = "a cron schedule has five fields"
    ))]
    pub cron_spec: String,
    /// The container image to run.
    #[schema(min_length = 1)]
    pub image: String,
    /// How many copies to run (1 when not given).
    #[serde(default = "one")]
    #[schema(minimum = 0, maximum = 100)]
    pub replicas: i32,
}

fn one() -> i32 {
    1
}
