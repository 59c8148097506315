//! The directives `$patch`, `$retainKeys`, `$setElementOrder` and `$deleteFromPrimitiveList`: recognized,
//! applied, checked and never left in the result.

use serde_json::{Map, Value};

use super::PatchError;
use super::go_errors::{bad_arg_type, go_fmt, go_fmt_list, go_fmt_map};
use super::lists::{
    element_kind, go_type_name, merge_key_value_equal, normalize_order, partition_maps,
    partition_scalars,
};
use super::maps::merge_list_field;
use super::strategies::{Smp, Ty, lookup};

pub(super) const DIRECTIVE: &str = "$patch";
pub(super) const RETAIN_KEYS: &str = "$retainKeys";
pub(super) const SET_ELEMENT_ORDER: &str = "$setElementOrder";
pub(super) const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// Whether a map key is one of the directives, which must never reach a stored object.
pub(super) fn is_directive_key(key: &str) -> bool {
    key == DIRECTIVE
        || key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

/// How a patch value that is taken over without merging is cleaned of directives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clean {
    /// A value for a key the original lacks: apimachinery drops nulls and every map that
    /// carries `$patch` (with its key or list slot).
    Drop,
    /// A value that replaces wholesale (atomic lists, `$patch: replace`, new list items):
    /// apimachinery keeps it raw and the typed decode that follows ignores the directive
    /// keys and the nulls, so they are removed and the rest is kept.
    Strip,
}

/// Cleans a value taken from the patch; `None` means the value disappears.
pub(super) fn clean(value: Value, mode: Clean) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if mode == Clean::Drop && map.get(DIRECTIVE).is_some_and(|v| !v.is_null()) {
                return None;
            }
            let mut out = Map::new();
            for (key, item) in map {
                if item.is_null() || is_directive_key(&key) {
                    continue;
                }
                if let Some(item) = clean(item, mode) {
                    out.insert(key, item);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => Some(Value::Array(clean_list(items, mode))),
        scalar => Some(scalar),
    }
}

pub(super) fn clean_list(items: Vec<Value>, mode: Clean) -> Vec<Value> {
    items
        .into_iter()
        .filter_map(|item| clean(item, mode))
        .collect()
}

/// `$retainKeys`: drops the original's keys that are not listed.
pub(super) fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(PatchError::BadPatchFormatForRetainKeys);
    };
    let retained = |key: &str| retain.iter().any(|v| v.as_str() == Some(key));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || key.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !retained(key) {
            return Err(PatchError::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
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

pub(super) fn extract_key(key: &str, prefix: &str) -> Result<String, PatchError> {
    match key.split_once('/') {
        Some((head, rest)) if head == prefix => Ok(rest.to_string()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST => {
            Err(PatchError::BadPatchFormatForPrimitiveList)
        }
        _ => Err(PatchError::BadPatchFormatForSetElementOrderList),
    }
}

pub(super) fn unknown_patch_type(directive: &Value, map: &Map<String, Value>) -> PatchError {
    let directive = match directive {
        Value::String(s) => s.clone(),
        other => format!("%!s({}={})", go_type_name(other), go_fmt(other)),
    };
    PatchError::UnknownPatchType {
        directive,
        map: go_fmt_map(map),
    }
}
