//! Server-side apply field management (`metadata.managedFields`).
//!
//! This module re-implements, over plain [`serde_json::Value`] objects, what
//! `sigs.k8s.io/structured-merge-diff` and the `managedfields` machinery do inside
//! kube-apiserver:
//!
//! * [`apply`] performs a server-side apply: it merges a partial configuration into the live
//!   object, detects conflicts with other field managers, removes the fields the applier
//!   stopped applying and records an `operation: Apply` entry for the applier.
//! * [`update`] tracks ownership for every other write (create, PUT, JSON/merge/strategic
//!   patches): the writer gets an `operation: Update` entry owning what it changed.
//! * [`conflict_message`] renders conflicts exactly like the 409 returned by the real server.
//!
//! Field sets use the `FieldsV1` encoding: `f:<name>` for object fields, `k:<json>` for items of
//! associative lists (the key fields as a compact JSON object with sorted keys), `v:<json>` for
//! items of set lists and `.` for "this list item / map is itself owned". Atomic lists and atomic
//! maps are leaves.
//!
//! # Behaviour worth knowing (as in the real server)
//!
//! * Managers are identified by name, operation and subresource, plus apiVersion for `Update`
//!   entries. An applier therefore conflicts with its own `Update` entry.
//! * Conflicts are fields owned by another manager whose value the apply adds or changes;
//!   equal values are shared. Removing a field never conflicts: it leaves every other set.
//! * Granular lists merge in structured-merge-diff order: shared items follow the order of the
//!   applied configuration, items only in the live object keep their place, and new items go
//!   just before the next shared item (at the end when none follows).
//! * When an applier stops applying something, a map field stays while anybody owns anything in
//!   it, but a list item stays only while somebody owns the item itself (its `.`); the owners of
//!   fields inside a removed item lose them.
//!
//! # Approximations of the real server
//!
//! * There is no full OpenAPI schema: every JSON object is a granular map (unless
//!   [`Schema::map_is_atomic`] says otherwise), every array uses [`Schema::list_type`], every
//!   other value is a scalar leaf.
//! * On create, the real server compares against the Go "empty object" of the type, so for
//!   built-in types non-pointer structs (`spec`, `spec.template`, ...) do not get a `.` member in
//!   the creator's entry. Here the creator is compared against nothing, which is what the real
//!   server does for custom resources: every added map or list gets a `.` member.
//! * Items of associative lists that lack a key field are identified with that key's schema
//!   default ([`Schema::list_key_default`], as structured-merge-diff does), or else by the key
//!   fields they do have (`null` counts as missing); items lacking all of them (or that are not objects) are
//!   identified by their whole value, like set items, and are atomic. The real server rejects
//!   such items.
//! * Duplicate items in the applied configuration are merged into the first one (the real server
//!   rejects them); duplicate items in the live object are kept as they are and compared as a
//!   single atomic item.
//! * `null` in the applied configuration: when the live value is an object or an array, the
//!   `null` is ignored (as the real server does for typed map/list fields); otherwise the applier
//!   owns the field as a leaf and the key is removed from the result (like the real server, which
//!   stores `null` and then drops it for non-nullable fields).
//! * A field the applied configuration contains (e.g. as an empty map) is never pruned as a
//!   whole, even when nobody owns anything in it.
//! * A non-object applied configuration is a no-op (the live object, or `{}`, is returned); a
//!   non-object `new` object in [`update`] is left untouched. Unparseable `managedFields` are
//!   treated as empty.
//! * The resulting entries are sorted like the real server does (`Apply` before `Update`, then
//!   by time, manager, apiVersion, subresource); the order of the other entries is otherwise
//!   preserved. Only the acting manager's entry gets `now` as its time (other managers keep
//!   their time even when they lose fields, as in the real server).
//! * The acting applier's entry gets `now` when it is new, when its field set changed or when
//!   the object changed (the real server only refreshes it when the object changed).
//! * Not implemented: the cap of 10 `Update` managers (`ancient-changes` bucket), the
//!   `last-applied-configuration` annotation interplay, version conversion of field sets
//!   (entries recorded with another apiVersion are used as-is) and rejecting an applied
//!   configuration that carries `metadata.managedFields` (it is ignored).

mod apply;
mod conflicts;
mod entries;
mod field_set;
mod last_applied;
#[cfg(test)]
mod tests;
mod update;
mod walk;

use serde_json::Value;

pub use apply::apply;
pub use conflicts::{Conflict, conflict_message};
pub use last_applied::update_last_applied;
pub use update::update;

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

/// Which part of the object a request may manage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The main resource of a type that has a status subresource: everything except `status`.
    Main,
    /// The status subresource: only `status`. Entries get `"subresource": "status"`.
    Status,
    /// The main resource of a type without status subresource: everything.
    Whole,
    /// The scale subresource: writes the replicas of the main resource. Entries get
    /// `"subresource": "scale"` and, as kube-apiserver writes them, no `time`.
    Scale,
    /// A namespace's finalize subresource: everything except `status`. Entries get
    /// `"subresource": "finalize"`.
    Finalize,
}

impl Scope {
    fn subresource(self) -> &'static str {
        match self {
            Scope::Status => "status",
            Scope::Scale => "scale",
            Scope::Finalize => "finalize",
            Scope::Main | Scope::Whole => "",
        }
    }
}

/// The operation recorded in a managed fields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// A server-side apply.
    Apply,
    /// Any other write (create, update, non-apply patch). Unknown operations read from existing
    /// entries are treated as updates.
    Update,
}

impl Operation {
    /// The wire form: `"Apply"` or `"Update"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}
