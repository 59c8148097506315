//! Writes: create, update and patches (JSON, merge, strategic merge and server-side apply).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::call::{
    check_applied_type, check_type, decode, key, parse_yaml, part, reconcile_name,
    reconcile_namespace, write_opts,
};
use super::scale::write_scale;
use super::{Call, Reply, lock};
use crate::convert::from_storage;
use crate::error::{ApiError, ApiResult, Cause};
use crate::lifecycle::{self, Part};
use crate::managed_fields;
use crate::registry::ResourceType;
use crate::strategic;

pub(super) fn create(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let mut obj = decode(call)?;
    check_type(rt, &obj)?;
    reconcile_namespace(call, rt, &mut obj)?;
    let opts = write_opts(call, false)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let written = lifecycle::create(&mut state, rt, obj, &opts)?;
    Ok(Reply::Json(201, written.object, written.warnings))
}

pub(super) fn update(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    if call.req.subresource.as_deref() == Some("scale") {
        let scale = decode(call)?;
        return write_scale(call, rt, |_| Ok(scale));
    }
    let mut obj = decode(call)?;
    check_type(rt, &obj)?;
    reconcile_name(call, &mut obj)?;
    reconcile_namespace(call, rt, &mut obj)?;
    let opts = write_opts(call, false)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let written = lifecycle::update(&mut state, rt, &key(call), obj, &opts)?;
    Ok(Reply::Json(200, written.object, written.warnings))
}

/// The kinds of patch the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

pub(super) fn patch_type(content_type: &str) -> ApiResult<PatchType> {
    match content_type {
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(PatchType::Apply),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})"
        ))),
    }
}

/// Applies a non-apply patch to a document.
pub(super) fn apply_patch(
    pt: PatchType,
    rt: &ResourceType,
    doc: &Value,
    body: &Bytes,
) -> ApiResult<Value> {
    let patch: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    match pt {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let mut out = doc.clone();
            json_patch::patch(&mut out, &ops).map_err(|e| {
                tracing::debug!(error = %e, "JSON patch failed");
                // kube-apiserver says no more than this, with empty details.
                let mut err = ApiError::new(
                    422,
                    "Invalid",
                    "the server rejected our request due to an error in our request",
                );
                err.details = Some(json!({}));
                err
            })?;
            Ok(out)
        }
        PatchType::Merge => {
            let go_type = match &patch {
                Value::Object(_) => None,
                Value::String(_) => Some("string"),
                Value::Number(_) => Some("number"),
                Value::Array(_) => Some("array"),
                Value::Bool(_) => Some("bool"),
                Value::Null => Some("null"),
            };
            if let Some(go_type) = go_type {
                return Err(ApiError::bad_request(format!(
                    "error decoding patch: json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
                )));
            }
            let mut out = doc.clone();
            json_patch::merge(&mut out, &patch);
            Ok(out)
        }
        PatchType::Strategic => {
            if rt.custom || !strategic::supports_strategic_merge_patch(&rt.group, &rt.kind) {
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            strategic::apply(&rt.group, &rt.kind, doc, &patch).map_err(|e| {
                let reason = if e.reason().is_empty() {
                    "InternalError"
                } else {
                    e.reason()
                };
                ApiError::new(e.status_code(), reason, e.to_string())
            })
        }
        PatchType::Apply => Err(ApiError::internal("apply handled elsewhere")),
    }
}

pub(super) fn patch(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let pt = patch_type(call.content_type)?;
    if call.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    if call.req.subresource.as_deref() == Some("scale") {
        if pt == PatchType::Apply {
            return Err(ApiError::unsupported_media_type(
                "apply is not supported on the scale subresource",
            ));
        }
        return write_scale(call, rt, |scale| apply_patch(pt, rt, scale, call.body));
    }
    if pt == PatchType::Apply {
        return server_side_apply(call, rt);
    }
    let k = key(call);
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = state
        .get(&rt.storage, &k)
        .ok_or_else(|| ApiError::not_found(rt.target(), &k.name))?;
    let doc = from_storage(rt, &current);
    let mut patched = apply_patch(pt, rt, &doc, call.body)?;
    if !patched.is_object() {
        return Err(ApiError::new(
            422,
            "Invalid",
            "the patch produced something that is not an object",
        ));
    }
    // A patch cannot move or retype the object.
    patched["apiVersion"] = json!(rt.api_version());
    patched["kind"] = json!(rt.kind);
    patched["metadata"]["name"] = json!(k.name);
    if rt.namespaced {
        patched["metadata"]["namespace"] = json!(k.namespace);
    }
    let opts = write_opts(call, false)?;
    let written = lifecycle::update(&mut state, rt, &k, patched, &opts)?;
    Ok(Reply::Json(200, written.object, written.warnings))
}

pub(super) fn server_side_apply(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let Some(manager) = call.query.get("fieldManager").map(str::to_string) else {
        return Err(ApiError::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            vec![Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: is required for apply patch".into(),
                field: "fieldManager".into(),
            }],
        ));
    };
    let mut applied: Value = parse_yaml(call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !applied.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the applied configuration is not an object",
        ));
    }
    check_applied_type(rt, &applied)?;
    let as_sent = applied.clone();
    reconcile_name(call, &mut applied)?;
    reconcile_namespace(call, rt, &mut applied)?;
    let force = call.query.flag("force");
    let k = key(call);
    let p = part(call);
    let scope = match p {
        Part::Status => managed_fields::Scope::Status,
        Part::Main if rt.status_subresource => managed_fields::Scope::Main,
        Part::Main => managed_fields::Scope::Whole,
        Part::Scale => managed_fields::Scope::Scale,
    };
    let mut opts = write_opts(call, true)?;
    opts.manager = manager.clone();
    let schema = lifecycle::field_schema(rt);
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = state.get(&rt.storage, &k).map(|c| from_storage(rt, &c));
    let live = current.as_ref();
    if live.is_none() && p == Part::Status {
        return Err(ApiError::not_found(rt.target(), &k.name));
    }
    let result = managed_fields::apply(
        live,
        &applied,
        &manager,
        &rt.api_version(),
        scope,
        force,
        schema.as_ref(),
        &call.now,
    );
    let mut merged = match result {
        Ok(v) => v,
        Err(conflicts) => return Err(apply_conflict(&conflicts)),
    };
    managed_fields::update_last_applied(&mut merged, &as_sent, &manager);
    match live {
        None => {
            let written = lifecycle::create(&mut state, rt, merged, &opts)?;
            Ok(Reply::Json(201, written.object, written.warnings))
        }
        Some(live) => {
            let rv = applied["metadata"]["resourceVersion"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| {
                    live["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                });
            merged["metadata"]["resourceVersion"] = json!(rv);
            let written = lifecycle::update(&mut state, rt, &k, merged, &opts)?;
            Ok(Reply::Json(200, written.object, written.warnings))
        }
    }
}

pub(super) fn apply_conflict(conflicts: &[managed_fields::Conflict]) -> ApiError {
    let mut e = ApiError::new(409, "Conflict", managed_fields::conflict_message(conflicts));
    // kube-apiserver's apply conflicts name neither the object nor its kind, only the causes.
    e.details = Some(json!({ "causes": conflicts.iter().map(|c| c.cause()).collect::<Vec<_>>() }));
    e
}
