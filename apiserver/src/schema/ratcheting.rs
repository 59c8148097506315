//! Ratcheting of OpenAPI schema errors on update (apiextensions-apiserver's `ratchetingValueValidator`, on by
//! default since the `CRDValidationRatcheting` gate went GA): an error found under a value the update left
//! unchanged is dropped, so an object stored before its schema tightened can still be updated elsewhere.
//!
//! Values correlate with their old values as `CorrelatedObject` correlates them: an object's property (or
//! additional property) with the same key of the old object, an item of an `x-kubernetes-list-type: map`
//! list with the old item of the same keys. Items of sets and atomic lists do not correlate: their errors
//! ratchet only when the whole list is unchanged. An error is dropped when a correlated value at its path
//! or above it is equal to its old value (kube-openapi's validator turns the errors of such a value, its own
//! and those merged from below, into warnings, which the strategy does not report). Composite errors
//! (`allOf`, `anyOf`, `oneOf`, `not`), which name no path here, are kept.

use serde_json::Value;

use super::node::{Additional, Node};
use super::verdict::{OErr, child, index_path};

/// `errors` (of `new`, with paths as the schema validator names them) less those ratcheted against `old`.
pub(super) fn ratchet(errors: Vec<OErr>, root: &Node, new: &Value, old: &Value) -> Vec<OErr> {
    let mut unchanged = Vec::new();
    walk(root, "", new, old, &mut unchanged);
    if unchanged.is_empty() {
        return errors;
    }
    errors
        .into_iter()
        .filter(|e| match e {
            OErr::Validation(v) => !unchanged
                .iter()
                .any(|u| under(v.name.trim_start_matches('.'), u.trim_start_matches('.'))),
            OErr::Composite(_) => true,
        })
        .collect()
}

/// Whether `path` is `prefix` or below it.
fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Collects the paths of the correlated values equal to their old values (nothing below one is visited).
fn walk(node: &Node, path: &str, new: &Value, old: &Value, out: &mut Vec<String>) {
    if new == old {
        out.push(path.to_string());
        return;
    }
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            let additional = node
                .additional_properties
                .as_ref()
                .and_then(Additional::schema);
            for (k, v) in n {
                // Named as the schema validator names them: properties joined, additional ones dotted.
                let (schema, named) = match node.properties.get(k) {
                    Some(p) => (p, child(path, k)),
                    None => match additional {
                        Some(a) => (a, format!("{path}.{k}")),
                        None => continue,
                    },
                };
                if let Some(ov) = o.get(k) {
                    walk(schema, &named, v, ov, out);
                }
            }
        }
        (Value::Array(n), Value::Array(o)) => {
            let Some(items) = node.items.as_deref() else {
                return;
            };
            if node.list_type.as_deref() != Some("map") || node.list_map_keys.is_empty() {
                return;
            }
            for (i, item) in n.iter().enumerate() {
                let same_keys = |candidate: &&Value| {
                    node.list_map_keys
                        .iter()
                        .all(|k| candidate.get(k).is_some() && candidate.get(k) == item.get(k))
                };
                if let Some(old_item) = o.iter().find(same_keys) {
                    walk(items, &index_path(path, i), item, old_item, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_a_prefix() {
        assert!(under("spec.a", "spec"));
        assert!(under("spec[0]", "spec"));
        assert!(under("spec", "spec"));
        assert!(!under("specs", "spec"));
        assert!(under("anything", ""));
    }
}
