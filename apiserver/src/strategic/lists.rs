//! Merging lists: by merge key, as a union of scalars, or replaced; and the order apimachinery gives the
//! result.

use serde_json::{Map, Value};

use super::PatchError;
use super::directives::{Clean, DIRECTIVE, clean, clean_list, unknown_patch_type};
use super::go_errors::{bad_arg_type, go_fmt_list, no_merge_key};
use super::maps::merge_map;
use super::strategies::Ty;

pub(super) fn merge_key_value_equal(
    left: &Value,
    right: &Value,
    merge_key: &str,
) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let left_key = merge_key_of(left, merge_key)?;
    let right_key = merge_key_of(right, merge_key)?;
    Ok(left_key == right_key)
}

pub(super) fn merge_key_of<'a>(item: &'a Value, merge_key: &str) -> Result<&'a Value, PatchError> {
    let Value::Object(map) = item else {
        return Err(bad_arg_type("map[string]interface {}", item));
    };
    map.get(merge_key)
        .ok_or_else(|| no_merge_key(map, merge_key))
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

/// Splits scalars into those present in `by` and the rest, keeping their order.
pub(super) fn partition_scalars(items: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    items.into_iter().partition(|item| by.contains(item))
}

/// Splits maps into those whose merge key appears in `by` and the rest, keeping their order.
pub(super) fn partition_maps(
    items: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut present = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        let value = map
            .get(merge_key)
            .ok_or_else(|| no_merge_key(map, merge_key))?;
        let mut found = false;
        for (index, candidate) in by.iter().enumerate() {
            let Value::Object(candidate) = candidate else {
                return Err(PatchError::Other(format!(
                    "value for key {index} is not a map"
                )));
            };
            if candidate.get(merge_key) == Some(value) {
                found = true;
                break;
            }
        }
        if found {
            present.push(item);
        } else {
            rest.push(item);
        }
    }
    Ok((present, rest))
}

/// Sorts the patch items by `patch_order` and the server-only items by `server_order`,
/// then weaves the server-only items in front of the first patch item they preceded in
/// the server's list.
pub(super) fn normalize_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let patch_items = sort_by_order(patch_items, patch_order, merge_key, kind)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, kind)?;

    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        let li = position(server_order, l, merge_key, kind);
        let ri = position(server_order, r, merge_key, kind);
        let take_left = matches!((li, ri), (Some(li), Some(ri)) if li < ri);
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out.extend(left);
    out.extend(right);
    Ok(out)
}

/// Orders `items` by their positions in `order` (Go's `sort.SliceStable` with
/// apimachinery's comparator, which is an insertion sort for short lists).
pub(super) fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let (mut items, deletions) = if kind == Kind::Map {
        for item in items.iter().chain(order.iter()) {
            merge_key_of(item, merge_key)?;
        }
        items.into_iter().partition::<Vec<Value>, _>(|item| {
            item.get(DIRECTIVE).and_then(Value::as_str) != Some("delete")
        })
    } else {
        (items, Vec::new())
    };
    let less = |a: &Value, b: &Value| match (
        position(order, a, merge_key, kind),
        position(order, b, merge_key, kind),
    ) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    };
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && less(&items[j], &items[j - 1]) {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
    items.extend(deletions);
    Ok(items)
}

/// Index of `item` in `list`, comparing merge keys for maps and whole values otherwise.
pub(super) fn position(list: &[Value], item: &Value, merge_key: &str, kind: Kind) -> Option<usize> {
    if kind == Kind::Map {
        fn key_of<'a>(value: &'a Value, merge_key: &str) -> Option<&'a Value> {
            value.as_object().and_then(|map| map.get(merge_key))
        }
        let wanted = key_of(item, merge_key);
        list.iter()
            .position(|candidate| key_of(candidate, merge_key) == wanted)
    } else {
        list.iter().position(|candidate| candidate == item)
    }
}

/// The kind of JSON value, distinguishing integers from floats like Go's decoded types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Map,
    List,
}

pub(super) fn go_type(value: &Value) -> Kind {
    match value {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Int,
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::List,
        Value::Object(_) => Kind::Map,
    }
}

pub(super) fn go_type_name(value: &Value) -> &'static str {
    match go_type(value) {
        Kind::Null => "<nil>",
        Kind::Bool => "bool",
        Kind::Int => "int64",
        Kind::Float => "float64",
        Kind::String => "string",
        Kind::List => "[]interface {}",
        Kind::Map => "map[string]interface {}",
    }
}

pub(super) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The common kind of the items of the lists; they must all have one and not be lists.
pub(super) fn element_kind(lists: &[&[Value]]) -> Result<Kind, PatchError> {
    let mut kind = None;
    for item in lists.iter().flat_map(|list| list.iter()) {
        let current = go_type(item);
        match kind {
            None if current == Kind::List => return Err(PatchError::NoListOfLists),
            None => kind = Some(current),
            Some(previous) if previous != current => {
                let printed: Vec<String> = lists.iter().map(|list| go_fmt_list(list)).collect();
                return Err(PatchError::Other(format!(
                    "list element types are not identical: [{}]",
                    printed.join(" ")
                )));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| PatchError::Other("no elements in any of the given slices".to_string()))
}
