//! Writes: create, update and patches (JSON, merge, strategic merge and server-side apply).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::call::{
    check_applied_type, check_type, decode, key, parse_yaml, part, reconcile_name,
    reconcile_namespace, write_opts,
};
use super::context::{Call, Reply, lock};
use super::scale::write_scale;
use crate::convert::try_from_storage;
use crate::error::{ApiError, ApiResult, Cause};
use crate::lifecycle::{self, Part};
use crate::managed_fields;
use crate::registry::ResourceType;
use crate::strategic;
use crate::strict::{self, PatchFindings};

pub(super) fn create(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let mut obj = decode(call, rt)?;
    check_type(call, rt, &mut obj)?;
    reconcile_namespace(call, rt, &mut obj)?;
    let opts = write_opts(call, false)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let written = lifecycle::create(&mut state, rt, obj, &opts)?;
    Ok(Reply::Json(201, written.object, written.warnings))
}

pub(super) fn update(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    if call.req.subresource.as_deref() == Some("scale") {
        let scale = decode(call, rt)?;
        return write_scale(call, rt, |_| Ok(scale));
    }
    let mut obj = decode(call, rt)?;
    check_type(call, rt, &mut obj)?;
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
        // Only custom resources get here with another type (go-restful refuses it for built-in ones first,
        // `server/restful.rs`); apiextensions-apiserver names the patch types it reads.
        _ => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        )),
    }
}

/// Applies a non-apply patch to a document. With `strict` (`fieldValidation` `Warn`, the default, or
/// `Strict`), the patch is decoded as kube-apiserver decodes it then, and what that finds is returned too.
pub(super) fn apply_patch(
    pt: PatchType,
    rt: &ResourceType,
    doc: &Value,
    body: &Bytes,
    strict: bool,
) -> ApiResult<(Value, Option<PatchFindings>)> {
    let decoding_error =
        |e: serde_json::Error| ApiError::bad_request(format!("error decoding patch: {e}"));
    let (patch, errors) = if strict {
        let shape = if pt == PatchType::Json {
            strict::json::Shape::Operations
        } else {
            strict::json::Shape::Any
        };
        let (patch, errors) = strict::json::decode(body, shape).map_err(decoding_error)?;
        (patch, Some(errors))
    } else {
        (serde_json::from_slice(body).map_err(decoding_error)?, None)
    };
    let patched = patch_document(pt, rt, doc, &patch)?;
    let findings = errors.map(|errors| match pt {
        PatchType::Json => strict::json_patch_findings(&patch, errors, &patched),
        PatchType::Strategic => PatchFindings {
            patch: errors,
            object: Vec::new(),
            shown: strict::go_text::plus_v(&patch),
        },
        _ => PatchFindings {
            patch: errors,
            object: Vec::new(),
            shown: strict::go_text::json(&patched),
        },
    });
    Ok((patched, findings))
}

fn patch_document(
    pt: PatchType,
    rt: &ResourceType,
    doc: &Value,
    patch: &Value,
) -> ApiResult<Value> {
    match pt {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
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
            let go_type = match patch {
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
            json_patch::merge(&mut out, patch);
            Ok(out)
        }
        PatchType::Strategic => {
            if rt.custom || !strategic::supports_strategic_merge_patch(&rt.group, &rt.kind) {
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            strategic::apply(&rt.group, &rt.kind, doc, patch).map_err(|e| {
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
        return write_scale(call, rt, |scale| {
            apply_patch(pt, rt, scale, call.body, false).map(|(patched, _)| patched)
        });
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
    let doc = try_from_storage(rt, &current)?;
    let mut opts = write_opts(call, false)?;
    let (mut patched, findings) =
        apply_patch(pt, rt, &doc, call.body, opts.strict || opts.warn_unknown)?;
    opts.patch = findings;
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
    let scope = lifecycle::scope(rt, p);
    let mut opts = write_opts(call, true)?;
    opts.manager = manager.clone();
    let schema = lifecycle::field_schema(rt);
    // structured-merge-diff refuses fields the schema does not declare before anything else, whatever
    // `fieldValidation` says.
    let undeclared = strict::undeclared(rt, &as_sent, schema.as_ref());
    if !undeclared.is_empty() {
        let meta = &as_sent["metadata"];
        return Err(strict::undeclared_fields(
            meta["namespace"].as_str().unwrap_or(""),
            meta["name"].as_str().unwrap_or(""),
            &format!("{}/{}, Kind={}", rt.group, rt.version, rt.kind),
            &undeclared,
        ));
    }
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = match state.get(&rt.storage, &k) {
        Some(c) => Some(try_from_storage(rt, &c)?),
        None => None,
    };
    let live = current.as_ref();
    if live.is_none() && p == Part::Status {
        return Err(ApiError::not_found(rt.target(), &k.name));
    }
    // A uid in the applied object is a precondition: with no object, kube-apiserver refuses to create one (so
    // an apply cannot be made to only create). With another object's uid, the update below refuses the change
    // of an immutable field.
    if live.is_none()
        && let Some(uid) = applied["metadata"]["uid"]
            .as_str()
            .filter(|u| !u.is_empty())
    {
        return Err(ApiError::conflict_with(
            rt.target(),
            &k.name,
            &format!(
                "uid mismatch: the provided object specified uid {uid}, and no existing object was found"
            ),
        ));
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
    // Then the configuration's duplicate keys, after the merge as kube-apiserver checks them.
    let duplicates = if opts.strict || opts.warn_unknown {
        duplicate_keys(call.body)
    } else {
        Vec::new()
    };
    if opts.strict && !duplicates.is_empty() {
        return Err(strict::duplicate_yaml_keys(&duplicates));
    }
    let warned = |mut written: lifecycle::Written| {
        written.warnings.splice(0..0, duplicates.iter().cloned());
        written
    };
    match live {
        None => {
            let written = warned(lifecycle::create(&mut state, rt, merged, &opts)?);
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
            let written = warned(lifecycle::update(&mut state, rt, &k, merged, &opts)?);
            Ok(Reply::Json(200, written.object, written.warnings))
        }
    }
}

/// The duplicate keys of an apply body, with their lines (JSON bodies, what most clients send, are read as
/// YAML only when they have some).
fn duplicate_keys(body: &[u8]) -> Vec<String> {
    match strict::json::decode(body, strict::json::Shape::Any) {
        Ok((_, errors)) if errors.is_empty() => Vec::new(),
        _ => strict::yaml::duplicate_keys(body),
    }
}

pub(super) fn apply_conflict(conflicts: &[managed_fields::Conflict]) -> ApiError {
    let mut e = ApiError::new(409, "Conflict", managed_fields::conflict_message(conflicts));
    // kube-apiserver's apply conflicts name neither the object nor its kind, only the causes.
    e.details = Some(json!({ "causes": conflicts.iter().map(|c| c.cause()).collect::<Vec<_>>() }));
    e
}
