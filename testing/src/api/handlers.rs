//! The verbs on objects: list, get, create, update, delete, with the real
//! server's query rules and Status answers.

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::ShardSelector;
use clientgo_apimachinery::field_selector::{METADATA_NAME, METADATA_NAMESPACE};
use clientgo_apimachinery::{
    ApiResource, FieldSelector, LabelSelector, ListOptions, ResourceVersionMatch, Status,
};
use serde_json::Value;

use crate::api::patch::{PatchType, json_patch, merge_patch};
use crate::api::protobuf::{Encoding, ListMetadata};
use crate::api::request_path::ResourcePath;
use crate::store::field_owners::{self, Owners, Writer};
use crate::store::object::{ObjectKey, StoredObject};
use crate::store::reads::{ListPage, PageRequest};
use crate::store::storage::{Preconditions, ReadAt, Storage};

/// How long a list for a resourceVersion the store has not reached waits
/// before answering 504 (the real server waits up to about 3 seconds).
pub(crate) const WAIT_FOR_RESOURCE_VERSION: Duration = Duration::from_secs(3);

/// The message of a 410 for a continue token whose snapshot is compacted.
const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// How objects are written in answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    /// The whole object.
    Full,
    /// Only `metadata`, as `PartialObjectMetadata` (asked for with
    /// `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`).
    MetadataOnly,
}

impl Representation {
    /// The representation an `Accept` header asks for.
    pub(crate) fn from_accept(accept: &str) -> Self {
        if accept.contains("as=PartialObjectMetadata") {
            Representation::MetadataOnly
        } else {
            Representation::Full
        }
    }

    /// Appends one stored object to `out`: its stored bytes as they are, or
    /// its metadata-only form.
    pub(crate) fn write_object(self, object: &StoredObject, out: &mut Vec<u8>) {
        match self {
            Representation::Full => out.extend_from_slice(&object.json),
            Representation::MetadataOnly => {
                let metadata = serde_json::from_slice::<Value>(&object.json)
                    .ok()
                    .and_then(|mut value| value.get_mut("metadata").map(Value::take))
                    .unwrap_or_else(|| serde_json::json!({}));
                let partial = serde_json::json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": clientgo_apimachinery::META_API_VERSION,
                    "metadata": metadata,
                });
                // Writing a JSON value into a Vec cannot fail.
                let _ = serde_json::to_writer(out, &partial);
            }
        }
    }

    /// One stored object, written alone.
    pub(crate) fn object(self, object: &StoredObject) -> Vec<u8> {
        let mut out = Vec::with_capacity(object.json.len());
        self.write_object(object, &mut out);
        out
    }
}

/// An answer: status code, body and its media type (JSON unless a
/// protobuf client was answered in protobuf).
pub(crate) struct Answer {
    pub code: u16,
    pub body: Vec<u8>,
    pub content_type: &'static str,
}

impl Answer {
    fn ok(body: Vec<u8>) -> Self {
        Answer {
            code: 200,
            body,
            content_type: "application/json",
        }
    }

    fn protobuf(body: Vec<u8>) -> Self {
        Answer {
            code: 200,
            body,
            content_type: clientgo_apimachinery::PROTOBUF_MEDIA_TYPE,
        }
    }

    fn created(body: &[u8]) -> Self {
        Answer {
            code: 201,
            body: body.to_vec(),
            content_type: "application/json",
        }
    }
}

/// A selectable field of a pod, as kube-apiserver reads it after
/// defaulting: a missing `spec.restartPolicy` is `Always`, a missing
/// `spec.hostNetwork` `false`, any other missing field "".
fn pod_field<'a>(pod: &'a Value, path: &str) -> &'a str {
    let value = path.split('.').try_fold(pod, |value, step| value.get(step));
    match (path, value) {
        ("spec.hostNetwork", Some(Value::Bool(true))) => "true",
        ("spec.hostNetwork", _) => "false",
        (_, Some(Value::String(text))) => text,
        ("spec.restartPolicy", _) => "Always",
        _ => "",
    }
}

/// Selectors and other per-request filters, parsed once.
pub(crate) struct Filters {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    /// The shard selector (only when the server applies them), and its
    /// text as sent.
    shard: Option<(ShardSelector, String)>,
    /// Whether a field term reads the object's body (a pod's
    /// `spec.nodeName`), not only its key.
    reads_body: bool,
}

/// The fields of a pod's body kube-apiserver selects on, beyond the
/// metadata (its `PodToSelectableFields`); a missing one reads as its
/// default ([`pod_field`]).
const POD_FIELDS: [&str; 8] = [
    "spec.nodeName",
    "spec.hostNetwork",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

impl Filters {
    /// Parses the selectors of a list or watch; bad ones are 400.
    pub(crate) fn parse(
        options: &ListOptions,
        resource: &clientgo_apimachinery::GroupResource,
    ) -> Result<Self, Status> {
        let labels = options
            .label_selector
            .as_deref()
            .unwrap_or_default()
            .parse::<LabelSelector>()
            .map_err(|e| Status::bad_request(format!("unable to parse requirement: {e}")))?;
        let fields = options
            .field_selector
            .as_deref()
            .unwrap_or_default()
            .parse::<FieldSelector>()
            .map_err(|e| Status::bad_request(e.to_string()))?;
        let pods = crate::store::writes::is_pod(resource);
        let mut reads_body = false;
        for term in fields.terms() {
            let body_field = pods && POD_FIELDS.contains(&term.field.as_str());
            reads_body |= body_field;
            if term.field != METADATA_NAME && term.field != METADATA_NAMESPACE && !body_field {
                // kube-apiserver's words: for pods from their field label
                // conversion, for the rest from the generic field set.
                let message = if pods {
                    format!("field label not supported: {}", term.field)
                } else {
                    format!(
                        "{:?} is not a known field selector: only {METADATA_NAME:?}, {METADATA_NAMESPACE:?}",
                        term.field
                    )
                };
                return Err(Status::bad_request(message));
            }
        }
        // As kube-apiserver with ShardedListAndWatch: a selector it cannot
        // read is an internal error (500), not a bad request.
        let shard = match options.shard_selector.as_deref().filter(|s| !s.is_empty()) {
            Some(text) => {
                let selector = text.parse::<ShardSelector>().map_err(|e| {
                    Status::failure(
                        500,
                        clientgo_apimachinery::StatusReason::Unknown,
                        format!("invalid shard selector: {e}"),
                    )
                })?;
                Some((selector, text.to_string()))
            }
            None => None,
        };
        Ok(Filters {
            labels,
            fields,
            reads_body,
            shard,
        })
    }

    /// The shard selector applied, as sent.
    pub(crate) fn shard_text(&self) -> Option<&str> {
        self.shard.as_ref().map(|(_, text)| text.as_str())
    }

    /// Whether a stored object passes both selectors.
    pub(crate) fn matches(&self, object: &StoredObject) -> bool {
        if !self.labels.matches(&object.labels) {
            return false;
        }
        if let Some((shard, _)) = &self.shard
            && !shard.matches(Some(&object.uid), Some(&object.key.namespace))
        {
            return false;
        }
        // Decoded only for a selector on the body, which few requests use.
        let body = self.reads_body.then(|| object.to_value().ok()).flatten();
        self.fields.matches(|field| match field {
            METADATA_NAME => Some(object.key.name.as_str()),
            METADATA_NAMESPACE => Some(object.key.namespace.as_str()),
            path => body.as_ref().map(|body| pod_field(body, path)),
        })
    }
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// A continue token: the snapshot revision and the last key returned.
struct ContinueToken {
    revision: u64,
    namespace: String,
    name: String,
}

impl ContinueToken {
    fn encode(&self) -> String {
        format!(
            "{}.{}.{}",
            self.revision,
            hex(&self.namespace),
            hex(&self.name)
        )
    }

    fn decode(token: &str) -> Result<Self, Status> {
        let invalid = || Status::bad_request(format!("continue key is not valid: {token:?}"));
        let mut parts = token.split('.');
        let (Some(revision), Some(namespace), Some(name), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid());
        };
        Ok(ContinueToken {
            revision: revision.parse().map_err(|_| invalid())?,
            namespace: unhex(namespace).ok_or_else(invalid)?,
            name: unhex(name).ok_or_else(invalid)?,
        })
    }
}

fn parse_resource_version(text: &str) -> Result<u64, Status> {
    text.parse()
        .map_err(|_| Status::bad_request(format!("invalid resource version: {text:?}")))
}

/// Which state a list reads, from its options (continue tokens aside).
fn read_at(options: &ListOptions) -> Result<ReadAt, Status> {
    let resource_version = options.resource_version.as_deref().unwrap_or_default();
    match (resource_version, options.resource_version_match) {
        ("", Some(_)) => Err(Status::bad_request(
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        )),
        ("", None) | ("0", None) => Ok(ReadAt::Latest),
        ("0", Some(ResourceVersionMatch::NotOlderThan)) => Ok(ReadAt::Latest),
        ("0", Some(ResourceVersionMatch::Exact)) => Err(Status::bad_request(
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        )),
        (rv, Some(ResourceVersionMatch::Exact)) => Ok(ReadAt::Exact(parse_resource_version(rv)?)),
        (rv, _) => Ok(ReadAt::NotOlderThan(parse_resource_version(rv)?)),
    }
}

/// Reads one page, waiting a little for a resourceVersion not reached yet.
async fn page_waiting(
    storage: &Storage,
    path: &ResourcePath,
    at: ReadAt,
    after: Option<(&str, &str)>,
    limit: Option<usize>,
    filters: &Filters,
) -> Result<ListPage, Status> {
    let resource = path.resource.group_resource();
    let unfiltered = filters.labels.is_empty() && filters.fields.is_empty();
    let deadline = tokio::time::Instant::now() + WAIT_FOR_RESOURCE_VERSION;
    loop {
        let request = PageRequest {
            resource: &resource,
            namespace: path.namespace.as_deref(),
            at,
            after,
            limit,
            count_remaining: unfiltered,
        };
        let page = storage.list_page(&request, |object| filters.matches(object));
        match page {
            Err(status)
                if status.is_too_large_resource_version()
                    && matches!(at, ReadAt::NotOlderThan(_)) =>
            {
                if tokio::time::Instant::now() >= deadline {
                    return Err(status);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}

/// Writes a list response around pre-serialized items. Items of a
/// built-in type (`typed_items` false) go without `apiVersion` and `kind`,
/// as the real server writes them; custom resources and metadata-only
/// items keep theirs.
fn list_body(
    resource: &ApiResource,
    representation: Representation,
    typed_items: bool,
    list: &ListMetadata<'_>,
    items: &[Arc<StoredObject>],
) -> Vec<u8> {
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "resourceVersion".into(),
        Value::String(list.revision.to_string()),
    );
    if let Some(token) = list.continue_token {
        metadata.insert("continue".into(), Value::String(token.to_string()));
    }
    if let Some(remaining) = list.remaining {
        metadata.insert("remainingItemCount".into(), Value::from(remaining));
    }
    if let Some(selector) = list.shard_selector {
        metadata.insert(
            "shardInfo".into(),
            serde_json::json!({ "selector": selector }),
        );
    }
    let (kind, api_version) = match representation {
        Representation::Full => (format!("{}List", resource.kind()), resource.api_version()),
        Representation::MetadataOnly => (
            "PartialObjectMetadataList".to_string(),
            clientgo_apimachinery::META_API_VERSION,
        ),
    };
    let header = serde_json::json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": metadata,
    });
    let mut body = serde_json::to_vec(&header).unwrap_or_default();
    // Replace the closing brace with the items array.
    body.pop();
    body.extend_from_slice(b",\"items\":[");
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            body.push(b',');
        }
        if representation == Representation::Full && !typed_items {
            body.push(b'{');
            body.extend_from_slice(item.json_without_type_meta());
        } else {
            representation.write_object(item, &mut body);
        }
    }
    body.extend_from_slice(b"]}");
    body
}

/// `GET` on a collection without `watch`. With a `watch_cache`, a list at
/// resourceVersion "0" is served from it, as the real server does: in one
/// page, whatever `limit` says.
pub(crate) async fn list(
    storage: &Storage,
    path: &ResourcePath,
    options: &ListOptions,
    representation: Representation,
    encoding: Encoding,
    typed_items: bool,
    watch_cache: bool,
) -> Result<Answer, Status> {
    let filters = Filters::parse(options, &path.resource.group_resource())?;
    let continuation = options
        .continue_token
        .as_deref()
        .filter(|t| !t.is_empty())
        .map(ContinueToken::decode)
        .transpose()?;
    let at = match &continuation {
        Some(token) => ReadAt::Exact(token.revision),
        None => read_at(options)?,
    };
    let after = continuation
        .as_ref()
        .map(|token| (token.namespace.as_str(), token.name.as_str()));
    let from_cache =
        watch_cache && continuation.is_none() && options.resource_version.as_deref() == Some("0");
    let limit = options
        .limit
        .filter(|&limit| limit > 0 && !from_cache)
        .map(|l| l as usize);
    let page = match page_waiting(storage, path, at, after, limit, &filters).await {
        Err(status) if continuation.is_some() && status.is_resource_expired() => {
            return Err(Status::expired(CONTINUE_EXPIRED));
        }
        other => other?,
    };
    let token = match (page.more, page.items.last()) {
        (true, Some(last)) => Some(
            ContinueToken {
                revision: page.revision,
                namespace: last.key.namespace.clone(),
                name: last.key.name.clone(),
            }
            .encode(),
        ),
        _ => None,
    };
    let metadata = ListMetadata {
        revision: page.revision,
        continue_token: token.as_deref(),
        remaining: token.as_ref().and(page.remaining),
        shard_selector: filters.shard_text(),
    };
    if let Encoding::Protobuf(codec) = encoding {
        return Ok(Answer::protobuf(crate::api::protobuf::list_body(
            &codec,
            &metadata,
            &page.items,
        )?));
    }
    let body = list_body(
        &path.resource,
        representation,
        typed_items,
        &metadata,
        &page.items,
    );
    Ok(Answer::ok(body))
}

pub(crate) fn object_key(path: &ResourcePath) -> Result<ObjectKey, Status> {
    let name = path.name.clone().ok_or_else(|| {
        Status::method_not_supported(&path.resource.group_resource(), "this verb")
    })?;
    Ok(ObjectKey::new(
        path.resource.group_resource(),
        path.namespace.clone().unwrap_or_default(),
        name,
    ))
}

/// `GET` on an object (or its status).
pub(crate) fn get(
    storage: &Storage,
    path: &ResourcePath,
    representation: Representation,
    encoding: Encoding,
) -> Result<Answer, Status> {
    let key = object_key(path)?;
    let object = storage
        .get(&key)
        .ok_or_else(|| Status::not_found(&key.resource, &key.name))?;
    if let Encoding::Protobuf(codec) = encoding {
        return Ok(Answer::protobuf(crate::api::protobuf::object_body(
            &object, &codec,
        )?));
    }
    Ok(Answer::ok(representation.object(&object)))
}

fn parse_body(body: &[u8]) -> Result<Value, Status> {
    serde_json::from_slice(body).map_err(|e| {
        Status::bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))
    })
}

/// Checks that the body's namespace, when set, is the request's.
fn check_namespace(path: &ResourcePath, object: &Value) -> Result<(), Status> {
    let in_body = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let in_path = path.namespace.as_deref().unwrap_or_default();
    if !in_body.is_empty() && in_body != in_path {
        return Err(Status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if path.resource.is_namespaced() && in_path.is_empty() {
        return Err(Status::bad_request(format!(
            "{} is namespaced: the request must name a namespace",
            path.resource.group_resource()
        )));
    }
    Ok(())
}

/// Sets `apiVersion` and `kind` from the URL where the body has none, as
/// the real server's decoder defaults them: stored objects carry both.
fn fill_type_meta(path: &ResourcePath, object: &mut Value) {
    if let Value::Object(fields) = object {
        for (name, value) in [
            ("apiVersion", path.resource.api_version()),
            ("kind", path.resource.kind()),
        ] {
            fields
                .entry(name)
                .or_insert_with(|| Value::String(value.to_string()));
        }
    }
}

/// `POST` on a collection.
pub(crate) fn create(
    storage: &Storage,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Answer, Status> {
    let mut object = parse_body(body)?;
    check_namespace(path, &object)?;
    fill_type_meta(path, &mut object);
    let created = storage.create(
        &path.resource.group_resource(),
        path.namespace.as_deref().unwrap_or_default(),
        object,
    )?;
    Ok(Answer::created(&created.json))
}

/// `PUT` on an object or its status.
pub(crate) fn update(
    storage: &Storage,
    path: &ResourcePath,
    body: &[u8],
    writer: &Writer,
) -> Result<Answer, Status> {
    let key = object_key(path)?;
    let object = parse_body(body)?;
    check_namespace(path, &object)?;
    let name_in_body = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name_in_body != key.name {
        return Err(Status::bad_request(format!(
            "the name of the object ({name_in_body:?}) does not match the name on the URL ({:?})",
            key.name
        )));
    }
    let status_only = targets_status(path, &key)?;
    let mut owners = lock_if_tracked(storage, status_only);
    let before = owners.as_ref().and_then(|_| storage.get(&key));
    let updated = storage.update(&key, object, status_only)?;
    if let (Some(owners), Some(before)) = (&mut owners, &before) {
        track_update(owners, storage, &key, before, &updated, writer);
    }
    Ok(Answer::ok(updated.json.to_vec()))
}

/// The field managers' table, locked, when the server tracks ownership
/// (it has seen an apply) and the write is not a status write: held from
/// the write's read to its record (see `FieldOwners`).
fn lock_if_tracked(storage: &Storage, status_only: bool) -> Option<Owners<'_>> {
    (!status_only && storage.field_owners.tracking()).then(|| storage.field_owners.lock())
}

/// After an update of the object `key` from `before` to `after` by
/// `writer`: if it was applied, the fields the update changed are the
/// writer's (see [`crate::store::field_owners`]); if the update deleted
/// it (its last finalizer removed), its managers are forgotten. An object
/// that does not read back is left as it was.
fn track_update(
    owners: &mut Owners<'_>,
    storage: &Storage,
    key: &ObjectKey,
    before: &StoredObject,
    after: &StoredObject,
    writer: &Writer,
) {
    if before.uid != after.uid || owners.managers(key, &after.uid).is_none() {
        return;
    }
    if !still_stored(storage, after) {
        owners.forget(key, &after.uid);
        return;
    }
    if let (Ok(old), Ok(new)) = (before.to_value(), after.to_value()) {
        owners.updated(key, &after.uid, &old, &new, writer);
    }
}

/// Whether `object` (by UID) is still what is stored under its key.
fn still_stored(storage: &Storage, object: &StoredObject) -> bool {
    storage
        .get(&object.key)
        .is_some_and(|stored| stored.uid == object.uid)
}

/// Whether a write targets the status subresource (the only one served).
fn targets_status(path: &ResourcePath, key: &ObjectKey) -> Result<bool, Status> {
    match path.subresource.as_deref() {
        None => Ok(false),
        Some("status") => Ok(true),
        Some(other) => Err(Status::not_found(
            &path.resource.group_resource(),
            &format!("{}/{other}", key.name),
        )),
    }
}

/// `PATCH` on an object or its status. Strategic merge patches are applied
/// as JSON merge patches (lists are replaced, not merged by key).
/// Server-side apply creates a missing object and tracks who owns which
/// field, as [`crate::store::field_owners`] says.
pub(crate) fn patch(
    storage: &Storage,
    path: &ResourcePath,
    content_type: &str,
    body: &[u8],
    writer: &Writer,
) -> Result<Answer, Status> {
    let patch_type = PatchType::from_content_type(content_type).ok_or_else(|| {
        Status::failure(
            415,
            clientgo_apimachinery::StatusReason::UnsupportedMediaType,
            format!(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, \
                 application/apply-patch+yaml (got {content_type:?})"
            ),
        )
    })?;
    writer.check_patch(patch_type == PatchType::Apply)?;
    let key = object_key(path)?;
    let status_only = targets_status(path, &key)?;
    let patch = parse_body(body)?;
    if patch_type == PatchType::Apply && !status_only {
        return apply(storage, path, &key, &patch, writer);
    }
    let mut owners = lock_if_tracked(storage, status_only);
    let Some(current) = storage.get(&key) else {
        return Err(Status::not_found(&key.resource, &key.name));
    };
    let mut object = current.to_value()?;
    match patch_type {
        PatchType::Json => json_patch(&mut object, &patch)?,
        PatchType::Merge | PatchType::StrategicMerge | PatchType::Apply => {
            merge_patch(&mut object, &patch)
        }
    }
    let updated = storage.update(&key, object, status_only)?;
    if let Some(owners) = &mut owners {
        track_update(owners, storage, &key, &current, &updated, writer);
    }
    Ok(Answer::ok(updated.json.to_vec()))
}

/// How many times in all an apply is tried when another write got in
/// between its read and its write (kube-apiserver retries too).
const APPLY_ATTEMPTS: usize = 5;

/// Server-side apply of `patch` to the object `key` by `writer`: creates
/// it when missing, else applies it with its field managers (see
/// [`crate::store::field_owners`]). A body without a resourceVersion is
/// applied to whatever is stored, tried again when a write outside the
/// table's lock (a create, a status write) got in between.
fn apply(
    storage: &Storage,
    path: &ResourcePath,
    key: &ObjectKey,
    patch: &Value,
    writer: &Writer,
) -> Result<Answer, Status> {
    // A null in an apply means "not applied": dropped before anything
    // reads the body, so it neither removes a field nor escapes a
    // conflict.
    let patch = &field_owners::without_nulls(patch);
    let versioned = patch
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .is_some_and(|rv| !rv.is_empty());
    let mut owners = storage.field_owners.lock_for_apply();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let retry = !versioned && attempt < APPLY_ATTEMPTS;
        let Some(current) = storage.get(key) else {
            let mut object = patch.clone();
            check_namespace(path, &object)?;
            fill_type_meta(path, &mut object);
            merge_patch(
                &mut object,
                &serde_json::json!({"metadata": {"name": key.name}}),
            );
            let managers = field_owners::created_by_apply(&object, writer);
            match storage.create(&key.resource, &key.namespace, object) {
                Ok(created) => {
                    owners.set(key, &created.uid, managers);
                    return Ok(Answer::created(&created.json));
                }
                Err(status) if status.is_already_exists() && retry => continue,
                Err(status) => return Err(status),
            }
        };
        let object = current.to_value()?;
        let managers = match owners.managers(key, &current.uid) {
            Some(managers) => managers.clone(),
            None => field_owners::before_first_apply(&object, path.resource.api_version()),
        };
        let applied = field_owners::apply(&object, managers, patch, writer)?;
        match storage.update(key, applied.object, false) {
            Ok(updated) => {
                // Unless the apply deleted it (its last finalizer gone).
                if still_stored(storage, &updated) {
                    owners.set(key, &updated.uid, applied.managers);
                } else {
                    owners.forget(key, &updated.uid);
                }
                return Ok(Answer::ok(updated.json.to_vec()));
            }
            // Deleted meanwhile: the next try creates it.
            Err(status) if (status.is_conflict() || status.is_not_found()) && retry => continue,
            Err(status) => return Err(status),
        }
    }
}

/// Forgets the field managers of `deleted` once it is gone (not when it
/// was only marked, its finalizers pending).
pub(crate) fn forget_if_gone(storage: &Storage, deleted: &StoredObject) {
    if !storage.field_owners.tracking() {
        return;
    }
    let key = &deleted.key;
    if storage
        .get(key)
        .is_none_or(|stored| stored.uid != deleted.uid)
    {
        storage.field_owners.lock().forget(key, &deleted.uid);
    }
}

/// `DELETE` on a collection: deletes every object the selectors match
/// (finalizers still apply) and answers with the list of them.
pub(crate) fn delete_collection(
    storage: &Storage,
    path: &ResourcePath,
    options: &ListOptions,
    typed_items: bool,
) -> Result<Answer, Status> {
    let filters = Filters::parse(options, &path.resource.group_resource())?;
    let (objects, _) = storage.list(
        &path.resource.group_resource(),
        path.namespace.as_deref(),
        ReadAt::Latest,
    )?;
    let mut deleted = Vec::new();
    for object in objects.iter().filter(|o| filters.matches(o)) {
        match storage.delete(&object.key, &Preconditions::default()) {
            Ok(gone) => {
                forget_if_gone(storage, &gone);
                deleted.push(gone);
            }
            Err(status) if status.is_not_found() => {}
            Err(status) => return Err(status),
        }
    }
    let metadata = ListMetadata {
        revision: storage.current_revision(),
        continue_token: None,
        remaining: None,
        shard_selector: None,
    };
    Ok(Answer::ok(list_body(
        &path.resource,
        Representation::Full,
        typed_items,
        &metadata,
        &deleted,
    )))
}

/// `DELETE` on an object; the body may carry DeleteOptions with
/// preconditions.
pub(crate) fn delete(
    storage: &Storage,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Answer, Status> {
    let key = object_key(path)?;
    let mut preconditions = Preconditions::default();
    if !body.iter().all(u8::is_ascii_whitespace) {
        let options = parse_body(body)?;
        let field = |name: &str| {
            options
                .pointer(&format!("/preconditions/{name}"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        preconditions.uid = field("uid");
        preconditions.resource_version = field("resourceVersion");
    }
    let deleted = storage.delete(&key, &preconditions)?;
    forget_if_gone(storage, &deleted);
    Ok(Answer::ok(deleted.json.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let token = ContinueToken {
            revision: 42,
            namespace: "kube-system".into(),
            name: "a.b/c".into(),
        };
        let decoded = ContinueToken::decode(&token.encode()).unwrap();
        assert_eq!(decoded.revision, 42);
        assert_eq!(decoded.namespace, "kube-system");
        assert_eq!(decoded.name, "a.b/c");
        for bad in [
            "",
            "x",
            "1.zz.00",
            "1.0",
            "1.00.00.00",
            "a.00.00",
            "1.0g.00",
        ] {
            assert_eq!(
                ContinueToken::decode(bad).err().map(|s| s.code),
                Some(400),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn resource_version_rules() {
        let options = |rv: Option<&str>, rv_match: Option<ResourceVersionMatch>| ListOptions {
            resource_version: rv.map(str::to_string),
            resource_version_match: rv_match,
            ..Default::default()
        };
        assert_eq!(read_at(&options(None, None)).unwrap(), ReadAt::Latest);
        assert_eq!(read_at(&options(Some("0"), None)).unwrap(), ReadAt::Latest);
        assert_eq!(
            read_at(&options(Some("7"), None)).unwrap(),
            ReadAt::NotOlderThan(7)
        );
        assert_eq!(
            read_at(&options(Some("7"), Some(ResourceVersionMatch::Exact))).unwrap(),
            ReadAt::Exact(7)
        );
        assert_eq!(
            read_at(&options(
                Some("7"),
                Some(ResourceVersionMatch::NotOlderThan)
            ))
            .unwrap(),
            ReadAt::NotOlderThan(7)
        );
        assert!(read_at(&options(None, Some(ResourceVersionMatch::Exact))).is_err());
        assert!(read_at(&options(Some("0"), Some(ResourceVersionMatch::Exact))).is_err());
        assert!(read_at(&options(Some("abc"), None)).is_err());
    }
}
