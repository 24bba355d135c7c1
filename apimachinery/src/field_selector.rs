//! Field selectors: `field=value`, `field==value` and `field!=value` terms
//! joined by commas (AND), as k8s.io/apimachinery's `fields` package reads
//! them.
//!
//! In values, `,`, `=` and `\` must be escaped with a backslash; Display
//! escapes them, so every selector prints as text that parses back to it.
//! `==` is the same as `=` and prints as `=`. Terms are kept sorted, so
//! equal selectors compare equal whatever order they were written in.
//!
//! The API server supports `metadata.name` and `metadata.namespace` for
//! every resource, and a few more fields per resource (`spec.nodeName` and
//! `status.phase` for pods, for example).
//!
//! ```
//! use clientgo_apimachinery::{FieldSelector, PartialObjectMetadata};
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//!
//! let selector: FieldSelector = "metadata.namespace!=kube-system,metadata.name=web".parse().unwrap();
//! let object = PartialObjectMetadata::from_meta(ObjectMeta {
//!     name: Some("web".into()),
//!     namespace: Some("default".into()),
//!     ..Default::default()
//! });
//! assert!(selector.matches_metadata(&object).unwrap());
//! assert_eq!(selector.to_string(), "metadata.name=web,metadata.namespace!=kube-system");
//! ```

use std::fmt;
use std::str::FromStr;

/// The field path of an object's name.
pub const METADATA_NAME: &str = "metadata.name";
/// The field path of an object's namespace.
pub const METADATA_NAMESPACE: &str = "metadata.namespace";

/// A field selector could not be parsed, or could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldSelectorError {
    /// A term has no `=`, `==` or `!=`.
    #[error(
        "invalid field selector {input:?}: term {term:?} at byte {position} has no operator (=, ==, !=)"
    )]
    MissingOperator {
        /// The selector text.
        input: String,
        /// The offending term.
        term: String,
        /// Its byte offset in the input.
        position: usize,
    },
    /// A term has no field path before its operator.
    #[error(
        "invalid field selector {input:?}: term {term:?} at byte {position} has an empty field path"
    )]
    EmptyField {
        /// The selector text.
        input: String,
        /// The offending term.
        term: String,
        /// Its byte offset in the input.
        position: usize,
    },
    /// A value holds a backslash followed by something other than `\`, `,`
    /// or `=`, or ends with a lone backslash.
    #[error(
        "invalid field selector {input:?}: invalid escape sequence {sequence:?} at byte {position}"
    )]
    InvalidEscape {
        /// The selector text.
        input: String,
        /// The escape sequence.
        sequence: String,
        /// Its byte offset in the input.
        position: usize,
    },
    /// A value holds an unescaped `=` (an unescaped `,` ends the term).
    #[error(
        "invalid field selector {input:?}: unescaped {character:?} at byte {position} in a value (write \\{character})"
    )]
    UnescapedCharacter {
        /// The selector text.
        input: String,
        /// The character.
        character: char,
        /// Its byte offset in the input.
        position: usize,
    },
    /// Matching against metadata was asked for a field that metadata does
    /// not hold.
    #[error(
        "field selector term on {field:?} cannot be evaluated from object metadata (only metadata.name and metadata.namespace can)"
    )]
    UnsupportedField {
        /// The field path.
        field: String,
    },
}

/// The operator of a field [`Term`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldOperator {
    /// `field=value` (also written `field==value`).
    Equals,
    /// `field!=value`.
    NotEquals,
}

/// One term of a [`FieldSelector`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term {
    /// The field path (`metadata.name`, `spec.nodeName`).
    pub field: String,
    /// The operator.
    pub operator: FieldOperator,
    /// The value, unescaped.
    pub value: String,
}

impl Term {
    /// Whether a field's value (`""` when the object lacks the field, as in
    /// Kubernetes) satisfies this term.
    pub fn matches(&self, actual: &str) -> bool {
        match self.operator {
            FieldOperator::Equals => actual == self.value,
            FieldOperator::NotEquals => actual != self.value,
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let operator = match self.operator {
            FieldOperator::Equals => "=",
            FieldOperator::NotEquals => "!=",
        };
        write!(f, "{}{}{}", self.field, operator, escape_value(&self.value))
    }
}

/// Escapes `\`, `,` and `=` in a value with a backslash.
pub fn escape_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for character in value.chars() {
        if matches!(character, '\\' | ',' | '=') {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// A field selector: terms that must all hold. The empty selector matches
/// everything.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

impl FieldSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        FieldSelector::default()
    }

    /// A selector from terms (sorted).
    pub fn from_terms(mut terms: Vec<Term>) -> Self {
        terms.sort();
        FieldSelector { terms }
    }

    /// The selector `field=value`.
    pub fn equals(field: impl Into<String>, value: impl Into<String>) -> Self {
        FieldSelector::from_terms(vec![Term {
            field: field.into(),
            operator: FieldOperator::Equals,
            value: value.into(),
        }])
    }

    /// Parses a selector; the same as `text.parse()`.
    pub fn parse(text: &str) -> Result<Self, FieldSelectorError> {
        text.parse()
    }

    /// The terms, sorted.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Whether this selector has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether an object satisfies every term, reading fields through
    /// `field_value` (`None` for a field the object lacks, which compares
    /// as the empty string).
    pub fn matches<'a>(&self, field_value: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.terms
            .iter()
            .all(|term| term.matches(field_value(&term.field).unwrap_or("")))
    }

    /// Whether an object's metadata satisfies every term, read through
    /// the [`Object`](crate::Object) accessors (a compact entry's packed
    /// metadata in place). Only `metadata.name` and `metadata.namespace`
    /// can be read from metadata; any other field is an error rather than
    /// a guess.
    pub fn matches_metadata(
        &self,
        object: &(impl crate::Object + ?Sized),
    ) -> Result<bool, FieldSelectorError> {
        for term in &self.terms {
            let actual = match term.field.as_str() {
                METADATA_NAME => object.name(),
                METADATA_NAMESPACE => object.namespace(),
                other => {
                    return Err(FieldSelectorError::UnsupportedField {
                        field: other.to_string(),
                    });
                }
            };
            if !term.matches(actual.unwrap_or("")) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The value the selector demands for `field` with `=`, if it demands
    /// one (how the API server narrows a request to one namespace or name).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == field && t.operator == FieldOperator::Equals)
            .map(|t| t.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, term) in self.terms.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{term}")?;
        }
        Ok(())
    }
}

/// Splits at commas not preceded by an escaping backslash, returning each
/// term with its byte offset.
fn split_terms(input: &str) -> Vec<(usize, &str)> {
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (index, character) in input.char_indices() {
        if escaped {
            escaped = false;
        } else if character == '\\' {
            escaped = true;
        } else if character == ',' {
            terms.push((start, &input[start..index]));
            start = index + 1;
        }
    }
    terms.push((start, &input[start..]));
    terms
}

/// Unescapes a value that starts at byte `offset` of `input`.
fn unescape_value(input: &str, value: &str, offset: usize) -> Result<String, FieldSelectorError> {
    let mut unescaped = String::with_capacity(value.len());
    let mut escape_at: Option<usize> = None;
    for (index, character) in value.char_indices() {
        if let Some(start) = escape_at.take() {
            if matches!(character, '\\' | ',' | '=') {
                unescaped.push(character);
                continue;
            }
            return Err(FieldSelectorError::InvalidEscape {
                input: input.to_string(),
                sequence: format!("\\{character}"),
                position: offset + start,
            });
        }
        match character {
            '\\' => escape_at = Some(index),
            '=' | ',' => {
                return Err(FieldSelectorError::UnescapedCharacter {
                    input: input.to_string(),
                    character,
                    position: offset + index,
                });
            }
            _ => unescaped.push(character),
        }
    }
    if let Some(start) = escape_at {
        return Err(FieldSelectorError::InvalidEscape {
            input: input.to_string(),
            sequence: "\\".to_string(),
            position: offset + start,
        });
    }
    Ok(unescaped)
}

impl FromStr for FieldSelector {
    type Err = FieldSelectorError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let mut terms = Vec::new();
        for (position, text) in split_terms(input) {
            if text.is_empty() {
                continue;
            }
            // The first occurrence of an operator splits the term; at one
            // position `!=` and `==` are tried before `=`.
            let split = text.char_indices().find_map(|(index, _)| {
                let rest = &text[index..];
                if rest.starts_with("!=") {
                    Some((index, FieldOperator::NotEquals, 2))
                } else if rest.starts_with("==") {
                    Some((index, FieldOperator::Equals, 2))
                } else if rest.starts_with('=') {
                    Some((index, FieldOperator::Equals, 1))
                } else {
                    None
                }
            });
            let Some((index, operator, width)) = split else {
                return Err(FieldSelectorError::MissingOperator {
                    input: input.to_string(),
                    term: text.to_string(),
                    position,
                });
            };
            let field = &text[..index];
            if field.trim().is_empty() {
                return Err(FieldSelectorError::EmptyField {
                    input: input.to_string(),
                    term: text.to_string(),
                    position,
                });
            }
            let value_offset = position + index + width;
            let value = unescape_value(input, &text[index + width..], value_offset)?;
            terms.push(Term {
                field: field.to_string(),
                operator,
                value,
            });
        }
        Ok(FieldSelector::from_terms(terms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn meta(name: &str, namespace: &str) -> crate::PartialObjectMetadata {
        crate::PartialObjectMetadata::from_meta(ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        })
    }

    #[test]
    fn parses_all_operators() {
        let selector: FieldSelector = "a=1,b==2,c!=3".parse().unwrap();
        let terms = selector.terms();
        assert_eq!(terms.len(), 3);
        assert_eq!(terms[0].operator, FieldOperator::Equals);
        assert_eq!(terms[1].operator, FieldOperator::Equals);
        assert_eq!(terms[1].value, "2");
        assert_eq!(terms[2].operator, FieldOperator::NotEquals);
        assert_eq!(selector.to_string(), "a=1,b=2,c!=3");
    }

    #[test]
    fn empty_selector_and_empty_terms() {
        for text in ["", ",", ",,"] {
            let selector: FieldSelector = text.parse().unwrap();
            assert!(selector.is_empty());
            assert!(selector.matches(|_| None));
        }
        let selector: FieldSelector = "a=1,,b=2,".parse().unwrap();
        assert_eq!(selector.terms().len(), 2);
    }

    #[test]
    fn values_may_be_empty_and_hold_operators_escaped() {
        let selector: FieldSelector = r"a=,b=x\=y\,z\\w".parse().unwrap();
        assert_eq!(selector.terms()[0].value, "");
        assert_eq!(selector.terms()[1].value, r"x=y,z\w");
        assert_eq!(selector.to_string(), r"a=,b=x\=y\,z\\w");
        assert_eq!(
            selector.to_string().parse::<FieldSelector>().unwrap(),
            selector
        );
    }

    #[test]
    fn the_first_operator_splits_the_term() {
        let selector: FieldSelector = r"a!=\=b".parse().unwrap();
        assert_eq!(selector.terms()[0].field, "a");
        assert_eq!(selector.terms()[0].operator, FieldOperator::NotEquals);
        assert_eq!(selector.terms()[0].value, "=b");
        // `a===b`: `==` is the operator and the value `=b` has an unescaped `=`.
        assert!(matches!(
            "a===b".parse::<FieldSelector>(),
            Err(FieldSelectorError::UnescapedCharacter {
                character: '=',
                position: 3,
                ..
            })
        ));
    }

    #[test]
    fn errors_name_the_term_and_position() {
        let err = "a=1,bogus".parse::<FieldSelector>().unwrap_err();
        assert_eq!(
            err,
            FieldSelectorError::MissingOperator {
                input: "a=1,bogus".into(),
                term: "bogus".into(),
                position: 4
            }
        );
        assert!(err.to_string().contains("\"bogus\""));
        assert!(matches!(
            "=x".parse::<FieldSelector>(),
            Err(FieldSelectorError::EmptyField { position: 0, .. })
        ));
        assert_eq!(
            r"a=b\q".parse::<FieldSelector>().unwrap_err(),
            FieldSelectorError::InvalidEscape {
                input: r"a=b\q".into(),
                sequence: r"\q".into(),
                position: 3
            }
        );
        assert!(matches!(
            r"a=b\".parse::<FieldSelector>(),
            Err(FieldSelectorError::InvalidEscape { position: 3, .. })
        ));
    }

    #[test]
    fn order_does_not_matter() {
        let one: FieldSelector = "b=2,a=1".parse().unwrap();
        let two: FieldSelector = "a=1,b=2".parse().unwrap();
        assert_eq!(one, two);
        assert_eq!(one.to_string(), "a=1,b=2");
    }

    #[test]
    fn matches_metadata_name_and_namespace() {
        let selector: FieldSelector = "metadata.name=web,metadata.namespace=default"
            .parse()
            .unwrap();
        assert!(selector.matches_metadata(&meta("web", "default")).unwrap());
        assert!(!selector.matches_metadata(&meta("web", "other")).unwrap());
        let not: FieldSelector = "metadata.namespace!=kube-system".parse().unwrap();
        assert!(not.matches_metadata(&meta("x", "default")).unwrap());
        assert!(!not.matches_metadata(&meta("x", "kube-system")).unwrap());
        // A missing namespace compares as "".
        let cluster: FieldSelector = "metadata.namespace=".parse().unwrap();
        assert!(
            cluster
                .matches_metadata(&crate::PartialObjectMetadata::default())
                .unwrap()
        );
    }

    #[test]
    fn other_fields_need_a_lookup() {
        let selector: FieldSelector = "spec.nodeName=n1,status.phase!=Failed".parse().unwrap();
        assert_eq!(
            selector.matches_metadata(&meta("a", "b")),
            Err(FieldSelectorError::UnsupportedField {
                field: "spec.nodeName".into()
            })
        );
        let running = |field: &str| match field {
            "spec.nodeName" => Some("n1"),
            "status.phase" => Some("Running"),
            _ => None,
        };
        assert!(selector.matches(running));
        let failed = |field: &str| match field {
            "spec.nodeName" => Some("n1"),
            "status.phase" => Some("Failed"),
            _ => None,
        };
        assert!(!selector.matches(failed));
    }

    #[test]
    fn requires_exact_match() {
        let selector: FieldSelector = "metadata.namespace=ns,metadata.name!=x".parse().unwrap();
        assert_eq!(
            selector.requires_exact_match(METADATA_NAMESPACE),
            Some("ns")
        );
        assert_eq!(selector.requires_exact_match(METADATA_NAME), None);
        assert_eq!(
            FieldSelector::equals(METADATA_NAME, "a").to_string(),
            "metadata.name=a"
        );
    }
}
