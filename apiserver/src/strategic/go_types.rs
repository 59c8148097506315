//! The Go types of JSON values as apimachinery's strategic merge names and compares them.

use serde_json::Value;

/// The kind of JSON value, distinguishing integers from floats like Go's decoded types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Map,
    List,
}

pub(super) fn go_type(value: &Value) -> Kind {
    match value {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Int,
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::List,
        Value::Object(_) => Kind::Map,
    }
}

pub(super) fn go_type_name(value: &Value) -> &'static str {
    match go_type(value) {
        Kind::Null => "<nil>",
        Kind::Bool => "bool",
        Kind::Int => "int64",
        Kind::Float => "float64",
        Kind::String => "string",
        Kind::List => "[]interface {}",
        Kind::Map => "map[string]interface {}",
    }
}

pub(super) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
