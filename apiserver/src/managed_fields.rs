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

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use serde_json::{Map, Value};

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
}

impl Scope {
    fn subresource(self) -> &'static str {
        match self {
            Scope::Status => "status",
            Scope::Scale => "scale",
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

/// A field whose value an apply would change while another manager owns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// The other manager's operation.
    pub operation: Operation,
    /// The apiVersion of the other manager's entry.
    pub api_version: String,
    /// The other manager's subresource (`Some("status")` for status entries).
    pub subresource: Option<String>,
    /// The field in structured-merge-diff path form, e.g. `.spec.replicas`,
    /// `.spec.template.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`.
    pub field: String,
}

impl Conflict {
    /// How the real server names the other manager: `"mgr"` for appliers, `"mgr" using apps/v1`
    /// for updaters, with ` with subresource "status"` after the name for status entries.
    pub fn manager_description(&self) -> String {
        let mut out = go_quote(&self.manager);
        if let Some(sub) = self.subresource.as_deref().filter(|s| !s.is_empty()) {
            out.push_str(" with subresource ");
            out.push_str(&go_quote(sub));
        }
        if self.operation == Operation::Update {
            out.push_str(" using ");
            out.push_str(&self.api_version);
        }
        out
    }

    /// The `StatusCause` the real server puts in `details.causes` for this conflict:
    /// `{"reason": "FieldManagerConflict", "message": "conflict with \"mgr\" using v1",
    /// "field": ".spec.x"}`.
    pub fn cause(&self) -> Value {
        let mut cause = Map::new();
        cause.insert(
            "reason".to_owned(),
            Value::String("FieldManagerConflict".to_owned()),
        );
        cause.insert(
            "message".to_owned(),
            Value::String(format!("conflict with {}", self.manager_description())),
        );
        cause.insert("field".to_owned(), Value::String(self.field.clone()));
        Value::Object(cause)
    }

    fn identity(&self) -> String {
        manager_identity(
            &self.manager,
            self.operation,
            &self.api_version,
            self.subresource.as_deref().unwrap_or(""),
        )
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conflict with {}: {}",
            self.manager_description(),
            self.field
        )
    }
}

impl std::error::Error for Conflict {}

/// Renders conflicts like the message of the real server's 409 response.
///
/// One conflict:
/// `Apply failed with 1 conflict: conflict with "mgr" using apps/v1: .spec.replicas`.
///
/// Several (one line per manager and per field, joined with `\n`; managers sorted like the real
/// server sorts its manager identifiers, fields in the given order):
///
/// ```text
/// Apply failed with 3 conflicts: conflicts with "a":
/// - .spec.x
/// - .spec.y
/// conflicts with "b" using v1:
/// - .spec.x
/// ```
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!("Apply failed with 1 conflict: {only}");
    }
    let mut groups: BTreeMap<String, (String, Vec<&str>)> = BTreeMap::new();
    for conflict in conflicts {
        groups
            .entry(conflict.identity())
            .or_insert_with(|| (conflict.manager_description(), Vec::new()))
            .1
            .push(&conflict.field);
    }
    let mut lines = Vec::new();
    for (description, fields) in groups.values() {
        lines.push(format!("conflicts with {description}:"));
        for field in fields {
            lines.push(format!("- {field}"));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Server-side apply of `applied` (the partial object sent by the client) onto `live` (`None` on
/// create) for `manager`.
///
/// Returns the new object, with `metadata.managedFields` updated (the manager's previous `Apply`
/// entry for the same subresource is replaced; its `Update` entries stay), or, when `force` is
/// false and some fields the apply changes are owned by other managers, the conflicts (sorted by
/// manager, render them with [`conflict_message`]). With `force`, conflicting fields are taken
/// away from their owners.
///
/// Fields the manager applied last time but no longer applies are removed from the object unless
/// another manager owns them. With [`Scope::Main`] the applied `status` is ignored, with
/// [`Scope::Status`] only the applied `status` is used. `apiVersion`, `kind`, `metadata.name`,
/// `metadata.namespace` and `metadata.generateName` are copied from the applied configuration
/// only when the live object lacks them; other server-set metadata is never taken from it.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    api_version: &str,
    scope: Scope,
    force: bool,
    schema: &dyn Schema,
    now: &str,
) -> Result<Value, Vec<Conflict>> {
    let live = live.filter(|v| v.is_object());
    if !applied.is_object() {
        return Ok(live.cloned().unwrap_or_else(empty_object));
    }
    let ctx = Ctx { schema, scope };
    let subresource = scope.subresource();
    let mut entries = live
        .and_then(|l| decode_entries(managed_fields_of(l)))
        .unwrap_or_default();

    let config = ctx.normalize(applied, live, &mut Vec::new(), Pos::Root);
    let mut new_set = FieldSet::default();
    ctx.config_set(&config, &mut Vec::new(), Pos::Root, &mut new_set);
    strip_meta(&mut new_set);

    let base = live.cloned().unwrap_or_else(empty_object);
    let mut merged = ctx
        .merge(Some(&base), &config, &mut Vec::new(), Pos::Root)
        .unwrap_or_else(empty_object);
    copy_identity(&mut merged, applied);

    let own = entries.iter().position(|e| {
        e.operation == Operation::Apply && e.manager == manager && e.subresource == subresource
    });
    if let Some(last) = own.and_then(|i| entries.get(i)) {
        let mut managed = new_set.clone();
        for (j, entry) in entries.iter().enumerate() {
            if Some(j) != own {
                managed.union_with(&entry.set);
            }
        }
        ctx.prune(
            &mut merged,
            &last.set,
            Some(&managed),
            Some(&config),
            &mut Vec::new(),
            Pos::Root,
        );
    }

    let diff = ctx.diff(live, Some(&merged));
    let mut changed = diff.added.clone();
    changed.union_with(&diff.modified);
    let mut conflicting = Vec::new();
    for (j, entry) in entries.iter().enumerate() {
        if Some(j) == own {
            continue;
        }
        let set = entry.set.intersection(&changed);
        if !set.is_empty() {
            conflicting.push((j, set));
        }
    }
    if !conflicting.is_empty() && !force {
        return Err(build_conflicts(&entries, &conflicting));
    }
    for (j, set) in &conflicting {
        if let Some(entry) = entries.get_mut(*j) {
            entry.set.subtract(set);
        }
    }
    for (j, entry) in entries.iter_mut().enumerate() {
        if Some(j) != own {
            entry.set.subtract(&diff.removed);
        }
    }

    ctx.strip_nulls(&mut merged, &config, &mut Vec::new(), Pos::Root);

    let object_changed = !diff.is_empty();
    match own.and_then(|i| entries.get_mut(i)) {
        Some(entry) => {
            if object_changed || entry.set != new_set || entry.api_version != api_version {
                entry.time = Some(Value::String(now.to_owned()));
            }
            entry.set = new_set;
            api_version.clone_into(&mut entry.api_version);
        }
        None => entries.push(Entry {
            manager: manager.to_owned(),
            operation: Operation::Apply,
            api_version: api_version.to_owned(),
            time: Some(Value::String(now.to_owned())),
            subresource: subresource.to_owned(),
            set: new_set,
        }),
    }
    write_entries(&mut merged, entries);
    Ok(merged)
}

/// Field tracking for every write that is not an apply (create, update/PUT, JSON patch, merge
/// patch, strategic merge patch).
///
/// `new` is the object about to be stored and `old` the stored one (`None` on create). The
/// entries are taken from `new`'s `metadata.managedFields` when the client sent a valid,
/// non-empty list (`[{}]` resets them; status writes always use `old`'s), otherwise from `old`.
/// Every field `manager` added or changed is removed from the other entries and added to the
/// manager's `operation: Update` entry (same manager, apiVersion and subresource; created if
/// needed, its time set to `now`); removed fields leave every entry; empty entries are dropped.
/// `new`'s `metadata.managedFields` is rewritten (removed when no entry is left).
pub fn update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    scope: Scope,
    schema: &dyn Schema,
    now: &str,
) {
    if !new.is_object() {
        return;
    }
    let old = old.filter(|v| v.is_object());
    let ctx = Ctx { schema, scope };
    let subresource = scope.subresource();
    let from_old = || {
        old.and_then(|o| decode_entries(managed_fields_of(o)))
            .unwrap_or_default()
    };
    let mut entries = if scope == Scope::Status {
        from_old()
    } else {
        let requested = managed_fields_of(new);
        if is_reset(requested) {
            Vec::new()
        } else {
            match decode_entries(requested) {
                Some(entries) if !entries.is_empty() => entries,
                _ => from_old(),
            }
        }
    };

    let diff = ctx.diff(old, Some(new));
    let mut changed = diff.added;
    changed.union_with(&diff.modified);
    for entry in &mut entries {
        entry.set.subtract(&changed);
        entry.set.subtract(&diff.removed);
    }
    if !changed.is_empty() {
        let time = (scope != Scope::Scale).then(|| Value::String(now.to_owned()));
        let existing = entries.iter_mut().find(|e| {
            e.operation == Operation::Update
                && e.manager == manager
                && e.api_version == api_version
                && e.subresource == subresource
        });
        match existing {
            Some(entry) => {
                entry.set.union_with(&changed);
                entry.time = time;
            }
            None => entries.push(Entry {
                manager: manager.to_owned(),
                operation: Operation::Update,
                api_version: api_version.to_owned(),
                time,
                subresource: subresource.to_owned(),
                set: changed,
            }),
        }
    }
    write_entries(new, entries);
}

// ---------------------------------------------------------------------------------------------
// Field sets
// ---------------------------------------------------------------------------------------------

/// A set of field paths, as a tree keyed by encoded path elements (`f:x`, `k:{..}`, `v:..`,
/// `i:N`). `member` says the path leading to this node is itself in the set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct FieldSet {
    member: bool,
    children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    fn insert(&mut self, path: &[String]) {
        if path.is_empty() {
            return;
        }
        let mut node = self;
        for pe in path {
            node = node.children.entry(pe.clone()).or_default();
        }
        node.member = true;
    }

    fn union_with(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (pe, child) in &other.children {
            self.children
                .entry(pe.clone())
                .or_default()
                .union_with(child);
        }
        self.compact();
    }

    fn subtract(&mut self, other: &FieldSet) {
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

    fn intersection(&self, other: &FieldSet) -> FieldSet {
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
    fn compact(&mut self) {
        self.children.retain(|_, child| {
            child.compact();
            !child.is_empty()
        });
    }

    /// The `FieldsV1` JSON of this set (the member flag of the root is not representable).
    fn to_fields_v1(&self) -> Value {
        self.encode(false)
    }

    fn encode(&self, with_dot: bool) -> Value {
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

    fn from_fields_v1(value: &Value) -> FieldSet {
        let mut set = FieldSet::decode_node(value);
        set.member = false;
        set.compact();
        set
    }

    fn decode_node(value: &Value) -> FieldSet {
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
    fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
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
fn strip_meta(set: &mut FieldSet) {
    set.member = false;
    if let Some(meta) = set.children.get_mut("f:metadata") {
        meta.member = false;
    }
    set.compact();
}

/// Writes `value` as compact JSON with object keys sorted, whatever serde_json's map order is.
fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
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

fn json_string(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// Quotes like Go's `%q` for the strings managers are made of.
fn go_quote(s: &str) -> String {
    json_string(s)
}

/// Re-encodes `k:`/`v:` path elements read from stored entries so they compare equal to the
/// ones computed here.
fn canonical_pe(key: &str) -> String {
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
fn is_keyed(pe: &str) -> bool {
    pe.starts_with("k:")
}

fn field_pe(name: &str) -> String {
    format!("f:{name}")
}

fn value_pe(value: &Value) -> String {
    format!("v:{}", canonical_json(value))
}

/// The schema defaults of an associative list's key fields, by key.
type KeyDefaults = Vec<(String, Value)>;

/// The path element of a list item: `k:` for items of associative lists (key fields that are
/// missing or `null` take their default from `defaults`, or are left out), `v:` with the whole
/// value otherwise.
fn item_pe(item: &Value, list_type: &ListType, defaults: &KeyDefaults) -> String {
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
fn path_string(path: &[String]) -> String {
    path.iter().map(|pe| pe_string(pe)).collect()
}

fn pe_string(pe: &str) -> String {
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

// ---------------------------------------------------------------------------------------------
// Managed fields entries
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: Operation,
    api_version: String,
    /// Kept as stored (normally an RFC 3339 string).
    time: Option<Value>,
    /// Empty for the main resource.
    subresource: String,
    set: FieldSet,
}

impl Entry {
    fn identity(&self) -> String {
        manager_identity(
            &self.manager,
            self.operation,
            &self.api_version,
            &self.subresource,
        )
    }

    fn encode(&self) -> Value {
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
    fn sort_key(&self) -> (Operation, String, &str, &str, &str) {
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
fn manager_identity(
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

fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("managedFields")
}

/// `[{}]`: the client asks for all entries to be dropped.
fn is_reset(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Array(items)) if items.len() == 1
        && items.first().and_then(Value::as_object).is_some_and(Map::is_empty))
}

/// Decodes stored entries; `None` when they are not a list of objects. Entries with the same
/// identity are merged (the later one wins for apiVersion and time).
fn decode_entries(value: Option<&Value>) -> Option<Vec<Entry>> {
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
fn write_entries(object: &mut Value, mut entries: Vec<Entry>) {
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

fn build_conflicts(entries: &[Entry], conflicting: &[(usize, FieldSet)]) -> Vec<Conflict> {
    let mut out: Vec<(String, Conflict)> = Vec::new();
    for (j, set) in conflicting {
        let Some(entry) = entries.get(*j) else {
            continue;
        };
        let identity = entry.identity();
        for path in set.paths() {
            out.push((
                identity.clone(),
                Conflict {
                    manager: entry.manager.clone(),
                    operation: entry.operation,
                    api_version: entry.api_version.clone(),
                    subresource: Some(entry.subresource.clone()).filter(|s| !s.is_empty()),
                    field: path_string(&path),
                },
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, conflict)| conflict).collect()
}

// ---------------------------------------------------------------------------------------------
// Object walks
// ---------------------------------------------------------------------------------------------

/// Fields never tracked in `metadata`.
const UNMANAGED_METADATA: &[&str] = &[
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
enum Pos {
    Root,
    RootMetadata,
    Other,
}

impl Pos {
    fn child(self, key: &str) -> Pos {
        match self {
            Pos::Root if key == "metadata" => Pos::RootMetadata,
            _ => Pos::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    Scalar,
}

fn kind(value: &Value) -> Kind {
    match value {
        Value::Object(_) => Kind::Object,
        Value::Array(_) => Kind::Array,
        _ => Kind::Scalar,
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

fn is_empty_container(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

fn empty_or_absent(value: Option<&Value>) -> bool {
    value.is_none_or(is_empty_container)
}

/// The items of a list (if `side` is one) grouped by path element, in order.
fn group_items<'v>(
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
struct Diff {
    added: FieldSet,
    modified: FieldSet,
    removed: FieldSet,
}

impl Diff {
    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// Copies the identity of the object from the applied configuration when the result lacks it.
fn copy_identity(merged: &mut Value, applied: &Value) {
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

struct Ctx<'s> {
    schema: &'s dyn Schema,
    scope: Scope,
}

impl Ctx<'_> {
    fn list_type(&self, names: &[String]) -> ListType {
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        match self.schema.list_type(&path) {
            ListType::Map(keys) if keys.is_empty() => ListType::Atomic,
            other => other,
        }
    }

    /// The defaults of the key fields of the associative list at `names`.
    fn key_defaults(&self, names: &[String], list_type: &ListType) -> KeyDefaults {
        let ListType::Map(keys) = list_type else {
            return Vec::new();
        };
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        keys.iter()
            .filter_map(|k| Some((k.clone(), self.schema.list_key_default(&path, k)?)))
            .collect()
    }

    fn map_atomic(&self, names: &[String], pos: Pos) -> bool {
        if pos == Pos::Root {
            return false;
        }
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        self.schema.map_is_atomic(&path)
    }

    /// Whether `key` of the object at `pos` is out of field management.
    fn skip(&self, pos: Pos, key: &str) -> bool {
        match pos {
            Pos::Root => {
                key == "apiVersion"
                    || key == "kind"
                    || match self.scope {
                        Scope::Main | Scope::Scale => key == "status",
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
    fn normalize(
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
    fn config_set(&self, value: &Value, names: &mut Vec<String>, pos: Pos, node: &mut FieldSet) {
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

    /// Merges the (normalized) configuration `rhs` into `lhs`; `None` means "no value".
    fn merge(
        &self,
        lhs: Option<&Value>,
        rhs: &Value,
        names: &mut Vec<String>,
        pos: Pos,
    ) -> Option<Value> {
        match rhs {
            // A `null` replacing a scalar is kept until the ownership bookkeeping is done (it is
            // a modification of that field), then dropped by `strip_nulls`.
            Value::Null => match lhs {
                Some(l) if l.is_object() || l.is_array() => Some(l.clone()),
                Some(_) => Some(Value::Null),
                None => None,
            },
            Value::Object(rmap) => {
                if self.map_atomic(names, pos) {
                    return Some(rhs.clone());
                }
                let mut out = match lhs {
                    Some(Value::Object(lmap)) => lmap.clone(),
                    _ => Map::new(),
                };
                for (key, rvalue) in rmap {
                    names.push(key.clone());
                    let merged = self.merge(out.get(key), rvalue, names, pos.child(key));
                    names.pop();
                    match merged {
                        Some(value) => {
                            out.insert(key.clone(), value);
                        }
                        None => {
                            out.remove(key);
                        }
                    }
                }
                Some(Value::Object(out))
            }
            Value::Array(ritems) => {
                let list_type = self.list_type(names);
                if list_type == ListType::Atomic {
                    return Some(rhs.clone());
                }
                let litems = match lhs {
                    Some(Value::Array(litems)) => litems.as_slice(),
                    _ => &[],
                };
                Some(Value::Array(
                    self.merge_list(litems, ritems, &list_type, names),
                ))
            }
            _ => Some(rhs.clone()),
        }
    }

    /// Merges two granular lists: items matched by path element; shared items follow the order
    /// of `rhs`, items only in `lhs` keep their place, items only in `rhs` are inserted before
    /// the next shared item (appended when there is none), like structured-merge-diff.
    fn merge_list(
        &self,
        litems: &[Value],
        ritems: &[Value],
        list_type: &ListType,
        names: &mut Vec<String>,
    ) -> Vec<Value> {
        let defaults = self.key_defaults(names, list_type);
        let lpes: Vec<String> = litems
            .iter()
            .map(|v| item_pe(v, list_type, &defaults))
            .collect();
        let rpes: Vec<String> = ritems
            .iter()
            .map(|v| item_pe(v, list_type, &defaults))
            .collect();
        let mut l_first: HashMap<&str, usize> = HashMap::new();
        for (i, pe) in lpes.iter().enumerate() {
            l_first.entry(pe.as_str()).or_insert(i);
        }
        let mut r_first: HashMap<&str, usize> = HashMap::new();
        for (i, pe) in rpes.iter().enumerate() {
            r_first.entry(pe.as_str()).or_insert(i);
        }
        let shared: Vec<&str> = rpes
            .iter()
            .enumerate()
            .filter(|(i, pe)| {
                r_first.get(pe.as_str()) == Some(i) && l_first.contains_key(pe.as_str())
            })
            .map(|(_, pe)| pe.as_str())
            .collect();

        let mut out = Vec::with_capacity(litems.len().max(ritems.len()));
        let mut done: HashSet<&str> = HashSet::new();
        let mut next_shared = 0;
        let (mut li, mut ri) = (0, 0);
        while li < litems.len() || ri < ritems.len() {
            while shared.get(next_shared).is_some_and(|pe| done.contains(pe)) {
                next_shared += 1;
            }
            if let (Some(lpe), Some(litem)) = (lpes.get(li), litems.get(li)) {
                let lpe = lpe.as_str();
                if l_first.get(lpe) != Some(&li) || !r_first.contains_key(lpe) {
                    // Only in lhs (or a duplicate there): keep it where it is.
                    out.push(litem.clone());
                    li += 1;
                    continue;
                }
                if done.contains(lpe) {
                    li += 1;
                    continue;
                }
                if rpes.get(ri).map(String::as_str) == Some(lpe) {
                    if let Some(ritem) = ritems.get(ri) {
                        self.push_merged(&mut out, lpe, Some(litem), ritem, list_type, names);
                    }
                    done.insert(lpe);
                    li += 1;
                    ri += 1;
                    continue;
                }
                if shared.get(next_shared).copied() != Some(lpe) {
                    // Shared, but rhs wants it later: it is emitted when rhs reaches it.
                    li += 1;
                    continue;
                }
            }
            if let (Some(rpe), Some(ritem)) = (rpes.get(ri), ritems.get(ri)) {
                let rpe = rpe.as_str();
                ri += 1;
                if done.contains(rpe) {
                    continue;
                }
                let lmatch = l_first.get(rpe).and_then(|&i| litems.get(i));
                self.push_merged(&mut out, rpe, lmatch, ritem, list_type, names);
                done.insert(rpe);
                continue;
            }
            // Not reachable (a pending shared item is always still ahead in rhs); keep the item.
            if let Some(litem) = litems.get(li) {
                out.push(litem.clone());
            }
            li += 1;
        }
        out
    }

    fn push_merged(
        &self,
        out: &mut Vec<Value>,
        pe: &str,
        lhs: Option<&Value>,
        rhs: &Value,
        list_type: &ListType,
        names: &mut Vec<String>,
    ) {
        let merged = match list_type {
            ListType::Map(_) if is_keyed(pe) => self.merge(lhs, rhs, names, Pos::Other),
            ListType::Map(_) | ListType::Set | ListType::Atomic => Some(rhs.clone()),
        };
        if let Some(value) = merged {
            out.push(value);
        }
    }

    /// Removes from `value` what the applier owned in `last` and nobody owns any more
    /// (`managed` is the union of every other entry and the applier's new set).
    fn prune(
        &self,
        value: &mut Value,
        last: &FieldSet,
        managed: Option<&FieldSet>,
        config: Option<&Value>,
        names: &mut Vec<String>,
        pos: Pos,
    ) {
        match value {
            Value::Object(map) => {
                if self.map_atomic(names, pos) {
                    return;
                }
                for (pe, last_child) in &last.children {
                    let Some(key) = pe.strip_prefix("f:") else {
                        continue;
                    };
                    let managed_child = managed.and_then(|m| m.children.get(pe));
                    let config_child = config.and_then(|c| c.get(key));
                    // A map field stays while anybody owns something in it (or the applied
                    // configuration has it, e.g. as an empty map).
                    let pinned = (pos == Pos::Root && key == "metadata") || config_child.is_some();
                    let kept = pinned || managed_child.is_some_and(|m| !m.is_empty());
                    if !kept {
                        map.remove(key);
                        continue;
                    }
                    if last_child.children.is_empty() {
                        continue;
                    }
                    let Some(child) = map.get_mut(key) else {
                        continue;
                    };
                    let was_empty = is_empty_container(child);
                    names.push(key.to_owned());
                    self.prune(
                        child,
                        last_child,
                        managed_child,
                        config_child,
                        names,
                        pos.child(key),
                    );
                    names.pop();
                    if !pinned && !was_empty && is_empty_container(child) {
                        map.remove(key);
                    }
                }
            }
            Value::Array(items) => {
                let list_type = self.list_type(names);
                let defaults = self.key_defaults(names, &list_type);
                if list_type == ListType::Atomic {
                    return;
                }
                for mut item in std::mem::take(items) {
                    let pe = item_pe(&item, &list_type, &defaults);
                    if let Some(last_child) = last.children.get(&pe) {
                        let managed_child = managed.and_then(|m| m.children.get(&pe));
                        // A list item stays only while somebody owns the item itself.
                        if last_child.member && !managed_child.is_some_and(|m| m.member) {
                            continue;
                        }
                        if !last_child.children.is_empty() {
                            let config_item = config.and_then(Value::as_array).and_then(|c| {
                                c.iter().find(|ci| item_pe(ci, &list_type, &defaults) == pe)
                            });
                            self.prune(
                                &mut item,
                                last_child,
                                managed_child,
                                config_item,
                                names,
                                Pos::Other,
                            );
                        }
                    }
                    items.push(item);
                }
            }
            _ => {}
        }
    }

    /// Removes the `null`s the applied configuration put into the merged object.
    fn strip_nulls(&self, merged: &mut Value, config: &Value, names: &mut Vec<String>, pos: Pos) {
        match (merged, config) {
            (Value::Object(mmap), Value::Object(cmap)) => {
                if self.map_atomic(names, pos) {
                    return;
                }
                for (key, cvalue) in cmap {
                    if cvalue.is_null() {
                        if mmap.get(key).is_some_and(Value::is_null) {
                            mmap.remove(key);
                        }
                    } else if let Some(mchild) = mmap.get_mut(key) {
                        names.push(key.clone());
                        self.strip_nulls(mchild, cvalue, names, pos.child(key));
                        names.pop();
                    }
                }
            }
            (Value::Array(mitems), Value::Array(citems)) => {
                let list_type = self.list_type(names);
                let defaults = self.key_defaults(names, &list_type);
                if !matches!(list_type, ListType::Map(_)) {
                    return;
                }
                for citem in citems {
                    let pe = item_pe(citem, &list_type, &defaults);
                    if !is_keyed(&pe) {
                        continue;
                    }
                    for mitem in mitems.iter_mut() {
                        if item_pe(mitem, &list_type, &defaults) == pe {
                            self.strip_nulls(mitem, citem, names, Pos::Other);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Compares two objects within the scope.
    fn diff(&self, lhs: Option<&Value>, rhs: Option<&Value>) -> Diff {
        let mut diff = Diff::default();
        self.compare(
            lhs,
            rhs,
            &mut Vec::new(),
            &mut Vec::new(),
            Pos::Root,
            &mut diff,
        );
        strip_meta(&mut diff.added);
        strip_meta(&mut diff.modified);
        strip_meta(&mut diff.removed);
        diff
    }

    fn compare(
        &self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        names: &mut Vec<String>,
        pes: &mut Vec<String>,
        pos: Pos,
        diff: &mut Diff,
    ) {
        let (lkind, rkind) = (lhs.map(kind), rhs.map(kind));
        let Some(k) = lkind.or(rkind) else {
            return;
        };
        if let (Some(a), Some(b)) = (lkind, rkind)
            && a != b
        {
            diff.modified.insert(pes);
            self.visit_children(lhs, None, names, pes, pos, diff);
            self.visit_children(None, rhs, names, pes, pos, diff);
            return;
        }
        let granular = match k {
            Kind::Object => !self.map_atomic(names, pos),
            Kind::Array => self.list_type(names) != ListType::Atomic,
            Kind::Scalar => false,
        };
        if granular && !(empty_or_absent(lhs) && empty_or_absent(rhs)) {
            self.visit_children(lhs, rhs, names, pes, pos, diff);
            if lhs.is_none() {
                diff.added.insert(pes);
            } else if rhs.is_none() {
                diff.removed.insert(pes);
            }
        } else {
            match (lhs, rhs) {
                (None, _) => diff.added.insert(pes),
                (_, None) => diff.removed.insert(pes),
                (Some(l), Some(r)) if l != r => diff.modified.insert(pes),
                _ => {}
            }
        }
    }

    /// Compares the children of a granular map or list (one side may be absent).
    fn visit_children(
        &self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        names: &mut Vec<String>,
        pes: &mut Vec<String>,
        pos: Pos,
        diff: &mut Diff,
    ) {
        match lhs.or(rhs) {
            Some(Value::Object(_)) => {
                if self.map_atomic(names, pos) {
                    return;
                }
                let lmap = lhs.and_then(Value::as_object);
                let rmap = rhs.and_then(Value::as_object);
                let keys: BTreeSet<&String> = lmap
                    .into_iter()
                    .flat_map(|m| m.keys())
                    .chain(rmap.into_iter().flat_map(|m| m.keys()))
                    .collect();
                for key in keys {
                    if self.skip(pos, key) {
                        continue;
                    }
                    names.push(key.clone());
                    pes.push(field_pe(key));
                    self.compare(
                        lmap.and_then(|m| m.get(key)),
                        rmap.and_then(|m| m.get(key)),
                        names,
                        pes,
                        pos.child(key),
                        diff,
                    );
                    pes.pop();
                    names.pop();
                }
            }
            Some(Value::Array(_)) => {
                let list_type = self.list_type(names);
                let defaults = self.key_defaults(names, &list_type);
                if list_type == ListType::Atomic {
                    return;
                }
                let (lgroups, rgroups) = (
                    group_items(lhs, &list_type, &defaults),
                    group_items(rhs, &list_type, &defaults),
                );
                let pes_all: BTreeSet<&String> = lgroups.keys().chain(rgroups.keys()).collect();
                for pe in pes_all {
                    let litems = lgroups.get(pe);
                    let ritems = rgroups.get(pe);
                    pes.push(pe.clone());
                    let single =
                        litems.is_none_or(|v| v.len() == 1) && ritems.is_none_or(|v| v.len() == 1);
                    if matches!(list_type, ListType::Map(_)) && single && is_keyed(pe) {
                        self.compare(
                            litems.and_then(|v| v.first().copied()),
                            ritems.and_then(|v| v.first().copied()),
                            names,
                            pes,
                            Pos::Other,
                            diff,
                        );
                    } else {
                        match (litems, ritems) {
                            (None, _) => diff.added.insert(pes),
                            (_, None) => diff.removed.insert(pes),
                            (Some(l), Some(r)) if l != r => diff.modified.insert(pes),
                            _ => {}
                        }
                    }
                    pes.pop();
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// containers/initContainers/env by name, ports by (containerPort, protocol), finalizers a
    /// set, ownerReferences by uid, everything else (args, command...) atomic; `spec.selector`
    /// an atomic map.
    struct TestSchema;

    impl Schema for TestSchema {
        fn list_type(&self, path: &[&str]) -> ListType {
            let keys = |k: &[&str]| ListType::Map(k.iter().map(|s| s.to_string()).collect());
            match path.last().copied() {
                Some("containers" | "initContainers" | "env" | "volumes") => keys(&["name"]),
                Some("ports") => keys(&["containerPort", "protocol"]),
                Some("ownerReferences") => keys(&["uid"]),
                Some("conditions") => keys(&["type"]),
                Some("finalizers") => ListType::Set,
                _ => ListType::Atomic,
            }
        }

        fn map_is_atomic(&self, path: &[&str]) -> bool {
            path == ["spec", "selector"]
        }
    }

    const T0: &str = "2024-01-01T00:00:00Z";
    const T1: &str = "2024-01-01T00:00:01Z";
    const T2: &str = "2024-01-01T00:00:02Z";
    const T3: &str = "2024-01-01T00:00:03Z";

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{
                        "name": "app",
                        "image": image,
                        "ports": [{"containerPort": 80, "protocol": "TCP"}]
                    }]}
                }
            }
        })
    }

    fn entries(obj: &Value) -> Vec<Value> {
        managed_fields_of(obj)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
        managed_fields_of(obj)?
            .as_array()?
            .iter()
            .find(|e| e["manager"] == json!(manager) && e["operation"] == json!(operation))
    }

    fn fields(obj: &Value, manager: &str, operation: &str) -> Value {
        entry(obj, manager, operation)
            .map(|e| e["fieldsV1"].clone())
            .unwrap_or(Value::Null)
    }

    fn managers(obj: &Value) -> Vec<String> {
        entries(obj)
            .iter()
            .map(|e| {
                format!(
                    "{}/{}",
                    e["manager"].as_str().unwrap(),
                    e["operation"].as_str().unwrap()
                )
            })
            .collect()
    }

    fn apply_ok(
        live: Option<&Value>,
        cfg: &Value,
        manager: &str,
        scope: Scope,
        now: &str,
    ) -> Value {
        apply(
            live,
            cfg,
            manager,
            "apps/v1",
            scope,
            false,
            &TestSchema,
            now,
        )
        .unwrap_or_else(|c| panic!("unexpected conflicts: {}", conflict_message(&c)))
    }

    fn create(obj: &Value, manager: &str) -> Value {
        let mut new = obj.clone();
        update(
            None,
            &mut new,
            manager,
            "apps/v1",
            Scope::Main,
            &TestSchema,
            T0,
        );
        new
    }

    #[test]
    fn fields_v1_encoding_of_apply_is_exact() {
        let obj = apply_ok(None, &deployment(2, "nginx:1"), "kubectl", Scope::Main, T0);
        let expected = concat!(
            r#"{"f:metadata":{"f:labels":{"f:app":{}}},"#,
            r#""f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"#,
            r#""f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"#,
            r#""f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}"#
        );
        assert_eq!(fields(&obj, "kubectl", "Apply").to_string(), expected);
        assert_eq!(
            entries(&obj),
            vec![json!({
                "apiVersion": "apps/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": serde_json::from_str::<Value>(expected).unwrap(),
                "manager": "kubectl",
                "operation": "Apply",
                "time": T0,
            })]
        );
        // The object itself is the applied configuration.
        let mut stripped = obj.clone();
        stripped["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(stripped, deployment(2, "nginx:1"));
    }

    #[test]
    fn fields_v1_encoding_of_create_marks_added_maps_and_lists() {
        let mut obj = deployment(2, "nginx:1");
        obj["metadata"]["finalizers"] = json!(["example.com/x"]);
        let created = create(&obj, "kubectl-create");
        let expected = concat!(
            r#"{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/x\"":{}},"f:labels":{".":{},"f:app":{}}},"#,
            r#""f:spec":{".":{},"f:replicas":{},"f:selector":{},"f:template":{".":{},"f:metadata":{".":{},"f:labels":{".":{},"f:app":{}}},"#,
            r#""f:spec":{".":{},"f:containers":{".":{},"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"#,
            r#""f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}"#
        );
        assert_eq!(
            fields(&created, "kubectl-create", "Update").to_string(),
            expected
        );
        let e = entry(&created, "kubectl-create", "Update").unwrap();
        assert_eq!(e["apiVersion"], "apps/v1");
        assert_eq!(e["time"], T0);
        assert_eq!(e["fieldsType"], "FieldsV1");
        assert!(e.get("subresource").is_none());
    }

    #[test]
    fn decoding_and_encoding_round_trip() {
        let text = r#"{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:ports":{"k:{\"protocol\":\"TCP\",\"containerPort\":80}":{".":{},"f:name":{}}}}}"#;
        let set = FieldSet::from_fields_v1(&serde_json::from_str(text).unwrap());
        assert_eq!(
            set.to_fields_v1().to_string(),
            r#"{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{}}}}}"#
        );
        let paths: Vec<String> = set.paths().iter().map(|p| path_string(p)).collect();
        assert_eq!(
            paths,
            vec![
                ".metadata.labels",
                ".metadata.labels.a",
                r#".spec.ports[containerPort=80,protocol="TCP"]"#,
                r#".spec.ports[containerPort=80,protocol="TCP"].name"#,
            ]
        );
    }

    #[test]
    fn two_appliers_share_equal_values_and_conflict_on_differences() {
        let obj = create(&deployment(2, "nginx:1"), "kubectl-create");
        // Equal values: no conflict with the creator, shared ownership.
        let obj = apply_ok(
            Some(&obj),
            &json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
            "alice",
            Scope::Main,
            T1,
        );
        let obj = apply_ok(
            Some(&obj),
            &json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
            "bob",
            Scope::Main,
            T2,
        );
        for m in ["alice", "bob"] {
            assert_eq!(
                fields(&obj, m, "Apply"),
                json!({"f:spec": {"f:replicas": {}}})
            );
        }
        assert!(fields(&obj, "kubectl-create", "Update")["f:spec"]["f:replicas"].is_object());
        assert_eq!(
            managers(&obj),
            ["alice/Apply", "bob/Apply", "kubectl-create/Update"]
        );

        // A different value conflicts with every other owner.
        let err = apply(
            Some(&obj),
            &json!({"metadata": {"name": "web"}, "spec": {"replicas": 5}}),
            "bob",
            "apps/v1",
            Scope::Main,
            false,
            &TestSchema,
            T3,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.replicas\n\
             conflicts with \"kubectl-create\" using apps/v1:\n- .spec.replicas"
        );
        assert_eq!(err[0].manager, "alice");
        assert_eq!(err[0].operation, Operation::Apply);
        assert_eq!(
            err[1].to_string(),
            "conflict with \"kubectl-create\" using apps/v1: .spec.replicas"
        );
        assert_eq!(
            err[1].cause(),
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-create\" using apps/v1", "field": ".spec.replicas"})
        );
    }

    #[test]
    fn single_conflict_message_is_exact() {
        let obj = apply_ok(None, &deployment(2, "nginx:1"), "alice", Scope::Main, T0);
        let mut cfg = deployment(2, "nginx:2");
        cfg["spec"] =
            json!({"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}});
        let err = apply(
            Some(&obj),
            &cfg,
            "bob",
            "apps/v1",
            Scope::Main,
            false,
            &TestSchema,
            T1,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.template.spec.containers[name=\"app\"].image"
        );
        assert_eq!(err.len(), 1);
        assert_eq!(
            err[0].field,
            ".spec.template.spec.containers[name=\"app\"].image"
        );
        let labels = json!({"metadata": {"name": "web", "labels": {"app": "other"}}});
        let err = apply(
            Some(&obj),
            &labels,
            "bob",
            "apps/v1",
            Scope::Main,
            false,
            &TestSchema,
            T1,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"alice\": .metadata.labels.app"
        );
    }

    #[test]
    fn force_transfers_ownership() {
        let obj = apply_ok(None, &deployment(2, "nginx:1"), "alice", Scope::Main, T0);
        let cfg = json!({"metadata": {"name": "web"}, "spec": {"replicas": 7}});
        let obj = apply(
            Some(&obj),
            &cfg,
            "bob",
            "apps/v1",
            Scope::Main,
            true,
            &TestSchema,
            T1,
        )
        .unwrap();
        assert_eq!(obj["spec"]["replicas"], 7);
        assert_eq!(
            fields(&obj, "bob", "Apply"),
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert!(
            fields(&obj, "alice", "Apply")["f:spec"]
                .get("f:replicas")
                .is_none()
        );
        assert!(fields(&obj, "alice", "Apply")["f:spec"]["f:template"].is_object());
        // alice's entry keeps its time; bob's is new.
        assert_eq!(entry(&obj, "alice", "Apply").unwrap()["time"], T0);
        assert_eq!(entry(&obj, "bob", "Apply").unwrap()["time"], T1);
        // alice re-applying her old value now conflicts with bob.
        let err = apply(
            Some(&obj),
            &deployment(2, "nginx:1"),
            "alice",
            "apps/v1",
            Scope::Main,
            false,
            &TestSchema,
            T2,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"bob\": .spec.replicas"
        );
    }

    #[test]
    fn dropping_a_field_removes_it_unless_someone_else_owns_it() {
        let mut cfg = deployment(2, "nginx:1");
        cfg["metadata"]["labels"] = json!({"app": "web", "tier": "front"});
        cfg["metadata"]["annotations"] = json!({"note": "x"});
        let obj = apply_ok(None, &cfg, "alice", Scope::Main, T0);
        // bob shares replicas.
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}}),
            "bob",
            Scope::Main,
            T1,
        );
        // alice drops tier, the annotations and replicas.
        let mut cfg2 = deployment(2, "nginx:1");
        cfg2["spec"].as_object_mut().unwrap().remove("replicas");
        let obj = apply_ok(Some(&obj), &cfg2, "alice", Scope::Main, T2);
        assert_eq!(obj["metadata"]["labels"], json!({"app": "web"}));
        assert!(obj["metadata"].get("annotations").is_none());
        assert_eq!(obj["spec"]["replicas"], 2, "bob still owns it");
        assert!(
            fields(&obj, "alice", "Apply")["f:spec"]
                .get("f:replicas")
                .is_none()
        );
        // bob drops it too: nobody owns it any more, it goes away and bob's entry is dropped.
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "web"}}),
            "bob",
            Scope::Main,
            T3,
        );
        assert!(obj["spec"].get("replicas").is_none());
        assert!(entry(&obj, "bob", "Apply").is_none());
        assert_eq!(managers(&obj), ["alice/Apply"]);
        // Applying nothing removes everything alice applied (and the emptied maps).
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "web"}}),
            "alice",
            Scope::Main,
            T3,
        );
        assert_eq!(
            obj,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}})
        );
    }

    #[test]
    fn unowned_fields_survive_pruning() {
        let obj = apply_ok(
            None,
            &json!({"metadata": {"name": "a"}, "spec": {"x": 1, "y": 2}}),
            "alice",
            Scope::Whole,
            T0,
        );
        let mut obj = obj;
        obj["spec"]["unowned"] = json!(true);
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "a"}, "spec": {"x": 1}}),
            "alice",
            Scope::Whole,
            T1,
        );
        assert_eq!(obj["spec"], json!({"x": 1, "unowned": true}));
    }

    #[test]
    fn associative_list_merge_and_item_removal() {
        let cfg = |containers: Value| json!({"metadata": {"name": "p"}, "spec": {"containers": containers}});
        let obj = apply_ok(
            None,
            &cfg(json!([
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}], "args": ["x", "y"]},
                {"name": "sidecar", "image": "side:1"}
            ])),
            "alice",
            Scope::Whole,
            T0,
        );
        // bob adds his own container and an env var to alice's container.
        let obj = apply_ok(
            Some(&obj),
            &cfg(json!([
                {"name": "app", "env": [{"name": "B", "value": "2"}]},
                {"name": "logger", "image": "log:1"}
            ])),
            "bob",
            Scope::Whole,
            T1,
        );
        assert_eq!(
            obj["spec"]["containers"],
            json!([
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "args": ["x", "y"]},
                {"name": "sidecar", "image": "side:1"},
                {"name": "logger", "image": "log:1"}
            ])
        );
        assert_eq!(
            fields(&obj, "bob", "Apply").to_string(),
            r#"{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}},"k:{\"name\":\"logger\"}":{".":{},"f:image":{},"f:name":{}}}}}"#
        );
        // alice drops the sidecar, env A and replaces the atomic args: the sidecar goes away, the
        // app container stays (bob owns it too).
        let obj = apply_ok(
            Some(&obj),
            &cfg(json!([{"name": "app", "image": "app:2", "args": ["z"]}])),
            "alice",
            Scope::Whole,
            T2,
        );
        assert_eq!(
            obj["spec"]["containers"],
            json!([
                {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}], "args": ["z"]},
                {"name": "logger", "image": "log:1"}
            ])
        );
        // bob drops everything: app stays for alice, env goes away, logger goes away.
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "p"}}),
            "bob",
            Scope::Whole,
            T3,
        );
        assert_eq!(
            obj["spec"]["containers"],
            json!([{"name": "app", "image": "app:2", "args": ["z"]}])
        );
    }

    #[test]
    fn associative_list_order_follows_structured_merge_diff() {
        let cfg = |names: &[&str]| {
            json!({"metadata": {"name": "p"}, "spec": {"containers":
            names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}})
        };
        let live = apply_ok(None, &cfg(&["a", "b", "c"]), "alice", Scope::Whole, T0);
        let names = |obj: &Value| -> Vec<String> {
            obj["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            names(&apply_ok(
                Some(&live),
                &cfg(&["b", "x"]),
                "bob",
                Scope::Whole,
                T1
            )),
            ["a", "b", "c", "x"]
        );
        assert_eq!(
            names(&apply_ok(
                Some(&live),
                &cfg(&["x", "b"]),
                "bob",
                Scope::Whole,
                T1
            )),
            ["a", "x", "b", "c"]
        );
        assert_eq!(
            names(&apply_ok(
                Some(&live),
                &cfg(&["c", "a"]),
                "bob",
                Scope::Whole,
                T1
            )),
            ["b", "c", "a"]
        );
    }

    #[test]
    fn set_list_finalizers() {
        let cfg = |f: Value| json!({"metadata": {"name": "p", "finalizers": f}});
        let obj = apply_ok(
            None,
            &cfg(json!(["a.io/x", "a.io/y"])),
            "alice",
            Scope::Whole,
            T0,
        );
        assert_eq!(
            fields(&obj, "alice", "Apply").to_string(),
            r#"{"f:metadata":{"f:finalizers":{"v:\"a.io/x\"":{},"v:\"a.io/y\"":{}}}}"#
        );
        // Union; like structured-merge-diff, a new item goes before the next shared one.
        let obj = apply_ok(
            Some(&obj),
            &cfg(json!(["b.io/z", "a.io/x"])),
            "bob",
            Scope::Whole,
            T1,
        );
        assert_eq!(
            obj["metadata"]["finalizers"],
            json!(["b.io/z", "a.io/x", "a.io/y"])
        );
        let obj = apply_ok(
            Some(&obj),
            &cfg(json!(["a.io/x", "b.io/z", "b.io/w"])),
            "bob",
            Scope::Whole,
            T1,
        );
        assert_eq!(
            obj["metadata"]["finalizers"],
            json!(["a.io/x", "a.io/y", "b.io/z", "b.io/w"])
        );
        // alice drops both of hers: x stays (bob owns it), y goes.
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "p"}}),
            "alice",
            Scope::Whole,
            T2,
        );
        assert_eq!(
            obj["metadata"]["finalizers"],
            json!(["a.io/x", "b.io/z", "b.io/w"])
        );
        assert!(entry(&obj, "alice", "Apply").is_none());
        // A controller removes a finalizer with an update: it leaves bob's set.
        let mut new = obj.clone();
        new["metadata"]["finalizers"] = json!(["b.io/z", "b.io/w"]);
        update(
            Some(&obj),
            &mut new,
            "ctrl",
            "v1",
            Scope::Whole,
            &TestSchema,
            T3,
        );
        assert_eq!(
            fields(&new, "bob", "Apply").to_string(),
            r#"{"f:metadata":{"f:finalizers":{"v:\"b.io/w\"":{},"v:\"b.io/z\"":{}}}}"#
        );
        assert!(
            entry(&new, "ctrl", "Update").is_none(),
            "removing fields owns nothing"
        );
    }

    #[test]
    fn update_steals_ownership_then_applier_conflicts() {
        let obj = apply_ok(None, &deployment(2, "nginx:1"), "alice", Scope::Main, T0);
        // kubectl scale/edit changes replicas with a PUT that echoes managedFields.
        let mut new = obj.clone();
        new["spec"]["replicas"] = json!(5);
        update(
            Some(&obj),
            &mut new,
            "kubectl-edit",
            "apps/v1",
            Scope::Main,
            &TestSchema,
            T1,
        );
        assert_eq!(
            fields(&new, "kubectl-edit", "Update"),
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert!(
            fields(&new, "alice", "Apply")["f:spec"]
                .get("f:replicas")
                .is_none()
        );
        assert_eq!(entry(&new, "alice", "Apply").unwrap()["time"], T0);
        assert_eq!(managers(&new), ["alice/Apply", "kubectl-edit/Update"]);
        // Re-applying the same configuration now conflicts.
        let err = apply(
            Some(&new),
            &deployment(2, "nginx:1"),
            "alice",
            "apps/v1",
            Scope::Main,
            false,
            &TestSchema,
            T2,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: .spec.replicas"
        );
        // Applying without replicas does not remove it (alice does not own it any more).
        let mut cfg = deployment(2, "nginx:1");
        cfg["spec"].as_object_mut().unwrap().remove("replicas");
        let applied = apply_ok(Some(&new), &cfg, "alice", Scope::Main, T2);
        assert_eq!(applied["spec"]["replicas"], 5);
        // A second update by the same manager merges into its entry; a different apiVersion is
        // a different entry.
        let mut newer = new.clone();
        newer["metadata"]["labels"]["extra"] = json!("1");
        update(
            Some(&new),
            &mut newer,
            "kubectl-edit",
            "apps/v1",
            Scope::Main,
            &TestSchema,
            T3,
        );
        assert_eq!(
            fields(&newer, "kubectl-edit", "Update"),
            json!({"f:metadata": {"f:labels": {"f:extra": {}}}, "f:spec": {"f:replicas": {}}})
        );
        assert_eq!(entry(&newer, "kubectl-edit", "Update").unwrap()["time"], T3);
        let mut newest = newer.clone();
        newest["metadata"]["labels"]["other"] = json!("1");
        update(
            Some(&newer),
            &mut newest,
            "kubectl-edit",
            "apps/v1beta1",
            Scope::Main,
            &TestSchema,
            T3,
        );
        assert_eq!(entries(&newest).len(), 3);
    }

    #[test]
    fn apply_replaces_own_apply_entry_and_keeps_own_update_entries() {
        let obj = create(
            &json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"a": 1}}),
            "ctrl",
        );
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "a"}, "spec": {"b": 1}}),
            "ctrl",
            Scope::Whole,
            T1,
        );
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "a"}, "spec": {"c": 1}}),
            "ctrl",
            Scope::Whole,
            T2,
        );
        assert_eq!(obj["spec"], json!({"a": 1, "c": 1}));
        assert_eq!(managers(&obj), ["ctrl/Apply", "ctrl/Update"]);
        assert_eq!(
            fields(&obj, "ctrl", "Apply"),
            json!({"f:spec": {"f:c": {}}})
        );
        // The update entry of the same manager is another manager: changing its fields conflicts.
        let err = apply(
            Some(&obj),
            &json!({"spec": {"a": 2}}),
            "ctrl",
            "apps/v1",
            Scope::Whole,
            false,
            &TestSchema,
            T3,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"ctrl\" using apps/v1: .spec.a"
        );
    }

    #[test]
    fn status_scope_is_separate() {
        let cfg = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "a"},
            "spec": {"size": 1}, "status": {"phase": "Pending"}});
        // Main scope ignores status.
        let obj = apply_ok(None, &cfg, "user", Scope::Main, T0);
        assert!(obj.get("status").is_none());
        assert_eq!(
            fields(&obj, "user", "Apply"),
            json!({"f:spec": {"f:size": {}}})
        );
        // Status scope only considers status, and tags the entry.
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "a", "labels": {"no": "pe"}},
            "spec": {"size": 9}, "status": {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True"}]}}),
            "ctrl",
            Scope::Status,
            T1,
        );
        assert_eq!(obj["spec"], json!({"size": 1}));
        assert!(obj["metadata"].get("labels").is_none());
        assert_eq!(obj["status"]["phase"], "Ready");
        let e = entry(&obj, "ctrl", "Apply").unwrap();
        assert_eq!(e["subresource"], "status");
        assert_eq!(
            e["fieldsV1"].to_string(),
            r#"{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:phase":{}}}"#
        );
        // The same manager applying to the main resource is another entry; main applies do not
        // touch status and do not conflict with status owners.
        let obj = apply_ok(
            Some(&obj),
            &json!({"metadata": {"name": "a"}, "spec": {"size": 1}, "status": {"phase": "X"}}),
            "ctrl",
            Scope::Main,
            T2,
        );
        assert_eq!(obj["status"]["phase"], "Ready");
        assert_eq!(managers(&obj), ["user/Apply", "ctrl/Apply", "ctrl/Apply"]);
        // A status update by another manager steals the phase from the status applier.
        let mut new = obj.clone();
        new["status"]["phase"] = json!("Failed");
        new["spec"]["size"] = json!(100); // ignored: not in scope
        update(
            Some(&obj),
            &mut new,
            "kubelet",
            "v1",
            Scope::Status,
            &TestSchema,
            T3,
        );
        let e = entry(&new, "kubelet", "Update").unwrap();
        assert_eq!(e["subresource"], "status");
        assert_eq!(e["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
        let status_apply = managed_fields_of(&new)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == "ctrl" && e.get("subresource").is_some())
            .unwrap();
        assert!(
            status_apply["fieldsV1"]["f:status"]
                .get("f:phase")
                .is_none()
        );
        let err = apply(Some(&new), &json!({"status": {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True"}]}}),
            "ctrl", "v1", Scope::Status, false, &TestSchema, T3).unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"kubelet\" with subresource \"status\" using v1: .status.phase"
        );
    }

    #[test]
    fn update_tracks_removals_and_drops_empty_entries() {
        let obj = create(
            &json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"a": 1, "b": {"c": 1}}}),
            "creator",
        );
        assert_eq!(
            fields(&obj, "creator", "Update").to_string(),
            r#"{"f:metadata":{"f:labels":{".":{},"f:x":{}}},"f:spec":{".":{},"f:a":{},"f:b":{".":{},"f:c":{}}}}"#
        );
        // Another writer replaces everything: the creator loses all of it but `.spec` itself
        // (a member without children encodes as `{}`).
        let mut new = json!({"metadata": {"name": "a", "managedFields": obj["metadata"]["managedFields"].clone()}, "spec": {"a": 2}});
        update(
            Some(&obj),
            &mut new,
            "other",
            "v1",
            Scope::Whole,
            &TestSchema,
            T1,
        );
        assert_eq!(managers(&new), ["creator/Update", "other/Update"]);
        assert_eq!(fields(&new, "creator", "Update"), json!({"f:spec": {}}));
        assert_eq!(
            fields(&new, "other", "Update"),
            json!({"f:spec": {"f:a": {}}})
        );
        // A write that only removes fields owns nothing; with nobody left the key disappears.
        let mut newer = json!({"metadata": {"name": "a", "managedFields": new["metadata"]["managedFields"].clone()}});
        update(
            Some(&new),
            &mut newer,
            "third",
            "v1",
            Scope::Whole,
            &TestSchema,
            T2,
        );
        assert!(newer["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn update_uses_live_entries_when_request_omits_them_and_resets_on_empty_entry() {
        let obj = create(
            &json!({"metadata": {"name": "a"}, "spec": {"a": 1}}),
            "creator",
        );
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"a": 1, "b": 2}});
        update(
            Some(&obj),
            &mut new,
            "writer",
            "v1",
            Scope::Whole,
            &TestSchema,
            T1,
        );
        assert_eq!(managers(&new), ["creator/Update", "writer/Update"]);
        // Entries sorted by time: the older one first.
        assert_eq!(entries(&new)[0]["time"], T0);
        let mut reset = new.clone();
        reset["metadata"]["managedFields"] = json!([{}]);
        update(
            Some(&new),
            &mut reset,
            "writer",
            "v1",
            Scope::Whole,
            &TestSchema,
            T2,
        );
        assert!(reset["metadata"].get("managedFields").is_none());
        // Unchanged writes leave the entries (and their times) alone.
        let mut same = new.clone();
        update(
            Some(&new),
            &mut same,
            "writer",
            "v1",
            Scope::Whole,
            &TestSchema,
            T3,
        );
        assert_eq!(same, new);
    }

    #[test]
    fn entries_are_sorted_like_the_real_server() {
        let obj = create(&json!({"metadata": {"name": "a"}, "spec": {"a": 1}}), "zed");
        let obj = apply_ok(
            Some(&obj),
            &json!({"spec": {"b": 1}}),
            "bob",
            Scope::Whole,
            T2,
        );
        let obj = apply_ok(
            Some(&obj),
            &json!({"spec": {"c": 1}}),
            "alice",
            Scope::Whole,
            T2,
        );
        assert_eq!(managers(&obj), ["alice/Apply", "bob/Apply", "zed/Update"]);
    }

    #[test]
    fn nulls_in_applied_configuration() {
        // A null replacing somebody else's scalar is a conflicting change; forced, it removes it.
        let obj = apply_ok(
            None,
            &json!({"metadata": {"name": "a"}, "spec": {"a": 1}}),
            "alice",
            Scope::Whole,
            T0,
        );
        let null_a = json!({"spec": {"a": null}});
        let err = apply(
            Some(&obj),
            &null_a,
            "bob",
            "v1",
            Scope::Whole,
            false,
            &TestSchema,
            T1,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.a"
        );
        let obj = apply(
            Some(&obj),
            &null_a,
            "bob",
            "v1",
            Scope::Whole,
            true,
            &TestSchema,
            T1,
        )
        .unwrap();
        assert_eq!(obj["spec"], json!({}));
        assert_eq!(managers(&obj), ["bob/Apply"]);
        // A null for an absent field is owned; a null over a map or list is ignored.
        let live = apply_ok(
            None,
            &json!({"metadata": {"name": "a"}, "spec": {"m": {"k": 1}}}),
            "alice",
            Scope::Whole,
            T0,
        );
        let obj = apply_ok(
            Some(&live),
            &json!({"spec": {"a": null, "m": null}}),
            "bob",
            Scope::Whole,
            T1,
        );
        assert_eq!(obj["spec"], json!({"m": {"k": 1}}));
        assert_eq!(fields(&obj, "bob", "Apply"), json!({"f:spec": {"f:a": {}}}));
        let err = apply(
            Some(&obj),
            &json!({"spec": {"a": 3}}),
            "carol",
            "v1",
            Scope::Whole,
            false,
            &TestSchema,
            T2,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"bob\": .spec.a"
        );
        // Server-set metadata in the configuration is ignored, even as null.
        let obj = apply_ok(
            Some(&live),
            &json!({"metadata": {"name": "zzz", "creationTimestamp": null, "uid": "u"}}),
            "x",
            Scope::Whole,
            T1,
        );
        assert_eq!(obj["metadata"]["name"], "a");
        assert!(obj["metadata"].get("uid").is_none());
    }

    #[test]
    fn owner_references_are_keyed_by_uid() {
        let obj = apply_ok(
            None,
            &json!({"metadata": {"name": "a", "ownerReferences": [
            {"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u-1"}]}}),
            "alice",
            Scope::Whole,
            T0,
        );
        assert_eq!(
            fields(&obj, "alice", "Apply").to_string(),
            r#"{"f:metadata":{"f:ownerReferences":{"k:{\"uid\":\"u-1\"}":{".":{},"f:apiVersion":{},"f:kind":{},"f:name":{},"f:uid":{}}}}}"#
        );
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let live = apply_ok(
            None,
            &json!({"metadata": {"name": "a"}, "spec": {"containers": [{"name": "a"}]}}),
            "alice",
            Scope::Whole,
            T0,
        );
        // Non-object configuration: no-op.
        for cfg in [json!(null), json!([1, 2]), json!("x"), json!(3)] {
            assert_eq!(
                apply(
                    Some(&live),
                    &cfg,
                    "m",
                    "v1",
                    Scope::Whole,
                    false,
                    &TestSchema,
                    T1
                )
                .unwrap(),
                live
            );
            assert_eq!(
                apply(None, &cfg, "m", "v1", Scope::Main, false, &TestSchema, T1).unwrap(),
                json!({})
            );
        }
        // Lists where maps are expected and the other way round, items without keys,
        // duplicates, scalars in associative lists.
        let weird = json!({"metadata": {"name": "a", "labels": ["x"], "finalizers": {"a": 1}},
            "spec": {"containers": [{"image": "no-name"}, "scalar", {"name": "a"}, {"name": "a", "image": "dup"}, null, [1]],
                     "selector": [1], "x": {"ports": 3}}});
        let obj = apply(
            Some(&live),
            &weird,
            "bob",
            "v1",
            Scope::Whole,
            true,
            &TestSchema,
            T1,
        )
        .unwrap();
        assert_eq!(
            obj["spec"]["containers"][2],
            json!({"name": "a", "image": "dup"})
        );
        let _ = apply(
            Some(&obj),
            &live,
            "bob",
            "v1",
            Scope::Whole,
            false,
            &TestSchema,
            T2,
        );
        let _ = apply(
            Some(&obj),
            &json!({"metadata": "str", "spec": 1}),
            "bob",
            "v1",
            Scope::Whole,
            true,
            &TestSchema,
            T2,
        );
        let _ = apply(
            Some(&json!([1])),
            &weird,
            "bob",
            "v1",
            Scope::Whole,
            true,
            &TestSchema,
            T2,
        );
        // Garbage managedFields.
        for mf in [
            json!("x"),
            json!([1]),
            json!([{"fieldsV1": 3, "operation": 5}]),
            json!([{"fieldsV1": {"f:spec": 1, "k:{bad": {}}}]),
        ] {
            let mut o = obj.clone();
            o["metadata"]["managedFields"] = mf;
            let _ = apply(
                Some(&o),
                &weird,
                "bob",
                "v1",
                Scope::Whole,
                false,
                &TestSchema,
                T2,
            );
            let mut n = o.clone();
            n["spec"] = json!([1, {"a": null}]);
            update(Some(&o), &mut n, "w", "v1", Scope::Whole, &TestSchema, T2);
            update(None, &mut n, "w", "v1", Scope::Main, &TestSchema, T2);
        }
        let mut scalar = json!(5);
        update(
            Some(&live),
            &mut scalar,
            "w",
            "v1",
            Scope::Whole,
            &TestSchema,
            T2,
        );
        assert_eq!(scalar, json!(5));
        let mut meta_str = json!({"metadata": "x", "spec": {"a": 1}});
        update(
            None,
            &mut meta_str,
            "w",
            "v1",
            Scope::Whole,
            &DeducedSchema,
            T2,
        );
        assert_eq!(meta_str["metadata"], "x");
        assert_eq!(conflict_message(&[]), "Apply failed with 0 conflicts: ");
    }

    #[test]
    fn type_changes_are_modifications() {
        let obj = apply_ok(
            None,
            &json!({"metadata": {"name": "a"}, "spec": {"v": {"x": 1}}}),
            "alice",
            Scope::Whole,
            T0,
        );
        // The map's fields are removed (not modified), like structured-merge-diff: no conflict,
        // alice just loses them.
        let obj = apply_ok(
            Some(&obj),
            &json!({"spec": {"v": 3}}),
            "bob",
            Scope::Whole,
            T1,
        );
        assert_eq!(obj["spec"]["v"], 3);
        assert!(entry(&obj, "alice", "Apply").is_none());
        assert_eq!(fields(&obj, "bob", "Apply"), json!({"f:spec": {"f:v": {}}}));
        // The other way round, the scalar's owner conflicts.
        let err = apply(
            Some(&obj),
            &json!({"spec": {"v": {"x": 1}}}),
            "alice",
            "v1",
            Scope::Whole,
            false,
            &TestSchema,
            T2,
        )
        .unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"bob\": .spec.v"
        );
    }

    /// Like the real server, an applied item that omits a defaulted key field (`protocol`) is the
    /// live item that has the default, not a new one.
    #[test]
    fn omitted_key_fields_take_their_schema_default() {
        struct Defaulted;
        impl Schema for Defaulted {
            fn list_type(&self, path: &[&str]) -> ListType {
                TestSchema.list_type(path)
            }
            fn list_key_default(&self, _path: &[&str], key: &str) -> Option<Value> {
                (key == "protocol").then(|| json!("TCP"))
            }
        }
        let cfg = |image: &str| {
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": image, "ports": [{"containerPort": 80, "name": "http"}]}
            ]}}}})
        };
        let mut live = apply(
            None,
            &cfg("a"),
            "ctl",
            "apps/v1",
            Scope::Main,
            false,
            &Defaulted,
            T0,
        )
        .unwrap();
        // The server defaults the protocol after the merge.
        live["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] = json!("TCP");
        let obj = apply(
            Some(&live),
            &cfg("b"),
            "ctl",
            "apps/v1",
            Scope::Main,
            false,
            &Defaulted,
            T1,
        )
        .unwrap();
        let c = &obj["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["image"], "b");
        assert_eq!(
            c["ports"],
            json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}])
        );
        let ports = &fields(&obj, "ctl", "Apply")["f:spec"]["f:template"]["f:spec"]["f:containers"]
            [r#"k:{"name":"app"}"#]["f:ports"];
        assert!(
            ports[r#"k:{"containerPort":80,"protocol":"TCP"}"#].is_object(),
            "{ports}"
        );
    }
}
