//! Field ownership of every other write (create, update, patches): an `Update` entry owning what changed.

use std::collections::BTreeSet;

use serde_json::Value;

use super::entries::{Entry, decode_entries, is_reset, managed_fields_of, write_entries};
use super::field_set::{field_pe, is_keyed, strip_meta};
use super::schema::{ListType, Schema};
use super::scope::{Operation, Scope};
use super::walk::{Ctx, Diff, Kind, Pos, empty_or_absent, group_items, kind};

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

impl Ctx<'_> {
    /// Compares two objects within the scope.
    pub(super) fn diff(&self, lhs: Option<&Value>, rhs: Option<&Value>) -> Diff {
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

    pub(super) fn compare(
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
    pub(super) fn visit_children(
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
