//! What validating a value against a schema node finds: errors with their codes and paths, the result of
//! a (sub)validation, and the paths and Go number checks the validators share.

use std::collections::HashSet;

use serde_json::Value;

use super::go_format::{Num, go_quote, num};

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
