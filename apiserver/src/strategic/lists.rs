//! What the list merge (`merge.rs`) works with: merge keys, the partitions and the order apimachinery
//! gives the result, and the kind of a list's elements.

use serde_json::Value;

use super::directives::DIRECTIVE;
use super::error::PatchError;
use super::go_errors::{bad_arg_type, go_fmt_list, no_merge_key};
use super::go_types::{Kind, go_type};

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
