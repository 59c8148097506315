//! A JSON value as the CEL value a rule sees, typed by its schema node (apiserver's `UnstructuredToVal`).
//!
//! Integers are `int` and `type: number` values `double` (also when written without a fraction); strings
//! of `format: byte` are the decoded `bytes`, of `date-time` and `date` timestamps, of `duration`
//! durations; `x-kubernetes-int-or-string` values stay what they are. Declared properties are reached by
//! their escaped names (`foo-bar` as `foo__dash__bar`, a keyword such as `namespace` as `__namespace__`);
//! `additionalProperties` maps keep their keys. At the root (and in embedded resources) `metadata` holds
//! only `name` and `generateName`, as on the server.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;
use kube_cel::cel::Value as Cel;
use kube_cel::cel::objects::{Key, Map as CelMap};
use serde_json::Value;

use super::super::node::{Additional, Node};

/// CEL's reserved words, which a property name must not be (apiserver's `celReservedSymbols`).
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as a CEL identifier, `None` when it cannot be one (apiserver's `Escape`).
pub(super) fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok_first = first.is_ascii_alphabetic() || matches!(first, '_' | '.' | '-' | '/');
    let ok_rest = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'));
    if !ok_first || !ok_rest {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = after;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            other => out.push(other),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// `v` as CEL sees it at schema node `node` (`None`: no schema, e.g. under preserve-unknown-fields).
pub(super) fn to_cel(v: &Value, node: Option<&Node>, root: bool) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => crate::cel::values::number(
            n,
            node.is_some_and(|n| n.types.iter().any(|t| t == "number")),
        ),
        Value::String(s) => string(s, node),
        Value::Array(items) => {
            let item = node.and_then(|n| n.items.as_deref());
            Cel::List(Arc::new(
                items.iter().map(|i| to_cel(i, item, false)).collect(),
            ))
        }
        Value::Object(m) => {
            let mut out = HashMap::with_capacity(m.len());
            let declared = node.is_some_and(|n| !n.properties.is_empty() || n.embedded_resource);
            for (k, child) in m {
                let meta = (root || node.is_some_and(|n| n.embedded_resource)) && k == "metadata";
                let value = if meta {
                    object_meta(child)
                } else {
                    to_cel(child, child_node(node, k), false)
                };
                let key = if declared || root {
                    match escape(k) {
                        Some(e) => e,
                        None => continue,
                    }
                } else {
                    k.clone()
                };
                out.insert(Key::String(Arc::new(key)), value);
            }
            Cel::Map(CelMap { map: Arc::new(out) })
        }
    }
}

/// The schema of property `k` of an object at `node`.
fn child_node<'n>(node: Option<&'n Node>, k: &str) -> Option<&'n Node> {
    let node = node?;
    node.properties.get(k).or_else(|| {
        node.additional_properties
            .as_ref()
            .and_then(Additional::schema)
    })
}

/// The root's (or an embedded resource's) `metadata`: only `name` and `generateName` are visible.
fn object_meta(v: &Value) -> Cel {
    let mut out = HashMap::new();
    for k in ["name", "generateName"] {
        if let Some(Value::String(s)) = v.get(k) {
            out.insert(
                Key::String(Arc::new(k.into())),
                Cel::String(Arc::new(s.clone())),
            );
        }
    }
    Cel::Map(CelMap { map: Arc::new(out) })
}

fn string(s: &str, node: Option<&Node>) -> Cel {
    let plain = || Cel::String(Arc::new(s.to_string()));
    let Some(node) = node else {
        return plain();
    };
    match node.format.as_str() {
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(s)
            .map(|b| Cel::Bytes(Arc::new(b)))
            .unwrap_or_else(|_| plain()),
        "date-time" | "datetime" => chrono::DateTime::parse_from_rfc3339(s)
            .map(Cel::Timestamp)
            .unwrap_or_else(|_| plain()),
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| Cel::Timestamp(t.and_utc().fixed_offset()))
            .unwrap_or_else(plain),
        "duration" => go_duration(s).map(Cel::Duration).unwrap_or_else(plain),
        _ => plain(),
    }
}

/// Go's `time.ParseDuration`: a sequence of decimal numbers with units (`ns`, `us`, `µs`, `ms`, `s`, `m`,
/// `h`), optionally signed, e.g. `1h30m`, `-1.5s`.
fn go_duration(s: &str) -> Option<chrono::Duration> {
    let (negative, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        nanos += number * scale;
    }
    let nanos = if negative { -nanos } else { nanos };
    Some(chrono::Duration::nanoseconds(nanos as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_server() {
        assert_eq!(escape("replicas").as_deref(), Some("replicas"));
        assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
    }

    #[test]
    fn durations_parse_as_go_does() {
        assert_eq!(go_duration("1h30m"), Some(chrono::Duration::minutes(90)));
        assert_eq!(
            go_duration("-1.5s"),
            Some(chrono::Duration::milliseconds(-1500))
        );
        assert_eq!(go_duration("0"), Some(chrono::Duration::zero()));
        assert_eq!(go_duration("5"), None);
        assert_eq!(go_duration("1d"), None);
    }
}
