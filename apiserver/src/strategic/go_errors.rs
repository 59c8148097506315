//! apimachinery's error messages, with Go's formatting of the values in them.

use serde_json::{Map, Value};

use super::error::PatchError;
use super::go_types::go_type_name;

pub(super) fn bad_arg_type(expected: &'static str, actual: &Value) -> PatchError {
    PatchError::BadArgType {
        expected,
        actual: go_type_name(actual),
    }
}

pub(super) fn no_merge_key(map: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::NoMergeKey {
        map: go_fmt_map(map),
        key: key.to_string(),
    }
}

/// Formats a value like Go's `%v` of the decoded JSON.
pub(super) fn go_fmt(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => go_fmt_list(items),
        Value::Object(map) => go_fmt_map(map),
    }
}

pub(super) fn go_fmt_list(items: &[Value]) -> String {
    let parts: Vec<String> = items.iter().map(go_fmt).collect();
    format!("[{}]", parts.join(" "))
}

pub(super) fn go_fmt_map(map: &Map<String, Value>) -> String {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{k}:{}", go_fmt(v)))
        .collect();
    format!("map[{}]", parts.join(" "))
}
