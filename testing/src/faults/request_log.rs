//! [`RequestLog`]: every request the test server answered, so tests can
//! assert what a client asked for (for example that a relist used
//! `resourceVersion=X`, or how many LISTs happened).

use std::time::Duration;

use clientgo_apimachinery::ListOptions;
use parking_lot::Mutex;

/// The kind of a request, as the API server's authorizer names verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
    /// Anything else (discovery, health, unknown paths).
    Other,
}

impl Verb {
    /// The verb as Kubernetes' authorizer names it (`list`, `watch`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
            Verb::Other => "other",
        }
    }
}

/// One answered request.
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// The HTTP method.
    pub method: String,
    /// The path.
    pub path: String,
    /// The raw query string.
    pub query: String,
    /// What the request was.
    pub verb: Verb,
    /// The HTTP status of the answer (for a watch, of its headers).
    pub status: u16,
    /// How long answering took (for a watch, until its headers).
    pub duration: Duration,
    /// The request's HTTP version (`HTTP/1.1`, `HTTP/2.0`).
    pub http_version: String,
    /// The number of the connection it came on (from 1, in accept order):
    /// requests multiplexed on one HTTP/2 connection share it.
    pub connection: u64,
    /// The request's headers, as sent (credentials included: this is a
    /// test server), copied out of the connection's read buffer so that a
    /// kept record does not keep that buffer alive.
    pub headers: hyper::HeaderMap,
    /// The answer's `Content-Encoding` (`gzip` when it was compressed).
    pub response_encoding: Option<String>,
}

impl RequestRecord {
    /// The query parsed as list options (default when it does not parse).
    pub fn list_options(&self) -> ListOptions {
        ListOptions::from_query(&self.query).unwrap_or_default()
    }

    /// The values of one request header that are valid text, in order.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .map(str::to_string)
            .collect()
    }
}

/// The requests a server answered, oldest first.
#[derive(Debug, Default)]
pub struct RequestLog {
    records: Mutex<Vec<RequestRecord>>,
}

impl RequestLog {
    pub(crate) fn record(&self, record: RequestRecord) {
        self.records.lock().push(record);
    }

    /// A copy of every record.
    pub fn records(&self) -> Vec<RequestRecord> {
        self.records.lock().clone()
    }

    /// The records of one verb.
    pub fn of(&self, verb: Verb) -> Vec<RequestRecord> {
        self.records
            .lock()
            .iter()
            .filter(|r| r.verb == verb)
            .cloned()
            .collect()
    }

    /// How many requests of one verb were answered.
    pub fn count(&self, verb: Verb) -> usize {
        self.records
            .lock()
            .iter()
            .filter(|r| r.verb == verb)
            .count()
    }

    /// Forgets every record.
    pub fn clear(&self) {
        self.records.lock().clear();
    }
}
