//! Label and field selectors, parsed and evaluated the way kube-apiserver does it.
//!
//! [`LabelSelector`] covers both the `?labelSelector=` string syntax and the structured
//! `metav1.LabelSelector`; [`FieldSelector`] covers `?fieldSelector=`. Parse failures carry the
//! message the real server puts in its 400 `BadRequest` status.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

/// A selector that could not be parsed or converted.
///
/// Its `Display` text is the message the real API server returns in the `BadRequest` status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    message: String,
}

impl SelectorError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The error message, as it appears in `Status.message`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

// ---------------------------------------------------------------------------------------------
// Label selectors
// ---------------------------------------------------------------------------------------------

/// A label selector: a conjunction of requirements on an object's `metadata.labels`.
///
/// The default value has no requirements and matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Sorted by key (stable), as apimachinery sorts them.
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// One `key op values` term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Operator,
    values: Vec<String>,
}

impl LabelSelector {
    /// Parses the string form used by `?labelSelector=`, e.g. `app=web,tier notin (db),!canary`.
    ///
    /// An empty (or all-whitespace) string selects everything.
    pub fn parse(s: &str) -> Result<LabelSelector, SelectorError> {
        let mut requirements = Parser::new(s).parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Converts a structured `metav1.LabelSelector` (`matchLabels` and `matchExpressions`).
    ///
    /// `null` and `{}` both select everything. (apimachinery's `LabelSelectorAsSelector` maps a
    /// nil selector to "nothing"; callers that need that must check for `null` themselves.)
    /// Validation and error messages follow `labels.NewRequirement`.
    pub fn from_label_selector(v: &Value) -> Result<LabelSelector, SelectorError> {
        let obj = match v {
            Value::Null => return Ok(LabelSelector::default()),
            Value::Object(obj) => obj,
            other => {
                return Err(unmarshal_error(other, "Go value of type v1.LabelSelector"));
            }
        };
        let mut requirements = Vec::new();
        match obj.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                for (k, v) in labels {
                    let value = match v {
                        Value::Null => String::new(),
                        Value::String(s) => s.clone(),
                        other => {
                            return Err(unmarshal_error(
                                other,
                                "Go struct field LabelSelector.matchLabels of type string",
                            ));
                        }
                    };
                    requirements.push(Requirement::new(k, Operator::Equals, vec![value])?);
                }
            }
            Some(other) => {
                return Err(unmarshal_error(
                    other,
                    "Go struct field LabelSelector.matchLabels of type map[string]string",
                ));
            }
        }
        match obj.get("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for expr in exprs {
                    requirements.push(expression_requirement(expr)?);
                }
            }
            Some(other) => {
                return Err(unmarshal_error(
                    other,
                    "Go struct field LabelSelector.matchExpressions of type \
                     []v1.LabelSelectorRequirement",
                ));
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Whether an object with these `metadata.labels` is selected.
    ///
    /// Label values that are not JSON strings are treated as absent; `None` means no labels.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether the selector has no requirements, i.e. selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

impl FromStr for LabelSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The canonical string form: requirements sorted by key, values sorted, joined by `,`.
impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Converts one `matchExpressions` entry (`{key, operator, values}`).
fn expression_requirement(expr: &Value) -> Result<Requirement, SelectorError> {
    const STRUCT: &str = "Go struct field LabelSelector.matchExpressions";
    let empty = Map::new();
    let obj = match expr {
        Value::Null => &empty,
        Value::Object(obj) => obj,
        other => {
            return Err(unmarshal_error(
                other,
                &format!("{STRUCT} of type v1.LabelSelectorRequirement"),
            ));
        }
    };
    let string_field = |name: &str| match obj.get(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(unmarshal_error(
            other,
            &format!("{STRUCT}.{name} of type string"),
        )),
    };
    let key = string_field("key")?;
    let operator = string_field("operator")?;
    let values = match obj.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => Ok(String::new()),
                Value::String(s) => Ok(s.clone()),
                other => Err(unmarshal_error(
                    other,
                    &format!("{STRUCT}.values of type string"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(unmarshal_error(
                other,
                &format!("{STRUCT}.values of type []string"),
            ));
        }
    };
    let op = match operator.as_str() {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        _ => {
            return Err(SelectorError::new(format!(
                "{} is not a valid label selector operator",
                go_quote(&operator)
            )));
        }
    };
    let mut r = Requirement::new(&key, op, values)?;
    r.values.sort_unstable();
    r.values.dedup();
    Ok(r)
}

/// Go's `encoding/json` type-mismatch message, for structurally wrong selector JSON.
fn unmarshal_error(value: &Value, target: &str) -> SelectorError {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    SelectorError::new(format!("json: cannot unmarshal {kind} into {target}"))
}

impl Requirement {
    /// Validates and builds a requirement, as apimachinery's `NewRequirement` does.
    fn new(key: &str, op: Operator, values: Vec<String>) -> Result<Requirement, SelectorError> {
        let mut errs = Vec::new();
        if let Some(detail) = joined(qualified_name_errors(key)) {
            errs.push(invalid("key", &go_quote(key), &detail));
        }
        match op {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(invalid(
                "values",
                &go_string_slice(&values),
                "for 'in', 'notin' operators, values set can't be empty",
            )),
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(invalid(
                    "values",
                    &go_string_slice(&values),
                    "exact-match compatibility requires one single value",
                ));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errs.push(invalid(
                "values",
                &go_string_slice(&values),
                "values set must be empty for exists and does not exist",
            )),
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(invalid(
                        "values",
                        &go_string_slice(&values),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(invalid(
                            &format!("values[{i}]"),
                            &go_quote(v),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            if let Some(detail) = joined(label_value_errors(v)) {
                errs.push(invalid(
                    &format!("values[{i}][{key}]"),
                    &go_quote(v),
                    &detail,
                ));
            }
        }
        match aggregate(errs) {
            Some(message) => Err(SelectorError::new(message)),
            None => Ok(Requirement {
                key: key.to_string(),
                op,
                values,
            }),
        }
    }

    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .and_then(Value::as_str);
        match self.op {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                value.is_some_and(|v| self.has_value(v))
            }
            Operator::NotIn | Operator::NotEquals => value.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(actual), [wanted]) = (value, self.values.as_slice()) else {
                    return false;
                };
                let (Ok(actual), Ok(wanted)) = (actual.parse::<i64>(), wanted.parse::<i64>())
                else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }

    fn has_value(&self, v: &str) -> bool {
        self.values.iter().any(|x| x == v)
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.op == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.op {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in (",
            Operator::NotIn => " notin (",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        };
        f.write_str(op)?;
        let mut values: Vec<&str> = self.values.iter().map(String::as_str).collect();
        values.sort_unstable();
        f.write_str(&values.join(","))?;
        if matches!(self.op, Operator::In | Operator::NotIn) {
            f.write_str(")")?;
        }
        Ok(())
    }
}

// --- lexer -----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Byte-wise lexer; a NUL byte reads like the end of input, as in apimachinery.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn lex(&mut self) -> (Token, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special(ch) {
            self.scan_special()
        } else {
            self.scan_identifier()
        }
    }

    fn scan_identifier(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
        }
        // The run is delimited by ASCII bytes, so it is valid UTF-8.
        let lit = String::from_utf8_lossy(&buf).into_owned();
        match keyword(&buf) {
            Some(tok) => (tok, lit),
            None => (Token::Identifier, lit),
        }
    }

    /// Longest run of special symbols that still forms an operator.
    fn scan_special(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        let mut last = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
            if let Some(tok) = keyword(&buf) {
                last = Some((tok, String::from_utf8_lossy(&buf).into_owned()));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        last.unwrap_or_else(|| {
            (
                Token::Error,
                format!(
                    "error expected: keyword found '{}'",
                    String::from_utf8_lossy(&buf)
                ),
            )
        })
    }
}

// --- parser ----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn new(s: &str) -> Self {
        let mut lexer = Lexer {
            s: s.as_bytes(),
            pos: 0,
        };
        let mut items = Vec::new();
        loop {
            let item = lexer.lex();
            let end = item.0 == Token::EndOfString;
            items.push(item);
            if end {
                break;
            }
        }
        Parser { items, pos: 0 }
    }

    fn at(&self, idx: usize, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .items
            .get(idx)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        match tok {
            // Inside values, `in` and `notin` are ordinary words.
            Token::In | Token::NotIn if ctx == Context::Values => (Token::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.at(self.pos, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.at(self.pos, ctx);
        if self.pos < self.items.len() {
            self.pos += 1;
        }
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        SelectorError::new(format!("unable to parse requirement: {e}"))
                    })?;
                    requirements.push(r);
                    let (tok, lit) = self.consume(Context::Values);
                    match tok {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, lit) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(SelectorError::new(format!(
                                    "found '{lit}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return Requirement::new(&key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, op, values.into_iter().collect())
    }

    /// The key, plus the operator when it is unary (`key` alone or `!key`).
    fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(String, Option<Operator>), SelectorError> {
        let mut unary = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            unary = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )));
        }
        if let Some(detail) = joined(qualified_name_errors(&lit)) {
            // apimachinery passes a nil field path here, which prints as `<nil>`.
            return Err(SelectorError::new(invalid(
                "<nil>",
                &go_quote(&lit),
                &detail,
            )));
        }
        let (next, _) = self.lookahead(Context::Values);
        if unary.is_none() && matches!(next, Token::EndOfString | Token::Comma) {
            unary = Some(Operator::Exists);
        }
        Ok((lit, unary))
    }

    fn parse_operator(&mut self) -> Result<Operator, SelectorError> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(SelectorError::new(format!(
                    "found '{lit}', expected: {BINARY_OPERATORS}"
                )));
            }
        })
    }

    /// `( v1, v2, ... )`; empty entries are the empty string.
    fn parse_values(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            // Sic: no comma before "expected" in this message.
            return Err(SelectorError::new(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                let (closing, _) = self.consume(Context::Values);
                if closing != Token::ClosedPar {
                    return Err(SelectorError::new(format!("found '{lit}', expected: ')'")));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(SelectorError::new(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (next, lit) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(set),
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit}', expected: ',' or ')'"
                            )));
                        }
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if next == Token::Comma {
                        self.consume(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )));
                }
            }
        }
    }

    /// The single value after `=`, `==`, `!=`, `>` or `<`; nothing at all means `""`.
    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            Ok(BTreeSet::from([lit]))
        } else {
            Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )))
        }
    }
}

// --- validation messages (k8s.io/apimachinery/pkg/util/validation) ---------------------------

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX_LEN: usize = 63;
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
     alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX_LEN: usize = 253;
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric \
     characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX_LEN: usize = 63;

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: String = examples
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if i == 0 {
                format!("'{e}', ")
            } else {
                format!(" or '{e}', ")
            }
        })
        .collect();
    format!("{msg} (e.g. {examples}regex used for validation is '{fmt}')")
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Dot-separated RFC 1123 labels: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        match (b.first(), b.last()) {
            (Some(first), Some(last)) => {
                is_lower_alnum(*first)
                    && is_lower_alnum(*last)
                    && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
            }
            _ => false,
        }
    })
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63 chars.
fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > DNS1123_SUBDOMAIN_MAX_LEN {
                    errs.push(format!(
                        "prefix part {}",
                        max_len_error(DNS1123_SUBDOMAIN_MAX_LEN)
                    ));
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_MSG,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LEN {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LEN)
        ));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or at most 63 chars of the qualified-name pattern.
fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LEN {
        errs.push(max_len_error(LABEL_VALUE_MAX_LEN));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

fn joined(errs: Vec<String>) -> Option<String> {
    (!errs.is_empty()).then(|| errs.join("; "))
}

/// A `field.Invalid` error: `path: Invalid value: <value>: detail`.
fn invalid(path: &str, bad_value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {bad_value}: {detail}")
}

/// `utilerrors.NewAggregate(...).Error()`: one message alone, several deduplicated in brackets.
fn aggregate(errs: Vec<String>) -> Option<String> {
    match errs.len() {
        0 => None,
        1 => errs.into_iter().next(),
        _ => {
            let mut seen: Vec<String> = Vec::new();
            for e in errs {
                if !seen.contains(&e) {
                    seen.push(e);
                }
            }
            if seen.len() == 1 {
                seen.pop()
            } else {
                Some(format!("[{}]", seen.join(", ")))
            }
        }
    }
}

/// Go's `%q` formatting of a string.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` formatting of a `[]string` (empty ones are nil where this is used).
fn go_string_slice(values: &[String]) -> String {
    if values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

// ---------------------------------------------------------------------------------------------
// Field selectors
// ---------------------------------------------------------------------------------------------

/// A field selector: a conjunction of `field=value` / `field!=value` terms.
///
/// The default value has no terms and matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FieldTerm {
    field: String,
    negated: bool,
    value: String,
}

impl FieldSelector {
    /// Parses the string form used by `?fieldSelector=`, e.g. `metadata.name=a,status.phase!=Failed`.
    ///
    /// Values may escape `\`, `,` and `=` with a backslash. Field names are taken verbatim (no
    /// whitespace trimming), as the real server does. An empty string selects everything.
    pub fn parse(s: &str) -> Result<FieldSelector, SelectorError> {
        let mut parts = split_terms(s);
        parts.sort_unstable();
        let mut terms = Vec::with_capacity(parts.len());
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((field, op, raw)) = split_term(part) else {
                return Err(SelectorError::new(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            terms.push(FieldTerm {
                field: field.to_string(),
                negated: op == "!=",
                value: unescape_value(raw)?,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// The field paths the selector refers to, in term order (duplicates included).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().map(|t| t.field.as_str())
    }

    /// Whether an object is selected; `get` returns a field's value, `None` when it is absent.
    ///
    /// An absent field compares as the empty string.
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let actual = get(&t.field).unwrap_or_default();
            (actual == t.value) != t.negated
        })
    }

    /// Whether the selector has no terms, i.e. selects everything.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

impl FromStr for FieldSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The canonical string form: `field=value` / `field!=value` terms joined by `,`, values escaped.
impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if t.negated { "!=" } else { "=" };
            write!(f, "{}{op}{}", t.field, escape_value(&t.value))?;
        }
        Ok(())
    }
}

/// Splits on commas not preceded by a backslash; escapes stay in the returned terms.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(s.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    terms.push(s.get(start..).unwrap_or_default());
    terms
}

/// Splits a term at the first operator (`!=`, `==`, then `=` at each position).
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = term.get(i..)?;
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((term.get(..i)?, op, rhs));
            }
        }
    }
    None
}

/// `fields.EscapeValue`.
fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `fields.UnescapeValue`: `\\`, `\,` and `\=` are the only escapes; bare `,`/`=` are errors.
fn unescape_value(s: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(SelectorError::new(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v, i.e. as its code point number.
            ',' | '=' => {
                return Err(SelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err(SelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("labels must be an object"),
        }
    }

    fn sel(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
    }

    fn err(s: &str) -> String {
        match LabelSelector::parse(s) {
            Ok(v) => panic!("{s:?} should not parse, got {v}"),
            Err(e) => e.to_string(),
        }
    }

    fn m(s: &str, l: Value) -> bool {
        sel(s).matches(Some(&labels(l)))
    }

    const NAME_REGEX: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', \
        and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
        '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const VALUE_REGEX: &str = "a valid label must be an empty string or consist of alphanumeric \
        characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
        'MyValue',  or 'my_value',  or '12345', regex used for validation is \
        '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    // --- label selector parsing ---

    #[test]
    fn empty_selects_everything() {
        for s in ["", "   ", "\t\n\r "] {
            let l = sel(s);
            assert!(l.is_empty());
            assert_eq!(l.to_string(), "");
            assert!(l.matches(None));
            assert!(l.matches(Some(&labels(json!({"a": "b"})))));
        }
        assert!(LabelSelector::default().is_empty());
    }

    #[test]
    fn parses_every_operator() {
        for (input, canonical) in [
            ("a=b", "a=b"),
            ("a==b", "a==b"),
            ("a!=b", "a!=b"),
            ("a in (b,c)", "a in (b,c)"),
            ("a notin (c,b)", "a notin (b,c)"),
            ("a", "a"),
            ("!a", "!a"),
            ("a>5", "a>5"),
            ("a<5", "a<5"),
        ] {
            let l = sel(input);
            assert!(!l.is_empty());
            assert_eq!(l.to_string(), canonical, "{input}");
        }
    }

    #[test]
    fn canonical_form_sorts_keys_and_values() {
        assert_eq!(
            sel("b=1, a in (z, y, z), !c, d").to_string(),
            "a in (y,z),b=1,!c,d"
        );
        // Stable for equal keys.
        assert_eq!(sel("a!=2,a!=1").to_string(), "a!=2,a!=1");
        assert_eq!("x=y".parse::<LabelSelector>(), Ok(sel("x=y")));
    }

    #[test]
    fn whitespace_is_tolerated() {
        let l = sel("  a = b ,\tc  in  ( x , y ) ,\n ! d , e notin(z),f>1 ");
        assert_eq!(l.to_string(), "a=b,c in (x,y),!d,e notin (z),f>1");
        assert_eq!(sel("a in(b)").to_string(), "a in (b)");
        assert_eq!(sel("a!=b").to_string(), sel("a != b").to_string());
    }

    #[test]
    fn prefixed_keys_and_keywords_as_words() {
        assert_eq!(
            sel("app.kubernetes.io/name=web").to_string(),
            "app.kubernetes.io/name=web"
        );
        assert_eq!(sel("in in (in,notin)").to_string(), "in in (in,notin)");
        assert_eq!(sel("notin").to_string(), "notin");
        assert_eq!(sel("a=in").to_string(), "a=in");
    }

    #[test]
    fn empty_values() {
        assert_eq!(sel("a=").to_string(), "a=");
        assert_eq!(sel("a=,b").to_string(), "a=,b");
        assert_eq!(sel("a!=").to_string(), "a!=");
        assert_eq!(sel("a in ()").to_string(), "a in ()");
        assert_eq!(sel("a in (,b)").to_string(), "a in (,b)");
        assert_eq!(sel("a in (b,)").to_string(), "a in (,b)");
        assert_eq!(sel("a in (,,,)").to_string(), "a in ()");
        // apimachinery quirk: a doubled comma right before ')' is rejected.
        assert_eq!(
            err("a in (,,)"),
            "unable to parse requirement: found ')', expected: ',', or identifier"
        );
        assert_eq!(sel("a in (b,,c)").to_string(), "a in (,b,c)");
    }

    #[test]
    fn max_lengths() {
        let v63 = "v".repeat(63);
        assert!(LabelSelector::parse(&format!("a={v63}")).is_ok());
        let k63 = "k".repeat(63);
        assert!(LabelSelector::parse(&format!("example.com/{k63}")).is_ok());
    }

    #[test]
    fn structural_errors() {
        for (input, want) in [
            (
                "a in (",
                "unable to parse requirement: found '', expected: ',', ')' or identifier",
            ),
            (
                "a in (b",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "a in (b c)",
                "unable to parse requirement: found 'c', expected: ',' or ')'",
            ),
            (
                "a in (b,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier",
            ),
            (
                "a in b",
                "unable to parse requirement: found 'b' expected: '('",
            ),
            (
                "a in",
                "unable to parse requirement: found '' expected: '('",
            ),
            (
                "=b",
                "found '=', expected: !, identifier, or 'end of string'",
            ),
            (
                ",",
                "found ',', expected: !, identifier, or 'end of string'",
            ),
            ("a=b=c", "found '=', expected: ',' or 'end of string'"),
            ("a=b c", "found 'c', expected: ',' or 'end of string'"),
            ("!a=b", "found '=', expected: ',' or 'end of string'"),
            ("a=b,", "found '', expected: identifier after ','"),
            ("a,,b", "found ',', expected: identifier after ','"),
            (
                "a b",
                "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "a!b",
                "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "!",
                "unable to parse requirement: found '', expected: identifier",
            ),
            (
                "!!a",
                "unable to parse requirement: found '!', expected: identifier",
            ),
            (
                "a===b",
                "unable to parse requirement: found '=', expected: identifier",
            ),
            (
                "a>=5",
                "unable to parse requirement: found '=', expected: identifier",
            ),
            (
                "a=(b)",
                "unable to parse requirement: found '(', expected: identifier",
            ),
        ] {
            assert_eq!(err(input), want, "{input:?}");
        }
    }

    #[test]
    fn integer_errors() {
        assert_eq!(
            err("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": \
             for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            err("a<"),
            "unable to parse requirement: values[0]: Invalid value: \"\": \
             for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert!(err("a>99999999999999999999").contains("must be an integer"));
    }

    #[test]
    fn value_errors() {
        let long = "x".repeat(64);
        assert_eq!(
            err(&format!("a={long}")),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"{long}\": \
                 must be no more than 63 characters"
            )
        );
        assert_eq!(
            err("app=-x"),
            format!(
                "unable to parse requirement: values[0][app]: Invalid value: \"-x\": {VALUE_REGEX}"
            )
        );
        let long_bad = format!("{long}-");
        assert_eq!(
            err(&format!("a={long_bad}")),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"{long_bad}\": \
                 must be no more than 63 characters; {VALUE_REGEX}"
            )
        );
        assert_eq!(
            err("a in (y-, -x)"),
            format!(
                "unable to parse requirement: [values[0][a]: Invalid value: \"-x\": {VALUE_REGEX}, \
                 values[1][a]: Invalid value: \"y-\": {VALUE_REGEX}]"
            )
        );
        assert_eq!(
            err("a>-1"),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"-1\": {VALUE_REGEX}"
            )
        );
    }

    #[test]
    fn key_errors() {
        assert_eq!(
            err("-a=b"),
            format!("unable to parse requirement: <nil>: Invalid value: \"-a\": {NAME_REGEX}")
        );
        assert_eq!(
            err("app:web"),
            format!("unable to parse requirement: <nil>: Invalid value: \"app:web\": {NAME_REGEX}")
        );
        let long = "k".repeat(64);
        assert_eq!(
            err(&long),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"{long}\": \
                 name part must be no more than 63 characters"
            )
        );
        assert_eq!(
            err("a/"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a/\": \
                 name part must be non-empty; {NAME_REGEX}"
            )
        );
        assert_eq!(
            err("/a"),
            "unable to parse requirement: <nil>: Invalid value: \"/a\": \
             prefix part must be non-empty"
        );
        assert_eq!(
            err("Example.com/a"),
            "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part \
             a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert!(err("a..b/c").contains("prefix part a lowercase RFC 1123 subdomain"));
        assert!(
            err(&format!("{}/a", "p".repeat(254)))
                .contains("prefix part must be no more than 253 characters")
        );
        assert_eq!(
            err("a/b/c"),
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name \
             must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
             with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex \
             used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional \
             DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
        assert!(
            err("a\"\\é")
                .starts_with("unable to parse requirement: <nil>: Invalid value: \"a\\\"\\\\é\": ")
        );
    }

    #[test]
    fn nul_byte_ends_input_like_go() {
        assert_eq!(sel("a\0").to_string(), "a");
        assert_eq!(sel("a=b\0,c").to_string(), "a=b,c");
        assert_eq!(err("a=b,\0"), "found '', expected: identifier after ','");
        assert_eq!(
            err("a\0b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
    }

    // --- label selector matching ---

    #[test]
    fn equality_matching() {
        for s in ["a=b", "a==b", "a in (b)"] {
            assert!(m(s, json!({"a": "b"})), "{s}");
            assert!(!m(s, json!({"a": "c"})), "{s}");
            assert!(!m(s, json!({})), "{s}");
            assert!(!sel(s).matches(None), "{s}");
        }
        assert!(m("a=", json!({"a": ""})));
        assert!(!m("a=", json!({})));
        assert!(m("a in ()", json!({"a": ""})));
        assert!(!m("a in ()", json!({"a": "x"})));
    }

    #[test]
    fn inequality_matches_absent_keys() {
        for s in ["a!=b", "a notin (b)"] {
            assert!(!m(s, json!({"a": "b"})), "{s}");
            assert!(m(s, json!({"a": "c"})), "{s}");
            assert!(m(s, json!({})), "{s}");
            assert!(sel(s).matches(None), "{s}");
        }
        assert!(m("a notin (b,c)", json!({"a": "d"})));
        assert!(!m("a notin (b,c)", json!({"a": "c"})));
        assert!(m("a in (b,c)", json!({"a": "c"})));
    }

    #[test]
    fn existence_matching() {
        assert!(m("a", json!({"a": ""})));
        assert!(!m("a", json!({"b": "x"})));
        assert!(!m("!a", json!({"a": ""})));
        assert!(m("!a", json!({"b": "x"})));
        assert!(sel("!a").matches(None));
    }

    #[test]
    fn integer_comparisons() {
        assert!(m("a>5", json!({"a": "6"})));
        assert!(!m("a>5", json!({"a": "5"})));
        assert!(m("a<5", json!({"a": "4"})));
        assert!(m("a<5", json!({"a": "-10"})));
        assert!(!m("a<5", json!({"a": "5"})));
        assert!(!m("a>5", json!({})));
        assert!(!m("a<5", json!({})));
        assert!(!m("a>5", json!({"a": "x"})));
        assert!(!m("a<5", json!({"a": ""})));
        assert!(!m("a<5", json!({"a": "99999999999999999999"})));
    }

    #[test]
    fn non_string_label_values_are_absent() {
        assert!(!m("a", json!({"a": 1})));
        assert!(!m("a=1", json!({"a": 1})));
        assert!(m("a!=1", json!({"a": 1})));
        assert!(m("!a", json!({"a": null})));
        assert!(!m("a>0", json!({"a": 1})));
    }

    #[test]
    fn requirements_are_anded() {
        let s = "app=web,tier notin (db),!canary,version>1";
        assert!(m(s, json!({"app": "web", "tier": "fe", "version": "2"})));
        assert!(!m(s, json!({"app": "web", "tier": "db", "version": "2"})));
        assert!(!m(s, json!({"app": "web", "canary": "", "version": "2"})));
        assert!(!m(s, json!({"app": "web", "version": "1"})));
    }

    // --- structured label selectors ---

    fn structured(v: Value) -> Result<LabelSelector, String> {
        LabelSelector::from_label_selector(&v).map_err(|e| e.to_string())
    }

    #[test]
    fn structured_empty_selects_everything() {
        for v in [
            Value::Null,
            json!({}),
            json!({"matchLabels": {}, "matchExpressions": []}),
        ] {
            let l = structured(v).unwrap_or_else(|e| panic!("{e}"));
            assert!(l.is_empty());
            assert!(l.matches(None));
        }
        let l = structured(json!({"matchLabels": null, "matchExpressions": null}));
        assert_eq!(l.map(|l| l.is_empty()), Ok(true));
    }

    #[test]
    fn structured_conversion() {
        let l = structured(json!({
            "matchLabels": {"b": "1", "a": "x"},
            "matchExpressions": [
                {"key": "c", "operator": "In", "values": ["z", "y"]},
                {"key": "d", "operator": "NotIn", "values": ["q"]},
                {"key": "e", "operator": "Exists"},
                {"key": "f", "operator": "DoesNotExist", "values": []},
            ]
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.to_string(), "a=x,b=1,c in (y,z),d notin (q),e,!f");
        assert!(l.matches(Some(&labels(
            json!({"a": "x", "b": "1", "c": "y", "e": ""})
        ))));
        assert!(!l.matches(Some(&labels(json!({"a": "x", "b": "1", "c": "y"})))));
        assert!(!l.matches(Some(&labels(
            json!({"a": "x", "b": "1", "c": "y", "e": "", "f": ""})
        ))));
        assert_eq!(l, sel(&l.to_string()));
    }

    #[test]
    fn structured_errors() {
        assert_eq!(
            structured(
                json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
            ),
            Err("\"Gt\" is not a valid label selector operator".to_string())
        );
        assert_eq!(
            structured(json!({"matchExpressions": [{"key": "a"}]})),
            Err("\"\" is not a valid label selector operator".to_string())
        );
        assert_eq!(
            structured(json!({"matchExpressions": [{"key": "a", "operator": "In"}]})),
            Err(
                "values: Invalid value: []string(nil): for 'in', 'notin' operators, \
                 values set can't be empty"
                    .to_string()
            )
        );
        assert_eq!(
            structured(
                json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x", "y"]}]})
            ),
            Err(
                "values: Invalid value: []string{\"x\", \"y\"}: values set must be empty \
                 for exists and does not exist"
                    .to_string()
            )
        );
        assert_eq!(
            structured(json!({"matchLabels": {"-a": "b"}})),
            Err(format!("key: Invalid value: \"-a\": {NAME_REGEX}"))
        );
        assert_eq!(
            structured(json!({"matchLabels": {"a": "-b"}})),
            Err(format!(
                "values[0][a]: Invalid value: \"-b\": {VALUE_REGEX}"
            ))
        );
        assert_eq!(
            structured(
                json!({"matchExpressions": [{"key": "", "operator": "In", "values": ["ok", "-x"]}]})
            ),
            Err(format!(
                "[key: Invalid value: \"\": name part must be non-empty; {NAME_REGEX}, \
                 values[1][]: Invalid value: \"-x\": {VALUE_REGEX}]"
            ))
        );
        assert!(
            structured(json!("a=b")).is_err_and(|e| e.starts_with("json: cannot unmarshal string"))
        );
        assert!(structured(json!({"matchLabels": {"a": 1}})).is_err());
        assert!(structured(json!({"matchLabels": []})).is_err());
        assert!(structured(json!({"matchExpressions": {}})).is_err());
        assert!(structured(json!({"matchExpressions": [1]})).is_err());
        assert!(
            structured(json!({"matchExpressions": [{"key": 1, "operator": "Exists"}]})).is_err()
        );
        assert!(
            structured(
                json!({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]})
            )
            .is_err()
        );
        assert!(
            structured(
                json!({"matchExpressions": [{"key": "a", "operator": "In", "values": [true]}]})
            )
            .is_err()
        );
    }

    // --- field selectors ---

    fn fsel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
    }

    fn ferr(s: &str) -> String {
        match FieldSelector::parse(s) {
            Ok(v) => panic!("{s:?} should not parse, got {v}"),
            Err(e) => e.to_string(),
        }
    }

    fn object(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |f| pairs.iter().find(|(k, _)| k == f).map(|(_, v)| v.clone())
    }

    #[test]
    fn field_empty_selects_everything() {
        for s in ["", ",", ",,"] {
            let f = fsel(s);
            assert!(f.is_empty());
            assert_eq!(f.to_string(), "");
            assert_eq!(f.fields().count(), 0);
            assert!(f.matches(|_| None));
        }
    }

    #[test]
    fn field_operators() {
        let f = fsel("status.phase!=Failed,metadata.name==a,metadata.namespace=b");
        assert_eq!(
            f.fields().collect::<Vec<_>>(),
            ["metadata.name", "metadata.namespace", "status.phase"]
        );
        assert_eq!(
            f.to_string(),
            "metadata.name=a,metadata.namespace=b,status.phase!=Failed"
        );
        let obj = object(&[
            ("metadata.name", "a"),
            ("metadata.namespace", "b"),
            ("status.phase", "Running"),
        ]);
        assert!(f.matches(&obj));
        assert!(!f.matches(object(&[
            ("metadata.name", "a"),
            ("metadata.namespace", "b"),
            ("status.phase", "Failed"),
        ])));
        assert!(!f.matches(object(&[("metadata.name", "a")])));
        assert_eq!("a=b".parse::<FieldSelector>(), Ok(fsel("a=b")));
    }

    #[test]
    fn field_absent_compares_as_empty() {
        assert!(fsel("spec.nodeName=").matches(|_| None));
        assert!(fsel("spec.nodeName==").matches(|_| Some(String::new())));
        assert!(!fsel("spec.nodeName!=").matches(|_| None));
        assert!(fsel("spec.nodeName!=").matches(|_| Some("n1".into())));
        assert!(fsel("spec.nodeName!=n1").matches(|_| None));
        assert!(!fsel("spec.nodeName=n1").matches(|_| None));
    }

    #[test]
    fn field_escaping() {
        let f = fsel(r"a=x\,y\=z\\w,b=c");
        assert_eq!(f.fields().collect::<Vec<_>>(), ["a", "b"]);
        assert!(f.matches(object(&[("a", r"x,y=z\w"), ("b", "c")])));
        assert_eq!(f.to_string(), r"a=x\,y\=z\\w,b=c");
        assert!(fsel("a=b!c").matches(object(&[("a", "b!c")])));
        assert!(fsel(r"a!=\=").matches(object(&[("a", "x")])));
        assert_eq!(fsel("a=é").to_string(), "a=é");
        assert_eq!(escape_value(r"a\b,c=d!e"), r"a\\b\,c\=d!e");
        assert_eq!(
            unescape_value(&escape_value(r"\,=\\x")),
            Ok(r"\,=\\x".to_string())
        );
    }

    #[test]
    fn field_names_are_verbatim() {
        let f = fsel("metadata.name = foo");
        assert_eq!(f.fields().collect::<Vec<_>>(), ["metadata.name "]);
        assert!(f.matches(object(&[("metadata.name ", " foo")])));
        assert_eq!(fsel("=b").fields().collect::<Vec<_>>(), [""]);
        assert_eq!(fsel(r"a\,b=c").fields().collect::<Vec<_>>(), [r"a\,b"]);
    }

    #[test]
    fn field_errors() {
        assert_eq!(
            ferr("abc"),
            "invalid selector: 'abc'; can't understand 'abc'"
        );
        assert_eq!(
            ferr("a=b,xyz"),
            "invalid selector: 'a=b,xyz'; can't understand 'xyz'"
        );
        assert_eq!(
            ferr(r"a=b\"),
            r"invalid field selector: invalid escape sequence: \"
        );
        assert_eq!(
            ferr(r"a=b\x"),
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            ferr(r"a=b\!"),
            r"invalid field selector: invalid escape sequence: \!"
        );
        assert_eq!(
            ferr("a=b=c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            ferr("a!==b"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            ferr("a===b"),
            "invalid field selector: unescaped character in value: 61"
        );
    }

    // --- robustness ---

    /// Deterministic pseudo-random strings over an alphabet rich in syntax characters.
    fn odd_strings() -> Vec<String> {
        let long = "x".repeat(70);
        let alphabet: &[&str] = &[
            "a", "b", "Z", "0", "9", "-", "_", ".", "/", "=", "==", "!", "!=", "(", ")", ",", "<",
            ">", " ", "\t", "\n", "\\", "\0", "in", "notin", "é", "☃", "\u{7f}", "\u{200b}", "\"",
            &long,
        ];
        let mut out: Vec<String> = [
            "",
            "(",
            ")",
            "()",
            "!",
            "!!",
            "!=",
            "==",
            "=",
            ",",
            ",,",
            "in",
            "notin",
            "in in",
            "a in",
            "a in (",
            "a in ((",
            "a in ()",
            "a in (,",
            "a notin )",
            "a>",
            "a<",
            ">",
            "<",
            "a>>1",
            "a<=1",
            "\\",
            "\\\\",
            "a=\\",
            "\0",
            "\0\0",
            "a\0=b",
            "é=é",
            "☃",
            "a=b,!",
            "a/b/c/d",
            "/",
            "//",
            "a/=b",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..600 {
            let mut s = String::new();
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let len = (state >> 59) as usize;
            for _ in 0..len {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                s.push_str(alphabet[(state >> 33) as usize % alphabet.len()]);
            }
            out.push(s);
        }
        out
    }

    #[test]
    fn odd_input_never_panics_and_round_trips() {
        let sample = labels(json!({"a": "b", "Z": "0", "in": ""}));
        let mut parsed = 0;
        for s in odd_strings() {
            if let Ok(l) = LabelSelector::parse(&s) {
                parsed += 1;
                let _ = l.matches(Some(&sample));
                let _ = l.matches(None);
                let again = LabelSelector::parse(&l.to_string());
                assert_eq!(again.as_ref(), Ok(&l), "{s:?} -> {l}");
            }
            if let Ok(f) = FieldSelector::parse(&s) {
                let _ = f.matches(|field| Some(field.to_string()));
                let _ = f.fields().count();
                let mut again = FieldSelector::parse(&f.to_string())
                    .unwrap_or_else(|e| panic!("{s:?} -> {f}: {e}"));
                let mut original = f.clone();
                again.terms.sort();
                original.terms.sort();
                assert_eq!(again, original, "{s:?}");
            }
            let _ = LabelSelector::from_label_selector(&json!({
                "matchLabels": {s.clone(): s.clone()},
                "matchExpressions": [{"key": s.clone(), "operator": s.clone(), "values": [s.clone()]}],
            }));
            let _ = LabelSelector::from_label_selector(&json!({
                "matchExpressions": [{"key": s.clone(), "operator": "NotIn", "values": [s.clone()]}],
            }));
        }
        assert!(parsed > 20, "only {parsed} odd strings parsed");
    }
}
