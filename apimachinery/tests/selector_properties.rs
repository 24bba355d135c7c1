//! Property tests for the label and field selector parsers:
//! - any valid selector, printed and parsed again, is the same selector;
//! - no input, however malformed, makes a parser panic;
//! - whatever parses prints as text that parses back to the same selector.

// Test setup may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;

use clientgo_apimachinery::{
    FieldOperator, FieldSelector, LabelSelector, Operator, Requirement, field_selector::Term,
};
use proptest::prelude::*;

/// The name part of a label key, and a non-empty label value.
fn name_part() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9]",
        "[A-Za-z0-9][-A-Za-z0-9_.]{0,20}[A-Za-z0-9]",
        "[A-Za-z0-9][-A-Za-z0-9_.]{61}[A-Za-z0-9]",
    ]
}

fn dns_prefix() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?", 1..4)
        .prop_map(|labels| labels.join("."))
}

fn label_key() -> impl Strategy<Value = String> {
    (prop::option::of(dns_prefix()), name_part()).prop_map(|(prefix, name)| match prefix {
        Some(prefix) => format!("{prefix}/{name}"),
        None => name,
    })
}

fn label_value() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), name_part()]
}

fn requirement() -> impl Strategy<Value = Requirement> {
    let set = || prop::collection::vec(label_value(), 1..5);
    prop_oneof![
        (label_key(), label_value()).prop_map(|(k, v)| Requirement::new(k, Operator::Equals, [v])),
        (label_key(), label_value()).prop_map(|(k, v)| Requirement::new(
            k,
            Operator::DoubleEquals,
            [v]
        )),
        (label_key(), label_value()).prop_map(|(k, v)| Requirement::new(
            k,
            Operator::NotEquals,
            [v]
        )),
        (label_key(), set()).prop_map(|(k, vs)| Requirement::new(k, Operator::In, vs)),
        (label_key(), set()).prop_map(|(k, vs)| Requirement::new(k, Operator::NotIn, vs)),
        label_key().prop_map(|k| Requirement::new(k, Operator::Exists, Vec::<String>::new())),
        label_key().prop_map(|k| Requirement::new(k, Operator::DoesNotExist, Vec::<String>::new())),
        (label_key(), 0i64..1_000_000).prop_map(|(k, n)| Requirement::new(
            k,
            Operator::GreaterThan,
            [n.to_string()]
        )),
        (label_key(), 0i64..1_000_000).prop_map(|(k, n)| Requirement::new(
            k,
            Operator::LessThan,
            [n.to_string()]
        )),
    ]
    .prop_map(|built| built.expect("the strategy builds only valid requirements"))
}

fn label_selector() -> impl Strategy<Value = LabelSelector> {
    prop::collection::vec(requirement(), 0..6).prop_map(LabelSelector::from_requirements)
}

/// Text made of the selector language's own pieces, so malformed inputs
/// reach deep into the parser instead of failing at the first byte.
fn selector_soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a", "b1", "x.y/z", "in", "notin", "(", ")", ",", "=", "==", "!=", "!", ">", "<", " ",
        "\t", "1", "-5", "", "é", "\\", "a=b", "k in (v", ")", "/",
    ]);
    prop::collection::vec(pieces, 0..12).prop_map(|pieces| pieces.concat())
}

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(
        prop_oneof!["[a-c]", label_key()],
        prop_oneof![label_value(), "[0-9]{1,3}"],
        0..4,
    )
}

fn field_term() -> impl Strategy<Value = Term> {
    (
        "[a-z][a-zA-Z.]{0,15}",
        prop::bool::ANY,
        prop_oneof![".*", r"[a-z,=\\!]{0,8}"],
    )
        .prop_map(|(field, not, value)| Term {
            field,
            operator: if not {
                FieldOperator::NotEquals
            } else {
                FieldOperator::Equals
            },
            value,
        })
}

proptest! {
    #[test]
    fn label_selector_display_then_parse_is_identity(selector in label_selector()) {
        let text = selector.to_string();
        let parsed: LabelSelector = text.parse().map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(&parsed, &selector, "text {:?}", text);
        prop_assert_eq!(parsed.to_string(), text);
    }

    #[test]
    fn label_selector_matching_survives_printing(selector in label_selector(), set in labels()) {
        let reparsed: LabelSelector = selector.to_string().parse().unwrap();
        prop_assert_eq!(selector.matches(&set), reparsed.matches(&set));
    }

    #[test]
    fn label_parser_never_panics_on_any_string(text in any::<String>()) {
        if let Ok(selector) = text.parse::<LabelSelector>() {
            let printed = selector.to_string();
            prop_assert_eq!(printed.parse::<LabelSelector>().ok(), Some(selector));
        }
    }

    #[test]
    fn label_parser_never_panics_on_selector_soup(text in selector_soup()) {
        match text.parse::<LabelSelector>() {
            Ok(selector) => {
                let printed = selector.to_string();
                prop_assert_eq!(printed.parse::<LabelSelector>().ok(), Some(selector));
            }
            Err(err) => {
                // The error points into the input.
                let position = err.position.expect("parse errors carry a position");
                prop_assert!(position <= text.len());
                prop_assert!(text[position..].starts_with(&err.text), "{:?} at {} in {:?}", err.text, position, text);
            }
        }
    }

    #[test]
    fn field_selector_display_then_parse_is_identity(terms in prop::collection::vec(field_term(), 0..5)) {
        let selector = FieldSelector::from_terms(terms);
        let text = selector.to_string();
        let parsed: FieldSelector = text.parse().map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(parsed, selector);
    }

    #[test]
    fn field_parser_never_panics(text in prop_oneof![any::<String>(), r"[a-z=!,\\ ]{0,20}"]) {
        if let Ok(selector) = text.parse::<FieldSelector>() {
            let printed = selector.to_string();
            prop_assert_eq!(printed.parse::<FieldSelector>().ok(), Some(selector));
        }
    }
}
