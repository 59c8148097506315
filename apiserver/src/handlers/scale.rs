//! The `scale` subresource: reading and writing the replicas at the paths a kind declares.

use std::sync::Arc;

use serde_json::{Value, json};

use super::call::{key, write_opts};
use super::context::{Call, Reply, lock};
use crate::error::{ApiError, ApiResult, Cause};
use crate::lifecycle::{self, Part};
use crate::registry::ResourceType;
use crate::selector::LabelSelector;

pub(super) fn get_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |cur, p| cur.get(p))
}

pub(super) fn set_path(obj: &mut Value, path: &str, value: Value) {
    let mut cur = obj;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        if i == parts.len() - 1 {
            cur[*p] = value;
            return;
        }
        cur = &mut cur[*p];
    }
}

/// The `autoscaling/v1` Scale of an object.
pub(super) fn scale_of(rt: &ResourceType, obj: &Value) -> Value {
    let Some(spec) = &rt.scale else {
        return Value::Null;
    };
    let selector = match &spec.label_selector_path {
        Some(p) if rt.custom => get_path(obj, p).cloned().unwrap_or(Value::Null),
        _ => {
            // Built-in workloads derive the selector string from spec.selector.
            match LabelSelector::from_label_selector(&obj["spec"]["selector"]) {
                Ok(s) if !s.is_empty() => json!(s.to_string()),
                _ => Value::Null,
            }
        }
    };
    let mut status = json!({ "replicas": get_path(obj, &spec.status_replicas_path).cloned().unwrap_or(json!(0)) });
    if !selector.is_null() {
        status["selector"] = selector;
    }
    let m = &obj["metadata"];
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
        },
        "spec": { "replicas": get_path(obj, &spec.spec_replicas_path).cloned().unwrap_or(json!(0)) },
        "status": status,
    })
}

/// Writes the scale subresource: `change` turns the current Scale into the desired one.
pub(super) fn write_scale(
    call: &Call<'_>,
    rt: &Arc<ResourceType>,
    change: impl FnOnce(&Value) -> ApiResult<Value>,
) -> ApiResult<Reply> {
    let Some(spec) = rt.scale.clone() else {
        return Err(ApiError::no_route());
    };
    let k = key(call);
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = state
        .get(&rt.storage, &k)
        .ok_or_else(|| ApiError::not_found(rt.target(), &k.name))?;
    let obj = crate::convert::try_from_storage(rt, &current)?;
    let scale = change(&scale_of(rt, &obj))?;
    let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            &k.name,
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: null: must be an integer".into(),
                field: "spec.replicas".into(),
            }],
        ));
    };
    // A custom resource's replicas are checked by its own validation (schema and scale checks) instead.
    if replicas < 0 && !rt.custom {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            &k.name,
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                field: "spec.replicas".into(),
            }],
        ));
    }
    let mut next = obj.clone();
    if let Some(rv) = scale["metadata"]["resourceVersion"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        next["metadata"]["resourceVersion"] = json!(rv);
    }
    set_path(&mut next, &spec.spec_replicas_path, json!(replicas));
    let mut opts = write_opts(call, false)?;
    opts.part = Part::Scale;
    let written = lifecycle::update(&mut state, rt, &k, next, &opts)?;
    Ok(Reply::Json(
        200,
        scale_of(rt, &written.object),
        written.warnings,
    ))
}
