//! Server-side apply: merging an applied configuration into the live object, and removing what the
//! applier stopped applying.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::conflicts::{Conflict, build_conflicts};
use super::entries::{Entry, decode_entries, managed_fields_of, write_entries};
use super::field_set::empty_object;
use super::field_set::{FieldSet, is_keyed, item_pe, strip_meta};
use super::schema::{ListType, Schema};
use super::scope::{Operation, Scope};
use super::walk::{Ctx, Pos, copy_identity, is_empty_container};

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

impl Ctx<'_> {
    /// Merges the (normalized) configuration `rhs` into `lhs`; `None` means "no value".
    pub(super) fn merge(
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
    pub(super) fn merge_list(
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

    pub(super) fn push_merged(
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
    pub(super) fn prune(
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
    pub(super) fn strip_nulls(
        &self,
        merged: &mut Value,
        config: &Value,
        names: &mut Vec<String>,
        pos: Pos,
    ) {
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
}
