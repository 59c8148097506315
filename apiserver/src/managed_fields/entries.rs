//! Managed fields entries: decoding, identity, sorting and writing `metadata.managedFields`.

use serde_json::{Map, Value};

use super::field_set::empty_object;
use super::field_set::{FieldSet, json_string};
use super::scope::Operation;

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) manager: String,
    pub(super) operation: Operation,
    pub(super) api_version: String,
    /// Kept as stored (normally an RFC 3339 string).
    pub(super) time: Option<Value>,
    /// Empty for the main resource.
    pub(super) subresource: String,
    pub(super) set: FieldSet,
}

impl Entry {
    pub(super) fn identity(&self) -> String {
        manager_identity(
            &self.manager,
            self.operation,
            &self.api_version,
            &self.subresource,
        )
    }

    pub(super) fn encode(&self) -> Value {
        let mut out = Map::new();
        if !self.api_version.is_empty() {
            out.insert(
                "apiVersion".to_owned(),
                Value::String(self.api_version.clone()),
            );
        }
        out.insert(
            "fieldsType".to_owned(),
            Value::String("FieldsV1".to_owned()),
        );
        out.insert("fieldsV1".to_owned(), self.set.to_fields_v1());
        if !self.manager.is_empty() {
            out.insert("manager".to_owned(), Value::String(self.manager.clone()));
        }
        out.insert(
            "operation".to_owned(),
            Value::String(self.operation.as_str().to_owned()),
        );
        if !self.subresource.is_empty() {
            out.insert(
                "subresource".to_owned(),
                Value::String(self.subresource.clone()),
            );
        }
        if let Some(time) = &self.time {
            out.insert("time".to_owned(), time.clone());
        }
        Value::Object(out)
    }

    /// The real server's sort key: operation, time (seconds), manager, apiVersion, subresource.
    pub(super) fn sort_key(&self) -> (Operation, String, &str, &str, &str) {
        let time = match &self.time {
            Some(Value::String(t)) => t.chars().take(19).collect(),
            _ => String::new(),
        };
        (
            self.operation,
            time,
            &self.manager,
            &self.api_version,
            &self.subresource,
        )
    }
}

/// The manager identifier of the real server (the JSON of the entry without fields and time,
/// and without apiVersion for appliers). Sorting these orders conflicts like the real server.
pub(super) fn manager_identity(
    manager: &str,
    operation: Operation,
    api_version: &str,
    subresource: &str,
) -> String {
    let mut parts = Vec::new();
    if !manager.is_empty() {
        parts.push(format!("\"manager\":{}", json_string(manager)));
    }
    parts.push(format!("\"operation\":\"{}\"", operation.as_str()));
    if operation == Operation::Update && !api_version.is_empty() {
        parts.push(format!("\"apiVersion\":{}", json_string(api_version)));
    }
    if !subresource.is_empty() {
        parts.push(format!("\"subresource\":{}", json_string(subresource)));
    }
    format!("{{{}}}", parts.join(","))
}

pub(super) fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("managedFields")
}

/// `[{}]`: the client asks for all entries to be dropped.
pub(super) fn is_reset(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Array(items)) if items.len() == 1
        && items.first().and_then(Value::as_object).is_some_and(Map::is_empty))
}

/// Decodes stored entries; `None` when they are not a list of objects. Entries with the same
/// identity are merged (the later one wins for apiVersion and time).
pub(super) fn decode_entries(value: Option<&Value>) -> Option<Vec<Entry>> {
    let items = match value {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return None,
    };
    let mut entries: Vec<Entry> = Vec::new();
    for item in items {
        let map = item.as_object()?;
        let text = |key: &str| {
            map.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let operation = if text("operation") == "Apply" {
            Operation::Apply
        } else {
            Operation::Update
        };
        let entry = Entry {
            manager: text("manager"),
            operation,
            api_version: text("apiVersion"),
            time: map.get("time").filter(|t| !t.is_null()).cloned(),
            subresource: text("subresource"),
            set: map
                .get("fieldsV1")
                .map(FieldSet::from_fields_v1)
                .unwrap_or_default(),
        };
        let identity = entry.identity();
        match entries.iter_mut().find(|e| e.identity() == identity) {
            Some(existing) => {
                existing.set.union_with(&entry.set);
                existing.api_version = entry.api_version;
                existing.time = entry.time;
            }
            None => entries.push(entry),
        }
    }
    Some(entries)
}

/// Drops empty entries, sorts them like the real server and stores them in
/// `metadata.managedFields` (removing the key when none is left).
pub(super) fn write_entries(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    let Some(root) = object.as_object_mut() else {
        return;
    };
    if entries.is_empty() {
        if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        return;
    }
    let meta = root.entry("metadata").or_insert_with(empty_object);
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(
            "managedFields".to_owned(),
            Value::Array(entries.iter().map(Entry::encode).collect()),
        );
    }
}
