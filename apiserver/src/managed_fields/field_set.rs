//! Field sets in the `FieldsV1` encoding, and the path elements they are keyed by.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::schema::ListType;

/// A set of field paths, as a tree keyed by encoded path elements (`f:x`, `k:{..}`, `v:..`,
/// `i:N`). `member` says the path leading to this node is itself in the set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct FieldSet {
    pub(super) member: bool,
    pub(super) children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    pub(super) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    pub(super) fn insert(&mut self, path: &[String]) {
        if path.is_empty() {
            return;
        }
        let mut node = self;
        for pe in path {
            node = node.children.entry(pe.clone()).or_default();
        }
        node.member = true;
    }

    pub(super) fn union_with(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (pe, child) in &other.children {
            self.children
                .entry(pe.clone())
                .or_default()
                .union_with(child);
        }
        self.compact();
    }

    pub(super) fn subtract(&mut self, other: &FieldSet) {
        if other.member {
            self.member = false;
        }
        for (pe, other_child) in &other.children {
            if let Some(child) = self.children.get_mut(pe) {
                child.subtract(other_child);
            }
        }
        self.compact();
    }

    pub(super) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            if let Some(other_child) = other.children.get(pe) {
                let both = child.intersection(other_child);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// Drops the nodes that hold no member.
    pub(super) fn compact(&mut self) {
        self.children.retain(|_, child| {
            child.compact();
            !child.is_empty()
        });
    }

    /// The `FieldsV1` JSON of this set (the member flag of the root is not representable).
    pub(super) fn to_fields_v1(&self) -> Value {
        self.encode(false)
    }

    pub(super) fn encode(&self, with_dot: bool) -> Value {
        let mut out = Map::new();
        let live_children: Vec<(&String, &FieldSet)> = self
            .children
            .iter()
            .filter(|(_, child)| !child.is_empty())
            .collect();
        if with_dot && self.member && !live_children.is_empty() {
            out.insert(".".to_owned(), empty_object());
        }
        for (pe, child) in live_children {
            out.insert(pe.clone(), child.encode(true));
        }
        Value::Object(out)
    }

    pub(super) fn from_fields_v1(value: &Value) -> FieldSet {
        let mut set = FieldSet::decode_node(value);
        set.member = false;
        set.compact();
        set
    }

    pub(super) fn decode_node(value: &Value) -> FieldSet {
        let mut set = FieldSet::default();
        let Some(map) = value.as_object() else {
            return set;
        };
        for (key, child) in map {
            if key == "." {
                set.member = true;
                continue;
            }
            let child_set = match child.as_object() {
                Some(m) if !m.is_empty() => FieldSet::decode_node(child),
                _ => FieldSet {
                    member: true,
                    children: BTreeMap::new(),
                },
            };
            set.children
                .entry(canonical_pe(key))
                .or_default()
                .union_with(&child_set);
        }
        set
    }

    /// Every member path, in structured-merge-diff iteration order (at each level the members
    /// first, then the sub-trees).
    pub(super) fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    pub(super) fn collect_paths(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for (pe, child) in &self.children {
            if child.member {
                prefix.push(pe.clone());
                out.push(prefix.clone());
                prefix.pop();
            }
        }
        for (pe, child) in &self.children {
            if !child.children.is_empty() {
                prefix.push(pe.clone());
                child.collect_paths(prefix, out);
                prefix.pop();
            }
        }
    }
}

/// Removes the never-managed member `.metadata` (and the root).
pub(super) fn strip_meta(set: &mut FieldSet) {
    set.member = false;
    if let Some(meta) = set.children.get_mut("f:metadata") {
        meta.member = false;
    }
    set.compact();
}

/// Writes `value` as compact JSON with object keys sorted, whatever serde_json's map order is.
pub(super) fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

pub(super) fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, field)) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_string(key));
                out.push(':');
                write_canonical(field, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

pub(super) fn json_string(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// Quotes like Go's `%q` for the strings managers are made of.
pub(super) fn go_quote(s: &str) -> String {
    json_string(s)
}

/// Re-encodes `k:`/`v:` path elements read from stored entries so they compare equal to the
/// ones computed here.
pub(super) fn canonical_pe(key: &str) -> String {
    for prefix in ["k:", "v:"] {
        if let Some(rest) = key.strip_prefix(prefix)
            && let Ok(value) = serde_json::from_str::<Value>(rest)
        {
            return format!("{prefix}{}", canonical_json(&value));
        }
    }
    key.to_owned()
}

/// Whether a list item is identified by key fields (and so merged and tracked field by field);
/// items identified by their whole value are atomic.
pub(super) fn is_keyed(pe: &str) -> bool {
    pe.starts_with("k:")
}

pub(super) fn field_pe(name: &str) -> String {
    format!("f:{name}")
}

pub(super) fn value_pe(value: &Value) -> String {
    format!("v:{}", canonical_json(value))
}

/// The schema defaults of an associative list's key fields, by key.
pub(super) type KeyDefaults = Vec<(String, Value)>;

/// The path element of a list item: `k:` for items of associative lists (key fields that are
/// missing or `null` take their default from `defaults`, or are left out), `v:` with the whole
/// value otherwise.
pub(super) fn item_pe(item: &Value, list_type: &ListType, defaults: &KeyDefaults) -> String {
    if let (ListType::Map(keys), Some(map)) = (list_type, item.as_object()) {
        let mut fields: Vec<(&str, &Value)> = keys
            .iter()
            .filter_map(|k| {
                map.get(k)
                    .filter(|v| !v.is_null())
                    .or_else(|| defaults.iter().find(|(d, _)| d == k).map(|(_, v)| v))
                    .map(|v| (k.as_str(), v))
            })
            .collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        fields.dedup_by(|a, b| a.0 == b.0);
        if !fields.is_empty() {
            let mut out = String::from("k:{");
            for (i, (key, value)) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_string(key));
                out.push(':');
                write_canonical(value, &mut out);
            }
            out.push('}');
            return out;
        }
    }
    value_pe(item)
}

/// Renders a path like structured-merge-diff:
/// `.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]`.
pub(super) fn path_string(path: &[String]) -> String {
    path.iter().map(|pe| pe_string(pe)).collect()
}

pub(super) fn pe_string(pe: &str) -> String {
    if let Some(name) = pe.strip_prefix("f:") {
        return format!(".{name}");
    }
    if let Some(key) = pe.strip_prefix("k:") {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(key) {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> = fields
                .into_iter()
                .map(|(k, v)| format!("{k}={}", canonical_json(v)))
                .collect();
            return format!("[{}]", parts.join(","));
        }
        return format!("[{key}]");
    }
    if let Some(value) = pe.strip_prefix("v:") {
        return format!("[={value}]");
    }
    if let Some(index) = pe.strip_prefix("i:") {
        return format!("[{index}]");
    }
    pe.to_owned()
}

/// A new empty JSON object.
pub(super) fn empty_object() -> Value {
    Value::Object(Map::new())
}
