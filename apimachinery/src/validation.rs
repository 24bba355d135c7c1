//! Kubernetes name and label validation rules (`k8s.io/apimachinery`'s
//! `util/validation`), as used by label selectors and object names.
//!
//! Each function returns `Ok(())` or a sentence saying what is wrong.

/// The longest label value, and the longest name part of a qualified name.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;

/// The longest DNS-1123 subdomain (and so the longest qualified-name
/// prefix).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// The longest DNS-1123 label.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;

fn is_alphanumeric(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, non-empty.
fn is_name_shaped(text: &str) -> bool {
    let bytes = text.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            is_alphanumeric(first)
                && is_alphanumeric(last)
                && bytes
                    .iter()
                    .all(|&b| is_alphanumeric(b) || b == b'-' || b == b'_' || b == b'.')
        }
        _ => false,
    }
}

/// Checks a DNS-1123 label: at most 63 lower-case alphanumerics or `-`,
/// starting and ending with an alphanumeric (namespace names, most
/// resource names).
pub fn validate_dns1123_label(text: &str) -> Result<(), String> {
    if text.len() > DNS1123_LABEL_MAX_LENGTH {
        return Err(format!(
            "must be no more than {DNS1123_LABEL_MAX_LENGTH} characters"
        ));
    }
    let bytes = text.as_bytes();
    let lower_alphanumeric = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let ok = match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            lower_alphanumeric(first)
                && lower_alphanumeric(last)
                && bytes.iter().all(|&b| lower_alphanumeric(b) || b == b'-')
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(
            "a DNS-1123 label must consist of lower case alphanumeric characters or '-', \
             and must start and end with an alphanumeric character"
                .to_string(),
        )
    }
}

/// Checks a DNS-1123 subdomain: at most 253 characters of dot-separated
/// DNS-1123 labels (object names of most resources, label key prefixes).
pub fn validate_dns1123_subdomain(text: &str) -> Result<(), String> {
    if text.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        return Err(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
        ));
    }
    let bytes = text.as_bytes();
    let lower_alphanumeric = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let labels_ok = !text.is_empty()
        && text.split('.').all(|label| {
            let label = label.as_bytes();
            match (label.first(), label.last()) {
                (Some(&first), Some(&last)) => {
                    lower_alphanumeric(first)
                        && lower_alphanumeric(last)
                        && label.iter().all(|&b| lower_alphanumeric(b) || b == b'-')
                }
                _ => false,
            }
        });
    if labels_ok && !bytes.is_empty() {
        Ok(())
    } else {
        Err(
            "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', \
             and must start and end with an alphanumeric character"
                .to_string(),
        )
    }
}

/// Checks a qualified name (a label or annotation key): an optional
/// DNS-1123 subdomain prefix and `/`, then a name of at most 63
/// alphanumerics, `-`, `_` or `.`, starting and ending with an alphanumeric.
pub fn validate_qualified_name(text: &str) -> Result<(), String> {
    let mut parts = text.split('/');
    let first = parts.next().unwrap_or_default();
    let (prefix, name) = match (parts.next(), parts.next()) {
        (None, _) => (None, first),
        (Some(name), None) => (Some(first), name),
        (Some(_), Some(_)) => {
            return Err(
                "a qualified name has at most one '/', separating an optional DNS subdomain prefix \
                 from the name (e.g. 'example.com/MyName')"
                    .to_string(),
            );
        }
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("the prefix part before '/' must be non-empty".to_string());
        }
        validate_dns1123_subdomain(prefix).map_err(|why| format!("the prefix part: {why}"))?;
    }
    if name.is_empty() {
        return Err("the name part must be non-empty".to_string());
    }
    if name.len() > LABEL_VALUE_MAX_LENGTH {
        return Err(format!(
            "the name part must be no more than {LABEL_VALUE_MAX_LENGTH} characters"
        ));
    }
    if !is_name_shaped(name) {
        return Err(
            "the name part must consist of alphanumeric characters, '-', '_' or '.', \
             and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    Ok(())
}

/// Checks a label value: empty, or at most 63 alphanumerics, `-`, `_` or
/// `.`, starting and ending with an alphanumeric.
pub fn validate_label_value(text: &str) -> Result<(), String> {
    if text.len() > LABEL_VALUE_MAX_LENGTH {
        return Err(format!(
            "must be no more than {LABEL_VALUE_MAX_LENGTH} characters"
        ));
    }
    if text.is_empty() || is_name_shaped(text) {
        Ok(())
    } else {
        Err(
            "a label value must be empty or consist of alphanumeric characters, '-', '_' or '.', \
             and must start and end with an alphanumeric character"
                .to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for good in [
            "app",
            "a",
            "A_b.c-9",
            "example.com/app",
            "kubernetes.io/metadata.name",
            "a.b-c/X",
            &"x".repeat(63),
        ] {
            assert!(validate_qualified_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-app",
            "app-",
            "a b",
            "/app",
            "example.com/",
            "a/b/c",
            "Example.com/app",
            "ex_ample.com/app",
            &"x".repeat(64),
            "app!",
        ] {
            assert!(validate_qualified_name(bad).is_err(), "{bad:?}");
        }
        let prefix = format!("{}/a", "a".repeat(254));
        assert!(validate_qualified_name(&prefix).is_err());
    }

    #[test]
    fn label_values() {
        for good in ["", "v1", "a.b_c-d", &"z".repeat(63)] {
            assert!(validate_label_value(good).is_ok(), "{good:?}");
        }
        for bad in ["-a", "a-", "a/b", "a b", &"z".repeat(64), "é"] {
            assert!(validate_label_value(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dns_names() {
        assert!(validate_dns1123_label("kube-system").is_ok());
        assert!(validate_dns1123_label("Kube").is_err());
        assert!(validate_dns1123_label("a.b").is_err());
        assert!(validate_dns1123_label("").is_err());
        assert!(validate_dns1123_subdomain("a.b-c.d").is_ok());
        assert!(validate_dns1123_subdomain("a..b").is_err());
        assert!(validate_dns1123_subdomain(".a").is_err());
        assert!(validate_dns1123_subdomain("").is_err());
    }
}
