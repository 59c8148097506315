//! A JSON object built from decoded protobuf fields.
//!
//! Go's protobuf code writes every field that is not a pointer, zero or not: a `ConfigMap` from client-go
//! carries `generateName: ""` and `generation: 0`. Go's JSON leaves those zeros out (`omitempty`), and so does
//! this mapping: an empty string, a zero number and `false` are left out, as are empty lists and maps. A
//! field that is a pointer in Go (`replicas`, `immutable`, `suspend`, ...) is written only when set, and is
//! put with [`Ptr`] so that its zero stays (`replicas: 0`). An empty string is always taken as unset: the few
//! pointer strings of the API (such as `timeZone`) are never empty in a valid object.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::error::{ProtobufError, Result};

/// A field value that may be absent from the JSON.
pub(super) trait Field {
    /// The JSON value, or `None` when the field is unset.
    fn json(self) -> Option<Value>;
}

impl Field for Option<String> {
    fn json(self) -> Option<Value> {
        self.filter(|s| !s.is_empty()).map(Value::String)
    }
}

impl Field for Option<bool> {
    fn json(self) -> Option<Value> {
        self.filter(|b| *b).map(Value::Bool)
    }
}

impl Field for Option<i32> {
    fn json(self) -> Option<Value> {
        self.filter(|n| *n != 0).map(Value::from)
    }
}

impl Field for Option<i64> {
    fn json(self) -> Option<Value> {
        self.filter(|n| *n != 0).map(Value::from)
    }
}

/// A field that is a pointer in Go: written whenever it is set, zero included.
pub(super) struct Ptr<T>(pub(super) Option<T>);

impl<T: Into<Value>> Field for Ptr<T> {
    fn json(self) -> Option<Value> {
        self.0.map(Into::into)
    }
}

impl Field for Option<Value> {
    fn json(self) -> Option<Value> {
        self
    }
}

impl Field for Vec<String> {
    fn json(self) -> Option<Value> {
        (!self.is_empty()).then(|| Value::from(self))
    }
}

impl Field for Vec<Value> {
    fn json(self) -> Option<Value> {
        (!self.is_empty()).then_some(Value::Array(self))
    }
}

impl Field for BTreeMap<String, String> {
    fn json(self) -> Option<Value> {
        (!self.is_empty()).then(|| {
            Value::Object(
                self.into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            )
        })
    }
}

/// A JSON object under construction.
#[derive(Default)]
pub(super) struct Obj(Map<String, Value>);

impl Obj {
    /// An empty object.
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Sets `key` when the field is set.
    pub(super) fn put(mut self, key: &str, field: impl Field) -> Self {
        if let Some(value) = field.json() {
            self.0.insert(key.into(), value);
        }
        self
    }

    /// The object.
    pub(super) fn done(self) -> Value {
        Value::Object(self.0)
    }
}

/// Maps each message of a list.
pub(super) fn list<T>(items: Vec<T>, f: impl Fn(T) -> Result<Value>) -> Result<Vec<Value>> {
    items.into_iter().map(f).collect()
}

/// Maps an optional message.
pub(super) fn opt<T>(item: Option<T>, f: impl FnOnce(T) -> Result<Value>) -> Result<Option<Value>> {
    item.map(f).transpose()
}

/// Something a decoded field holds, or not.
pub(super) trait Set {
    /// Whether the field carries a value.
    fn is_set(&self) -> bool;
}

impl<T> Set for Option<T> {
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

impl<T> Set for Vec<T> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

impl<K, V> Set for BTreeMap<K, V> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

/// Refuses a field the mapping does not carry, when it is set.
pub(super) fn refuse(path: &str, field: &impl Set) -> Result<()> {
    if field.is_set() {
        return Err(ProtobufError::Unsupported { field: path.into() });
    }
    Ok(())
}
