//! What field management needs to know of a type's schema: how its lists and maps merge.

use serde_json::Value;

/// How the items of a list are identified and merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// The list is a single value: replaced as a whole and owned as a leaf
    /// (`x-kubernetes-list-type: atomic`, the default for lists).
    Atomic,
    /// The list is a set of scalars: merged by union, items owned as `v:<value>`
    /// (`x-kubernetes-list-type: set`).
    Set,
    /// The list is an associative list whose items are identified by these key fields: merged
    /// item by item, items owned as `k:{...}` (`x-kubernetes-list-type: map`). An empty key list
    /// is treated as [`ListType::Atomic`].
    Map(Vec<String>),
}

/// What field management needs to know about the schema of a type.
pub trait Schema {
    /// List semantics at `path` (field names from the object root, list items elided: the ports
    /// of a pod template's containers are at `["spec", "template", "spec", "containers",
    /// "ports"]`).
    fn list_type(&self, path: &[&str]) -> ListType;

    /// Whether the map (object) at `path` is atomic (`x-kubernetes-map-type: atomic`), i.e.
    /// replaced as a whole and owned as a leaf. Defaults to `false`.
    fn map_is_atomic(&self, _path: &[&str]) -> bool {
        false
    }

    /// The schema default of key field `key` of the associative list at `path`: an item that omits
    /// the key is identified as if it had this value (structured-merge-diff does the same, so an
    /// applied `{"containerPort": 80}` is the live `{"containerPort": 80, "protocol": "TCP"}`).
    /// Defaults to `None`.
    fn list_key_default(&self, _path: &[&str], _key: &str) -> Option<Value> {
        None
    }
}

/// A schema that knows nothing about the type: every list is atomic and every map is granular
/// (what the real server does for types without a schema).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeducedSchema;

impl Schema for DeducedSchema {
    fn list_type(&self, _path: &[&str]) -> ListType {
        ListType::Atomic
    }
}
