//! The validators of the OpenAPI keywords: properties, strings, numbers, arrays, enums and objects.

use serde_json::{Map, Value};

use super::compile::{Additional, Node, is_meta_key, sorted_keys};
use super::go_format::{go_float_v, go_json, go_quote};
use super::validation::{
    Code, Num, OErr, VErr, VResult, child, go_f64_to_i64, index_path, is_float64_json_integer, num,
    validate_schema, verr,
};

pub(super) fn props_validator(node: &Node, path: &str, data: &Value) -> VResult {
    let mut main = VResult::default();
    let quoted = go_quote(path);
    if !node.any_of.is_empty() {
        let mut best: Option<VResult> = None;
        let mut first_success: Option<VResult> = None;
        for branch in &node.any_of {
            let r = validate_schema(branch, path, data, false);
            if r.is_valid() {
                best = None;
                first_success = Some(r);
                break;
            }
            if best.as_ref().is_none_or(|b| r.mc > b.mc) {
                best = Some(r);
            }
        }
        if first_success.is_none() {
            main.add(OErr::Composite(format!(
                "{quoted} must validate at least one schema (anyOf)"
            )));
        }
        if let Some(b) = best {
            main.merge(b);
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    if !node.one_of.is_empty() {
        let mut best: Option<VResult> = None;
        let mut first_success: Option<VResult> = None;
        let mut validated = 0usize;
        for branch in &node.one_of {
            let r = validate_schema(branch, path, data, false);
            if r.is_valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.mc > b.mc) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let extra = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(OErr::Composite(format!(
                "{quoted} must validate one and only one schema (oneOf). {extra}"
            )));
            if let Some(b) = best {
                main.merge(b);
            }
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    if !node.all_of.is_empty() {
        let mut validated = 0usize;
        for branch in &node.all_of {
            let r = validate_schema(branch, path, data, false);
            if r.is_valid() {
                validated += 1;
            }
            main.merge(r);
        }
        if validated != node.all_of.len() {
            let extra = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(OErr::Composite(format!(
                "{quoted} must validate all the schemas (allOf){extra}"
            )));
        }
    }
    if let Some(not) = &node.not
        && validate_schema(not, path, data, false).is_valid()
    {
        main.add(OErr::Composite(format!(
            "{quoted} must not validate the schema (not)"
        )));
    }
    main.mc += 1;
    main
}

pub(super) fn string_validator(node: &Node, path: &str, s: &str) -> VResult {
    let len = s.chars().count() as i64;
    let value = Some(Value::String(s.to_string()));
    if let Some(max) = node.max_length
        && len > max
    {
        return VResult::single(verr(
            Code::TooLong,
            path,
            format!("{path} in body should be at most {max} chars long"),
            value,
            max,
        ));
    }
    if let Some(min) = node.min_length
        && len < min
    {
        return VResult::single(verr(
            Code::TooShort,
            path,
            format!("{path} in body should be at least {min} chars long"),
            value,
            min,
        ));
    }
    if let Some(p) = &node.pattern
        && !p.regex.is_match(s)
    {
        return VResult::single(verr(
            Code::Pattern,
            path,
            format!("{path} in body should match '{}'", p.source),
            value,
            0,
        ));
    }
    VResult::default()
}

pub(super) fn number_validator(node: &Node, path: &str, data: &Value, n: Num) -> VResult {
    let mut res = VResult::default();
    let mut multiple = VResult::default();
    let mut minimum = VResult::default();
    let mut maximum = VResult::default();
    if let Some(factor) = node.multiple_of {
        match n {
            Num::Int(v) => {
                let f = go_f64_to_i64(factor);
                if f <= 0 {
                    multiple.add(verr(
                        Code::MultipleOfMustBePositive,
                        path,
                        format!("factor MultipleOf declared for {path} must be positive: {f}"),
                        Some(Value::from(f)),
                        0,
                    ));
                } else if v.wrapping_div(f).wrapping_mul(f) != v {
                    multiple.add(verr(
                        Code::MultipleOf,
                        path,
                        format!("{path} in body should be a multiple of {f}"),
                        Some(data.clone()),
                        0,
                    ));
                }
            }
            Num::Float(v) => {
                if factor <= 0.0 {
                    multiple.add(verr(
                        Code::MultipleOfMustBePositive,
                        path,
                        format!(
                            "factor MultipleOf declared for {path} must be positive: {}",
                            go_float_v(factor)
                        ),
                        serde_json::Number::from_f64(factor).map(Value::Number),
                        0,
                    ));
                } else {
                    let mult = if factor < 1.0 {
                        1.0 / factor * v
                    } else {
                        v / factor
                    };
                    if !is_float64_json_integer(mult) {
                        multiple.add(verr(
                            Code::MultipleOf,
                            path,
                            format!(
                                "{path} in body should be a multiple of {}",
                                go_float_v(factor)
                            ),
                            Some(data.clone()),
                            0,
                        ));
                    }
                }
            }
        }
    }
    if let Some(max) = node.maximum {
        let excl = node.exclusive_maximum;
        let word = if excl {
            "less than"
        } else {
            "less than or equal to"
        };
        let failed = match n {
            Num::Int(v) => {
                let m = go_f64_to_i64(max);
                ((!excl && v > m) || (excl && v >= m)).then(|| m.to_string())
            }
            Num::Float(v) => ((!excl && v > max) || (excl && v >= max)).then(|| go_float_v(max)),
        };
        if let Some(limit) = failed {
            maximum.add(verr(
                Code::Max,
                path,
                format!("{path} in body should be {word} {limit}"),
                Some(data.clone()),
                0,
            ));
        }
    }
    if let Some(min) = node.minimum {
        let excl = node.exclusive_minimum;
        let word = if excl {
            "greater than"
        } else {
            "greater than or equal to"
        };
        let failed = match n {
            Num::Int(v) => {
                let m = go_f64_to_i64(min);
                ((!excl && v < m) || (excl && v <= m)).then(|| m.to_string())
            }
            Num::Float(v) => ((!excl && v < min) || (excl && v <= min)).then(|| go_float_v(min)),
        };
        if let Some(limit) = failed {
            minimum.add(verr(
                Code::Min,
                path,
                format!("{path} in body should be {word} {limit}"),
                Some(data.clone()),
                0,
            ));
        }
    }
    res.merge(multiple);
    res.merge(minimum);
    res.merge(maximum);
    res.mc += 1;
    res
}

pub(super) fn slice_validator(node: &Node, path: &str, a: &[Value]) -> VResult {
    let mut r = VResult::default();
    if let Some(items) = node.items.as_deref() {
        for (i, v) in a.iter().enumerate() {
            r.merge(validate_schema(items, &index_path(path, i), v, false));
        }
    }
    let size = a.len() as i64;
    if let Some(min) = node.min_items
        && size < min
    {
        r.add(verr(
            Code::MinItems,
            path,
            format!("{path} in body should have at least {min} items"),
            Some(Value::from(size)),
            min,
        ));
    }
    if let Some(max) = node.max_items
        && size > max
    {
        r.add(verr(
            Code::MaxItems,
            path,
            format!("{path} in body should have at most {max} items"),
            Some(Value::from(size)),
            max,
        ));
    }
    if node.unique_items {
        let dup = a
            .iter()
            .enumerate()
            .any(|(i, v)| a[..i].iter().any(|u| go_deep_equal(v, u)));
        if dup {
            r.add(verr(
                Code::Unique,
                path,
                format!("{path} in body shouldn't contain duplicates"),
                None,
                0,
            ));
        }
    }
    r.mc += 1;
    r
}

pub(super) fn enum_validator(node: &Node, path: &str, data: &Value) -> VResult {
    if node.enumeration.is_empty() || node.enumeration.iter().any(|e| go_enum_match(data, e)) {
        return VResult::default();
    }
    VResult::single(OErr::Validation(VErr {
        code: Code::Enum,
        name: path.to_string(),
        message: format!(
            "{path} in body should be one of {}",
            go_json(&Value::Array(node.enumeration.clone()))
        ),
        value: Some(data.clone()),
        valid: 0,
        values: node.enumeration.clone(),
    }))
}

pub(super) fn object_validator(
    node: &Node,
    path: &str,
    m: &Map<String, Value>,
    root: bool,
) -> VResult {
    let mut r = VResult::default();
    let size = m.len() as i64;
    if let Some(min) = node.min_properties
        && size < min
    {
        r.add(verr(
            Code::TooFewProperties,
            path,
            format!("{path} in body should have at least {min} properties"),
            Some(Value::from(size)),
            min,
        ));
    }
    if let Some(max) = node.max_properties
        && size > max
    {
        r.add(verr(
            Code::TooManyProperties,
            path,
            format!("{path} in body should have at most {max} properties"),
            Some(Value::from(size)),
            max,
        ));
    }
    let keys = sorted_keys(m);
    let skip = |k: &str| root && is_meta_key(k);
    match &node.additional_properties {
        Some(Additional::Bool(false)) => {
            for k in keys
                .iter()
                .filter(|k| !skip(k) && !node.properties.contains_key(*k))
            {
                r.add(verr(
                    Code::Unallowed,
                    path,
                    format!("{path}.{k} in body is a forbidden property"),
                    Some(Value::String(k.clone())),
                    0,
                ));
            }
        }
        Some(Additional::Schema(ap)) => {
            for k in keys
                .iter()
                .filter(|k| !skip(k) && !node.properties.contains_key(*k))
            {
                if let Some(v) = m.get(k) {
                    r.merge(validate_schema(ap, &format!("{path}.{k}"), v, false));
                }
            }
        }
        _ => {}
    }
    for (name, prop) in &node.properties {
        if skip(name) {
            continue;
        }
        if let Some(v) = m.get(name) {
            r.merge(validate_schema(prop, &child(path, name), v, false));
        }
    }
    for k in &node.required {
        if !skip(k) && !m.contains_key(k) {
            r.add(verr(
                Code::Required,
                &format!("{path}.{k}"),
                format!("{path}.{k} in body is required"),
                None,
                0,
            ));
        }
    }
    r
}

/// Whether `data` matches an `enum` value, with Go's reflect conversion semantics.
pub(super) fn go_enum_match(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Number(a), Value::Number(b)) => match (num(a), num(b)) {
            (Num::Int(x), Num::Int(y)) => x == y,
            (Num::Int(x), Num::Float(y)) => (x as f64) == y,
            (Num::Float(x), Num::Int(y)) => go_f64_to_i64(x) == y,
            (Num::Float(x), Num::Float(y)) => x == y,
        },
        (Value::Number(a), Value::String(s)) => match num(a) {
            Num::Int(x) => {
                let c = u32::try_from(x)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                s.chars().eq(std::iter::once(c))
            }
            Num::Float(_) => false,
        },
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            go_deep_equal(data, e)
        }
        _ => false,
    }
}

/// Go's `reflect.DeepEqual` on decoded JSON (int64 and float64 never equal).
pub(super) fn go_deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match (num(x), num(y)) {
            (Num::Int(p), Num::Int(q)) => p == q,
            (Num::Float(p), Num::Float(q)) => p == q,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| go_deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| go_deep_equal(v, w)))
        }
        _ => false,
    }
}
