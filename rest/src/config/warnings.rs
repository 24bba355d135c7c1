//! `Warning` response headers (deprecated APIs, ignored fields) and where
//! they go, as client-go's `WarningHandler`.

use std::fmt;

use parking_lot::Mutex;

/// One warning from a `Warning` header: `299 - "text"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The warn-code; the API server uses 299 ("miscellaneous persistent
    /// warning").
    pub code: u16,
    /// The warn-agent (`-` from the API server).
    pub agent: String,
    /// The warning's text, unquoted.
    pub text: String,
}

/// Receives the warnings of every response. Called on the task that sent
/// the request, so it must not block.
pub trait WarningHandler: Send + Sync + fmt::Debug {
    /// Handles one warning.
    fn handle_warning(&self, warning: &Warning);
}

/// Logs code-299 warnings at warn level and ignores others: client-go's
/// default `WarningLogger`.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogWarnings;

impl WarningHandler for LogWarnings {
    fn handle_warning(&self, warning: &Warning) {
        if warning.code == 299 && !warning.text.is_empty() {
            tracing::warn!(text = %warning.text, "the API server sent a warning");
        }
    }
}

/// Drops every warning.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoWarnings;

impl WarningHandler for NoWarnings {
    fn handle_warning(&self, _warning: &Warning) {}
}

/// Keeps every warning for later inspection (tests, a CLI that prints them
/// at the end).
#[derive(Debug, Default)]
pub struct CollectWarnings {
    warnings: Mutex<Vec<Warning>>,
}

impl CollectWarnings {
    /// The warnings received so far, oldest first.
    pub fn warnings(&self) -> Vec<Warning> {
        self.warnings.lock().clone()
    }
}

impl WarningHandler for CollectWarnings {
    fn handle_warning(&self, warning: &Warning) {
        self.warnings.lock().push(warning.clone());
    }
}

/// Parses one `Warning` header value, which may list several warnings
/// separated by commas: `code SP agent SP "quoted text" [SP "date"]`.
/// Malformed parts are skipped.
pub fn parse_warning_header(value: &str) -> Vec<Warning> {
    let mut warnings = Vec::new();
    let mut rest = value.trim_start();
    while !rest.is_empty() {
        match parse_one(rest) {
            Some((warning, after)) => {
                warnings.push(warning);
                rest = after;
            }
            None => {
                // Skip to the next comma outside quotes; give up without one.
                match skip_to_next(rest) {
                    Some(after) => rest = after,
                    None => break,
                }
            }
        }
        rest = rest.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    warnings
}

/// Parses one warning; returns it and the text after it (before any comma).
fn parse_one(input: &str) -> Option<(Warning, &str)> {
    let (code, rest) = input.split_once(' ')?;
    let code: u16 = code.parse().ok()?;
    if !(100..=999).contains(&code) {
        return None;
    }
    let (agent, rest) = rest.trim_start().split_once(' ')?;
    let (text, mut rest) = quoted(rest.trim_start())?;
    // An optional quoted date follows.
    let trimmed = rest.trim_start();
    if trimmed.starts_with('"') {
        rest = quoted(trimmed)?.1;
    }
    let warning = Warning {
        code,
        agent: agent.to_string(),
        text,
    };
    Some((warning, rest))
}

/// Reads a quoted string with backslash escapes from the start of `input`.
fn quoted(input: &str) -> Option<(String, &str)> {
    let mut chars = input.char_indices();
    if chars.next()?.1 != '"' {
        return None;
    }
    let mut text = String::new();
    let mut escaped = false;
    for (index, c) in chars {
        if escaped {
            text.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            return Some((text, &input[index + 1..]));
        } else {
            text.push(c);
        }
    }
    None
}

fn skip_to_next(input: &str) -> Option<&str> {
    let mut in_quotes = false;
    let mut escaped = false;
    for (index, c) in input.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            ',' if !in_quotes => return Some(&input[index + 1..]),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_api_server_format() {
        let warnings = parse_warning_header(
            r#"299 - "policy/v1beta1 PodSecurityPolicy is deprecated", 299 - "a \"quoted\" word, and a comma" "Mon, 01 Jan 2024 00:00:00 GMT""#,
        );
        assert_eq!(warnings.len(), 2);
        assert_eq!(warnings[0].code, 299);
        assert_eq!(warnings[0].agent, "-");
        assert_eq!(
            warnings[0].text,
            "policy/v1beta1 PodSecurityPolicy is deprecated"
        );
        assert_eq!(warnings[1].text, r#"a "quoted" word, and a comma"#);
    }

    #[test]
    fn malformed_parts_are_skipped_not_fatal() {
        let warnings =
            parse_warning_header(r#"garbage, 299 - "kept", 12 x "bad code", 299 - "unterminated"#);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].text, "kept");
        assert!(parse_warning_header("").is_empty());
        assert!(parse_warning_header("\"").is_empty());
    }
}
