//! [`ListOptions`]: the query parameters of list and watch requests.

use std::fmt;
use std::str::FromStr;

/// Why a query string could not be read as [`ListOptions`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListOptionsError {
    /// A numeric parameter did not hold a non-negative integer.
    #[error("query parameter {parameter}={value:?} is not a non-negative integer")]
    InvalidInteger {
        /// The parameter's name (`limit`, `timeoutSeconds`).
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// A boolean parameter held something other than the forms Go's
    /// `strconv.ParseBool` accepts.
    #[error("query parameter {parameter}={value:?} is not a boolean")]
    InvalidBool {
        /// The parameter's name.
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// `resourceVersionMatch` held an unknown value.
    #[error(
        "query parameter resourceVersionMatch={value:?} is not supported: expected \"Exact\" or \"NotOlderThan\""
    )]
    InvalidResourceVersionMatch {
        /// The value given.
        value: String,
    },
}

/// How a list's `resourceVersion` is interpreted.
///
/// Without it, a `resourceVersion` of `"0"` means "any version, possibly
/// served from the API server's cache", and any other value means "not older
/// than" for lists (and "strictly after" for watches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceVersionMatch {
    /// Exactly the given resource version (a historical snapshot; 410 Gone
    /// once compacted).
    Exact,
    /// The given resource version or any newer one.
    NotOlderThan,
}

impl ResourceVersionMatch {
    /// The value as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::Exact => "Exact",
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
        }
    }
}

impl fmt::Display for ResourceVersionMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResourceVersionMatch {
    type Err = ListOptionsError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "Exact" => Ok(ResourceVersionMatch::Exact),
            "NotOlderThan" => Ok(ResourceVersionMatch::NotOlderThan),
            _ => Err(ListOptionsError::InvalidResourceVersionMatch {
                value: value.to_string(),
            }),
        }
    }
}

/// The options of a list or watch request (`metav1.ListOptions`).
///
/// [`to_query_pairs`](ListOptions::to_query_pairs) renders exactly the
/// parameters the API server reads, and nothing for unset fields: string
/// fields that are `None` or empty, a `limit` of `None` or 0, and `false`
/// for `allow_watch_bookmarks` and `watch` are all left out, as Go's
/// `omitempty` does. `timeout_seconds` and `send_initial_events` are sent
/// whenever they are `Some`, including 0 and `false`.
///
/// ```
/// use clientgo_apimachinery::{ListOptions, ResourceVersionMatch};
///
/// let options = ListOptions::default()
///     .label_selector("app=web,tier!=db")
///     .resource_version("12345")
///     .resource_version_match(ResourceVersionMatch::NotOlderThan)
///     .limit(500);
/// assert_eq!(
///     options.to_query_string(),
///     "labelSelector=app%3Dweb%2Ctier%21%3Ddb&resourceVersion=12345\
///      &resourceVersionMatch=NotOlderThan&limit=500"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListOptions {
    /// `labelSelector`: restricts the result to objects whose labels match
    /// (see [`LabelSelector`](crate::LabelSelector) for the syntax).
    pub label_selector: Option<String>,
    /// `fieldSelector`: restricts the result by field values (see
    /// [`FieldSelector`](crate::FieldSelector)).
    pub field_selector: Option<String>,
    /// `resourceVersion`: unset means the latest state (a consistent read);
    /// `"0"` means any state, possibly from the server's cache.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`: how `resource_version` is interpreted on a
    /// list (and on a watch-list request).
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `limit`: the maximum number of items in one page.
    pub limit: Option<u64>,
    /// `continue`: the token from the previous page's list metadata.
    pub continue_token: Option<String>,
    /// `timeoutSeconds`: how long the server keeps a list or watch open.
    pub timeout_seconds: Option<u64>,
    /// `allowWatchBookmarks`: lets a watch receive BOOKMARK events.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents`: asks a watch to start with the current state
    /// (watch-list), ending it with a bookmark annotated
    /// [`INITIAL_EVENTS_END_ANNOTATION`](crate::INITIAL_EVENTS_END_ANNOTATION).
    pub send_initial_events: Option<bool>,
    /// `watch`: turns a list request into a watch.
    pub watch: bool,
    /// `shardSelector`: only the objects of these shards
    /// ([`ShardSelector`](crate::ShardSelector)'s text), where the server
    /// applies it (Kubernetes 1.36+ with `ShardedListAndWatch`); others
    /// ignore it.
    pub shard_selector: Option<String>,
}

/// Go's `strconv.ParseBool`.
fn parse_bool(parameter: &'static str, value: &str) -> Result<bool, ListOptionsError> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(ListOptionsError::InvalidBool {
            parameter,
            value: value.to_string(),
        }),
    }
}

fn parse_integer(parameter: &'static str, value: &str) -> Result<u64, ListOptionsError> {
    value.parse().map_err(|_| ListOptionsError::InvalidInteger {
        parameter,
        value: value.to_string(),
    })
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

impl ListOptions {
    /// Sets `labelSelector`.
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Sets `fieldSelector`.
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Sets `resourceVersion`.
    pub fn resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.resource_version = Some(resource_version.into());
        self
    }

    /// Sets `resourceVersionMatch`.
    pub fn resource_version_match(mut self, rv_match: ResourceVersionMatch) -> Self {
        self.resource_version_match = Some(rv_match);
        self
    }

    /// Sets `limit`.
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sets `continue`.
    pub fn continue_token(mut self, token: impl Into<String>) -> Self {
        self.continue_token = Some(token.into());
        self
    }

    /// Sets `timeoutSeconds`.
    pub fn timeout_seconds(mut self, seconds: u64) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }

    /// Sets `allowWatchBookmarks`.
    pub fn allow_watch_bookmarks(mut self, allow: bool) -> Self {
        self.allow_watch_bookmarks = allow;
        self
    }

    /// Sets `sendInitialEvents`.
    pub fn send_initial_events(mut self, send: bool) -> Self {
        self.send_initial_events = Some(send);
        self
    }

    /// Sets `watch`.
    pub fn watch(mut self, watch: bool) -> Self {
        self.watch = watch;
        self
    }

    /// The query parameters, in a fixed order, with unset fields left out
    /// (see the type's documentation for what counts as unset). Values are
    /// not percent-encoded; [`to_query_string`](Self::to_query_string) does
    /// that.
    pub fn to_query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if self.watch {
            pairs.push(("watch", "true".to_string()));
        }
        if let Some(selector) = non_empty(&self.label_selector) {
            pairs.push(("labelSelector", selector.to_string()));
        }
        if let Some(selector) = non_empty(&self.field_selector) {
            pairs.push(("fieldSelector", selector.to_string()));
        }
        if let Some(rv) = non_empty(&self.resource_version) {
            pairs.push(("resourceVersion", rv.to_string()));
        }
        if let Some(rv_match) = self.resource_version_match {
            pairs.push(("resourceVersionMatch", rv_match.as_str().to_string()));
        }
        if let Some(limit) = self.limit.filter(|&limit| limit > 0) {
            pairs.push(("limit", limit.to_string()));
        }
        if let Some(token) = non_empty(&self.continue_token) {
            pairs.push(("continue", token.to_string()));
        }
        if let Some(seconds) = self.timeout_seconds {
            pairs.push(("timeoutSeconds", seconds.to_string()));
        }
        if self.allow_watch_bookmarks {
            pairs.push(("allowWatchBookmarks", "true".to_string()));
        }
        if let Some(send) = self.send_initial_events {
            pairs.push(("sendInitialEvents", send.to_string()));
        }
        if let Some(selector) = non_empty(&self.shard_selector) {
            pairs.push(("shardSelector", selector.to_string()));
        }
        pairs
    }

    /// The query string (without the leading `?`), form-urlencoded.
    pub fn to_query_string(&self) -> String {
        let mut serializer = form_urlencoded::Serializer::new(String::new());
        for (name, value) in self.to_query_pairs() {
            serializer.append_pair(name, &value);
        }
        serializer.finish()
    }

    /// Reads list options from a URL query string (without the leading
    /// `?`), as the API server does. Parameters it does not know (`pretty`,
    /// `timeout`) are ignored; when a parameter is repeated, the first value
    /// counts.
    pub fn from_query(query: &str) -> Result<Self, ListOptionsError> {
        let mut options = ListOptions::default();
        let mut seen: Vec<String> = Vec::new();
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if seen.iter().any(|s| *s == name) {
                continue;
            }
            seen.push(name.to_string());
            let value = value.into_owned();
            match &*name {
                "labelSelector" => options.label_selector = Some(value),
                "fieldSelector" => options.field_selector = Some(value),
                "resourceVersion" => options.resource_version = Some(value),
                "resourceVersionMatch" if value.is_empty() => {}
                "resourceVersionMatch" => options.resource_version_match = Some(value.parse()?),
                "limit" => options.limit = Some(parse_integer("limit", &value)?),
                "continue" => options.continue_token = Some(value),
                "timeoutSeconds" => {
                    options.timeout_seconds = Some(parse_integer("timeoutSeconds", &value)?)
                }
                "allowWatchBookmarks" => {
                    options.allow_watch_bookmarks = parse_bool("allowWatchBookmarks", &value)?
                }
                "sendInitialEvents" => {
                    options.send_initial_events = Some(parse_bool("sendInitialEvents", &value)?)
                }
                "watch" => options.watch = parse_bool("watch", &value)?,
                "shardSelector" => options.shard_selector = Some(value),
                _ => {}
            }
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_renders_nothing() {
        assert!(ListOptions::default().to_query_pairs().is_empty());
        assert_eq!(ListOptions::default().to_query_string(), "");
    }

    #[test]
    fn empty_and_zero_values_are_unset() {
        let options = ListOptions {
            label_selector: Some(String::new()),
            field_selector: Some(String::new()),
            resource_version: Some(String::new()),
            continue_token: Some(String::new()),
            limit: Some(0),
            ..Default::default()
        };
        assert!(options.to_query_pairs().is_empty());
    }

    #[test]
    fn every_field_renders_its_parameter() {
        let options = ListOptions::default()
            .watch(true)
            .label_selector("app=web")
            .field_selector("metadata.name=x")
            .resource_version("0")
            .resource_version_match(ResourceVersionMatch::Exact)
            .limit(500)
            .continue_token("abc")
            .timeout_seconds(0)
            .allow_watch_bookmarks(true)
            .send_initial_events(false);
        let pairs = options.to_query_pairs();
        let expected: Vec<(&str, &str)> = vec![
            ("watch", "true"),
            ("labelSelector", "app=web"),
            ("fieldSelector", "metadata.name=x"),
            ("resourceVersion", "0"),
            ("resourceVersionMatch", "Exact"),
            ("limit", "500"),
            ("continue", "abc"),
            ("timeoutSeconds", "0"),
            ("allowWatchBookmarks", "true"),
            ("sendInitialEvents", "false"),
        ];
        let actual: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn query_string_is_percent_encoded_and_parses_back() {
        let options = ListOptions::default()
            .label_selector("env in (prod, staging),!canary")
            .field_selector("metadata.namespace!=kube-system")
            .resource_version("987")
            .resource_version_match(ResourceVersionMatch::NotOlderThan)
            .watch(true)
            .send_initial_events(true)
            .allow_watch_bookmarks(true)
            .timeout_seconds(300);
        let query = options.to_query_string();
        assert!(!query.contains(' '), "{query}");
        assert!(!query.contains('('), "{query}");
        assert_eq!(ListOptions::from_query(&query).unwrap(), options);
    }

    #[test]
    fn from_query_accepts_go_booleans_and_ignores_unknown_parameters() {
        let options =
            ListOptions::from_query("watch=1&allowWatchBookmarks=T&pretty=true&timeout=30s")
                .unwrap();
        assert!(options.watch);
        assert!(options.allow_watch_bookmarks);
        assert_eq!(options.timeout_seconds, None);
        let options = ListOptions::from_query("watch=false&sendInitialEvents=0").unwrap();
        assert!(!options.watch);
        assert_eq!(options.send_initial_events, Some(false));
    }

    #[test]
    fn from_query_first_value_wins() {
        let options = ListOptions::from_query("limit=5&limit=7").unwrap();
        assert_eq!(options.limit, Some(5));
    }

    #[test]
    fn from_query_errors_name_the_parameter() {
        let err = ListOptions::from_query("limit=-1").unwrap_err();
        assert_eq!(
            err,
            ListOptionsError::InvalidInteger {
                parameter: "limit",
                value: "-1".into()
            }
        );
        assert!(err.to_string().contains("limit"));
        assert!(matches!(
            ListOptions::from_query("timeoutSeconds=abc"),
            Err(ListOptionsError::InvalidInteger {
                parameter: "timeoutSeconds",
                ..
            })
        ));
        assert!(matches!(
            ListOptions::from_query("watch=yes"),
            Err(ListOptionsError::InvalidBool {
                parameter: "watch",
                ..
            })
        ));
        assert!(matches!(
            ListOptions::from_query("resourceVersionMatch=exact"),
            Err(ListOptionsError::InvalidResourceVersionMatch { .. })
        ));
    }

    #[test]
    fn resource_version_match_round_trips() {
        for rv_match in [
            ResourceVersionMatch::Exact,
            ResourceVersionMatch::NotOlderThan,
        ] {
            assert_eq!(
                rv_match
                    .to_string()
                    .parse::<ResourceVersionMatch>()
                    .unwrap(),
                rv_match
            );
        }
    }
}
