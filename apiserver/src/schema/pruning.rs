//! Pruning: unknown fields dropped, `null`s of non-nullable fields removed, embedded `metadata` coerced.

use serde_json::{Map, Value};

use super::compile::is_meta_key;
use super::go_format::sorted_keys;
use super::node::{Additional, Node};
use super::verdict::{child, index_path, key_path};

/// Builds unknown-field paths the way the server does (`a.b[0].c`).
#[derive(Default)]
pub(super) struct Tracker {
    pub(super) path: String,
    pub(super) stack: Vec<usize>,
    pub(super) unknown: Vec<String>,
}

impl Tracker {
    pub(super) fn push_key(&mut self, k: &str) {
        self.stack.push(self.path.len());
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(k);
    }

    pub(super) fn push_index(&mut self, i: usize) {
        self.stack.push(self.path.len());
        self.path.push_str(&format!("[{i}]"));
    }

    pub(super) fn pop(&mut self) {
        if let Some(l) = self.stack.pop() {
            self.path.truncate(l);
        }
    }

    pub(super) fn record(&mut self, k: &str) {
        self.push_key(k);
        self.unknown.push(self.path.clone());
        self.pop();
    }
}

pub(super) fn prune_rec(x: &mut Value, s: Option<&Node>, force_embedded: bool, tr: &mut Tracker) {
    if let Some(node) = s
        && node.preserve_unknown_fields
    {
        skip_prune(x, node, force_embedded, tr);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(node) = s else {
                for k in sorted_keys(m) {
                    tr.record(&k);
                }
                m.clear();
                return;
            };
            let embedded = force_embedded || node.embedded_resource;
            for k in sorted_keys(m) {
                if embedded && is_meta_key(&k) {
                    continue;
                }
                if let Some(prop) = node.properties.get(&k) {
                    if let Some(v) = m.get_mut(&k) {
                        tr.push_key(&k);
                        prune_rec(v, Some(prop), false, tr);
                        tr.pop();
                    }
                } else if let Some(ap) = &node.additional_properties {
                    if let Some(v) = m.get_mut(&k) {
                        tr.push_key(&k);
                        prune_rec(v, ap.schema(), false, tr);
                        tr.pop();
                    }
                } else {
                    if !is_meta_key(&k) || !tr.path.is_empty() {
                        tr.record(&k);
                    }
                    m.remove(&k);
                }
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|n| n.items.as_deref());
            for (i, v) in a.iter_mut().enumerate() {
                tr.push_index(i);
                prune_rec(v, items, false, tr);
                tr.pop();
            }
        }
        _ => {}
    }
}

/// Pruning below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are
/// pruned by their schema.
pub(super) fn skip_prune(x: &mut Value, s: &Node, force_embedded: bool, tr: &mut Tracker) {
    match x {
        Value::Object(m) => {
            let embedded = force_embedded || s.embedded_resource;
            for k in sorted_keys(m) {
                if embedded && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    tr.push_key(&k);
                    prune_rec(v, Some(prop), false, tr);
                    tr.pop();
                } else if let Some(ap) = &s.additional_properties {
                    tr.push_key(&k);
                    prune_rec(v, ap.schema(), false, tr);
                    tr.pop();
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    tr.push_index(i);
                    skip_prune(v, items, false, tr);
                    tr.pop();
                }
            }
        }
        _ => {}
    }
}

/// Removes `null`s of non-nullable fields that have no default (the server's
/// `PruneNonNullableNullsWithoutDefaults`); list items are kept.
pub(super) fn prune_nulls(x: &mut Value, s: Option<&Node>, root: bool) {
    match x {
        Value::Object(m) => {
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let schema = s.and_then(|n| {
                    n.properties.get(&k).or_else(|| {
                        n.additional_properties
                            .as_ref()
                            .and_then(Additional::schema)
                    })
                });
                let drop = matches!(m.get(&k), Some(Value::Null))
                    && schema.is_some_and(|sc| !sc.nullable && sc.default.is_none());
                if drop {
                    m.remove(&k);
                } else if let Some(v) = m.get_mut(&k) {
                    prune_nulls(v, schema, false);
                }
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|n| n.items.as_deref());
            for v in a.iter_mut() {
                prune_nulls(v, items, false);
            }
        }
        _ => {}
    }
}

/// `ObjectMeta` fields kept in the `metadata` of embedded resources.
pub(super) const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Coerces the `metadata` of embedded resources to `ObjectMeta` (the server round-trips it).
pub(super) fn coerce(
    x: &mut Value,
    s: Option<&Node>,
    pth: &str,
    root: bool,
    out: &mut Vec<String>,
) {
    let Some(s) = s else { return };
    match x {
        Value::Object(m) => {
            if s.embedded_resource
                && !root
                && let Some(meta) = m.get_mut("metadata")
            {
                coerce_object_meta(meta, &child(pth, "metadata"), out);
            }
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    coerce(v, Some(prop), &child(pth, &k), false, out);
                } else if let Some(ap) = &s.additional_properties {
                    coerce(v, ap.schema(), &key_path(pth, &k), false, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter_mut().enumerate() {
                coerce(v, s.items.as_deref(), &index_path(pth, i), false, out);
            }
        }
        _ => {}
    }
}

pub(super) fn coerce_object_meta(meta: &mut Value, pth: &str, out: &mut Vec<String>) {
    match meta {
        Value::Null => *meta = Value::Object(Map::new()),
        Value::Object(m) => {
            if !object_meta_decodes(m) {
                // The server fails the request here; validation reports the problem.
                return;
            }
            for k in sorted_keys(m) {
                if !OBJECT_META_FIELDS.contains(&k.as_str()) {
                    out.push(format!("{pth}.{k}"));
                    m.remove(&k);
                    continue;
                }
                let empty = match m.get(&k) {
                    Some(Value::Null) => true,
                    Some(Value::String(s)) => s.is_empty(),
                    Some(Value::Number(n)) => k == "generation" && n.as_f64() == Some(0.0),
                    Some(Value::Array(a)) => a.is_empty(),
                    Some(Value::Object(o)) => o.is_empty(),
                    _ => false,
                };
                if empty {
                    m.remove(&k);
                }
            }
        }
        _ => {}
    }
}

pub(super) fn object_meta_decodes(m: &Map<String, Value>) -> bool {
    object_meta_decode_error(m).is_none()
}

/// The error of decoding `metadata` into `ObjectMeta`, in Go's words (first failing field).
pub(super) fn object_meta_decode_error(m: &Map<String, Value>) -> Option<String> {
    let field_err = |value: &str, field: &str, ty: &str| {
        Some(format!(
            "json: cannot unmarshal {value} into Go struct field ObjectMeta.{field} of type {ty}"
        ))
    };
    for k in sorted_keys(m) {
        let Some(v) = m.get(&k) else { continue };
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion"
                if !v.is_string() =>
            {
                return field_err(go_json_type(v), &k, "string");
            }
            "generation" | "deletionGracePeriodSeconds" => match v {
                Value::Number(n) => {
                    if n.as_i64().is_none() {
                        return field_err(&format!("number {n}"), &k, "int64");
                    }
                }
                _ => return field_err(go_json_type(v), &k, "int64"),
            },
            "labels" | "annotations" => match v {
                Value::Object(o) => {
                    for item in o.values() {
                        if !item.is_string() && !item.is_null() {
                            return field_err(go_json_type(item), &k, "string");
                        }
                    }
                }
                _ => return field_err(go_json_type(v), &k, "map[string]string"),
            },
            "finalizers" => match v {
                Value::Array(a) => {
                    for item in a {
                        if !item.is_string() && !item.is_null() {
                            return field_err(go_json_type(item), &k, "string");
                        }
                    }
                }
                _ => return field_err(go_json_type(v), &k, "[]string"),
            },
            "ownerReferences" if !v.is_array() => {
                return field_err(go_json_type(v), &k, "[]v1.OwnerReference");
            }
            "managedFields" if !v.is_array() => {
                return field_err(go_json_type(v), &k, "[]v1.ManagedFieldsEntry");
            }
            "creationTimestamp" | "deletionTimestamp" if !v.is_string() => {
                return Some(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    go_json_type(v)
                ));
            }
            _ => {}
        }
    }
    None
}

pub(super) fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
