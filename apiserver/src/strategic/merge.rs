//! Merging maps: recursion, `null` deletes a key, any other value replaces, and list fields are handed to
//! the list merge.

use serde_json::{Map, Value};

use super::PatchError;
use super::directives::{
    Clean, DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE, apply_retain_keys, clean, clean_list,
    extract_key, merge_set_element_order, unknown_patch_type,
};
use super::lists::{go_type, merge_list};
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
