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
mod schema;
mod scope;
#[cfg(test)]
mod tests;
mod update;
mod walk;

pub use apply::apply;
pub use conflicts::{Conflict, conflict_message};
pub use last_applied::update_last_applied;
pub use schema::{DeducedSchema, ListType, Schema};
pub use scope::Scope;
pub use update::update;
