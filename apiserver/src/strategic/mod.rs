//! Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds.
//!
//! This mirrors the behaviour of kube-apiserver, which applies such a patch to the
//! unstructured form of the stored object with apimachinery's `strategicpatch` package,
//! guided by the `patchStrategy`/`patchMergeKey` struct tags of `k8s.io/api`:
//!
//! * objects merge recursively, `null` deletes a key, any other value replaces;
//! * lists whose field carries `patchStrategy:"merge"` merge by their patch merge key
//!   (lists of scalars become a union), every other list is replaced wholesale;
//! * the directives `$patch` (`replace`, `delete`, and `merge` where allowed),
//!   `$retainKeys`, `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`
//!   are honoured and never left in the result;
//! * after a merge, list items named by the patch come in the patch's order, and the
//!   items only the server had are woven in by their old positions, exactly like
//!   apimachinery does. A new item that the patch names alone therefore lands at the
//!   *front* of the list, not at its end; `$setElementOrder` fixes the order outright.
//!
//! Custom resources do not support strategic merge patch: [`apply`] refuses them with
//! [`PatchError::Unsupported`], which the server answers with 415 like the real one.
//!
//! The same table of list semantics serves server-side apply through
//! [`builtin_list_type`], which reports what the OpenAPI schema says (`x-kubernetes-list-type`
//! and `x-kubernetes-list-map-keys`); this differs from the SMP merge key in a few places,
//! e.g. container ports are keyed by `containerPort` for SMP but by
//! `containerPort`+`protocol` for server-side apply.

mod directives;
mod error;
mod go_errors;
mod go_types;
mod lists;
mod merge;
mod strategies;
#[cfg(test)]
mod tests;

use serde_json::Value;

pub use error::PatchError;
use go_types::json_type_name;
use merge::merge_map;
use strategies::{Root, Ssa, Ty, lookup, root_for};

/// How a list field of a built-in kind merges under server-side apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// The list is replaced as a whole (`x-kubernetes-list-type: atomic`, the default).
    Atomic,
    /// A list of scalars treated as a set (`x-kubernetes-list-type: set`).
    Set,
    /// An associative list whose items are identified by the values of these fields
    /// (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`).
    Map(Vec<String>),
}

/// Whether objects of this group and kind accept strategic merge patches, i.e. whether
/// they are served from a built-in API group rather than by a custom resource definition
/// or an aggregated API server.
pub fn supports_strategic_merge_patch(group: &str, kind: &str) -> bool {
    root_for(group, kind).is_some()
}

/// List semantics of a field of a built-in kind, as server-side apply sees them.
///
/// `path` is the field path from the object root with list items elided, e.g.
/// `["spec","template","spec","containers","ports"]` for a Deployment's container ports.
/// `metadata.finalizers` and `metadata.ownerReferences` are reported for every kind,
/// custom resources included, since every object shares `ObjectMeta`. Anything the table
/// does not know is [`ListType::Atomic`].
pub fn builtin_list_type(group: &str, kind: &str, path: &[&str]) -> ListType {
    let Some((last, parents)) = path.split_last() else {
        return ListType::Atomic;
    };
    let mut ty = Ty::Root(root_for(group, kind).unwrap_or(Root::Generic));
    for segment in parents {
        ty = lookup(ty, segment).ty;
    }
    match lookup(ty, last).ssa {
        Ssa::Atomic => ListType::Atomic,
        Ssa::Set => ListType::Set,
        Ssa::Map(keys) => ListType::Map(keys.iter().map(|k| (*k).to_string()).collect()),
    }
}

/// Applies a strategic merge patch to `original`, an object of the given group and kind.
///
/// `group` is `""` for the core group. A `null` patch changes nothing; any other patch
/// that is not a JSON object is refused, and so is any kind that is not built in.
pub fn apply(
    group: &str,
    kind: &str,
    original: &Value,
    patch: &Value,
) -> Result<Value, PatchError> {
    let Some(root) = root_for(group, kind) else {
        return Err(PatchError::Unsupported {
            group: group.to_string(),
            kind: kind.to_string(),
        });
    };
    let patch = match patch {
        Value::Object(map) => map.clone(),
        Value::Null => return Ok(original.clone()),
        other => {
            return Err(PatchError::NotAnObject {
                found: json_type_name(other),
            });
        }
    };
    let Value::Object(original) = original else {
        return Err(PatchError::Other(format!(
            "the object to patch is a JSON {}, not an object",
            json_type_name(original)
        )));
    };
    merge_map(original.clone(), patch, Ty::Root(root)).map(Value::Object)
}
