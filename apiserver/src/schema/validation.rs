//! OpenAPI validation: kube-openapi's validator results, the walk over a value, and the field errors
//! they become (apimachinery's field paths).

use std::collections::HashSet;

use serde_json::Value;

use super::compile::{Node, STRING_FORMATS, normalize_format};
use super::errors::{FieldError, FieldErrorKind};
use super::formats::validates_format;
use super::go_format::{go_json, go_quote};
use super::keywords::{
    enum_validator, number_validator, object_validator, props_validator, slice_validator,
    string_validator,
};

pub(super) fn child(p: &str, k: &str) -> String {
    if p.is_empty() {
        k.to_string()
    } else {
        format!("{p}.{k}")
    }
}

pub(super) fn key_path(p: &str, k: &str) -> String {
    format!("{p}[{k}]")
}

pub(super) fn index_path(p: &str, i: usize) -> String {
    format!("{p}[{i}]")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Code {
    InvalidType,
    Required,
    TooLong,
    TooShort,
    Pattern,
    Enum,
    MultipleOf,
    Max,
    Min,
    Unique,
    MaxItems,
    MinItems,
    TooFewProperties,
    TooManyProperties,
    Unallowed,
    MultipleOfMustBePositive,
}

#[derive(Debug, Clone)]
pub(super) struct VErr {
    pub(super) code: Code,
    pub(super) name: String,
    pub(super) message: String,
    /// The error's value; `None` is Go's nil.
    pub(super) value: Option<Value>,
    /// The limit for `maxLength`, `maxItems`, `maxProperties`.
    pub(super) valid: i64,
    /// The allowed values of an `enum`.
    pub(super) values: Vec<Value>,
}

#[derive(Debug, Clone)]
pub(super) enum OErr {
    /// A validation error about a named value.
    Validation(VErr),
    /// An `allOf`/`anyOf`/`oneOf`/`not` error (reported without a field path).
    Composite(String),
}

impl OErr {
    pub(super) fn message(&self) -> &str {
        match self {
            OErr::Validation(v) => &v.message,
            OErr::Composite(m) => m,
        }
    }
}

pub(super) fn verr(
    code: Code,
    name: &str,
    message: String,
    value: Option<Value>,
    valid: i64,
) -> OErr {
    OErr::Validation(VErr {
        code,
        name: name.to_string(),
        message,
        value,
        valid,
        values: Vec::new(),
    })
}

/// A validation result: errors (deduplicated by message) and the number of checks run, which
/// decides whose errors are reported when no `anyOf`/`oneOf` branch matches.
#[derive(Default)]
pub(super) struct VResult {
    pub(super) errors: Vec<OErr>,
    pub(super) seen: HashSet<String>,
    pub(super) mc: usize,
}

impl VResult {
    pub(super) fn add(&mut self, e: OErr) {
        if self.seen.insert(e.message().to_string()) {
            self.errors.push(e);
        }
    }

    pub(super) fn merge(&mut self, other: VResult) {
        for e in other.errors {
            self.add(e);
        }
        self.mc += other.mc;
    }

    pub(super) fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    pub(super) fn single(e: OErr) -> VResult {
        let mut r = VResult::default();
        r.add(e);
        r
    }
}

/// A JSON number as the server decodes it: integers that fit in int64 stay integers, everything
/// else is a float64.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

pub(super) fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

/// Go's `int64(f)` (amd64: out-of-range values give the minimum).
pub(super) fn go_f64_to_i64(f: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// go-openapi's `swag.IsFloat64AJSONInteger`.
pub(super) fn is_float64_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f.trunc() == f {
        return true;
    }
    if f < 0.0 {
        // Go's float64(uint64(f)) is huge for negative f: the relative error is about 1.
        return false;
    }
    let g = f.trunc();
    let diff = (f - g).abs();
    if g == 0.0 {
        return false;
    }
    diff / (f.abs() + g.abs()) < 1e-9
}

pub(super) fn type_info(data: &Value) -> (&'static str, &'static str) {
    match data {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match num(n) {
            Num::Int(_) => ("integer", "int64"),
            Num::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

pub(super) fn invalid_type(path: &str, type_name: &str, value: &str) -> OErr {
    verr(
        Code::InvalidType,
        path,
        format!(
            "{path} in body must be of type {type_name}: {}",
            go_quote(value)
        ),
        Some(Value::String(value.to_string())),
        0,
    )
}

pub(super) fn validate_schema(node: &Node, path: &str, data: &Value, root: bool) -> VResult {
    let mut r = VResult::default();
    if data.is_null() {
        r.merge(type_validator(node, path, data));
        r.merge(enum_validator(node, path, data));
        return r;
    }
    if !node.types.is_empty() || !node.format.is_empty() {
        r.merge(type_validator(node, path, data));
        r.mc += 1;
    }
    r.merge(props_validator(node, path, data));
    r.mc += 1;
    if let Value::String(s) = data {
        r.merge(string_validator(node, path, s));
        r.mc += 1;
        if !node.format.is_empty()
            && STRING_FORMATS.contains(&normalize_format(&node.format).as_str())
        {
            if !validates_format(&node.format, s) {
                r.add(invalid_type(path, &node.format, s));
            }
            r.mc += 1;
        }
    }
    if let Value::Number(n) = data {
        r.merge(number_validator(node, path, data, num(n)));
        r.mc += 1;
    }
    if let Value::Array(a) = data {
        r.merge(slice_validator(node, path, a));
        r.mc += 1;
    }
    r.merge(enum_validator(node, path, data));
    r.mc += 1;
    if let Value::Object(m) = data {
        r.merge(object_validator(node, path, m, root));
        r.mc += 1;
    }
    r.mc += 1;
    r
}

pub(super) fn type_validator(node: &Node, path: &str, data: &Value) -> VResult {
    let ok = VResult {
        mc: 1,
        ..VResult::default()
    };
    let has = |t: &str| node.types.iter().any(|x| x == t);
    if data.is_null() {
        if !node.types.is_empty() && !has("null") && !node.nullable {
            return VResult::single(invalid_type(path, &node.types.join(","), "null"));
        }
        return ok;
    }
    let (sch, fmt) = type_info(data);
    let float_int = match data {
        Value::Number(n) => match num(n) {
            Num::Float(f) => is_float64_json_integer(f) && has("integer"),
            Num::Int(_) => false,
        },
        _ => false,
    };
    let int_float = sch == "integer" && has("number");
    let string_or_slice = data.is_string() || data.is_array();
    let has_format = !node.format.is_empty();
    let type_or_format_matches = has(sch) || fmt == node.format || float_int || int_float;
    if has_format && !string_or_slice && !type_or_format_matches {
        return VResult::single(invalid_type(path, &node.format, fmt));
    }
    let numeric = has("number") || has("integer");
    if has_format && string_or_slice && !numeric {
        return ok;
    }
    if !(has(sch) || float_int || int_float) {
        return VResult::single(invalid_type(path, &node.types.join(","), sch));
    }
    ok
}

pub(super) fn to_field_error(e: OErr) -> FieldError {
    let v = match e {
        OErr::Composite(message) => {
            return FieldError {
                kind: FieldErrorKind::Invalid,
                field: "<nil>".to_string(),
                detail: message,
                value: Some(Value::String(String::new())),
            };
        }
        OErr::Validation(v) => v,
    };
    let field = if v.name.is_empty() || v.name == "." {
        "<nil>".to_string()
    } else {
        v.name.strip_prefix('.').unwrap_or(&v.name).to_string()
    };
    let or_empty = |value: Option<Value>| Some(value.unwrap_or(Value::String(String::new())));
    match v.code {
        Code::Required => FieldError::required(field, ""),
        Code::Enum => {
            let supported: Vec<String> = v
                .values
                .iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => go_json(other),
                })
                .collect();
            let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
            FieldError::not_supported(field, v.value.unwrap_or(Value::Null), &supported)
        }
        Code::TooLong => {
            let detail = match v.valid {
                1 => "may not be more than 1 byte".to_string(),
                n if n >= 0 => format!("may not be more than {n} bytes"),
                _ => "value is too long".to_string(),
            };
            FieldError {
                kind: FieldErrorKind::TooLong,
                field,
                detail,
                value: None,
            }
        }
        Code::MaxItems | Code::TooManyProperties => {
            let actual = v.value.as_ref().and_then(Value::as_i64).unwrap_or(-1);
            let detail = match v.valid {
                1 => "must have at most 1 item".to_string(),
                n if n >= 0 => format!("must have at most {n} items"),
                _ => "has too many items".to_string(),
            };
            let value = (actual >= 0).then(|| Value::from(actual));
            FieldError {
                kind: FieldErrorKind::TooMany,
                field,
                detail,
                value,
            }
        }
        Code::InvalidType => FieldError {
            kind: FieldErrorKind::TypeInvalid,
            field,
            detail: v.message,
            value: or_empty(v.value),
        },
        Code::TooShort
        | Code::Pattern
        | Code::MultipleOf
        | Code::Max
        | Code::Min
        | Code::Unique
        | Code::MinItems
        | Code::TooFewProperties
        | Code::Unallowed
        | Code::MultipleOfMustBePositive => FieldError {
            kind: FieldErrorKind::Invalid,
            field,
            detail: v.message,
            value: or_empty(v.value),
        },
    }
}
