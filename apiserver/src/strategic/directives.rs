//! The directives `$patch`, `$retainKeys`, `$setElementOrder` and `$deleteFromPrimitiveList`: recognized,
//! applied, checked and never left in the result.

use serde_json::{Map, Value};

use super::error::PatchError;
use super::go_errors::{go_fmt, go_fmt_map};
use super::go_types::go_type_name;

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
