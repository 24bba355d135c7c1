//! [`WebhookOptions`]: how kube-apiserver is told to call one admission
//! path (a webhook of a configuration), and the paths' default names.

/// One admission webhook as its configuration says it: which requests
/// kube-apiserver sends, and what it does when the webhook fails.
/// Defaults: kube-apiserver's (`failurePolicy: Fail`, `sideEffects:
/// None`, `timeoutSeconds: 10`, `matchPolicy: Equivalent`), for the
/// registered kind's creates and updates.
#[derive(Debug, Clone, Default)]
pub struct WebhookOptions {
    /// The webhook's fully qualified name (default `v<kind>.<group>` or
    /// `m<kind>.<group>`, lowercase).
    pub name: Option<String>,
    /// The path served (default controller-runtime's:
    /// `/validate-<group with dashes>-<version>-<kind>`, `/mutate-…`).
    pub path: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*` (default `CREATE`
    /// and `UPDATE`).
    pub operations: Option<Vec<String>>,
    /// `Fail` (default) or `Ignore`.
    pub failure_policy: Option<String>,
    /// `None` (default) or `NoneOnDryRun`.
    pub side_effects: Option<String>,
    /// 1 to 30 (kube-apiserver's default 10).
    pub timeout_seconds: Option<i32>,
    /// `Equivalent` (default) or `Exact`.
    pub match_policy: Option<String>,
    /// Only objects in namespaces these labels select.
    pub namespace_selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    /// Only objects these labels select.
    pub object_selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
}

impl WebhookOptions {
    /// For these operations.
    pub fn operations<'a>(mut self, operations: impl IntoIterator<Item = &'a str>) -> Self {
        self.operations = Some(operations.into_iter().map(str::to_owned).collect());
        self
    }

    /// With this failure policy (`Fail` or `Ignore`).
    pub fn failure_policy(mut self, policy: &str) -> Self {
        self.failure_policy = Some(policy.to_owned());
        self
    }

    /// With this timeout.
    pub fn timeout_seconds(mut self, seconds: i32) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }

    /// Named so.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// Served at this path.
    pub fn path(mut self, path: &str) -> Self {
        self.path = Some(path.to_owned());
        self
    }

    /// Only for objects with these labels.
    pub fn object_selector(
        mut self,
        selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Self {
        self.object_selector = Some(selector);
        self
    }
}

/// What a configuration needs to know of one registered path.
#[derive(Debug, Clone)]
pub(crate) struct Registration {
    pub(crate) path: String,
    pub(crate) mutating: bool,
    pub(crate) name: String,
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) namespaced: bool,
    pub(crate) options: WebhookOptions,
}

/// controller-runtime's path for a kind: `/<verb>-<group, dots as
/// dashes>-<version>-<lowercase kind>` (the core group gives a double dash).
pub(crate) fn default_path(verb: &str, group: &str, version: &str, kind: &str) -> String {
    format!(
        "/{verb}-{}-{version}-{}",
        group.replace('.', "-"),
        kind.to_ascii_lowercase()
    )
}

/// Whether kube-apiserver and controller-runtime accept `path`.
pub(crate) fn valid_path(path: &str) -> bool {
    path == "/"
        || (path.starts_with('/')
            && path[1..].split('/').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_controller_runtime_makes_them() {
        assert_eq!(
            default_path("validate", "stable.example.com", "v1", "CronTab"),
            "/validate-stable-example-com-v1-crontab"
        );
        assert_eq!(default_path("mutate", "", "v1", "Pod"), "/mutate--v1-pod");
        assert!(valid_path("/validate-a-v1-b"));
        assert!(!valid_path("validate"));
        assert!(!valid_path("/a//b"));
        assert!(!valid_path("/a?b"));
    }
}
