//! The `rbac.authorization.k8s.io` group's rules (`pkg/apis/rbac/validation`): a binding's `roleRef` never
//! changes.

use serde_json::Value;

use super::field::{Errors, FieldError, go_quote};
use super::meta;

/// `ValidateRoleBindingUpdate` and `ValidateClusterRoleBindingUpdate`: the binding's own checks (metadata
/// here), the metadata update's, then the `roleRef`.
pub(super) fn binding_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(meta::object_update(obj));
    let role_ref = &obj["roleRef"];
    if role_ref != &old["roleRef"] {
        // The internal `rbac.RoleRef` has no JSON tags: Go marshals it with its field names.
        let s = |k: &str| go_quote(role_ref[k].as_str().unwrap_or(""));
        errs.push(FieldError::invalid_printed(
            "roleRef",
            format!(
                "{{\"APIGroup\":{},\"Kind\":{},\"Name\":{}}}",
                s("apiGroup"),
                s("kind"),
                s("name")
            ),
            "cannot change roleRef",
        ));
    }
    errs
}
