//! OpenAPI validation: the walk over a value (kube-openapi's `SchemaValidator`), the validators of the
//! OpenAPI keywords it calls (properties, strings, numbers, arrays, enums and objects), which walk the
//! values inside back through it, and the field errors their results become (apimachinery's field paths).

use serde_json::{Map, Value};

use super::compile::is_meta_key;
use super::errors::{FieldError, FieldErrorKind};
use super::formats::{STRING_FORMATS, normalize_format, validates_format};
use super::go_format::{Num, go_float_v, go_json, go_quote, num, sorted_keys};
use super::node::{Additional, Node};
use super::verdict::{
    Code, OErr, VErr, VResult, child, go_f64_to_i64, index_path, invalid_type,
    is_float64_json_integer, type_info, verr,
};

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
