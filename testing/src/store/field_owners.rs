//! Server-side apply's field ownership, as far as a client can tell it
//! apart: who owns which field of an object, conflicts between appliers,
//! forcing, and fields an applier stops applying being removed.
//!
//! **What it tracks.** Each object's managers, a manager being a field
//! manager's name and operation (`Apply`, or `Update` for a PUT or a
//! non-apply PATCH), and the leaf fields each owns: every scalar under the
//! object's top-level fields, each label and annotation, and
//! `metadata.ownerReferences` and `metadata.finalizers` whole.
//!
//! **Rules** (kube-apiserver's, on these leaves). An apply that sets a
//! field another manager owns, to a value other than the one stored, is a
//! conflict: 409 with one `FieldManagerConflict` cause per field and the
//! real server's message, unless `force` is given, which moves the field
//! to the applier. A field set to the stored value is shared. A field the
//! applier owned and no longer applies is removed from the object, unless
//! another manager owns it. An update that changes a field takes it from
//! every other manager. An object first applied after it was written
//! otherwise has its fields owned by `before-first-apply` (an `Update`),
//! as kube-apiserver gives an object without managedFields. An apply
//! without `fieldManager`, or `force` on another patch, is the real
//! server's 422.
//!
//! **Where it is simpler than the real server.**
//! - Ownership is kept beside the object, not written into it as
//!   `metadata.managedFields` (a client's cache strips those anyway).
//!   Creates are not recorded, nor updates of an object never applied, so
//!   the first apply of an object names `before-first-apply` for what
//!   was there, not its creator.
//! - Lists are owned whole: two managers applying their own finalizer or
//!   owner reference conflict (or, forced, replace each other's), where
//!   the real server merges them item by item. An empty map owns nothing,
//!   and a null in an applied object is dropped (neither applied nor a
//!   removal).
//! - An apply to the `status` subresource is merged without ownership,
//!   and writes through `scale` and a pod's status update take no fields.
//!
//! **Cost.** Until the server's first apply, a write pays for reading its
//! query and one atomic load. From then on every PUT and non-status PATCH
//! takes the table's one lock (so they are serialized server-wide), and
//! an update of an applied object is compared field by field.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use std::sync::atomic::{AtomicBool, Ordering};

use clientgo_apimachinery::{Status, StatusCause, StatusDetails, StatusReason};
use parking_lot::{Mutex, MutexGuard};
use serde_json::Value;

use crate::store::object::ObjectKey;
use crate::util::merge_patch::merge_patch;
use crate::util::timestamp::now_rfc3339;

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
    /// How the conflict message names it (kube-apiserver's `printManager`:
    /// an update's time is not part of the manager's identity it prints
    /// from, so no time is named; checked against kube-apiserver 1.36).
    fn described(&self) -> String {
        match self.operation {
            Operation::Apply => format!("{:?}", self.name),
            Operation::Update => format!("{:?} using {}", self.name, self.api_version),
        }
    }

    fn is(&self, name: &str, operation: Operation) -> bool {
        self.name == name && self.operation == operation
    }
}

/// Who writes, as a request says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Writer {
    /// The `fieldManager` query parameter, when given and not empty.
    pub(crate) field_manager: Option<String>,
    /// The product of the `User-Agent` (the part before the first `/`),
    /// kube-apiserver's default manager of an update.
    pub(crate) user_agent_product: String,
    /// `force=true`.
    pub(crate) force: bool,
    /// Whether `force` was given at all (refused on a non-apply patch).
    pub(crate) force_given: bool,
    /// The API version of the request.
    pub(crate) api_version: String,
}

impl Writer {
    /// The writer a request describes, from its query, `User-Agent` and
    /// API version.
    pub(crate) fn from_request(query: &str, user_agent: &str, api_version: &str) -> Writer {
        let mut field_manager = None;
        let mut force = false;
        let mut force_given = false;
        let mut manager_given = false;
        // The first of a repeated parameter counts, as kube-apiserver's
        // query conversion takes it; `force` is true unless `false` or
        // `0` (any case).
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "fieldManager" if !manager_given => {
                    manager_given = true;
                    field_manager = (!value.is_empty()).then(|| value.into_owned());
                }
                "force" if !force_given => {
                    force_given = true;
                    force = !(value.eq_ignore_ascii_case("false") || value == "0");
                }
                _ => {}
            }
        }
        Writer {
            field_manager,
            user_agent_product: user_agent
                .split('/')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
            force,
            force_given,
            api_version: api_version.to_string(),
        }
    }

    /// The manager's name: `fieldManager`, else the user agent's product,
    /// else `unknown`.
    pub(crate) fn name(&self) -> &str {
        match &self.field_manager {
            Some(name) => name,
            None if !self.user_agent_product.is_empty() => &self.user_agent_product,
            None => "unknown",
        }
    }

    /// A manager of `fields` named after this writer, as of now.
    fn manager(&self, operation: Operation, fields: BTreeSet<FieldPath>) -> Manager {
        Manager {
            name: self.name().to_string(),
            operation,
            api_version: self.api_version.clone(),
            time: now_rfc3339(),
            fields,
        }
    }

    /// kube-apiserver's 422 for this writer's options on a patch: an
    /// apply needs a field manager, and only an apply takes `force`.
    pub(crate) fn check_patch(&self, apply: bool) -> Result<(), Status> {
        let (field, message, reason) = if apply && self.field_manager.is_none() {
            (
                "fieldManager",
                "Required value: is required for apply patch",
                "FieldValueRequired",
            )
        } else if !apply && self.force_given {
            (
                "force",
                "Forbidden: may not be specified for non-apply patch",
                "FieldValueForbidden",
            )
        } else {
            return Ok(());
        };
        let mut status = Status::invalid(
            "PatchOptions.meta.k8s.io",
            "",
            vec![StatusCause {
                reason: reason.into(),
                message: message.into(),
                field: field.into(),
            }],
        );
        if let Some(details) = &mut status.details {
            details.group = "meta.k8s.io".into();
            details.kind = "PatchOptions".into();
        }
        Err(status)
    }
}

/// The managers of every object applied at least once.
///
/// **Locking.** A write that reads or changes managers holds [`lock`]
/// from before it reads the object until its managers are recorded, so an
/// object and its managers change together; the storage's own lock is
/// taken inside it, never the other way round. Forgetting a deleted
/// object's managers takes it alone (keyed by UID, it cannot undo a
/// newer object's).
///
/// [`lock`]: FieldOwners::lock
#[derive(Debug, Default)]
pub(crate) struct FieldOwners {
    /// Set by the first apply: until then no write pays for tracking.
    tracking: AtomicBool,
    /// By object, with the UID of the object they belong to.
    table: Mutex<HashMap<ObjectKey, (String, Vec<Manager>)>>,
}

/// The table of managers, locked.
pub(crate) struct Owners<'a>(MutexGuard<'a, HashMap<ObjectKey, (String, Vec<Manager>)>>);

impl FieldOwners {
    /// Whether any apply was made (updates are tracked from then on).
    pub(crate) fn tracking(&self) -> bool {
        self.tracking.load(Ordering::Acquire)
    }

    /// Locks the table for an apply, which starts tracking.
    pub(crate) fn lock_for_apply(&self) -> Owners<'_> {
        self.tracking.store(true, Ordering::Release);
        self.lock()
    }

    /// Locks the table.
    pub(crate) fn lock(&self) -> Owners<'_> {
        Owners(self.table.lock())
    }
}

impl Owners<'_> {
    /// The managers of the object `key` with `uid`, if it was applied.
    pub(crate) fn managers(&self, key: &ObjectKey, uid: &str) -> Option<&Vec<Manager>> {
        let (owner_uid, managers) = self.0.get(key)?;
        (owner_uid == uid).then_some(managers)
    }

    /// Records the managers of `key` (with `uid`) after a write.
    pub(crate) fn set(&mut self, key: &ObjectKey, uid: &str, managers: Vec<Manager>) {
        self.0.insert(key.clone(), (uid.to_string(), managers));
    }

    /// Forgets the managers of `key` when they belong to `uid` (the object
    /// was deleted; one created since under that name keeps its own).
    pub(crate) fn forget(&mut self, key: &ObjectKey, uid: &str) {
        if self.0.get(key).is_some_and(|(owner, _)| owner == uid) {
            self.0.remove(key);
        }
    }

    /// After `writer` updated the object `key` (with `uid`) from `old` to
    /// `new`: if it was applied, the fields the update changed are the
    /// writer's.
    pub(crate) fn updated(
        &mut self,
        key: &ObjectKey,
        uid: &str,
        old: &Value,
        new: &Value,
        writer: &Writer,
    ) {
        let Some((_, managers)) = self.0.get_mut(key).filter(|(owner, _)| owner == uid) else {
            return;
        };
        *managers = after_update(std::mem::take(managers), old, new, writer);
    }
}

/// `value` without the keys whose value is null, at any depth.
pub(crate) fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(name, value)| (name.clone(), without_nulls(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The managers of an object applied for the first time: fields already
/// there belong to `before-first-apply`, as kube-apiserver gives an
/// object without managedFields.
pub(crate) fn before_first_apply(object: &Value, api_version: &str) -> Vec<Manager> {
    let fields: BTreeSet<FieldPath> = leaves(object).into_keys().collect();
    if fields.is_empty() {
        return Vec::new();
    }
    vec![Manager {
        name: "before-first-apply".into(),
        operation: Operation::Update,
        api_version: api_version.to_string(),
        time: now_rfc3339(),
        fields,
    }]
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
        // An empty map owns nothing (the real server records it; a
        // simplification that keeps it from covering the fields later
        // put in it).
        Value::Object(fields) => {
            for (name, value) in fields {
                let mut inner = path.clone();
                inner.push(name.clone());
                collect(inner, value, found);
            }
        }
        // Null in an apply means "absent".
        Value::Null => {}
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
    let name = writer.name();
    let conflicts: Vec<(&Manager, &FieldPath)> = managers
        .iter()
        .filter(|manager| !manager.is(name, Operation::Apply))
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
        .find(|manager| manager.is(name, Operation::Apply))
        .map(|manager| manager.fields.clone())
        .unwrap_or_default();
    let mut after: Vec<Manager> = managers
        .into_iter()
        .filter(|manager| !manager.is(name, Operation::Apply))
        .map(|mut manager| {
            manager.fields.retain(|path| !taken.contains(path));
            manager
        })
        .filter(|manager| !manager.fields.is_empty())
        .collect();
    let mut object = current.clone();
    merge_patch(&mut object, applied);
    // A field given up goes, unless it or a field inside or around it is
    // still applied or owned by someone else.
    for given_up in previously.iter().filter(|path| !wanted.contains_key(*path)) {
        let kept = wanted.keys().any(|path| overlap(path, given_up))
            || after
                .iter()
                .any(|manager| manager.fields.iter().any(|path| overlap(path, given_up)));
        if !kept {
            remove(&mut object, given_up);
        }
    }
    after.push(writer.manager(Operation::Apply, wanted.into_keys().collect()));
    Ok(Applied {
        object,
        managers: after,
    })
}

/// The managers of a newly applied object: the applier owns every field.
pub(crate) fn created_by_apply(object: &Value, writer: &Writer) -> Vec<Manager> {
    vec![writer.manager(Operation::Apply, leaves(object).into_keys().collect())]
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
        if manager.is(writer.name(), Operation::Update) {
            updater_fields.append(&mut manager.fields);
        } else if !manager.fields.is_empty() {
            after.push(manager);
        }
    }
    updater_fields.extend(changed);
    if !updater_fields.is_empty() {
        after.push(writer.manager(Operation::Update, updater_fields));
    }
    after
}

/// Whether one of two fields is inside the other (or they are the same).
fn overlap(a: &FieldPath, b: &FieldPath) -> bool {
    a.starts_with(b) || b.starts_with(a)
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
        let query = format!("fieldManager={name}&force={force}");
        Writer::from_request(&query, "", "apps/v1")
    }

    impl Applied {
        /// `body` applied over this object by `manager`.
        fn and_applied_by(
            &self,
            manager: &str,
            force: bool,
            body: &Value,
        ) -> Result<Applied, Status> {
            apply(
                &self.object,
                self.managers.clone(),
                body,
                &writer(manager, force),
            )
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
        // query, user agent: name, force, force given, apply refused,
        // merge patch refused
        let table = [
            (
                "fieldManager=op&force=true",
                "curl/8",
                ("op", true, true, false, true),
            ),
            (
                "force=false&fieldManager=op",
                "",
                ("op", false, true, false, true),
            ),
            (
                "fieldManager=",
                "kubectl/v1.36.2 (linux/amd64)",
                ("kubectl", false, false, true, false),
            ),
            ("", "", ("unknown", false, false, true, false)),
            // The first of each counts; `force` is true unless false/0.
            (
                "force=1&force=false&fieldManager=a&fieldManager=b",
                "",
                ("a", true, true, false, true),
            ),
            (
                "force=FALSE&fieldManager=a",
                "",
                ("a", false, true, false, true),
            ),
        ];
        for (query, agent, expected) in table {
            let writer = Writer::from_request(query, agent, "v1");
            let seen = (
                writer.name(),
                writer.force,
                writer.force_given,
                writer.check_patch(true).is_err(),
                writer.check_patch(false).is_err(),
            );
            assert_eq!(seen, expected, "{query:?}");
        }
        let refused = Writer::from_request("", "", "v1")
            .check_patch(true)
            .unwrap_err();
        assert_eq!(refused.code, 422);
        assert_eq!(
            refused.message,
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        let details = refused.details.unwrap();
        assert_eq!(
            (
                details.group.as_str(),
                details.kind.as_str(),
                details.name.as_str()
            ),
            ("meta.k8s.io", "PatchOptions", "")
        );
        assert_eq!(details.causes[0].field, "fieldManager");
    }

    #[test]
    fn nulls_are_dropped_at_any_depth() {
        let body = json!({"data": {"a": null, "b": "1"}, "spec": null, "list": [null]});
        assert_eq!(
            without_nulls(&body),
            json!({"data": {"b": "1"}, "list": [null]})
        );
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
        let shared = first
            .and_applied_by("b", false, &deployment(1, "a"))
            .unwrap();
        assert_eq!(shared.managers.len(), 2);
        // Another value of two fields owned by `a`: one 409, two causes.
        let status = first
            .and_applied_by("b", false, &deployment(3, "b"))
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
        let forced = first
            .and_applied_by("b", true, &deployment(3, "b"))
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
        let dropped = first
            .and_applied_by("a", false, &deployment(1, "a"))
            .unwrap();
        assert_eq!(dropped.object["metadata"]["labels"], json!({"app": "web"}));
        // Co-owned by `b` (same value): kept when `a` lets go.
        let shared = first.and_applied_by("b", false, &with_label).unwrap();
        let kept = shared
            .and_applied_by("a", false, &deployment(1, "a"))
            .unwrap();
        assert_eq!(kept.object["metadata"]["labels"]["tier"], "front");
    }

    #[test]
    fn an_empty_map_owns_nothing_so_what_is_put_in_it_stays() {
        let config = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "data": data});
        let empty = created_by("a", &config(json!({})));
        let filled = empty
            .and_applied_by("a", false, &config(json!({"k": "1"})))
            .unwrap();
        assert_eq!(filled.object["data"], json!({"k": "1"}));
        // `b` adds its own key; `a` then applies an empty map again and
        // gives up only its own key.
        let shared = filled
            .and_applied_by("b", false, &config(json!({"mode": "x"})))
            .unwrap();
        let emptied = shared
            .and_applied_by("a", false, &config(json!({})))
            .unwrap();
        assert_eq!(emptied.object["data"], json!({"mode": "x"}));
    }

    #[test]
    fn a_first_apply_finds_the_fields_already_there_owned() {
        let existing = deployment(2, "a");
        let managers = before_first_apply(&existing, "apps/v1");
        let status = apply(
            &existing,
            managers.clone(),
            &deployment(3, "a"),
            &writer("op", false),
        )
        .unwrap_err();
        assert!(
            status.message
                == "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apps/v1: .spec.replicas",
            "{}",
            status.message
        );
        // The same values are shared.
        apply(
            &existing,
            managers,
            &deployment(2, "a"),
            &writer("op", false),
        )
        .unwrap();
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
            "Apply failed with 1 conflict: conflict with \"hpa\" using apps/v1: .spec.replicas"
        );
    }
}
