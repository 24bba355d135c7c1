//! Label selectors with the full Kubernetes syntax.
//!
//! A selector is a comma-separated list of requirements, all of which must
//! hold (comma = AND):
//!
//! | form | meaning |
//! |---|---|
//! | `key` | the label exists |
//! | `!key` | the label does not exist |
//! | `key=value`, `key==value` | the label exists and equals the value |
//! | `key!=value` | the label is absent or differs |
//! | `key in (v1,v2)` | the label exists and is one of the values |
//! | `key notin (v1,v2)` | the label is absent or is none of the values |
//! | `key>5`, `key<5` | the label exists and is an integer greater (less) than 5 |
//!
//! Parsing follows k8s.io/apimachinery's `labels.Parse` exactly: keys must
//! be qualified names and values valid label values, `in`/`notin` need a
//! parenthesised set, `key=` means "equals the empty string", and the
//! requirements are sorted by key. [`Display`](std::fmt::Display) writes the
//! canonical form, which parses back to the same selector.
//!
//! ```
//! use clientgo_apimachinery::LabelSelector;
//! use std::collections::BTreeMap;
//!
//! let selector: LabelSelector = "tier in (web, api),!canary,env!=dev".parse().unwrap();
//! assert_eq!(selector.to_string(), "!canary,env!=dev,tier in (api,web)");
//!
//! let labels = BTreeMap::from([("tier".to_string(), "web".to_string())]);
//! assert!(selector.matches(&labels));
//!
//! let err = "tier in web".parse::<LabelSelector>().unwrap_err();
//! assert_eq!(err.position, Some(8));
//! assert_eq!(err.text, "web");
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::StrMap;
use std::fmt;
use std::str::FromStr;

use crate::validation::{validate_label_value, validate_qualified_name};

/// The operator of a label [`Requirement`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `key=value`.
    Equals,
    /// `key==value` (the same as `=`; kept so Display writes what was parsed).
    DoubleEquals,
    /// `key!=value`.
    NotEquals,
    /// `key in (values)`.
    In,
    /// `key notin (values)`.
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>integer`.
    GreaterThan,
    /// `key<integer`.
    LessThan,
}

impl Operator {
    fn name(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        }
    }
}

/// What is wrong with a label selector or one of its requirements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectorProblem {
    /// A token other than the ones allowed here.
    Expected(&'static str),
    /// The key is not a valid qualified name.
    InvalidKey(String),
    /// A value is not a valid label value.
    InvalidValue(String),
    /// `in` or `notin` with no values.
    EmptyValueSet,
    /// An operator that takes exactly one value got another number.
    NeedsOneValue(Operator),
    /// `exists` or `!` with values.
    NeedsNoValues,
    /// `>` or `<` with a value that is not a 64-bit integer.
    NotAnInteger,
    /// An operator name (from a `LabelSelector` object) that is not
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    UnknownOperator,
}

impl fmt::Display for SelectorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SelectorProblem::Expected(what) => write!(f, "expected {what}"),
            SelectorProblem::InvalidKey(why) => write!(f, "invalid key: {why}"),
            SelectorProblem::InvalidValue(why) => write!(f, "invalid value: {why}"),
            SelectorProblem::EmptyValueSet => {
                f.write_str("the 'in' and 'notin' operators need at least one value")
            }
            SelectorProblem::NeedsOneValue(operator) => {
                write!(
                    f,
                    "the '{}' operator needs exactly one value",
                    operator.name()
                )
            }
            SelectorProblem::NeedsNoValues => {
                f.write_str("the exists and does-not-exist operators take no values")
            }
            SelectorProblem::NotAnInteger => {
                f.write_str("the '>' and '<' operators need an integer value")
            }
            SelectorProblem::UnknownOperator => f.write_str(
                "not a label selector operator (expected In, NotIn, Exists or DoesNotExist)",
            ),
        }
    }
}

/// A label selector could not be parsed or built.
///
/// `input` is the selector text (or, for a selector converted from an API
/// object, the field at fault such as `matchExpressions[1]`), `position` the
/// byte offset of the offending text in it when known, and `text` the
/// offending token, key or value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LabelSelectorError {
    /// The selector text, or the field of a `LabelSelector` object.
    pub input: String,
    /// The byte offset of `text` in `input`, when it came from parsing.
    pub position: Option<usize>,
    /// The offending text; empty at the end of the input.
    pub text: String,
    /// What is wrong.
    pub problem: SelectorProblem,
}

impl fmt::Display for LabelSelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid label selector {:?}", self.input)?;
        match self.position {
            Some(position) if self.text.is_empty() => {
                write!(f, " at byte {position} (end of input)")?
            }
            Some(position) => write!(f, " at byte {position} ({:?})", self.text)?,
            None if !self.text.is_empty() => write!(f, " ({:?})", self.text)?,
            None => {}
        }
        write!(f, ": {}", self.problem)
    }
}

/// One requirement of a [`LabelSelector`]: a key, an operator and a set of
/// values (sorted, without duplicates).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: BTreeSet<String>,
}

impl Requirement {
    /// A requirement, validated as the API server would: the key a qualified
    /// name, every value a label value, `in`/`notin` with at least one value,
    /// `=`, `==`, `!=`, `>` and `<` with exactly one, `>`/`<` with an
    /// integer, and `exists`/`!` with none.
    pub fn new<I, S>(
        key: impl Into<String>,
        operator: Operator,
        values: I,
    ) -> Result<Self, LabelSelectorError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let key = key.into();
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        let error = |text: &str, problem| LabelSelectorError {
            input: String::new(),
            position: None,
            text: text.to_string(),
            problem,
        };
        validate_qualified_name(&key)
            .map_err(|why| error(&key, SelectorProblem::InvalidKey(why)))?;
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(error(&key, SelectorProblem::EmptyValueSet));
            }
            Operator::Equals
            | Operator::DoubleEquals
            | Operator::NotEquals
            | Operator::GreaterThan
            | Operator::LessThan
                if values.len() != 1 =>
            {
                return Err(error(&key, SelectorProblem::NeedsOneValue(operator)));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(error(&key, SelectorProblem::NeedsNoValues));
            }
            _ => {}
        }
        if matches!(operator, Operator::GreaterThan | Operator::LessThan) {
            for value in &values {
                if value.parse::<i64>().is_err() {
                    return Err(error(value, SelectorProblem::NotAnInteger));
                }
            }
        }
        for value in &values {
            validate_label_value(value)
                .map_err(|why| error(value, SelectorProblem::InvalidValue(why)))?;
        }
        Ok(Requirement {
            key,
            operator,
            values: values.into_iter().collect(),
        })
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted.
    pub fn values(&self) -> &BTreeSet<String> {
        &self.values
    }

    /// Whether a set of labels satisfies this requirement: an object's
    /// [`labels()`](crate::Object::labels), or a `&BTreeMap`.
    pub fn matches<'a>(&self, labels: impl Into<StrMap<'a>>) -> bool {
        let labels: StrMap<'a> = labels.into();
        let value = labels.get(&self.key);
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => {
                value.is_some_and(|v| self.values.contains(v))
            }
            Operator::NotEquals | Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(actual) = value.and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                let Some(bound) = self.values.first().and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined = || {
            self.values
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(",")
        };
        match self.operator {
            Operator::Exists => f.write_str(&self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::In => write!(f, "{} in ({})", self.key, joined()),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, joined()),
            Operator::Equals
            | Operator::DoubleEquals
            | Operator::NotEquals
            | Operator::GreaterThan
            | Operator::LessThan => write!(f, "{}{}{}", self.key, self.operator.name(), joined()),
        }
    }
}

/// A label selector: requirements that must all hold. The empty selector
/// matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        LabelSelector::default()
    }

    /// A selector from requirements, sorted by key (requirements with the
    /// same key keep their order).
    pub fn from_requirements(mut requirements: Vec<Requirement>) -> Self {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        LabelSelector { requirements }
    }

    /// The selector `key=value` for every pair (client-go's
    /// `SelectorFromSet`), validating keys and values.
    pub fn from_labels(labels: &BTreeMap<String, String>) -> Result<Self, LabelSelectorError> {
        let requirements = labels
            .iter()
            .map(|(key, value)| Requirement::new(key.as_str(), Operator::Equals, [value.as_str()]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LabelSelector::from_requirements(requirements))
    }

    /// Parses a selector; the same as `text.parse()`.
    pub fn parse(text: &str) -> Result<Self, LabelSelectorError> {
        text.parse()
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether this selector has no requirements (and matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether a set of labels satisfies every requirement: an object's
    /// [`labels()`](crate::Object::labels), or a `&BTreeMap`.
    pub fn matches<'a>(&self, labels: impl Into<StrMap<'a>>) -> bool {
        let labels: StrMap<'a> = labels.into();
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// The value a selector demands for `key` with `=`, `==` or a
    /// one-value `in`, if it demands one.
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        self.requirements.iter().find_map(|r| {
            let exact = matches!(
                r.operator,
                Operator::Equals | Operator::DoubleEquals | Operator::In
            );
            if r.key == key && exact && r.values.len() == 1 {
                r.values.first().map(String::as_str)
            } else {
                None
            }
        })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, requirement) in self.requirements.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

impl FromStr for LabelSelector {
    type Err = LabelSelectorError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let tokens = lex(text);
        let requirements = Parser {
            input: text,
            tokens: &tokens,
            position: 0,
        }
        .parse()?;
        Ok(LabelSelector::from_requirements(requirements))
    }
}

impl TryFrom<&k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector> for LabelSelector {
    type Error = LabelSelectorError;

    /// Converts an API `LabelSelector` (matchLabels and matchExpressions)
    /// as client-go's `LabelSelectorAsSelector` does. An empty one matches
    /// everything. (A *missing* selector in an API object matches nothing
    /// in Kubernetes; represent that with `Option`.)
    fn try_from(
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Result<Self, Self::Error> {
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            let requirement = Requirement::new(key.as_str(), Operator::Equals, [value.as_str()])
                .map_err(|e| LabelSelectorError {
                    input: format!("matchLabels[{key:?}]"),
                    ..e
                })?;
            requirements.push(requirement);
        }
        for (index, expression) in selector.match_expressions.iter().flatten().enumerate() {
            let field = format!("matchExpressions[{index}]");
            let operator = match expression.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(LabelSelectorError {
                        input: field,
                        position: None,
                        text: other.to_string(),
                        problem: SelectorProblem::UnknownOperator,
                    });
                }
            };
            let values = expression.values.iter().flatten().map(String::as_str);
            let requirement = Requirement::new(expression.key.as_str(), operator, values)
                .map_err(|e| LabelSelectorError { input: field, ..e })?;
            requirements.push(requirement);
        }
        Ok(LabelSelector::from_requirements(requirements))
    }
}

/// The tokens of the selector language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    Identifier,
    In,
    NotIn,
    Comma,
    OpenParen,
    CloseParen,
    Bang,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    End,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: TokenKind,
    text: &'a str,
    start: usize,
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(byte: u8) -> bool {
    matches!(byte, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits the input into tokens, ending with an `End` token. Identifiers
/// are maximal runs of bytes that are neither whitespace nor special
/// symbols; special symbols combine greedily into `==` and `!=`.
fn lex(input: &str) -> Vec<Token<'_>> {
    let bytes = input.as_bytes();
    let mut tokens = Vec::new();
    let mut index = 0;
    loop {
        while index < bytes.len() && is_whitespace(bytes[index]) {
            index += 1;
        }
        let start = index;
        let Some(&byte) = bytes.get(index) else {
            tokens.push(Token {
                kind: TokenKind::End,
                text: "",
                start,
            });
            return tokens;
        };
        let kind = if is_special(byte) {
            let next = bytes.get(index + 1).copied();
            let (kind, width) = match (byte, next) {
                (b'=', Some(b'=')) => (TokenKind::DoubleEquals, 2),
                (b'!', Some(b'=')) => (TokenKind::NotEquals, 2),
                (b'=', _) => (TokenKind::Equals, 1),
                (b'!', _) => (TokenKind::Bang, 1),
                (b'(', _) => (TokenKind::OpenParen, 1),
                (b')', _) => (TokenKind::CloseParen, 1),
                (b',', _) => (TokenKind::Comma, 1),
                (b'>', _) => (TokenKind::GreaterThan, 1),
                _ => (TokenKind::LessThan, 1),
            };
            index += width;
            kind
        } else {
            while index < bytes.len() && !is_whitespace(bytes[index]) && !is_special(bytes[index]) {
                index += 1;
            }
            match &input[start..index] {
                "in" => TokenKind::In,
                "notin" => TokenKind::NotIn,
                _ => TokenKind::Identifier,
            }
        };
        tokens.push(Token {
            kind,
            text: &input[start..index],
            start,
        });
    }
}

/// Where a token is read: in operator position `in`/`notin` are keywords,
/// everywhere else they are ordinary identifiers (so `in=x` has the key
/// `in`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Operator,
    Value,
}

struct Parser<'a> {
    input: &'a str,
    tokens: &'a [Token<'a>],
    position: usize,
}

impl<'a> Parser<'a> {
    fn token_at(&self, position: usize, context: Context) -> Token<'a> {
        let mut token = self.tokens.get(position).copied().unwrap_or(Token {
            kind: TokenKind::End,
            text: "",
            start: self.input.len(),
        });
        if context == Context::Value && matches!(token.kind, TokenKind::In | TokenKind::NotIn) {
            token.kind = TokenKind::Identifier;
        }
        token
    }

    fn peek(&self, context: Context) -> Token<'a> {
        self.token_at(self.position, context)
    }

    fn next(&mut self, context: Context) -> Token<'a> {
        let token = self.peek(context);
        self.position = (self.position + 1).min(self.tokens.len());
        token
    }

    fn error(&self, token: Token<'_>, problem: SelectorProblem) -> LabelSelectorError {
        LabelSelectorError {
            input: self.input.to_string(),
            position: Some(token.start),
            text: token.text.to_string(),
            problem,
        }
    }

    fn parse(mut self) -> Result<Vec<Requirement>, LabelSelectorError> {
        let mut requirements = Vec::new();
        loop {
            let token = self.peek(Context::Value);
            match token.kind {
                TokenKind::End => return Ok(requirements),
                TokenKind::Identifier | TokenKind::Bang => {
                    requirements.push(self.parse_requirement()?);
                    let after = self.next(Context::Value);
                    match after.kind {
                        TokenKind::End => return Ok(requirements),
                        TokenKind::Comma => {
                            let following = self.peek(Context::Value);
                            if !matches!(following.kind, TokenKind::Identifier | TokenKind::Bang) {
                                return Err(self.error(
                                    following,
                                    SelectorProblem::Expected("a key or '!' after ','"),
                                ));
                            }
                        }
                        _ => {
                            return Err(
                                self.error(after, SelectorProblem::Expected("',' or the end"))
                            );
                        }
                    }
                }
                _ => {
                    return Err(
                        self.error(token, SelectorProblem::Expected("'!', a key, or the end"))
                    );
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, LabelSelectorError> {
        let mut token = self.next(Context::Value);
        let negated = token.kind == TokenKind::Bang;
        if negated {
            token = self.next(Context::Value);
        }
        if token.kind != TokenKind::Identifier {
            return Err(self.error(token, SelectorProblem::Expected("a key")));
        }
        let key_token = token;
        validate_qualified_name(key_token.text)
            .map_err(|why| self.error(key_token, SelectorProblem::InvalidKey(why)))?;
        let following = self.peek(Context::Value).kind;
        if negated || matches!(following, TokenKind::End | TokenKind::Comma) {
            let operator = if negated {
                Operator::DoesNotExist
            } else {
                Operator::Exists
            };
            return Ok(Requirement {
                key: key_token.text.to_string(),
                operator,
                values: BTreeSet::new(),
            });
        }
        let operator_token = self.next(Context::Operator);
        let operator = match operator_token.kind {
            TokenKind::In => Operator::In,
            TokenKind::NotIn => Operator::NotIn,
            TokenKind::Equals => Operator::Equals,
            TokenKind::DoubleEquals => Operator::DoubleEquals,
            TokenKind::NotEquals => Operator::NotEquals,
            TokenKind::GreaterThan => Operator::GreaterThan,
            TokenKind::LessThan => Operator::LessThan,
            _ => {
                return Err(self.error(
                    operator_token,
                    SelectorProblem::Expected("an operator (=, ==, !=, in, notin, >, <)"),
                ));
            }
        };
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_value_set()?,
            _ => vec![self.parse_single_value()?],
        };
        for (value_token, value) in &values {
            if matches!(operator, Operator::GreaterThan | Operator::LessThan)
                && value.parse::<i64>().is_err()
            {
                return Err(self.error(*value_token, SelectorProblem::NotAnInteger));
            }
            validate_label_value(value)
                .map_err(|why| self.error(*value_token, SelectorProblem::InvalidValue(why)))?;
        }
        Ok(Requirement {
            key: key_token.text.to_string(),
            operator,
            values: values.into_iter().map(|(_, value)| value).collect(),
        })
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; nothing before a comma
    /// or the end means the empty string.
    fn parse_single_value(&mut self) -> Result<(Token<'a>, String), LabelSelectorError> {
        let token = self.peek(Context::Value);
        match token.kind {
            TokenKind::End | TokenKind::Comma => Ok((token, String::new())),
            TokenKind::Identifier => {
                self.next(Context::Value);
                Ok((token, token.text.to_string()))
            }
            _ => Err(self.error(token, SelectorProblem::Expected("a value"))),
        }
    }

    /// `( values )`, where empty entries (`()`, `(,a)`, `(a,)`, `(a,,b)`)
    /// stand for the empty string, as in Kubernetes.
    fn parse_value_set(&mut self) -> Result<Vec<(Token<'a>, String)>, LabelSelectorError> {
        let open = self.next(Context::Value);
        if open.kind != TokenKind::OpenParen {
            return Err(self.error(open, SelectorProblem::Expected("'('")));
        }
        let mut values = Vec::new();
        let mut expect_value = true;
        loop {
            let token = self.next(Context::Value);
            match token.kind {
                TokenKind::Identifier if expect_value => {
                    values.push((token, token.text.to_string()));
                    expect_value = false;
                }
                TokenKind::Comma => {
                    if expect_value {
                        values.push((token, String::new()));
                    }
                    expect_value = true;
                }
                TokenKind::CloseParen => {
                    if expect_value {
                        values.push((token, String::new()));
                    }
                    return Ok(values);
                }
                _ if expect_value => {
                    return Err(self.error(token, SelectorProblem::Expected("a value, ',' or ')'")));
                }
                _ => return Err(self.error(token, SelectorProblem::Expected("',' or ')'"))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelector as ApiLabelSelector, LabelSelectorRequirement,
    };

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse(text: &str) -> LabelSelector {
        text.parse()
            .unwrap_or_else(|e| panic!("{text:?} did not parse: {e}"))
    }

    #[test]
    fn empty_selector_matches_everything() {
        for text in ["", "  ", "\t\n"] {
            let selector = parse(text);
            assert!(selector.is_empty());
            assert!(selector.matches(&labels(&[])));
            assert!(selector.matches(&labels(&[("a", "b")])));
            assert_eq!(selector.to_string(), "");
        }
    }

    #[test]
    fn every_operator_parses_and_matches() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool);
        let cases: &[Case<'_>] = &[
            ("a=b", &[("a", "b")], true),
            ("a=b", &[("a", "c")], false),
            ("a=b", &[], false),
            ("a==b", &[("a", "b")], true),
            ("a!=b", &[("a", "b")], false),
            ("a!=b", &[("a", "c")], true),
            ("a!=b", &[], true),
            ("a in (b,c)", &[("a", "c")], true),
            ("a in (b,c)", &[("a", "d")], false),
            ("a in (b,c)", &[], false),
            ("a notin (b,c)", &[("a", "c")], false),
            ("a notin (b,c)", &[("a", "d")], true),
            ("a notin (b,c)", &[], true),
            ("a", &[("a", "")], true),
            ("a", &[], false),
            ("!a", &[], true),
            ("!a", &[("a", "x")], false),
            ("a>5", &[("a", "6")], true),
            ("a>5", &[("a", "5")], false),
            ("a>5", &[("a", "x")], false),
            ("a>5", &[], false),
            ("a<5", &[("a", "4")], true),
            ("a<5", &[("a", "5")], false),
            ("a=", &[("a", "")], true),
            ("a=", &[("a", "x")], false),
            ("a in ()", &[("a", "")], true),
        ];
        for (text, set, expected) in cases {
            let selector = parse(text);
            assert_eq!(
                selector.matches(&labels(set)),
                *expected,
                "{text} against {set:?}"
            );
        }
    }

    #[test]
    fn comma_means_and() {
        let selector = parse("a=1,b!=2,!c");
        assert!(selector.matches(&labels(&[("a", "1"), ("b", "3")])));
        assert!(!selector.matches(&labels(&[("a", "1"), ("b", "2")])));
        assert!(!selector.matches(&labels(&[("a", "1"), ("c", "x")])));
        assert!(!selector.matches(&labels(&[("b", "3")])));
    }

    #[test]
    fn display_is_canonical_and_sorted_by_key() {
        let cases = [
            ("z=1,a=2", "a=2,z=1"),
            ("  x  in  ( c , a , b , a )  ", "x in (a,b,c)"),
            ("x notin (b,a)", "x notin (a,b)"),
            ("k==v", "k==v"),
            ("!k, j", "j,!k"),
            ("example.com/app=web", "example.com/app=web"),
            ("a in (b,)", "a in (,b)"),
            ("a in (,b)", "a in (,b)"),
            ("a==", "a=="),
            ("a in (,)", "a in ()"),
            ("a in (b,,c)", "a in (,b,c)"),
            ("a>10,a<20", "a>10,a<20"),
            ("in=notin", "in=notin"),
            ("notin in (in)", "notin in (in)"),
        ];
        for (input, expected) in cases {
            let selector = parse(input);
            assert_eq!(selector.to_string(), expected, "from {input:?}");
            assert_eq!(parse(expected), selector);
        }
    }

    #[test]
    fn errors_name_position_and_text() {
        let cases: &[(&str, usize, &str)] = &[
            ("a in b", 5, "b"),
            ("a=b,", 4, ""),
            (",a", 0, ","),
            ("a b", 2, "b"),
            ("a=b c", 4, "c"),
            ("a in (b c)", 8, "c"),
            ("a in (b", 7, ""),
            ("!a=b", 2, "="),
            ("a=(b)", 2, "("),
            ("-a=b", 0, "-a"),
            ("a=-b", 2, "-b"),
            ("a>b", 2, "b"),
            ("x,,y", 2, ","),
            ("a/b/c", 0, "a/b/c"),
            ("!", 1, ""),
            ("a notin", 7, ""),
            ("a=b)", 3, ")"),
        ];
        for (input, position, text) in cases {
            match input.parse::<LabelSelector>() {
                Ok(selector) => panic!("{input:?} parsed as {selector}"),
                Err(err) => {
                    assert_eq!(err.input, *input);
                    assert_eq!(err.position, Some(*position), "{input:?}: {err}");
                    assert_eq!(err.text, *text, "{input:?}: {err}");
                    let message = err.to_string();
                    assert!(
                        message.contains(&format!("at byte {position}")),
                        "{message}"
                    );
                }
            }
        }
    }

    #[test]
    fn error_messages_say_what_was_expected() {
        let err = "a in b".parse::<LabelSelector>().unwrap_err();
        assert_eq!(err.problem, SelectorProblem::Expected("'('"));
        assert_eq!(
            err.to_string(),
            "invalid label selector \"a in b\" at byte 5 (\"b\"): expected '('"
        );
        let err = "a>x".parse::<LabelSelector>().unwrap_err();
        assert_eq!(err.problem, SelectorProblem::NotAnInteger);
        let err = "a=b,".parse::<LabelSelector>().unwrap_err();
        assert!(err.to_string().contains("end of input"), "{err}");
    }

    #[test]
    fn requirement_new_validates_like_the_server() {
        assert!(Requirement::new("a", Operator::In, Vec::<String>::new()).is_err());
        assert!(Requirement::new("a", Operator::Equals, ["x", "y"]).is_err());
        assert!(Requirement::new("a", Operator::Exists, ["x"]).is_err());
        assert!(Requirement::new("a", Operator::GreaterThan, ["x"]).is_err());
        assert!(Requirement::new("a b", Operator::Exists, Vec::<String>::new()).is_err());
        assert!(Requirement::new("a", Operator::Equals, ["bad value"]).is_err());
        let r = Requirement::new("a", Operator::In, ["y", "x", "y"]).unwrap();
        assert_eq!(r.values().len(), 2);
        assert_eq!(r.to_string(), "a in (x,y)");
        assert_eq!(r.key(), "a");
        assert_eq!(r.operator(), Operator::In);
    }

    #[test]
    fn from_labels_builds_equality_requirements() {
        let selector = LabelSelector::from_labels(&labels(&[("b", "2"), ("a", "1")])).unwrap();
        assert_eq!(selector.to_string(), "a=1,b=2");
        assert!(LabelSelector::from_labels(&labels(&[("a", "bad value")])).is_err());
    }

    #[test]
    fn requires_exact_match() {
        let selector = parse("a=1,b in (2),c in (3,4),d!=5");
        assert_eq!(selector.requires_exact_match("a"), Some("1"));
        assert_eq!(selector.requires_exact_match("b"), Some("2"));
        assert_eq!(selector.requires_exact_match("c"), None);
        assert_eq!(selector.requires_exact_match("d"), None);
        assert_eq!(selector.requires_exact_match("e"), None);
    }

    #[test]
    fn converts_an_api_label_selector() {
        let api = ApiLabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["front".into(), "back".into()]),
                },
                LabelSelectorRequirement {
                    key: "canary".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        let selector = LabelSelector::try_from(&api).unwrap();
        assert_eq!(selector.to_string(), "app=web,!canary,tier in (back,front)");
        assert!(
            LabelSelector::try_from(&ApiLabelSelector::default())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn api_label_selector_errors_name_the_field() {
        let api = ApiLabelSelector {
            match_labels: None,
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "ok".into(),
                    operator: "Exists".into(),
                    values: None,
                },
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "Equals".into(),
                    values: Some(vec!["x".into()]),
                },
            ]),
        };
        let err = LabelSelector::try_from(&api).unwrap_err();
        assert_eq!(err.input, "matchExpressions[1]");
        assert_eq!(err.text, "Equals");
        assert_eq!(err.problem, SelectorProblem::UnknownOperator);

        let api = ApiLabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec![]),
            }]),
        };
        let err = LabelSelector::try_from(&api).unwrap_err();
        assert_eq!(err.input, "matchExpressions[0]");
        assert_eq!(err.problem, SelectorProblem::EmptyValueSet);

        let api = ApiLabelSelector {
            match_labels: Some([("bad key!".to_string(), "v".to_string())].into()),
            match_expressions: None,
        };
        let err = LabelSelector::try_from(&api).unwrap_err();
        assert!(err.input.starts_with("matchLabels"), "{}", err.input);
        assert!(matches!(err.problem, SelectorProblem::InvalidKey(_)));
    }
}
