//! What every OpenAPI document says the same way of a kind: its group-version's URL path, its
//! `x-kubernetes-group-version-kind` extension, and the patch types its PATCH accepts.

use serde_json::{Value, json};

use crate::registry::{OpenApiSource, ResourceType};

/// The URL path of a group-version under `/apis` or `/api`, without the leading slash.
pub(super) fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The patch types kube-apiserver accepts for a resource: strategic merge patches for built-in kinds only.
pub(super) fn patch_types(t: &ResourceType) -> Vec<&'static str> {
    let mut types = vec![
        "application/json-patch+json",
        "application/merge-patch+json",
    ];
    if matches!(t.openapi, Some(OpenApiSource::Builtin(_))) {
        types.push("application/strategic-merge-patch+json");
    }
    types.push("application/apply-patch+yaml");
    types
}

/// The `x-kubernetes-group-version-kind` extension naming one kind.
pub(super) fn gvk_extension(t: &ResourceType) -> Value {
    json!([{ "group": t.group, "kind": t.kind, "version": t.version }])
}
