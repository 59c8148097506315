//! Object walks: the context of a walk over an object (its schema and scope), normalizing an applied
//! configuration and the field set it names.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use super::field_set::{
    FieldSet, KeyDefaults, empty_object, field_pe, is_keyed, item_pe, value_pe,
};
use super::schema::{ListType, Schema};
use super::scope::Scope;

/// Fields never tracked in `metadata`.
pub(super) const UNMANAGED_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// Where a walk is: the root object, the root `metadata`, or anywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pos {
    Root,
    RootMetadata,
    Other,
}

impl Pos {
    pub(super) fn child(self, key: &str) -> Pos {
        match self {
            Pos::Root if key == "metadata" => Pos::RootMetadata,
            _ => Pos::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Object,
    Array,
    Scalar,
}

pub(super) fn kind(value: &Value) -> Kind {
    match value {
        Value::Object(_) => Kind::Object,
        Value::Array(_) => Kind::Array,
        _ => Kind::Scalar,
    }
}

pub(super) fn is_empty_container(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

pub(super) fn empty_or_absent(value: Option<&Value>) -> bool {
    value.is_none_or(is_empty_container)
}

/// The items of a list (if `side` is one) grouped by path element, in order.
pub(super) fn group_items<'v>(
    side: Option<&'v Value>,
    list_type: &ListType,
    defaults: &KeyDefaults,
) -> BTreeMap<String, Vec<&'v Value>> {
    let mut groups: BTreeMap<String, Vec<&'v Value>> = BTreeMap::new();
    for item in side.and_then(Value::as_array).into_iter().flatten() {
        groups
            .entry(item_pe(item, list_type, defaults))
            .or_default()
            .push(item);
    }
    groups
}

/// Fields added, changed and removed between two objects.
#[derive(Debug, Default)]
pub(super) struct Diff {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
}

impl Diff {
    pub(super) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// Copies the identity of the object from the applied configuration when the result lacks it.
pub(super) fn copy_identity(merged: &mut Value, applied: &Value) {
    let Some(root) = merged.as_object_mut() else {
        return;
    };
    for key in ["apiVersion", "kind"] {
        if let Some(value) = applied.get(key).filter(|v| v.is_string())
            && !root.contains_key(key)
        {
            root.insert(key.to_owned(), value.clone());
        }
    }
    let Some(applied_meta) = applied.get("metadata").and_then(Value::as_object) else {
        return;
    };
    for key in ["name", "namespace", "generateName"] {
        let Some(value) = applied_meta.get(key).filter(|v| v.is_string()) else {
            continue;
        };
        let meta = root.entry("metadata").or_insert_with(empty_object);
        if let Some(meta) = meta.as_object_mut()
            && !meta.contains_key(key)
        {
            meta.insert(key.to_owned(), value.clone());
        }
    }
}

pub(super) struct Ctx<'s> {
    pub(super) schema: &'s dyn Schema,
    pub(super) scope: Scope,
}

impl Ctx<'_> {
    pub(super) fn list_type(&self, names: &[String]) -> ListType {
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        match self.schema.list_type(&path) {
            ListType::Map(keys) if keys.is_empty() => ListType::Atomic,
            other => other,
        }
    }

    /// The defaults of the key fields of the associative list at `names`.
    pub(super) fn key_defaults(&self, names: &[String], list_type: &ListType) -> KeyDefaults {
        let ListType::Map(keys) = list_type else {
            return Vec::new();
        };
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        keys.iter()
            .filter_map(|k| Some((k.clone(), self.schema.list_key_default(&path, k)?)))
            .collect()
    }

    pub(super) fn map_atomic(&self, names: &[String], pos: Pos) -> bool {
        if pos == Pos::Root {
            return false;
        }
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        self.schema.map_is_atomic(&path)
    }

    /// Whether `key` of the object at `pos` is out of field management.
    pub(super) fn skip(&self, pos: Pos, key: &str) -> bool {
        match pos {
            Pos::Root => {
                key == "apiVersion"
                    || key == "kind"
                    || match self.scope {
                        Scope::Main | Scope::Scale | Scope::Finalize => key == "status",
                        Scope::Status => key != "status",
                        Scope::Whole => false,
                    }
            }
            Pos::RootMetadata => UNMANAGED_METADATA.contains(&key),
            Pos::Other => false,
        }
    }

    /// The applied configuration restricted to the managed part of the scope, with ignored
    /// `null`s and duplicate list items resolved.
    pub(super) fn normalize(
        &self,
        config: &Value,
        live: Option<&Value>,
        names: &mut Vec<String>,
        pos: Pos,
    ) -> Value {
        match config {
            Value::Object(map) => {
                if self.map_atomic(names, pos) {
                    return config.clone();
                }
                let live_map = live.and_then(Value::as_object);
                let mut out = Map::new();
                for (key, value) in map {
                    if self.skip(pos, key) {
                        continue;
                    }
                    let live_value = live_map.and_then(|m| m.get(key));
                    if value.is_null() {
                        if !live_value.is_some_and(|v| v.is_object() || v.is_array()) {
                            out.insert(key.clone(), Value::Null);
                        }
                        continue;
                    }
                    names.push(key.clone());
                    let normalized = self.normalize(value, live_value, names, pos.child(key));
                    names.pop();
                    out.insert(key.clone(), normalized);
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                let list_type = self.list_type(names);
                let defaults = self.key_defaults(names, &list_type);
                match list_type {
                    ListType::Atomic => config.clone(),
                    ListType::Set => {
                        let mut seen = HashSet::new();
                        Value::Array(
                            items
                                .iter()
                                .filter(|item| !item.is_null() && seen.insert(value_pe(item)))
                                .cloned()
                                .collect(),
                        )
                    }
                    ListType::Map(_) => {
                        let live_items = live.and_then(Value::as_array);
                        let mut out: Vec<Value> = Vec::new();
                        let mut index: HashMap<String, usize> = HashMap::new();
                        for item in items.iter().filter(|item| !item.is_null()) {
                            let pe = item_pe(item, &list_type, &defaults);
                            if !is_keyed(&pe) {
                                // Identified by its whole value: atomic, duplicates are equal.
                                if let MapEntry::Vacant(slot) = index.entry(pe) {
                                    slot.insert(out.len());
                                    out.push(item.clone());
                                }
                                continue;
                            }
                            let live_item = live_items.and_then(|l| {
                                l.iter().find(|li| item_pe(li, &list_type, &defaults) == pe)
                            });
                            let normalized = self.normalize(item, live_item, names, Pos::Other);
                            match index.get(&pe).copied() {
                                Some(i) => {
                                    let merged = out.get(i).and_then(|earlier| {
                                        self.merge(Some(earlier), &normalized, names, Pos::Other)
                                    });
                                    if let (Some(merged), Some(slot)) = (merged, out.get_mut(i)) {
                                        *slot = merged;
                                    }
                                }
                                None => {
                                    index.insert(pe, out.len());
                                    out.push(normalized);
                                }
                            }
                        }
                        Value::Array(out)
                    }
                }
            }
            _ => config.clone(),
        }
    }

    /// The field set of a (normalized) applied configuration.
    pub(super) fn config_set(
        &self,
        value: &Value,
        names: &mut Vec<String>,
        pos: Pos,
        node: &mut FieldSet,
    ) {
        match value {
            Value::Object(map) => {
                if self.map_atomic(names, pos) {
                    node.member = true;
                    return;
                }
                for (key, child) in map {
                    if self.skip(pos, key) {
                        continue;
                    }
                    let child_node = node.children.entry(field_pe(key)).or_default();
                    names.push(key.clone());
                    self.config_set(child, names, pos.child(key), child_node);
                    names.pop();
                }
            }
            Value::Array(items) => {
                let list_type = self.list_type(names);
                let defaults = self.key_defaults(names, &list_type);
                match list_type {
                    ListType::Atomic => node.member = true,
                    ListType::Set => {
                        for item in items {
                            node.children.entry(value_pe(item)).or_default().member = true;
                        }
                    }
                    ListType::Map(_) => {
                        for item in items {
                            let pe = item_pe(item, &list_type, &defaults);
                            let keyed = is_keyed(&pe);
                            let item_node = node.children.entry(pe).or_default();
                            item_node.member = true;
                            if keyed {
                                self.config_set(item, names, Pos::Other, item_node);
                            }
                        }
                    }
                }
            }
            _ => node.member = true,
        }
        node.compact();
    }
}
