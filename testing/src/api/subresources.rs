//! The subresources a controller or kubectl reaches for beyond `status`:
//! `scale` of the workloads that have one, a pod's `eviction` (honouring
//! PodDisruptionBudgets), and a pod's `log`, from text a test gives the
//! server ([`PodLogs`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use clientgo_apimachinery::{GroupResource, LabelSelector, Status, StatusCause, StatusDetails};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as ApiLabelSelector;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::api::handlers::{Answer, forget_if_gone};
use crate::api::request_path::ResourcePath;
use crate::api::watch::ChannelBody;
use crate::store::object::ObjectKey;
use crate::store::storage::{Preconditions, ReadAt, Storage};

/// The key of the object a subresource request names.
fn key_of(path: &ResourcePath) -> Result<ObjectKey, Status> {
    let name = path
        .name
        .clone()
        .ok_or_else(|| Status::bad_request("a subresource needs an object name"))?;
    Ok(ObjectKey::new(
        path.resource.group_resource(),
        path.namespace.clone().unwrap_or_default(),
        name,
    ))
}

fn json_answer(code: u16, value: &Value) -> Answer {
    Answer {
        code,
        body: serde_json::to_vec(value).unwrap_or_default(),
        content_type: "application/json",
    }
}

/// A workload's or budget's `spec.selector` as a selector: a
/// `LabelSelector` (`matchLabels`, `matchExpressions`), or the plain map of
/// labels a ReplicationController has. `None` for one that does not parse.
fn label_selector(selector: &Value) -> Option<LabelSelector> {
    if selector.is_null() {
        return Some(LabelSelector::everything());
    }
    let structured =
        selector.get("matchLabels").is_some() || selector.get("matchExpressions").is_some();
    if structured {
        let api: ApiLabelSelector = serde_json::from_value(selector.clone()).ok()?;
        return LabelSelector::try_from(&api).ok();
    }
    let labels: BTreeMap<String, String> = serde_json::from_value(selector.clone()).ok()?;
    LabelSelector::from_labels(&labels).ok()
}

/// The `autoscaling/v1` Scale of a stored workload.
fn scale_of(object: &Value) -> Value {
    let metadata = &object["metadata"];
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": metadata["name"],
            "namespace": metadata["namespace"],
            "uid": metadata["uid"],
            "resourceVersion": metadata["resourceVersion"],
            "creationTimestamp": metadata["creationTimestamp"],
        },
        "spec": {"replicas": object["spec"]["replicas"].as_i64().unwrap_or(1)},
        "status": {
            "replicas": object["status"]["replicas"].as_i64().unwrap_or(0),
            "selector": label_selector(&object["spec"]["selector"])
                .map(|selector| selector.to_string())
                .unwrap_or_default(),
        },
    })
}

/// `GET …/scale`.
pub(crate) fn get_scale(storage: &Storage, path: &ResourcePath) -> Result<Answer, Status> {
    let key = key_of(path)?;
    let stored = storage
        .get(&key)
        .ok_or_else(|| Status::not_found(&key.resource, &key.name))?;
    Ok(json_answer(200, &scale_of(&stored.to_value()?)))
}

/// `PUT …/scale` (`patch` is `None`) or `PATCH …/scale` (a merge patch of
/// the Scale): sets the workload's `spec.replicas`; a Scale naming a
/// resourceVersion other than the current one is 409 Conflict.
pub(crate) fn write_scale(
    storage: &Storage,
    path: &ResourcePath,
    body: &[u8],
    patch: bool,
) -> Result<Answer, Status> {
    let key = key_of(path)?;
    let stored = storage
        .get(&key)
        .ok_or_else(|| Status::not_found(&key.resource, &key.name))?;
    let mut object = stored.to_value()?;
    let given: Value = serde_json::from_slice(body)
        .map_err(|error| Status::bad_request(format!("the body is not a Scale: {error}")))?;
    let scale = if patch {
        let mut scale = scale_of(&object);
        crate::api::patch::merge_patch(&mut scale, &given);
        scale
    } else {
        given
    };
    let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
        return Err(Status::bad_request(
            "spec.replicas: a Scale needs a replica count",
        ));
    };
    if replicas < 0 {
        return Err(Status::bad_request(
            "spec.replicas: Invalid value: must be greater than or equal to 0",
        ));
    }
    object["spec"]["replicas"] = json!(replicas);
    if let Some(version) = scale["metadata"]["resourceVersion"].as_str()
        && !version.is_empty()
    {
        object["metadata"]["resourceVersion"] = json!(version);
    }
    let updated = storage.update(&key, object, false)?;
    Ok(json_answer(200, &scale_of(&updated.to_value()?)))
}

/// Whether `labels` match a PodDisruptionBudget's `spec.selector` (an
/// empty one matches every pod; one that does not parse, none).
fn selects(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    label_selector(selector).is_some_and(|selector| selector.matches(labels))
}

/// An `IntOrString` budget (`2` or `"50%"`) against `expected` pods,
/// percentages rounded up as the disruption controller rounds them.
fn budget_count(value: &Value, expected: i64) -> Option<i64> {
    if let Some(count) = value.as_i64() {
        return Some(count);
    }
    let percent: i64 = value.as_str()?.strip_suffix('%')?.parse().ok()?;
    Some(expected.saturating_mul(percent).saturating_add(99) / 100)
}

/// `POST pods/{name}/eviction`: deletes the pod when every
/// PodDisruptionBudget selecting it allows a disruption, else answers 429
/// as kube-apiserver does (`Cannot evict pod as it would violate the
/// pod's disruption budget.`, a `DisruptionBudget` cause naming the
/// budget, no Retry-After). The disruption controller's count is made on
/// the spot: the budget's pods that are not being deleted are healthy.
/// More than one budget selecting the pod is a 500, as the real server
/// answers.
pub(crate) fn evict(storage: &Storage, path: &ResourcePath, body: &[u8]) -> Result<Answer, Status> {
    let key = key_of(path)?;
    let eviction: Value = serde_json::from_slice(body)
        .map_err(|error| Status::bad_request(format!("the body is not an Eviction: {error}")))?;
    if let Some(named) = eviction["metadata"]["name"].as_str()
        && named != key.name
    {
        return Err(Status::bad_request(format!(
            "name in URL does not match name in Eviction object: {named} != {}",
            key.name
        )));
    }
    let pod = storage
        .get(&key)
        .ok_or_else(|| Status::not_found(&key.resource, &key.name))?;
    let budgets_resource = GroupResource::new("policy", "poddisruptionbudgets");
    let (budgets, _) = storage.list(&budgets_resource, Some(&key.namespace), ReadAt::Latest)?;
    let mut selecting = Vec::new();
    for budget in &budgets {
        let budget = budget.to_value()?;
        if selects(&budget["spec"]["selector"], &pod.labels) {
            selecting.push(budget);
        }
    }
    if selecting.len() > 1 {
        return Err(Status::failure(
            500,
            clientgo_apimachinery::StatusReason::InternalError,
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    if let Some(budget) = selecting.first() {
        let (pods, _) = storage.list(&key.resource, Some(&key.namespace), ReadAt::Latest)?;
        let mut expected: i64 = 0;
        let mut healthy: i64 = 0;
        for candidate in &pods {
            if selects(&budget["spec"]["selector"], &candidate.labels) {
                expected += 1;
                let value = candidate.to_value()?;
                if value["metadata"]["deletionTimestamp"].is_null() {
                    healthy += 1;
                }
            }
        }
        let spec = &budget["spec"];
        let desired = match (spec.get("minAvailable"), spec.get("maxUnavailable")) {
            (Some(min), _) if !min.is_null() => budget_count(min, expected).unwrap_or(expected),
            (_, Some(max)) if !max.is_null() => {
                expected.saturating_sub(budget_count(max, expected).unwrap_or(0))
            }
            _ => expected,
        };
        if healthy.saturating_sub(desired) <= 0 {
            let name = budget["metadata"]["name"].as_str().unwrap_or_default();
            return Err(Status::too_many_requests(
                "Cannot evict pod as it would violate the pod's disruption budget.",
                0,
            )
            .with_details(StatusDetails {
                causes: vec![StatusCause {
                    reason: "DisruptionBudget".to_string(),
                    message: format!(
                        "The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
                    ),
                    field: String::new(),
                }],
                ..StatusDetails::default()
            }));
        }
    }
    // A dry run (`deleteOptions.dryRun: ["All"]`) checks and deletes
    // nothing.
    let dry_run = eviction["deleteOptions"]["dryRun"]
        .as_array()
        .is_some_and(|modes| modes.iter().any(|mode| mode == "All"));
    if !dry_run {
        let evicted = storage.delete(&key, &Preconditions::default())?;
        forget_if_gone(storage, &evicted);
    }
    Ok(json_answer(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}

/// The log text of pods' containers, which a test gives the server; a
/// pod's `log` subresource serves it as kubelet would.
#[derive(Debug, Default)]
pub struct PodLogs {
    lines: Mutex<BTreeMap<LogKey, ContainerLog>>,
    /// Bumped whenever a line is appended, for followers.
    appended: watch::Sender<u64>,
}

/// Namespace, pod, container.
type LogKey = (String, String, String);

#[derive(Debug, Default, Clone)]
struct ContainerLog {
    current: Vec<(SystemTime, String)>,
    previous: Option<Vec<(SystemTime, String)>>,
}

impl PodLogs {
    /// Appends `text` (one or more lines) to a container's log.
    pub fn append(&self, namespace: &str, pod: &str, container: &str, text: &str) {
        let now = SystemTime::now();
        let key = (
            namespace.to_string(),
            pod.to_string(),
            container.to_string(),
        );
        let mut logs = self.lines.lock();
        let log = logs.entry(key).or_default();
        for line in text.lines() {
            log.current.push((now, line.to_string()));
        }
        drop(logs);
        self.appended.send_modify(|count| *count += 1);
    }

    /// Sets what the container's previous instance logged
    /// (`previous=true`).
    pub fn set_previous(&self, namespace: &str, pod: &str, container: &str, text: &str) {
        let now = SystemTime::now();
        let key = (
            namespace.to_string(),
            pod.to_string(),
            container.to_string(),
        );
        let lines = text.lines().map(|line| (now, line.to_string())).collect();
        self.lines.lock().entry(key).or_default().previous = Some(lines);
    }
}

/// The options of a log request (`PodLogOptions`), from its query.
#[derive(Debug, Default)]
struct LogOptions {
    container: Option<String>,
    follow: bool,
    previous: bool,
    timestamps: bool,
    since_seconds: Option<u64>,
    tail_lines: Option<usize>,
    limit_bytes: Option<usize>,
}

impl LogOptions {
    fn from_query(query: &str) -> Result<Self, Status> {
        let mut options = LogOptions::default();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let number = |what: &str| {
                value
                    .parse()
                    .map_err(|_| Status::bad_request(format!("{what}: not a number: {value:?}")))
            };
            match key.as_ref() {
                "container" => options.container = Some(value.to_string()),
                "follow" => options.follow = value == "true",
                "previous" => options.previous = value == "true",
                "timestamps" => options.timestamps = value == "true",
                "sinceSeconds" => options.since_seconds = Some(number("sinceSeconds")?),
                "tailLines" => options.tail_lines = Some(number("tailLines")? as usize),
                "limitBytes" => options.limit_bytes = Some(number("limitBytes")? as usize),
                _ => {}
            }
        }
        Ok(options)
    }

    fn line(&self, (at, text): &(SystemTime, String)) -> String {
        if self.timestamps {
            let stamp = humantime_rfc3339(*at);
            format!("{stamp} {text}\n")
        } else {
            format!("{text}\n")
        }
    }

    fn keeps(&self, (at, _): &(SystemTime, String)) -> bool {
        self.since_seconds.is_none_or(|seconds| {
            SystemTime::now()
                .duration_since(*at)
                .is_ok_and(|age| age <= Duration::from_secs(seconds))
        })
    }
}

/// RFC 3339 with nanoseconds, as kubelet stamps lines.
fn humantime_rfc3339(at: SystemTime) -> String {
    jiff::Timestamp::try_from(at).map_or_else(|_| String::new(), |at| format!("{at:.9}"))
}

/// Cuts `text` to what is left of `budget` (at a character boundary) and
/// takes it from the budget; a cut text leaves none (kubelet stops at the
/// limit).
fn cut_to(text: &mut String, budget: &mut usize) {
    if text.len() > *budget {
        let mut cut = *budget;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        *budget = 0;
    } else {
        *budget -= text.len();
    }
}

/// The pod a subresource request names, as JSON; 404 when there is none.
pub(crate) fn pod_of(storage: &Storage, path: &ResourcePath) -> Result<Value, Status> {
    let key = key_of(path)?;
    storage
        .get(&key)
        .ok_or_else(|| Status::not_found(&key.resource, &key.name))?
        .to_value()
}

/// The pod a streaming subresource names (as JSON) and the container it
/// asks for: the one given, which must be the pod's, else its only one,
/// with kubelet's refusals.
pub(crate) fn pod_container(
    storage: &Storage,
    path: &ResourcePath,
    wanted: Option<&str>,
) -> Result<(Value, String), Status> {
    let key = key_of(path)?;
    let pod = pod_of(storage, path)?;
    let containers: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|container| container["name"].as_str().map(str::to_string))
        .collect();
    let container = match wanted {
        Some(container) if containers.iter().any(|c| c == container) => container.to_string(),
        Some(container) => {
            return Err(Status::bad_request(format!(
                "container {container} is not valid for pod {}",
                key.name
            )));
        }
        None if containers.len() == 1 => containers[0].clone(),
        None => {
            return Err(Status::bad_request(format!(
                "a container name must be specified for pod {}, choose one of: [{}]",
                key.name,
                containers.join(" ")
            )));
        }
    };
    Ok((pod, container))
}

/// `GET pods/{name}/log`: the container's log as text, with kubelet's
/// options (container, previous, sinceSeconds, tailLines, limitBytes,
/// timestamps). With `follow=true` the answer streams appended lines until
/// the pod is deleted, the server stops or the client goes.
pub(crate) fn log(
    storage: &Arc<Storage>,
    logs: &Arc<PodLogs>,
    path: &ResourcePath,
    query: &str,
    shutdown: CancellationToken,
) -> Result<ChannelBody, Status> {
    let key = key_of(path)?;
    let options = LogOptions::from_query(query)?;
    let (_, container) = pod_container(storage, path, options.container.as_deref())?;
    let log_key = (key.namespace.clone(), key.name.clone(), container.clone());
    let kept = logs.lines.lock().get(&log_key).cloned().unwrap_or_default();
    let lines = if options.previous {
        kept.previous.ok_or_else(|| {
            Status::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{}\" not found",
                key.name
            ))
        })?
    } else {
        kept.current
    };
    let mut selected: Vec<&(SystemTime, String)> =
        lines.iter().filter(|line| options.keeps(line)).collect();
    if let Some(tail) = options.tail_lines {
        let skip = selected.len().saturating_sub(tail);
        selected.drain(..skip);
    }
    let mut text: String = selected.iter().map(|line| options.line(line)).collect();
    let mut budget = options.limit_bytes.unwrap_or(usize::MAX);
    cut_to(&mut text, &mut budget);
    let (sender, chunks) = mpsc::channel::<Bytes>(64);
    let _ = sender.try_send(Bytes::from(text));
    if options.follow && !options.previous && budget > 0 {
        let mut sent = lines.len();
        let mut appended = logs.appended.subscribe();
        let (storage, logs) = (Arc::clone(storage), Arc::clone(logs));
        tokio::spawn(async move {
            loop {
                // A deleted pod ends the stream even when nothing is
                // appended: checked every 100 ms.
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = sender.closed() => return,
                    changed = appended.changed() => if changed.is_err() { return },
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                // Lines appended before the pod went are sent first.
                let pod_gone = storage.get(&key).is_none();
                let now = logs.lines.lock().get(&log_key).cloned().unwrap_or_default();
                let mut text: String = now.current[sent.min(now.current.len())..]
                    .iter()
                    .map(|line| options.line(line))
                    .collect();
                sent = now.current.len();
                cut_to(&mut text, &mut budget);
                if !text.is_empty() && sender.send(Bytes::from(text)).await.is_err() {
                    return;
                }
                if budget == 0 || pod_gone {
                    return;
                }
            }
        });
    }
    Ok(ChannelBody::new(chunks))
}
