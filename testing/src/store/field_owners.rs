//! Server-side apply's field ownership, as far as a client can tell it
//! apart: who owns which field of an object, conflicts between appliers,
//! forcing, and fields an applier stops applying being removed.
//!
//! **What it tracks.** Each object's managers, a manager being a field
//! manager's name and operation (`Apply`, or `Update` for a PUT or a
//! non-apply PATCH), and the leaf fields each owns: every scalar under the
//! object's top-level fields, each label and annotation, and
//! `metadata.ownerReferences` and `metadata.finalizers` whole. Lists are
//! atomic (owned whole), where the real server merges lists with keys
//! (containers by name) item by item. `status` is not tracked (a main
//! resource apply does not write it).
//!
//! **What the real server does differently.** It writes ownership into
//! the object as `metadata.managedFields`; this server keeps it beside
//! the object, so the objects it serves carry none (a client's cache
//! strips them anyway). Updates are tracked only for objects applied at
//! least once, so the writes of a benchmark cost nothing more.
//!
//! **Rules** (kube-apiserver's, on these leaves). An apply that sets a
//! field another manager owns, to a value other than the one stored, is a
//! conflict: 409 with one `FieldManagerConflict` cause per field, unless
//! `force` is given, which moves the field to the applier. A field set to
//! the stored value is shared. A field the applier owned and no longer
//! applies is removed from the object, unless another manager owns it. An
//! update that changes a field takes it from every other manager.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use clientgo_apimachinery::{Status, StatusCause, StatusDetails, StatusReason};
use parking_lot::Mutex;
use serde_json::Value;

use crate::store::object::ObjectKey;
use crate::util::merge_patch::merge_patch;

/// A field's path from the object's root (`["spec", "replicas"]`).
pub(crate) type FieldPath = Vec<String>;

/// How a manager wrote its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// Server-side apply.
    Apply,
    /// A PUT, or a PATCH other than apply.
    Update,
}

/// One field manager of an object and the fields it owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Manager {
    pub(crate) name: String,
    pub(crate) operation: Operation,
    /// For an `Update`: the API version it wrote with and when, which the
    /// conflict message names.
    pub(crate) api_version: String,
    pub(crate) time: String,
    pub(crate) fields: BTreeSet<FieldPath>,
}

impl Manager {
    /// How the conflict message names it (kube-apiserver's `printManager`).
    fn described(&self) -> String {
        match self.operation {
            Operation::Apply => format!("{:?}", self.name),
            Operation::Update => format!(
                "{:?} using {} at {}",
                self.name, self.api_version, self.time
            ),
        }
    }

    fn is(&self, name: &str, operation: Operation) -> bool {
        self.name == name && self.operation == operation
    }
}

/// Who writes, as a request says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Writer {
    /// The manager's name (`fieldManager`, else the user agent's product).
    pub(crate) name: String,
    /// The apply's `force`.
    pub(crate) force: bool,
    /// The API version of the request.
    pub(crate) api_version: String,
    /// When.
    pub(crate) time: String,
}

impl Writer {
    /// The writer a request names: its `fieldManager` query parameter,
    /// else the product of its `User-Agent` (the part before the first
    /// `/`, as kube-apiserver defaults it), else `unknown`; `force=true`
    /// forces; `api_version` and `time` as given.
    pub(crate) fn from_request(
        query: &str,
        user_agent: &str,
        api_version: &str,
        time: String,
    ) -> Writer {
        let mut name = None;
        let mut force = false;
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "fieldManager" if !value.is_empty() => name = Some(value.into_owned()),
                "force" => force = value == "true",
                _ => {}
            }
        }
        let product = user_agent.split('/').next().unwrap_or_default().trim();
        Writer {
            name: name.unwrap_or_else(|| {
                if product.is_empty() {
                    "unknown".to_string()
                } else {
                    product.to_string()
                }
            }),
            force,
            api_version: api_version.to_string(),
            time,
        }
    }
}

/// The managers of every object applied at least once.
#[derive(Debug, Default)]
pub(crate) struct FieldOwners {
    /// By object, with the UID of the object they belong to: a key
    /// deleted and created again starts afresh.
    table: Mutex<HashMap<ObjectKey, (String, Vec<Manager>)>>,
}

impl FieldOwners {
    /// The managers of the object `key` with `uid` (none if never applied).
    pub(crate) fn managers(&self, key: &ObjectKey, uid: &str) -> Option<Vec<Manager>> {
        let table = self.table.lock();
        let (owner_uid, managers) = table.get(key)?;
        (owner_uid == uid).then(|| managers.clone())
    }

    /// Records the managers of `key` after a write.
    pub(crate) fn set(&self, key: &ObjectKey, uid: &str, managers: Vec<Manager>) {
        self.table
            .lock()
            .insert(key.clone(), (uid.to_string(), managers));
    }

    /// After an update of an applied object from `old` to `new` by
    /// `writer`: the fields it changed move to it.
    pub(crate) fn updated(
        &self,
        key: &ObjectKey,
        uid: &str,
        old: &Value,
        new: &Value,
        writer: &Writer,
    ) {
        let Some(managers) = self.managers(key, uid) else {
            return;
        };
        self.set(key, uid, after_update(managers, old, new, writer));
    }
}

/// The leaf fields of `object` a manager can own, with their values.
pub(crate) fn leaves(object: &Value) -> BTreeMap<FieldPath, &Value> {
    let mut found = BTreeMap::new();
    let Value::Object(fields) = object else {
        return found;
    };
    for (name, value) in fields {
        match name.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                let Value::Object(metadata) = value else {
                    continue;
                };
                for map in ["labels", "annotations"] {
                    if let Some(Value::Object(entries)) = metadata.get(map) {
                        for (entry, value) in entries {
                            found.insert(vec!["metadata".into(), map.into(), entry.clone()], value);
                        }
                    }
                }
                for whole in ["ownerReferences", "finalizers"] {
                    if let Some(value) = metadata.get(whole) {
                        found.insert(vec!["metadata".into(), whole.into()], value);
                    }
                }
            }
            _ => collect(vec![name.clone()], value, &mut found),
        }
    }
    found
}

fn collect<'a>(path: FieldPath, value: &'a Value, found: &mut BTreeMap<FieldPath, &'a Value>) {
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            for (name, value) in fields {
                let mut inner = path.clone();
                inner.push(name.clone());
                collect(inner, value, found);
            }
        }
        _ => {
            found.insert(path, value);
        }
    }
}

/// A field as the API server prints it (`.spec.replicas`).
fn printed(path: &FieldPath) -> String {
    path.iter().map(|step| format!(".{step}")).collect()
}

/// The 409 of an apply that conflicts (kube-apiserver's
/// `NewConflictError`), conflicts in field order.
fn conflict_status(conflicts: &[(&Manager, &FieldPath)]) -> Status {
    let causes: Vec<StatusCause> = conflicts
        .iter()
        .map(|(manager, path)| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", manager.described()),
            field: printed(path),
        })
        .collect();
    let message = if let [(manager, path)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            manager.described(),
            printed(path)
        )
    } else {
        let mut by_manager: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (manager, path) in conflicts {
            by_manager
                .entry(manager.described())
                .or_default()
                .push(printed(path));
        }
        let mut lines = Vec::new();
        for (manager, paths) in by_manager {
            lines.push(format!("conflicts with {manager}:"));
            lines.extend(paths.into_iter().map(|path| format!("- {path}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    Status::failure(409, StatusReason::Conflict, message).with_details(StatusDetails {
        causes,
        ..StatusDetails::default()
    })
}

/// What an apply makes of an object.
#[derive(Debug)]
pub(crate) struct Applied {
    /// The object to store.
    pub(crate) object: Value,
    /// Its managers after.
    pub(crate) managers: Vec<Manager>,
}

/// Applies `applied` by `writer` to `current` (stored, owned by
/// `managers`): the object and managers after, or the 409 of the
/// conflicts.
pub(crate) fn apply(
    current: &Value,
    managers: Vec<Manager>,
    applied: &Value,
    writer: &Writer,
) -> Result<Applied, Status> {
    let stored = leaves(current);
    let wanted = leaves(applied);
    let conflicts: Vec<(&Manager, &FieldPath)> = managers
        .iter()
        .filter(|manager| !manager.is(&writer.name, Operation::Apply))
        .flat_map(|manager| {
            manager
                .fields
                .iter()
                .filter(|path| {
                    wanted
                        .get(*path)
                        .is_some_and(|value| stored.get(*path) != Some(value))
                })
                .map(move |path| (manager, path))
        })
        .collect();
    if !conflicts.is_empty() && !writer.force {
        return Err(conflict_status(&conflicts));
    }
    let taken: BTreeSet<FieldPath> = conflicts.iter().map(|(_, path)| (*path).clone()).collect();
    let previously: BTreeSet<FieldPath> = managers
        .iter()
        .find(|manager| manager.is(&writer.name, Operation::Apply))
        .map(|manager| manager.fields.clone())
        .unwrap_or_default();
    let mut after: Vec<Manager> = managers
        .into_iter()
        .filter(|manager| !manager.is(&writer.name, Operation::Apply))
        .map(|mut manager| {
            manager.fields.retain(|path| !taken.contains(path));
            manager
        })
        .filter(|manager| !manager.fields.is_empty())
        .collect();
    let mut object = current.clone();
    merge_patch(&mut object, applied);
    for given_up in previously.iter().filter(|path| !wanted.contains_key(*path)) {
        if !after
            .iter()
            .any(|manager| manager.fields.contains(given_up))
        {
            remove(&mut object, given_up);
        }
    }
    after.push(Manager {
        name: writer.name.clone(),
        operation: Operation::Apply,
        api_version: writer.api_version.clone(),
        time: writer.time.clone(),
        fields: wanted.into_keys().collect(),
    });
    Ok(Applied {
        object,
        managers: after,
    })
}

/// The managers of a newly applied object: the applier owns every field.
pub(crate) fn created_by_apply(object: &Value, writer: &Writer) -> Vec<Manager> {
    vec![Manager {
        name: writer.name.clone(),
        operation: Operation::Apply,
        api_version: writer.api_version.clone(),
        time: writer.time.clone(),
        fields: leaves(object).into_keys().collect(),
    }]
}

/// `managers` after `writer` updated `old` to `new`: changed and new
/// fields are its, removed fields nobody's.
fn after_update(managers: Vec<Manager>, old: &Value, new: &Value, writer: &Writer) -> Vec<Manager> {
    let before = leaves(old);
    let now = leaves(new);
    let changed: BTreeSet<FieldPath> = now
        .iter()
        .filter(|(path, value)| before.get(*path) != Some(*value))
        .map(|(path, _)| path.clone())
        .collect();
    let removed: BTreeSet<&FieldPath> = before.keys().filter(|p| !now.contains_key(*p)).collect();
    let mut updater_fields = BTreeSet::new();
    let mut after: Vec<Manager> = Vec::new();
    for mut manager in managers {
        manager
            .fields
            .retain(|path| !changed.contains(path) && !removed.contains(path));
        if manager.is(&writer.name, Operation::Update) {
            updater_fields.append(&mut manager.fields);
        } else if !manager.fields.is_empty() {
            after.push(manager);
        }
    }
    updater_fields.extend(changed);
    if !updater_fields.is_empty() {
        after.push(Manager {
            name: writer.name.clone(),
            operation: Operation::Update,
            api_version: writer.api_version.clone(),
            time: writer.time.clone(),
            fields: updater_fields,
        });
    }
    after
}

/// Removes the field at `path` from `object`, if there.
fn remove(object: &mut Value, path: &FieldPath) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for step in parents {
        match current.get_mut(step.as_str()) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Value::Object(fields) = current {
        fields.remove(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn writer(name: &str, force: bool) -> Writer {
        Writer {
            name: name.into(),
            force,
            api_version: "apps/v1".into(),
            time: "2026-11-27T18:00:00Z".into(),
        }
    }

    /// An object as `manager`'s first apply creates it.
    fn created_by(manager: &str, object: &Value) -> Applied {
        apply(&json!({}), Vec::new(), object, &writer(manager, false)).unwrap()
    }

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"replicas": 1}
        })
    }

    #[test]
    fn a_writer_is_its_field_manager_else_its_user_agents_product() {
        let table = [
            ("fieldManager=op&force=true", "curl/8", ("op", true)),
            ("force=false&fieldManager=op", "", ("op", false)),
            (
                "fieldManager=",
                "kubectl/v1.36.2 (linux/amd64)",
                ("kubectl", false),
            ),
            ("", "", ("unknown", false)),
        ];
        for (query, agent, (name, force)) in table {
            let writer = Writer::from_request(query, agent, "v1", String::new());
            assert_eq!(
                (writer.name.as_str(), writer.force),
                (name, force),
                "{query:?}"
            );
        }
    }

    #[test]
    fn leaves_are_scalars_labels_and_whole_lists() {
        let found: Vec<String> = leaves(&deployment(1, "a")).keys().map(printed).collect();
        assert_eq!(
            found,
            [
                ".metadata.labels.app",
                ".spec.replicas",
                ".spec.template.spec.containers"
            ]
        );
    }

    #[test]
    fn a_second_applier_conflicts_on_a_different_value_only() {
        let first = created_by("a", &deployment(1, "a"));
        // The same values: shared, no conflict.
        let shared = apply(
            &first.object,
            first.managers.clone(),
            &deployment(1, "a"),
            &writer("b", false),
        )
        .unwrap();
        assert_eq!(shared.managers.len(), 2);
        // Another value of two fields owned by `a`: one 409, two causes.
        let status = apply(
            &first.object,
            first.managers.clone(),
            &deployment(3, "b"),
            &writer("b", false),
        )
        .unwrap_err();
        assert_eq!(status.code, 409);
        assert_eq!(
            status.message,
            "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.replicas\n- .spec.template.spec.containers"
        );
        let causes: Vec<(&str, &str, &str)> = status
            .causes()
            .iter()
            .map(|c| (c.reason.as_str(), c.message.as_str(), c.field.as_str()))
            .collect();
        assert_eq!(
            causes,
            [
                (
                    "FieldManagerConflict",
                    "conflict with \"a\"",
                    ".spec.replicas"
                ),
                (
                    "FieldManagerConflict",
                    "conflict with \"a\"",
                    ".spec.template.spec.containers"
                )
            ]
        );
        // Forced: the fields move to `b`.
        let forced = apply(
            &first.object,
            first.managers,
            &deployment(3, "b"),
            &writer("b", true),
        )
        .unwrap();
        assert_eq!(forced.object["spec"]["replicas"], 3);
        let a = forced.managers.iter().find(|m| m.name == "a").unwrap();
        assert_eq!(
            a.fields.iter().map(printed).collect::<Vec<_>>(),
            [".metadata.labels.app"]
        );
    }

    #[test]
    fn a_field_no_longer_applied_is_removed_unless_someone_else_owns_it() {
        let mut with_label = deployment(1, "a");
        with_label["metadata"]["labels"]["tier"] = json!("front");
        let first = created_by("a", &with_label);
        let dropped = apply(
            &first.object,
            first.managers.clone(),
            &deployment(1, "a"),
            &writer("a", false),
        )
        .unwrap();
        assert_eq!(dropped.object["metadata"]["labels"], json!({"app": "web"}));
        // Co-owned by `b` (same value): kept when `a` lets go.
        let shared = apply(
            &first.object,
            first.managers,
            &with_label,
            &writer("b", false),
        )
        .unwrap();
        let kept = apply(
            &shared.object,
            shared.managers,
            &deployment(1, "a"),
            &writer("a", false),
        )
        .unwrap();
        assert_eq!(kept.object["metadata"]["labels"]["tier"], "front");
    }

    #[test]
    fn an_update_takes_the_fields_it_changes_and_names_its_version_in_conflicts() {
        let first = created_by("a", &deployment(1, "a"));
        let scaled = deployment(5, "a");
        let managers = after_update(
            first.managers,
            &first.object,
            &scaled,
            &writer("hpa", false),
        );
        let status =
            apply(&scaled, managers, &deployment(1, "a"), &writer("a", false)).unwrap_err();
        assert_eq!(
            status.message,
            "Apply failed with 1 conflict: conflict with \"hpa\" using apps/v1 at 2026-11-27T18:00:00Z: .spec.replicas"
        );
    }
}
