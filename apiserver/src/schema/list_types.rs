//! List types (`x-kubernetes-list-type: set | map`): duplicate items.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::compile::is_meta_key;
use super::errors::FieldError;
use super::go_format::sorted_keys;
use super::go_format::{Num, num};
use super::go_format::{go_float_v, go_json};
use super::node::{Additional, Node};
use super::verdict::{child, index_path, key_path};

pub(super) fn list_validate_map(
    m: &Map<String, Value>,
    s: &Node,
    pth: &str,
    root: bool,
    out: &mut Vec<FieldError>,
) {
    let keys = sorted_keys(m);
    if let Some(ap) = s
        .additional_properties
        .as_ref()
        .and_then(Additional::schema)
    {
        for k in keys.iter().filter(|k| !(root && is_meta_key(k))) {
            if let Some(v) = m.get(k) {
                list_validate(v, ap, &key_path(pth, k), out);
            }
        }
    }
    for k in keys.iter().filter(|k| !(root && is_meta_key(k))) {
        if let (Some(sub), Some(v)) = (s.properties.get(k), m.get(k)) {
            list_validate(v, sub, &child(pth, k), out);
        }
    }
}

pub(super) fn list_validate(x: &Value, s: &Node, pth: &str, out: &mut Vec<FieldError>) {
    match x {
        Value::Array(a) => {
            match s.list_type.as_deref() {
                Some("set") => {
                    for i in non_unique_indices(a.iter().map(Some)) {
                        out.push(FieldError::duplicate(index_path(pth, i), a[i].clone()));
                    }
                }
                Some("map") => validate_list_map(s, a, pth, out),
                _ => {}
            }
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter().enumerate() {
                    list_validate(v, items, &index_path(pth, i), out);
                }
            }
        }
        Value::Object(m) => list_validate_map(m, s, pth, false, out),
        _ => {}
    }
}

/// Indexes of the second occurrence of each repeated value (`None` is an unspecified key, equal
/// only to other unspecified keys). Compound values compare by their JSON encoding, scalars by
/// Go equality (so `1` and `1.0` differ).
pub(super) fn non_unique_indices<'a>(
    values: impl Iterator<Item = Option<&'a Value>>,
) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, v) in values.enumerate() {
        let key = match v {
            None => "u".to_string(),
            Some(v @ (Value::Object(_) | Value::Array(_))) => format!("c{}", go_json(v)),
            Some(Value::Null) => "n".to_string(),
            Some(Value::Bool(b)) => format!("b{b}"),
            Some(Value::String(s)) => format!("s{s}"),
            Some(Value::Number(n)) => match num(n) {
                Num::Int(x) => format!("i{x}"),
                Num::Float(f) => format!("f{}", go_float_v(if f == 0.0 { 0.0 } else { f })),
            },
        };
        let count = seen.entry(key).or_insert(0);
        *count += 1;
        if *count == 2 {
            out.push(i);
        }
    }
    out
}

pub(super) fn validate_list_map(s: &Node, a: &[Value], pth: &str, out: &mut Vec<FieldError>) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_object() && !x.is_null() {
            out.push(FieldError::invalid(
                index_path(pth, i),
                x.clone(),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if a.len() <= 1 {
        return;
    }
    if let [key_field] = s.list_map_keys.as_slice() {
        let keys: Vec<Option<&Value>> = a
            .iter()
            .map(|x| x.as_object().and_then(|o| o.get(key_field)))
            .collect();
        for i in non_unique_indices(keys.iter().copied()) {
            let mut dup = Map::new();
            if let Some(k) = keys[i] {
                dup.insert(key_field.clone(), k.clone());
            }
            out.push(FieldError::duplicate(
                index_path(pth, i),
                Value::Object(dup),
            ));
        }
        return;
    }
    let keys: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut key = Map::new();
            if let Some(o) = x.as_object() {
                for f in &s.list_map_keys {
                    if let Some(v) = o.get(f) {
                        key.insert(f.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    for i in non_unique_indices(keys.iter().map(Some)) {
        out.push(FieldError::duplicate(index_path(pth, i), keys[i].clone()));
    }
}
