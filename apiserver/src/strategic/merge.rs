//! The recursive merge: maps (`null` deletes a key, any other value replaces, list fields are handed to
//! the list merge), lists (by merge key, as a union of scalars, or replaced, with the order apimachinery
//! gives the result), and the `$setElementOrder` of a list field. Maps and lists hold each other, so their
//! merges call each other and live in one file.

use serde_json::{Map, Value};

use super::directives::{
    Clean, DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE, SET_ELEMENT_ORDER, apply_retain_keys, clean,
    clean_list, extract_key, unknown_patch_type,
};
use super::error::PatchError;
use super::go_errors::{bad_arg_type, go_fmt_list, no_merge_key};
use super::go_types::{Kind, go_type};
use super::lists::{
    element_kind, merge_key_value_equal, normalize_order, partition_maps, partition_scalars,
};
use super::strategies::{Field, Smp, Ty, lookup};

/// Merges `patch` into `original`, both maps of type `ty`.
pub(super) fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    ty: Ty,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.remove(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => Ok(strip_map(patch)),
            Some("delete") => Ok(Map::new()),
            _ => {
                patch.insert(DIRECTIVE.to_string(), directive.clone());
                Err(unknown_patch_type(&directive, &patch))
            }
        };
    }

    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, ty)?;

    let mut keys: Vec<String> = patch.keys().cloned().collect();
    keys.sort();
    for patch_key in keys {
        let Some(patch_value) = patch.remove(&patch_key) else {
            continue;
        };
        let (key, delete_list) = if patch_key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            (extract_key(&patch_key, DELETE_FROM_PRIMITIVE_LIST)?, true)
        } else {
            (patch_key, false)
        };

        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }

        let Some(slot) = original.get_mut(&key) else {
            if !delete_list && let Some(value) = clean(patch_value, Clean::Drop) {
                original.insert(key, value);
            }
            continue;
        };

        match (slot, patch_value) {
            (Value::Object(current), Value::Object(patch_map)) => {
                let field = lookup(ty, &key);
                let current = std::mem::take(current);
                let merged = if field.smp == Smp::ReplaceMap {
                    strip_map(patch_map)
                } else {
                    merge_map(current, patch_map, field.ty)?
                };
                original.insert(key, Value::Object(merged));
            }
            (Value::Array(current), Value::Array(patch_list)) => {
                let field = lookup(ty, &key);
                let current = std::mem::take(current);
                let merged = merge_list_field(current, patch_list, field, delete_list)?;
                original.insert(key, Value::Array(merged));
            }
            (slot, patch_value) if go_type(slot) == go_type(&patch_value) => {
                // Two scalars of one type: the patch wins (even for a parallel delete list,
                // as in apimachinery).
                *slot = patch_value;
            }
            (_, patch_value) => {
                if delete_list {
                    continue;
                }
                match clean(patch_value, Clean::Drop) {
                    Some(value) => {
                        original.insert(key, value);
                    }
                    None => {
                        original.remove(&key);
                    }
                }
            }
        }
    }
    Ok(original)
}

pub(super) fn strip_map(map: Map<String, Value>) -> Map<String, Value> {
    match clean(Value::Object(map), Clean::Strip) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// Merges a list field according to its strategy.
pub(super) fn merge_list_field(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: Field,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    match field.smp {
        Smp::Merge(key) => merge_list(original, patch, field.ty, key, delete_list),
        // A parallel delete list deletes whatever the field's strategy.
        _ if delete_list => merge_list(original, patch, field.ty, "", true),
        _ => Ok(clean_list(patch, Clean::Strip)),
    }
}

/// `$setElementOrder/<field>`: merges `<field>` and puts it in the given order.
pub(super) fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    ty: Ty,
) -> Result<(), PatchError> {
    let mut directives: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    directives.sort();
    for directive in directives {
        let Some(order) = patch.remove(&directive) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type("[]interface {}", &order));
        };
        let key = extract_key(&directive, SET_ELEMENT_ORDER)?;
        let original_list = match original.get(&key) {
            None => None,
            Some(Value::Array(list)) => Some(list.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let patch_list = match patch.get(&key) {
            None => None,
            Some(Value::Array(list)) => Some(list.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let field = lookup(ty, &key);
        let merge_key = match field.smp {
            Smp::Merge(k) => k,
            _ => "",
        };
        validate_patch_with_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;

        let merged = match (&original_list, &patch_list) {
            (Some(current), None) => current.clone(),
            (None, Some(list)) => clean_list(list.clone(), Clean::Drop),
            (Some(current), Some(list)) => {
                merge_list_field(current.clone(), list.clone(), field, false)?
            }
            (None, None) => continue,
        };

        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_scalars(merged, &order)
        } else {
            partition_maps(merged, &order, merge_key)?
        };
        let server_order = original_list.unwrap_or_default();
        let kind = element_kind(&[&server_order, patch_list.as_deref().unwrap_or(&[])])?;
        let ordered = normalize_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            merge_key,
            kind,
        )?;
        original.insert(key.clone(), Value::Array(ordered));
        patch.remove(&key);
    }
    Ok(())
}

/// Merges two lists of a field with `patchStrategy:"merge"` (or a parallel delete list).
pub(super) fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    ty: Ty,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_kind(&[&original, &patch])?;
    let (server_order, patch_items_order, merged) = if kind != Kind::Map {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|item| !patch.contains(item))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for item in original.iter().chain(patch.iter()) {
            if !merged.contains(item) {
                merged.push(item.clone());
            }
        }
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(PatchError::Other(format!(
                "cannot merge lists without merge key for {ty:?}"
            )));
        }
        let (original, patch) = apply_special_items(original, patch, merge_key)?;
        let merged = merge_items_by_key(original.clone(), &patch, ty, merge_key)?;
        (original, patch, merged)
    };

    let (patch_items, server_only) = if merge_key.is_empty() {
        partition_scalars(merged, &patch_items_order)
    } else {
        partition_maps(merged, &patch_items_order, merge_key)?
    };
    normalize_order(
        patch_items,
        server_only,
        &patch_items_order,
        &server_order,
        merge_key,
        kind,
    )
}

/// Handles the `$patch` items of a keyed list: deletions shrink the original, a
/// `replace` item makes the other patch items the whole list. Returns the new original
/// and the patch without those items.
pub(super) fn apply_special_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        let Some(directive) = map.get(DIRECTIVE) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let value = map
                    .get(merge_key)
                    .ok_or_else(|| no_merge_key(map, merge_key))?;
                let mut kept = Vec::with_capacity(original.len());
                for existing in original {
                    let Value::Object(existing_map) = &existing else {
                        return Err(PatchError::Other(format!(
                            "value for key {} is not a map",
                            kept.len()
                        )));
                    };
                    if existing_map.get(merge_key) != Some(value) {
                        kept.push(existing);
                    }
                }
                original = kept;
            }
            Some("replace") => replace = true,
            Some("merge") => return Err(PatchError::MergingListsNotSupported),
            _ => return Err(unknown_patch_type(directive, map)),
        }
    }
    if replace {
        return Ok((clean_list(plain, Clean::Strip), Vec::new()));
    }
    Ok((original, plain))
}

/// Merges each patch item into the original item with the same key, or appends it.
pub(super) fn merge_items_by_key(
    mut merged: Vec<Value>,
    patch: &[Value],
    ty: Ty,
    merge_key: &str,
) -> Result<Vec<Value>, PatchError> {
    for item in patch {
        let Value::Object(item_map) = item else {
            return Err(bad_arg_type("map[string]interface {}", item));
        };
        let value = item_map
            .get(merge_key)
            .ok_or_else(|| no_merge_key(item_map, merge_key))?;
        let mut found = None;
        for (index, existing) in merged.iter().enumerate() {
            let Value::Object(existing_map) = existing else {
                return Err(PatchError::Other(format!(
                    "value for key {index} is not a map"
                )));
            };
            if existing_map.get(merge_key) == Some(value) {
                found = Some(index);
                break;
            }
        }
        match found {
            Some(index) => {
                let current = match std::mem::take(&mut merged[index]) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                merged[index] = Value::Object(merge_map(current, item_map.clone(), ty)?);
            }
            None => merged.push(clean(item.clone(), Clean::Strip).unwrap_or(Value::Null)),
        }
    }
    Ok(merged)
}

/// The items of the patch list (less deletions and directives) must come in the order of
/// the `$setElementOrder` list.
pub(super) fn validate_patch_with_order(
    patch: &[Value],
    order: &[Value],
    merge_key: &str,
) -> Result<(), PatchError> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let kept: Vec<&Value> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        let mut kept = Vec::new();
        for item in patch {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if map.get(DIRECTIVE).and_then(Value::as_str) != Some("delete") {
                kept.push(item);
            }
        }
        kept
    };
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE))
        {
            p += 1;
            continue;
        }
        if merge_key_value_equal(kept[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() && o >= order.len() {
        return Err(PatchError::SetElementOrderMismatch {
            patch: go_fmt_list(patch),
            order: go_fmt_list(order),
        });
    }
    Ok(())
}
