//! JSONPath templates as client-go's `util/jsonpath` reads and evaluates them, for CRD printer columns.
//!
//! kube-apiserver parses a column's `jsonPath` as the template `{<jsonPath>}` with missing keys allowed and
//! keeps the first value of the first action. This module follows client-go's parser and evaluator on JSON
//! values: fields (`.a`, `['a']`, escaped dots `a\.b`), `*` (`.*`, `[*]`), indexes and slices (`[n]`, `[-1]`,
//! `[a:b]`, `[a:b:step]`), unions (`[0,2]`, `['a','b']`), recursive descent (`..name`), and filters
//! (`[?(@.x=="y")]` with `==`, `!=`, `<`, `>`, `<=`, `>=`, or a bare path for existence) comparing strings,
//! integers, floats and booleans with Go's `text/template` rules (an integer never equals a float or a
//! string: the comparison fails, and so does the whole path). Literal text between actions is kept.
//!
//! Not supported: `range`/`end` (kubectl's iteration blocks, meaningless in a column) parse, as in client-go,
//! but fail to evaluate (so the cell is empty). Maps
//! are walked in key order, where Go walks them in random order (so `..x` and `.*` pick the same first value
//! on every call here, and any of them there).

use std::borrow::Cow;

use serde_json::{Number, Value};

/// Why a template does not parse or a path does not evaluate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsonPathError {
    /// `{` without its `}`.
    #[error("unclosed action")]
    UnclosedAction,
    /// A character that starts no node inside an action.
    #[error("unrecognized character in action: {0:?}")]
    UnrecognizedCharacter(char),
    /// A bare word other than `true` and `false`.
    #[error("unrecognized identifier {0}")]
    UnrecognizedIdentifier(String),
    /// `range` and `end`, which parse (as in client-go) but are not evaluated here.
    #[error("{0} is not supported in printer columns")]
    Unsupported(String),
    /// `[` without `]`, or `[?(` without `)]`.
    #[error("unterminated {0}")]
    Unterminated(&'static str),
    /// A quoted string that does not unquote.
    #[error("invalid quoted string {0}")]
    InvalidQuote(String),
    /// An array subscript that is no index, slice, key or union.
    #[error("invalid array index {0}")]
    InvalidIndex(String),
    /// A number literal that is neither an integer nor a float.
    #[error("cannot parse number {0}")]
    InvalidNumber(String),
    /// `....`.
    #[error("invalid multiple recursive descent")]
    MultipleRecursive,
    /// An index or slice applied to something else than an array.
    #[error("{0} is not an array")]
    NotAnArray(&'static str),
    /// An index outside the array.
    #[error("array index out of bounds: index {index}, length {len}")]
    OutOfBounds {
        /// The index asked for.
        index: i64,
        /// The array's length.
        len: usize,
    },
    /// A slice whose start is after its end.
    #[error("starting index {0} is greater than ending index {1}")]
    StartAfterEnd(i64, i64),
    /// A slice step of zero or less.
    #[error("step must be > 0")]
    Step,
    /// A filter side with several values.
    #[error("can only compare one element at a time")]
    SeveralToCompare,
    /// Values of kinds Go's templates do not compare (an integer and a string, two objects, …).
    #[error("incompatible types for comparison")]
    Incomparable,
    /// A filter operator made of `!<>=` that is none of the six.
    #[error("unrecognized filter operator {0}")]
    Operator(String),
}

/// A comparison of a filter.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Exists,
    Compare(String),
}

/// A bound of a slice: `None` when left out.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    value: Option<i64>,
    /// The end of `[n]`: one past the start, counted from the end when the start is.
    derived: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// An action: its nodes applied one after the other.
    List(Vec<Node>),
    Text(String),
    Field(String),
    Wildcard,
    Recursive,
    Slice([Bound; 3]),
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: Op,
    },
    Union(Vec<Vec<Node>>),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `range` or `end`.
    Unsupported(String),
}

/// A parsed template such as `{.status.conditions[?(@.type=="Ready")].status}`.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    root: Vec<Node>,
}

impl JsonPath {
    /// Parses a template (actions in braces, text around them).
    pub fn parse(template: &str) -> Result<Self, JsonPathError> {
        Ok(JsonPath {
            root: parse_template(template)?,
        })
    }

    /// A printer column's path: `json_path` as the action of a template.
    pub fn column(json_path: &str) -> Result<Self, JsonPathError> {
        Self::parse(&format!("{{{json_path}}}"))
    }

    /// The values each top-level node finds in `data` (client-go's `FindResults`, missing keys allowed).
    pub fn find<'a>(&self, data: &'a Value) -> Result<Vec<Vec<Cow<'a, Value>>>, JsonPathError> {
        self.root
            .iter()
            .map(|node| walk(vec![Cow::Borrowed(data)], node))
            .collect()
    }

    /// The first value found by the first action, as kube-apiserver fills a printer column's cell.
    pub fn first<'a>(&self, data: &'a Value) -> Result<Option<Cow<'a, Value>>, JsonPathError> {
        Ok(self
            .find(data)?
            .into_iter()
            .next()
            .and_then(|values| values.into_iter().next()))
    }
}

/// One value printed as client-go's `PrintResults` prints it: objects and arrays as compact JSON (with Go's
/// HTML escaping), strings as they are, numbers and booleans with Go's `fmt`, null as `<no value>`.
pub fn print(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) => go_json(value),
        Value::String(s) => s.clone(),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "<no value>".to_string(),
    }
}

/// A number as Go's `fmt.Print` prints the `int64` or `float64` JSON decoding gives.
pub fn go_number(n: &Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (None, Some(u), _) => go_float(u as f64),
        (None, None, Some(f)) => go_float(f),
        _ => n.to_string(),
    }
}

/// A float as kube-apiserver holds and prints it: whole values that fit an `int64` come back from storage
/// as integers; others print as Go's `%v` (`'g'` with the shortest digits: exponent form below 1e-4 and
/// from 1e6, e.g. `1.2345675e+06`).
fn go_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 9.2e18 {
        return format!("{}", f as i64);
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, like Go's.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// JSON as Go's `json.Marshal` writes it: compact, keys sorted, `<`, `>` and `&` escaped.
fn go_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

// ---- parsing ----

struct Parser {
    input: Vec<char>,
    pos: usize,
    start: usize,
}

fn parse_template(text: &str) -> Result<Vec<Node>, JsonPathError> {
    let mut p = Parser {
        input: text.chars().collect(),
        pos: 0,
        start: 0,
    };
    let mut root = Vec::new();
    loop {
        if p.rest_starts_with("{") {
            if p.pos > p.start {
                root.push(Node::Text(p.consume()));
            }
            p.pos += 1;
            p.consume();
            let mut action = Vec::new();
            p.inside_action(&mut action)?;
            root.push(Node::List(action));
        } else if p.next().is_none() {
            if p.pos > p.start {
                root.push(Node::Text(p.consume()));
            }
            break;
        }
    }
    Ok(root)
}

/// The nodes of one action given without braces (the sides of a filter, the parts of a union).
fn parse_action(text: &str) -> Result<Vec<Node>, JsonPathError> {
    parse_template(&format!("{{{text}}}"))
}

fn is_terminator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl Parser {
    fn next(&mut self) -> Option<char> {
        let c = self.input.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn peek(&self) -> Option<char> {
        self.input.get(self.pos).copied()
    }

    fn rest_starts_with(&self, prefix: &str) -> bool {
        let rest = self.input.get(self.pos..).unwrap_or(&[]);
        let prefix: Vec<char> = prefix.chars().collect();
        rest.starts_with(&prefix)
    }

    fn consume(&mut self) -> String {
        let text: String = self.input[self.start..self.pos].iter().collect();
        self.start = self.pos;
        text
    }

    /// Reads nodes up to the action's closing brace.
    fn inside_action(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            if self.rest_starts_with("}") {
                self.pos += 1;
                self.consume();
                return Ok(());
            }
            if self.rest_starts_with("[?(") {
                self.filter(cur)?;
                continue;
            }
            if self.rest_starts_with("..") {
                if cur.last() == Some(&Node::Recursive) {
                    return Err(JsonPathError::MultipleRecursive);
                }
                self.pos += 2;
                self.consume();
                cur.push(Node::Recursive);
                if self.peek().is_some_and(is_alphanumeric) {
                    self.field(cur)?;
                }
                continue;
            }
            match self.next() {
                None | Some('\n' | '\r') => return Err(JsonPathError::UnclosedAction),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.array(cur)?,
                Some(q @ ('"' | '\'')) => self.quote(cur, q)?,
                Some('.') => {
                    self.consume();
                    self.field(cur)?;
                }
                Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                    self.pos -= 1;
                    self.number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.pos -= 1;
                    self.identifier(cur)?;
                }
                Some(c) => return Err(JsonPathError::UnrecognizedCharacter(c)),
            }
        }
    }

    /// A field name up to the next unescaped terminator (the leading `.` already consumed).
    fn field(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        while let Some(c) = self.peek() {
            if c == '\\' {
                self.pos = (self.pos + 2).min(self.input.len());
            } else if is_terminator(c) {
                break;
            } else {
                self.pos += 1;
            }
        }
        let value = self.consume();
        match value.as_str() {
            // An empty name (`{.}`) is a field no object has: kube-apiserver prints nothing for `.`.
            "*" => cur.push(Node::Wildcard),
            _ => cur.push(Node::Field(value.replace('\\', ""))),
        }
        Ok(())
    }

    fn identifier(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        while self.peek().is_some_and(is_alphanumeric) {
            self.pos += 1;
        }
        let word = self.consume();
        match word.as_str() {
            "true" => cur.push(Node::Bool(true)),
            "false" => cur.push(Node::Bool(false)),
            "range" | "end" => cur.push(Node::Unsupported(word)),
            _ => return Err(JsonPathError::UnrecognizedIdentifier(word)),
        }
        Ok(())
    }

    fn number(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c == '.' || c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text = self.consume();
        if let Ok(i) = text.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Ok(f) = text.parse::<f64>() {
            cur.push(Node::Float(f));
        } else {
            return Err(JsonPathError::InvalidNumber(text));
        }
        Ok(())
    }

    fn quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(JsonPathError::Unterminated("quoted string")),
                Some(c) if c == end && self.input[self.pos - 2] != '\\' => break,
                Some(_) => {}
            }
        }
        let quoted = self.consume();
        cur.push(Node::Text(unquote(&quoted)?));
        Ok(())
    }

    /// `[...]` up to the first `]`: a union, a quoted key, an index or a slice.
    fn array(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(JsonPathError::Unterminated("array")),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let inner = &text[1..text.len() - 1];
        let inner = if inner == "*" { ":" } else { inner };
        if inner.contains(',') {
            let parts = inner
                .split(',')
                .map(|part| parse_action(&format!("[{}]", part.trim_matches(' '))))
                .collect::<Result<Vec<_>, _>>()?;
            cur.push(Node::Union(parts));
            return Ok(());
        }
        if let Some(key) = inner
            .strip_prefix('\'')
            .and_then(|k| k.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            // Go re-reads the key as `.key`, so dots in it still separate fields.
            for node in parse_action(&format!(".{key}"))? {
                match node {
                    Node::List(nodes) => cur.extend(nodes),
                    other => cur.push(other),
                }
            }
            return Ok(());
        }
        cur.push(Node::Slice(slice(inner)?));
        Ok(())
    }

    /// `[?(left op right)]` or `[?(path)]`.
    fn filter(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end, mut pair) = (false, false, '"');
        loop {
            match self.next() {
                None | Some('\n') => return Err(JsonPathError::Unterminated("filter")),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                    } else if self.input[self.pos - 2] != '\\' && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return Err(JsonPathError::Unterminated("filter"));
        }
        let text = self.consume();
        let body: String = {
            let chars: Vec<char> = text.chars().collect();
            chars[..chars.len() - 2].iter().collect()
        };
        let node = match split_comparison(&body) {
            None => Node::Filter {
                left: parse_action(&body)?,
                right: Vec::new(),
                op: Op::Exists,
            },
            Some((left, op, right)) => Node::Filter {
                left: parse_action(left)?,
                right: parse_action(right)?,
                op: Op::Compare(op.to_string()),
            },
        };
        cur.push(node);
        Ok(())
    }
}

/// Go's `^([^!<>=]+)([!<>=]+)(.+?)$`.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let op_start = text.find(is_op)?;
    if op_start == 0 {
        return None;
    }
    let rest = &text[op_start..];
    let op_len = rest.find(|c: char| !is_op(c)).unwrap_or(rest.len());
    let right = &rest[op_len..];
    if right.is_empty() || right.contains('\n') || text[..op_start].contains('\n') {
        return None;
    }
    Some((&text[..op_start], &rest[..op_len], right))
}

/// Go's `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$` and how client-go fills the three bounds.
fn slice(text: &str) -> Result<[Bound; 3], JsonPathError> {
    let invalid = || JsonPathError::InvalidIndex(text.to_string());
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return Err(invalid());
    }
    let well_formed = |p: &str| {
        let digits = p.strip_prefix('-').unwrap_or(p);
        digits.chars().all(|c| c.is_ascii_digit())
    };
    if !parts.iter().all(|p| well_formed(p)) {
        return Err(invalid());
    }
    let parse = |p: &str| -> Result<Option<i64>, JsonPathError> {
        if p.is_empty() {
            Ok(None)
        } else {
            p.parse::<i64>().map(Some).map_err(|_| invalid())
        }
    };
    let start = parse(parts[0])?;
    let none = Bound {
        value: None,
        derived: false,
    };
    let mut bounds = [
        Bound {
            value: start,
            derived: false,
        },
        none,
        none,
    ];
    match parts.get(1) {
        None => {
            // `[n]`: the end is one past the start (an unknown start counts as 0).
            bounds[1] = Bound {
                value: Some(start.unwrap_or(0) + 1),
                derived: true,
            };
        }
        Some(end) => bounds[1].value = parse(end)?,
    }
    if let Some(step) = parts.get(2) {
        bounds[2].value = parse(step)?;
    }
    Ok(bounds)
}

/// A quoted string as client-go's `UnquoteExtend` reads it (single or double quotes, Go escapes).
fn unquote(quoted: &str) -> Result<String, JsonPathError> {
    let invalid = || JsonPathError::InvalidQuote(quoted.to_string());
    let inner = quoted
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| quoted.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .ok_or_else(invalid)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next().ok_or_else(invalid)? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16).map_err(|_| invalid())?;
                out.push(char::from_u32(code).ok_or_else(invalid)?);
            }
            c @ ('\\' | '"' | '\'') => out.push(c),
            _ => return Err(invalid()),
        }
    }
    Ok(out)
}

// ---- evaluation ----

type Values<'a> = Vec<Cow<'a, Value>>;

fn walk<'a>(input: Values<'a>, node: &Node) -> Result<Values<'a>, JsonPathError> {
    match node {
        Node::List(nodes) => list(input, nodes),
        Node::Text(t) => Ok(vec![Cow::Owned(Value::String(t.clone()))]),
        Node::Int(i) => Ok(vec![Cow::Owned(Value::from(*i))]),
        Node::Float(f) => Ok(vec![Cow::Owned(
            Number::from_f64(*f).map_or(Value::Null, Value::Number),
        )]),
        Node::Bool(b) => Ok(vec![Cow::Owned(Value::Bool(*b))]),
        Node::Unsupported(word) => Err(JsonPathError::Unsupported(word.clone())),
        Node::Field(name) => Ok(input
            .into_iter()
            .filter_map(|v| match v {
                Cow::Borrowed(Value::Object(m)) => m.get(name).map(Cow::Borrowed),
                Cow::Owned(Value::Object(mut m)) => m.remove(name).map(Cow::Owned),
                _ => None,
            })
            .collect()),
        Node::Wildcard => Ok(input.into_iter().flat_map(children).collect()),
        Node::Recursive => {
            let mut out = Vec::new();
            for v in input {
                recursive(v, &mut out);
            }
            Ok(out)
        }
        Node::Slice(bounds) => index(input, bounds),
        Node::Filter { left, right, op } => filter(input, left, right, op),
        Node::Union(parts) => {
            let mut out = Vec::new();
            for part in parts {
                out.extend(list(input.clone(), part)?);
            }
            Ok(out)
        }
    }
}

fn list<'a>(input: Values<'a>, nodes: &[Node]) -> Result<Values<'a>, JsonPathError> {
    nodes.iter().try_fold(input, walk)
}

/// The members of an object (in key order), the items of an array, the bytes of a string.
fn children(v: Cow<'_, Value>) -> Values<'_> {
    match v {
        Cow::Borrowed(Value::Object(m)) => m.values().map(Cow::Borrowed).collect(),
        Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Object(m)) => m.into_iter().map(|(_, v)| Cow::Owned(v)).collect(),
        Cow::Owned(Value::Array(a)) => a.into_iter().map(Cow::Owned).collect(),
        Cow::Borrowed(Value::String(s)) => s.bytes().map(|b| Cow::Owned(Value::from(b))).collect(),
        Cow::Owned(Value::String(s)) => s.bytes().map(|b| Cow::Owned(Value::from(b))).collect(),
        _ => Vec::new(),
    }
}

/// Every value with children, before its descendants with children.
fn recursive<'a>(v: Cow<'a, Value>, out: &mut Values<'a>) {
    let kids = children(v.clone());
    if kids.is_empty() {
        return;
    }
    out.push(v);
    for kid in kids {
        recursive(kid, out);
    }
}

fn index<'a>(input: Values<'a>, bounds: &[Bound; 3]) -> Result<Values<'a>, JsonPathError> {
    let mut out = Vec::new();
    for v in input {
        if v.is_null() {
            continue;
        }
        let items: Values<'a> = match v {
            Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(a)) => a.into_iter().map(Cow::Owned).collect(),
            _ => return Err(JsonPathError::NotAnArray("indexed value")),
        };
        let len = items.len() as i64;
        let mut start = bounds[0].value.unwrap_or(0);
        if start < 0 {
            start += len;
        }
        let mut end = bounds[1].value.unwrap_or(len);
        if end < 0 || (end == 0 && bounds[1].derived) {
            end += len;
        }
        if start == end {
            // Zero elements asked for: client-go stops here with what it has.
            return Ok(out);
        }
        if start >= len || start < 0 {
            return Err(JsonPathError::OutOfBounds {
                index: start,
                len: items.len(),
            });
        }
        if end > len || end < 0 {
            return Err(JsonPathError::OutOfBounds {
                index: end - 1,
                len: items.len(),
            });
        }
        if start > end {
            return Err(JsonPathError::StartAfterEnd(start, end));
        }
        let step = match bounds[2].value {
            Some(s) if s <= 0 => return Err(JsonPathError::Step),
            Some(s) => s as usize,
            None => 1,
        };
        out.extend(
            items
                .into_iter()
                .skip(start as usize)
                .take((end - start) as usize)
                .step_by(step),
        );
    }
    Ok(out)
}

fn filter<'a>(
    input: Values<'a>,
    left: &[Node],
    right: &[Node],
    op: &Op,
) -> Result<Values<'a>, JsonPathError> {
    let mut out = Vec::new();
    for v in input {
        let items: Values<'a> = match v {
            Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(a)) => a.into_iter().map(Cow::Owned).collect(),
            _ => return Err(JsonPathError::NotAnArray("filtered value")),
        };
        for item in items {
            let lefts = list(vec![item.clone()], left);
            let op = match op {
                Op::Exists => {
                    if lefts.is_ok_and(|l| !l.is_empty()) {
                        out.push(item);
                    }
                    continue;
                }
                Op::Compare(op) => op,
            };
            let lefts = lefts?;
            let l = match lefts.as_slice() {
                [] => continue,
                [one] => one.clone(),
                _ => return Err(JsonPathError::SeveralToCompare),
            };
            let rights = list(vec![item.clone()], right)?;
            let r = match rights.as_slice() {
                [] => continue,
                [one] => one.clone(),
                _ => return Err(JsonPathError::SeveralToCompare),
            };
            if compare(&l, &r, op)? {
                out.push(item);
            }
        }
    }
    Ok(out)
}

/// Go's `text/template` comparisons on decoded JSON: strings with strings, integers with integers, floats
/// with floats, booleans with booleans (equality only); anything else fails.
fn compare(l: &Value, r: &Value, op: &str) -> Result<bool, JsonPathError> {
    use std::cmp::Ordering;
    let ordering = match (l, r) {
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => Some(x.cmp(&y)),
            (None, None) if a.is_f64() && b.is_f64() => {
                let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y)
            }
            _ => return Err(JsonPathError::Incomparable),
        },
        (Value::Bool(a), Value::Bool(b)) => {
            return match op {
                "==" => Ok(a == b),
                "!=" => Ok(a != b),
                "<" | ">" | "<=" | ">=" => Err(JsonPathError::Incomparable),
                _ => Err(JsonPathError::Operator(op.to_string())),
            };
        }
        _ => return Err(JsonPathError::Incomparable),
    };
    let Some(o) = ordering else {
        // NaN: only `!=` holds.
        return Ok(op == "!=");
    };
    match op {
        "==" => Ok(o == Ordering::Equal),
        "!=" => Ok(o != Ordering::Equal),
        "<" => Ok(o == Ordering::Less),
        ">" => Ok(o == Ordering::Greater),
        "<=" => Ok(o != Ordering::Greater),
        ">=" => Ok(o != Ordering::Less),
        _ => Err(JsonPathError::Operator(op.to_string())),
    }
}

#[cfg(test)]
#[path = "jsonpath_tests.rs"]
mod tests;
