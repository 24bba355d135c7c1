//! Rust names for what the generator emits: group modules, version
//! modules, accessor methods and type names.

use std::collections::BTreeMap;

/// Rust's strict and reserved keywords, which need `r#` as identifiers.
const KEYWORDS: [&str; 51] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// `name` as an identifier: `-` and `.` become `_`, a leading digit gets
/// a `_`, and a keyword gets `r#`.
pub(crate) fn identifier(name: &str) -> String {
    let mut cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if cleaned.starts_with(|c: char| c.is_ascii_digit()) {
        cleaned.insert(0, '_');
    }
    if KEYWORDS.contains(&cleaned.as_str()) {
        // `self`, `super`, `crate` and `Self` cannot be raw identifiers.
        if matches!(cleaned.as_str(), "self" | "super" | "crate" | "Self") {
            return format!("{cleaned}_");
        }
        return format!("r#{cleaned}");
    }
    cleaned
}

/// The module (and accessor) name of each group: `core` for the core
/// group, else the group's first DNS label (`apps`, `rbac` for
/// `rbac.authorization.k8s.io`), or the whole group when two groups share
/// a first label.
pub(crate) fn group_modules<'a>(
    groups: impl IntoIterator<Item = &'a str>,
) -> BTreeMap<String, String> {
    let groups: Vec<&str> = groups.into_iter().collect();
    let short = |group: &str| -> String {
        if group.is_empty() {
            "core".to_string()
        } else {
            group.split('.').next().unwrap_or(group).to_string()
        }
    };
    let mut names = BTreeMap::new();
    for group in &groups {
        let candidate = short(group);
        let shared = groups
            .iter()
            .filter(|other| short(other) == candidate)
            .count()
            > 1;
        let name = if shared && !group.is_empty() {
            identifier(group)
        } else {
            identifier(&candidate)
        };
        names.insert((*group).to_string(), name);
    }
    names
}

/// The accessor of a resource in its version (`pods`, `networkpolicies`).
pub(crate) fn accessor(plural: &str) -> String {
    identifier(plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_valid_rust() {
        assert_eq!(identifier("apps"), "apps");
        assert_eq!(
            identifier("rbac.authorization.k8s.io"),
            "rbac_authorization_k8s_io"
        );
        assert_eq!(identifier("type"), "r#type");
        assert_eq!(identifier("self"), "self_");
        assert_eq!(identifier("3d-models"), "_3d_models");
    }

    #[test]
    fn groups_get_short_unique_module_names() {
        let names = group_modules([
            "",
            "apps",
            "rbac.authorization.k8s.io",
            "storage.k8s.io",
            "storage.example.com",
        ]);
        assert_eq!(names[""], "core");
        assert_eq!(names["apps"], "apps");
        assert_eq!(names["rbac.authorization.k8s.io"], "rbac");
        assert_eq!(names["storage.k8s.io"], "storage_k8s_io");
        assert_eq!(names["storage.example.com"], "storage_example_com");
    }
}
