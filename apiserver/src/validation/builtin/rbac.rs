//! The `rbac.authorization.k8s.io` group's rules (`pkg/apis/rbac/validation`): a role's rules (verbs, and
//! either resources with their groups or non-resource URLs), a binding's `roleRef` and subjects, and the
//! `roleRef` never changing.

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json, go_quote, index};
use super::{formats, meta};

const GROUP: &str = "rbac.authorization.k8s.io";

fn non_empty(v: &Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty())
}

/// `ValidateRole` and `ValidateClusterRole` (less the aggregation rule's selectors); on update
/// (`ValidateRoleUpdate`) the metadata's update rules follow.
pub(super) fn role(obj: &Value, namespaced: bool, update: bool) -> Errors {
    let mut errs = meta::object(obj);
    if let Some(rules) = obj["rules"].as_array() {
        for (i, rule) in rules.iter().enumerate() {
            errs.extend(policy_rule(rule, namespaced, &index("rules", i)));
        }
    }
    if !namespaced
        && obj["aggregationRule"].is_object()
        && !non_empty(&obj["aggregationRule"]["clusterRoleSelectors"])
    {
        errs.push(FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    if update {
        errs.extend(meta::object_update(obj));
    }
    errs
}

/// `ValidatePolicyRule`.
fn policy_rule(rule: &Value, namespaced: bool, path: &str) -> Errors {
    let mut errs = Errors::new();
    if !non_empty(&rule["verbs"]) {
        errs.push(FieldError::required(
            child(path, "verbs"),
            "verbs must contain at least one value",
        ));
    }
    if non_empty(&rule["nonResourceURLs"]) {
        let urls = go_json(&rule["nonResourceURLs"]);
        if namespaced {
            errs.push(FieldError::invalid_printed(
                child(path, "nonResourceURLs"),
                urls.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if non_empty(&rule["apiGroups"])
            || non_empty(&rule["resources"])
            || non_empty(&rule["resourceNames"])
        {
            errs.push(FieldError::invalid_printed(
                child(path, "nonResourceURLs"),
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if !non_empty(&rule["apiGroups"]) {
        errs.push(FieldError::required(
            child(path, "apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if !non_empty(&rule["resources"]) {
        errs.push(FieldError::required(
            child(path, "resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// `ValidateRoleBinding` and `ValidateClusterRoleBinding`.
pub(super) fn binding(obj: &Value, namespaced: bool) -> Errors {
    let mut errs = meta::object(obj);
    let role_ref = &obj["roleRef"];
    let group = role_ref["apiGroup"].as_str().unwrap_or("");
    if group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            group,
            &[GROUP],
        ));
    }
    let kind = role_ref["kind"].as_str().unwrap_or("");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = role_ref["name"].as_str().unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for msg in formats::path_segment(name) {
            errs.push(FieldError::invalid("roleRef.name", name, msg));
        }
    }
    if let Some(subjects) = obj["subjects"].as_array() {
        for (i, s) in subjects.iter().enumerate() {
            errs.extend(subject(s, namespaced, &index("subjects", i)));
        }
    }
    errs
}

/// `ValidateRoleBindingSubject`.
fn subject(s: &Value, namespaced: bool, path: &str) -> Errors {
    let mut errs = Errors::new();
    let name = s["name"].as_str().unwrap_or("");
    let group = s["apiGroup"].as_str().unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(child(path, "name"), ""));
    }
    match s["kind"].as_str().unwrap_or("") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in formats::dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(child(path, "name"), name, msg));
                }
            }
            if !group.is_empty() {
                errs.push(FieldError::not_supported(
                    child(path, "apiGroup"),
                    group,
                    &[""],
                ));
            }
            if !namespaced && s["namespace"].as_str().unwrap_or("").is_empty() {
                errs.push(FieldError::required(child(path, "namespace"), ""));
            }
        }
        "User" | "Group" if group != GROUP => {
            errs.push(FieldError::not_supported(
                child(path, "apiGroup"),
                group,
                &[GROUP],
            ));
        }
        "User" | "Group" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// `ValidateRoleBindingUpdate` and `ValidateClusterRoleBindingUpdate`: the binding's own checks, the
/// metadata update's, then the `roleRef`.
pub(super) fn binding_update(obj: &Value, old: &Value, namespaced: bool) -> Errors {
    let mut errs = binding(obj, namespaced);
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

/// The defaults kube-apiserver gives bindings: the `roleRef`'s group, and a User's or Group's subject group.
pub(crate) fn binding_defaults(obj: &mut Value) {
    if obj["roleRef"].is_object() && obj["roleRef"]["apiGroup"].as_str().unwrap_or("").is_empty() {
        obj["roleRef"]["apiGroup"] = Value::String(GROUP.into());
    }
    if let Some(subjects) = obj["subjects"].as_array_mut() {
        for s in subjects.iter_mut().filter(|s| s.is_object()) {
            if s["apiGroup"].as_str().unwrap_or("").is_empty()
                && matches!(s["kind"].as_str(), Some("User" | "Group"))
            {
                s["apiGroup"] = Value::String(GROUP.into());
            }
        }
    }
}
