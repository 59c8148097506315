//! Schema compilation: the tree of nodes parsed from a CRD version's `openAPIV3Schema`.

use regex::Regex;
use serde_json::{Map, Value};

use super::errors::SchemaError;
use super::formats::{STRING_FORMATS, normalize_format};
use super::go_format::go_quote;
use super::go_regex::translate_go_regex;
use super::node::{Additional, Node, Pattern};
use super::rules::parse_rules;

pub(super) const KNOWN_TYPES: &[&str] =
    &["object", "array", "string", "integer", "number", "boolean"];

pub(super) fn schema_err(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError::Invalid {
        path: path.to_string(),
        message: message.into(),
    }
}

pub(super) fn get_bool(m: &Map<String, Value>, key: &str, path: &str) -> Result<bool, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be a boolean")),
    }
}

pub(super) fn get_str(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<String>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be a string")),
    }
}

pub(super) fn get_f64(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<f64>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() => Ok(Some(f)),
            _ => Err(schema_err(
                &format!("{path}.{key}"),
                "must be a finite number",
            )),
        },
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be a number")),
    }
}

pub(super) fn get_i64(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<i64>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err(schema_err(&format!("{path}.{key}"), "must be an integer")),
        },
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be an integer")),
    }
}

pub(super) fn get_str_list(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Vec<String>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(schema_err(
                    &format!("{path}.{key}"),
                    "must be a list of strings",
                )),
            })
            .collect(),
        Some(_) => Err(schema_err(
            &format!("{path}.{key}"),
            "must be a list of strings",
        )),
    }
}

pub(super) fn get_schema_list(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Vec<Node>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| parse_node(v, &format!("{path}.{key}[{i}]")))
            .collect(),
        Some(_) => Err(schema_err(
            &format!("{path}.{key}"),
            "must be a list of schemas",
        )),
    }
}

pub(super) fn parse_node(v: &Value, path: &str) -> Result<Node, SchemaError> {
    let Value::Object(m) = v else {
        return Err(schema_err(path, "must be a schema object"));
    };
    for key in [
        "id",
        "$schema",
        "additionalItems",
        "patternProperties",
        "definitions",
        "dependencies",
        "$ref",
    ] {
        let present = match m.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Object(o)) => !o.is_empty() || key == "additionalItems",
            Some(_) => true,
        };
        if present {
            return Err(schema_err(
                &format!("{path}.{key}"),
                format!("Forbidden: {key} is not supported"),
            ));
        }
    }
    let mut n = Node::default();
    if let Some(t) = get_str(m, "type", path)?
        && !t.is_empty()
    {
        if t == "null" {
            return Err(schema_err(
                &format!("{path}.type"),
                "Forbidden: type cannot be set to null, use nullable as an alternative",
            ));
        }
        if !KNOWN_TYPES.contains(&t.as_str()) {
            return Err(schema_err(
                &format!("{path}.type"),
                format!(
                    "Unsupported value: {}: supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                    go_quote(&t)
                ),
            ));
        }
        n.types = vec![t];
    }
    if get_bool(m, "x-kubernetes-int-or-string", path)? {
        n.types = vec!["integer".to_string(), "string".to_string()];
    }
    n.nullable = get_bool(m, "nullable", path)?;
    n.maximum = get_f64(m, "maximum", path)?;
    n.exclusive_maximum = get_bool(m, "exclusiveMaximum", path)?;
    n.minimum = get_f64(m, "minimum", path)?;
    n.exclusive_minimum = get_bool(m, "exclusiveMinimum", path)?;
    n.max_length = get_i64(m, "maxLength", path)?;
    n.min_length = get_i64(m, "minLength", path)?;
    if let Some(p) = get_str(m, "pattern", path)? {
        let regex =
            Regex::new(&translate_go_regex(&p)).map_err(|e| SchemaError::InvalidPattern {
                path: path.to_string(),
                pattern: p.clone(),
                message: regex_error_message(&e, &p),
            })?;
        n.pattern = Some(Pattern { source: p, regex });
    }
    n.max_items = get_i64(m, "maxItems", path)?;
    n.min_items = get_i64(m, "minItems", path)?;
    n.unique_items = get_bool(m, "uniqueItems", path)?;
    n.multiple_of = get_f64(m, "multipleOf", path)?;
    n.max_properties = get_i64(m, "maxProperties", path)?;
    n.min_properties = get_i64(m, "minProperties", path)?;
    n.required = get_str_list(m, "required", path)?;
    match m.get("enum") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => n.enumeration = a.clone(),
        Some(_) => return Err(schema_err(&format!("{path}.enum"), "must be a list")),
    }
    n.default = m.get("default").filter(|d| !d.is_null()).cloned();
    match m.get("properties") {
        None | Some(Value::Null) => {}
        Some(Value::Object(props)) => {
            for (k, v) in props {
                n.properties.insert(
                    k.clone(),
                    parse_node(v, &format!("{path}.properties[{k}]"))?,
                );
            }
        }
        Some(_) => {
            return Err(schema_err(
                &format!("{path}.properties"),
                "must be an object",
            ));
        }
    }
    n.additional_properties = match m.get("additionalProperties") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(Additional::Bool(*b)),
        Some(v @ Value::Object(_)) => Some(Additional::Schema(Box::new(parse_node(
            v,
            &format!("{path}.additionalProperties"),
        )?))),
        Some(_) => {
            return Err(schema_err(
                &format!("{path}.additionalProperties"),
                "must be a boolean or a schema",
            ));
        }
    };
    n.items = match m.get("items") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(Box::new(parse_node(v, &format!("{path}.items"))?)),
        Some(Value::Array(_)) => {
            return Err(schema_err(
                &format!("{path}.items"),
                "Forbidden: items must be a schema object and not an array",
            ));
        }
        Some(_) => return Err(schema_err(&format!("{path}.items"), "must be a schema")),
    };
    n.all_of = get_schema_list(m, "allOf", path)?;
    n.any_of = get_schema_list(m, "anyOf", path)?;
    n.one_of = get_schema_list(m, "oneOf", path)?;
    n.not = match m.get("not") {
        None | Some(Value::Null) => None,
        Some(v) => Some(Box::new(parse_node(v, &format!("{path}.not"))?)),
    };
    n.preserve_unknown_fields = get_bool(m, "x-kubernetes-preserve-unknown-fields", path)?;
    n.embedded_resource = get_bool(m, "x-kubernetes-embedded-resource", path)?;
    n.list_type = get_str(m, "x-kubernetes-list-type", path)?;
    if let Some(t) = &n.list_type
        && !["atomic", "set", "map"].contains(&t.as_str())
    {
        return Err(schema_err(
            &format!("{path}.x-kubernetes-list-type"),
            format!(
                "Unsupported value: {}: supported values: \"atomic\", \"set\", \"map\"",
                go_quote(t)
            ),
        ));
    }
    n.list_map_keys = get_str_list(m, "x-kubernetes-list-map-keys", path)?;
    n.map_type = get_str(m, "x-kubernetes-map-type", path)?;
    if let Some(t) = &n.map_type
        && !["atomic", "granular"].contains(&t.as_str())
    {
        return Err(schema_err(
            &format!("{path}.x-kubernetes-map-type"),
            format!(
                "Unsupported value: {}: supported values: \"atomic\", \"granular\"",
                go_quote(t)
            ),
        ));
    }
    // The server drops formats it does not support for the node's type.
    let format = get_str(m, "format", path)?.unwrap_or_default();
    let single_type = if n.types.len() == 1 {
        n.types[0].as_str()
    } else {
        ""
    };
    n.format = match single_type {
        "" | "string" if STRING_FORMATS.contains(&normalize_format(&format).as_str()) => format,
        "integer" if format == "int32" || format == "int64" => format,
        "number" if format == "float" || format == "double" => format,
        _ => String::new(),
    };
    let resource = path == "openAPIV3Schema" || n.embedded_resource;
    n.rules = parse_rules(m, path, &n, resource)?;
    Ok(n)
}

/// A compact, Go-like message for a pattern the `regex` crate rejects.
pub(super) fn regex_error_message(e: &regex::Error, pattern: &str) -> String {
    let text = e.to_string();
    let reason = text
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .or_else(|| text.lines().next())
        .unwrap_or("invalid pattern");
    format!("error parsing regexp: {reason}: `{pattern}`")
}

pub(super) fn is_meta_key(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}
