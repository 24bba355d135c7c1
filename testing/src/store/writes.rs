//! The write rules of [`Storage`]: create, update (with patches'
//! results), status strategies and deletion, as kube-apiserver applies them.

use std::sync::Arc;

use clientgo_apimachinery::status::cause_type;
use clientgo_apimachinery::{GroupResource, Status, StatusCause};
use serde_json::Value;

use crate::store::object::{ObjectKey, StoredObject, metadata_mut, string_field};
use crate::store::storage::{EventType, Preconditions, Storage};
use crate::util::seeded_random::SeededRandom;
use crate::util::timestamp::now_rfc3339;

impl Storage {
    /// Creates an object. A missing name is generated from
    /// `metadata.generateName`; the object gets its namespace, a UID, a
    /// creation timestamp and, where kube-apiserver gives one
    /// (workloads, pods, CRDs, custom resources: not config maps), generation 1. An existing name is 409
    /// AlreadyExists.
    pub fn create(
        &self,
        resource: &GroupResource,
        namespace: &str,
        mut object: Value,
    ) -> Result<Arc<StoredObject>, Status> {
        let mut state = self.state.lock();
        let metadata = metadata_mut(&mut object)?;
        let mut name = string_field(metadata, "name")?
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            let prefix = string_field(metadata, "generateName")?
                .unwrap_or_default()
                .to_string();
            if prefix.is_empty() {
                return Err(Status::invalid(
                    &resource.resource,
                    "",
                    vec![StatusCause {
                        reason: cause_type::FIELD_VALUE_REQUIRED.to_string(),
                        message: "Required value: name or generateName is required".to_string(),
                        field: "metadata.name".to_string(),
                    }],
                ));
            }
            state.generated_names += 1;
            name = format!("{prefix}{}", generated_suffix(state.generated_names));
        }
        let key = ObjectKey::new(resource.clone(), namespace, name.clone());
        if state.objects.contains_key(&key) {
            return Err(Status::already_exists(resource, &name));
        }
        state.uids += 1;
        metadata.insert("name".to_string(), Value::String(name));
        if !namespace.is_empty() {
            metadata.insert(
                "namespace".to_string(),
                Value::String(namespace.to_string()),
            );
        }
        if string_field(metadata, "uid")?.is_none() {
            let uid = random_uid(state.uids);
            metadata.insert("uid".to_string(), Value::String(uid));
        }
        metadata.insert(
            "creationTimestamp".to_string(),
            Value::String(now_rfc3339()),
        );
        if has_generation(resource) {
            metadata.insert("generation".to_string(), Value::from(1));
        } else {
            metadata.remove("generation");
        }
        metadata.remove("deletionTimestamp");
        let event = self.commit(&mut state, key, object, EventType::Added, None)?;
        self.publish(&event);
        drop(state);
        Ok(Arc::clone(&event.object))
    }

    /// Reads the object at `key`, lets `change` edit its JSON, and writes
    /// it back as a main [`update`](Self::update). The stored
    /// resourceVersion goes along as a precondition, so a write that
    /// happened in between makes it a Conflict rather than a lost update.
    pub fn modify(
        &self,
        key: &ObjectKey,
        change: impl FnOnce(&mut Value),
    ) -> Result<Arc<StoredObject>, Status> {
        let current = self
            .get(key)
            .ok_or_else(|| Status::not_found(&key.resource, &key.name))?;
        let mut object = current.to_value()?;
        change(&mut object);
        self.update(key, object, false)
    }

    /// Replaces an object (or, with `status_only`, only its `status`).
    ///
    /// A resourceVersion in the body must match the stored one (409
    /// Conflict otherwise); an empty one means "whatever is there". UID,
    /// creation timestamp and deletion timestamp cannot be changed. A main
    /// update keeps the stored `status`; the generation goes up when
    /// anything but metadata and status changes. An object marked for
    /// deletion whose last finalizer is removed is deleted.
    pub fn update(
        &self,
        key: &ObjectKey,
        mut object: Value,
        status_only: bool,
    ) -> Result<Arc<StoredObject>, Status> {
        let mut state = self.state.lock();
        let Some(current) = state.objects.get(key).cloned() else {
            return Err(Status::not_found(&key.resource, &key.name));
        };
        let mut stored = current.to_value()?;
        let metadata = metadata_mut(&mut object)?;
        if let Some(rv) = string_field(metadata, "resourceVersion")?
            && !rv.is_empty()
            && rv != current.resource_version.to_string()
        {
            return Err(Status::conflict(
                &key.resource,
                &key.name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        let stored_metadata = stored
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let generation = stored_metadata
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        // Status updates take the stored object and the body's status; main
        // updates take the body and the stored status. Either way the parts
        // not taken are moved, not copied. A pod's status update is the
        // exception, as in the real server's pod status strategy: it takes
        // the body (metadata changes such as labels included) and only puts
        // back the stored spec and owner references.
        let (mut next, changed) = if status_only && is_pod(&key.resource) {
            if let (Value::Object(fields), Some(spec)) =
                (&mut object, stored.get_mut("spec").map(Value::take))
            {
                fields.insert("spec".to_string(), spec);
            }
            let owners = stored_metadata.get("ownerReferences").cloned();
            let metadata = metadata_mut(&mut object)?;
            match owners {
                Some(owners) => metadata.insert("ownerReferences".to_string(), owners),
                None => metadata.remove("ownerReferences"),
            };
            (object, false)
        } else if status_only {
            let status = object.get_mut("status").map(Value::take);
            if let (Value::Object(fields), Some(status)) = (&mut stored, status) {
                fields.insert("status".to_string(), status);
            }
            (stored, false)
        } else {
            let changed = !same_desired_state(&object, &stored);
            let status = stored.get_mut("status").map(Value::take);
            if let (Value::Object(fields), Some(status)) = (&mut object, status) {
                fields.insert("status".to_string(), status);
            }
            (object, changed)
        };
        let next_metadata = metadata_mut(&mut next)?;
        for preserved in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "namespace",
            "name",
        ] {
            match stored_metadata.get(preserved) {
                Some(value) => {
                    next_metadata.insert(preserved.to_string(), value.clone());
                }
                None => {
                    next_metadata.remove(preserved);
                }
            }
        }
        if stored_metadata.contains_key("generation") {
            next_metadata.insert(
                "generation".to_string(),
                Value::from(if changed { generation + 1 } else { generation }),
            );
        } else {
            next_metadata.remove("generation");
        }
        let finalizers_left = next_metadata
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        let marked = next_metadata.contains_key("deletionTimestamp");
        let event_type = if marked && !finalizers_left {
            EventType::Deleted
        } else {
            EventType::Modified
        };
        // A write that changes nothing is not written (kube-apiserver's
        // storage compares the new object with the stored one before
        // writing): the resourceVersion stays and no event is sent, so a
        // controller that applies the same state again does not wake
        // itself up.
        if event_type == EventType::Modified && unchanged(&next, &current.to_value()?) {
            return Ok(current);
        }
        let event = self.commit(&mut state, key.clone(), next, event_type, Some(current))?;
        self.publish(&event);
        drop(state);
        Ok(Arc::clone(&event.object))
    }

    /// Deletes an object. With finalizers it is only marked (a deletion
    /// timestamp is set, once) and stays until they are removed. Failed
    /// preconditions are 409 Conflict.
    pub fn delete(
        &self,
        key: &ObjectKey,
        preconditions: &Preconditions,
    ) -> Result<Arc<StoredObject>, Status> {
        let mut state = self.state.lock();
        let Some(current) = state.objects.get(key).cloned() else {
            return Err(Status::not_found(&key.resource, &key.name));
        };
        if let Some(uid) = &preconditions.uid
            && *uid != current.uid
        {
            return Err(precondition_failed(
                key,
                &current,
                &format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({}). \
                     The object might have been deleted and then recreated",
                    current.uid
                ),
            ));
        }
        if let Some(rv) = &preconditions.resource_version
            && *rv != current.resource_version.to_string()
        {
            return Err(precondition_failed(
                key,
                &current,
                &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the \
                     ResourceVersion in record ({}). The object might have been modified",
                    current.resource_version
                ),
            ));
        }
        let mut object = current.to_value()?;
        let metadata = metadata_mut(&mut object)?;
        let has_finalizers = metadata
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        let marked = metadata.contains_key("deletionTimestamp");
        if has_finalizers && marked {
            return Ok(current);
        }
        // Pods are deleted gracefully: the real server first writes the
        // deletion timestamp and grace period (a MODIFIED event), then,
        // with a grace period of 0 (an unscheduled pod, or a kubelet that
        // is done at once here), deletes the object (DELETED). Finalizers
        // stop after the first step.
        let pod = is_pod(&key.resource);
        let mut previous = current;
        if has_finalizers || (pod && !marked) {
            metadata.insert(
                "deletionTimestamp".to_string(),
                Value::String(now_rfc3339()),
            );
            if pod {
                metadata.insert("deletionGracePeriodSeconds".to_string(), Value::from(0));
            }
            // The marked object is also the deleted one's last state.
            let event = self.commit(
                &mut state,
                key.clone(),
                object.clone(),
                EventType::Modified,
                Some(previous),
            )?;
            self.publish(&event);
            previous = Arc::clone(&event.object);
            if has_finalizers {
                return Ok(previous);
            }
        }
        let event = self.commit(
            &mut state,
            key.clone(),
            object,
            EventType::Deleted,
            Some(previous),
        )?;
        self.publish(&event);
        drop(state);
        Ok(Arc::clone(&event.object))
    }
}

/// A delete's failed precondition, as kube-apiserver words it: the
/// object's kind (not its resource; `Deployment.apps` outside the core
/// group) in the message and the details.
fn precondition_failed(key: &ObjectKey, current: &StoredObject, why: &str) -> Status {
    let kind = current
        .to_value()
        .ok()
        .and_then(|object| {
            object
                .get("kind")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| key.resource.resource.clone());
    // kube-apiserver qualifies a kind outside the core group: `Deployment.apps`.
    let kind = if key.resource.group.is_empty() {
        kind
    } else {
        format!("{kind}.{}", key.resource.group)
    };
    Status::failure(
        409,
        clientgo_apimachinery::StatusReason::Conflict,
        format!(
            "Operation cannot be fulfilled on {kind} {:?}: {why}",
            key.name
        ),
    )
    .with_details(clientgo_apimachinery::StatusDetails {
        name: key.name.clone(),
        group: key.resource.group.clone(),
        kind,
        ..Default::default()
    })
}

/// Whether kube-apiserver 1.36 keeps a `metadata.generation` for objects
/// of `resource`: its strategies set one for the workloads and the other
/// types whose spec a controller observes (apps, batch, policy,
/// networking, admission and flow-control configurations, CRDs, pods and
/// replication controllers) and for every custom resource; config maps,
/// secrets, namespaces, services, events, leases, RBAC objects and the
/// rest have none.
pub(crate) fn has_generation(resource: &GroupResource) -> bool {
    const WITH_GENERATION: &[&str] = &[
        "apps",
        "batch",
        "policy",
        "networking.k8s.io",
        "admissionregistration.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "apiextensions.k8s.io",
    ];
    const WITHOUT_GENERATION: &[&str] = &[
        "autoscaling",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "events.k8s.io",
        "storage.k8s.io",
        "discovery.k8s.io",
        "certificates.k8s.io",
        "node.k8s.io",
        "scheduling.k8s.io",
        "apiregistration.k8s.io",
        "resource.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "internal.apiserver.k8s.io",
        "storagemigration.k8s.io",
    ];
    match resource.group.as_str() {
        "" => matches!(
            resource.resource.as_str(),
            "pods" | "replicationcontrollers"
        ),
        group if WITH_GENERATION.contains(&group) => true,
        group => !WITHOUT_GENERATION.contains(&group),
    }
}

/// Whether two objects agree on everything but `metadata` and `status`:
/// what a generation counts. Compares in place, copying nothing.
pub(crate) fn same_desired_state(a: &Value, b: &Value) -> bool {
    let desired = |object: &Value| {
        object
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| *name != "metadata" && *name != "status")
            .count()
    };
    desired(a) == desired(b)
        && a.as_object().into_iter().flatten().all(|(name, value)| {
            name == "metadata" || name == "status" || b.get(name) == Some(value)
        })
}

/// Whether `next` is `stored` apart from the resourceVersion (compared
/// in place: no copy of either object).
fn unchanged(next: &Value, stored: &Value) -> bool {
    let (Some(next), Some(stored)) = (next.as_object(), stored.as_object()) else {
        return next == stored;
    };
    next.len() == stored.len()
        && next.iter().all(|(field, value)| match stored.get(field) {
            Some(old) if field == "metadata" => same_but_version(value, old),
            Some(old) => value == old,
            None => false,
        })
}

/// Whether two metadata objects are equal but for their resourceVersion.
fn same_but_version(next: &Value, stored: &Value) -> bool {
    let (Some(next), Some(stored)) = (next.as_object(), stored.as_object()) else {
        return next == stored;
    };
    let others = |metadata: &serde_json::Map<String, Value>| {
        metadata
            .keys()
            .filter(|key| *key != "resourceVersion")
            .count()
    };
    others(next) == others(stored)
        && next
            .iter()
            .filter(|(key, _)| *key != "resourceVersion")
            .all(|(key, value)| stored.get(key) == Some(value))
}

/// Whether a resource is the core group's pods, whose deletion and status
/// updates follow their own rules.
pub(crate) fn is_pod(resource: &GroupResource) -> bool {
    resource.group.is_empty() && resource.resource == "pods"
}

/// Five characters after a `generateName` prefix, as the real server adds.
pub(crate) fn generated_suffix(counter: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut value = counter.wrapping_mul(2_654_435_761) % 27u64.pow(5);
    let mut suffix = [b'b'; 5];
    for slot in suffix.iter_mut().rev() {
        *slot = ALPHABET[(value % 27) as usize];
        value /= 27;
    }
    String::from_utf8_lossy(&suffix).into_owned()
}

/// A version-4 UUID as kube-apiserver gives objects: random-looking
/// (what shard selectors hash), here derived from the object's number so
/// a run is reproducible.
fn random_uid(number: u64) -> String {
    let mut random = SeededRandom::new(number.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // The first numbers of a small seed are still small: skip them.
    random.next_u64();
    let (high, low) = (random.next_u64(), random.next_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xfff,
        8 | (low >> 62),
        (low >> 48) & 0xfff,
        low & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod uid_tests {
    use super::random_uid;

    #[test]
    fn uids_look_like_the_real_servers() {
        let uid = random_uid(1);
        assert_eq!(uid.len(), 36);
        let parts: Vec<&str> = uid.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));
        assert_ne!(random_uid(1), random_uid(2));
    }
}
