//! Custom resources converted between their CRD's versions as apiextensions-apiserver converts them.
//!
//! With `spec.conversion.strategy: None` only `apiVersion` changes, which [`super::to_storage`] and
//! [`super::from_storage`] do for every kind. With `strategy: Webhook`, objects not already at the wanted
//! version are sent in one `ConversionReview` (v1, or v1beta1 when the CRD lists only that) through the
//! admission webhooks' transport: in-process for a `clientConfig.service` registered with
//! `ApiServer::serve_webhook`, HTTPS for a `clientConfig.url`. The answer is checked as kube-apiserver
//! checks it (its `uid`, the `result`, the count of `convertedObjects`, each one's `apiVersion`, `kind`,
//! name, namespace and uid) and only `metadata.labels` and `metadata.annotations` are taken from it; a
//! failure answers with kube-apiserver's `conversion webhook for GROUP/VERSION, Kind=KIND failed: ...`.
//!
//! The webhook is called synchronously: an HTTPS webhook is reached from a thread of its own (with its own
//! runtime), so the embedded server's request waits for it. A webhook served by the same single-threaded
//! runtime that drives the embedded server cannot answer while it waits; serve such a webhook in-process
//! (`ApiServer::serve_webhook`) or from another thread.

use serde_json::{Value, json};

use crate::admission::review::Hook;
use crate::admission::transport::{Call, call};
use crate::error::{ApiError, ApiResult};
use crate::registry::{ConversionWebhook, ResourceType};

/// kube-apiserver's timeout for conversion webhooks.
const TIMEOUT_SECONDS: u64 = 30;

/// `objects` (of `rt`'s kind, each at some version of it) at `api_version`, converted by the CRD's webhook
/// when it has one; unchanged otherwise (the caller sets `apiVersion`).
pub fn to_version(
    rt: &ResourceType,
    objects: Vec<Value>,
    api_version: &str,
) -> ApiResult<Vec<Value>> {
    let Some(hook) = rt.conversion_webhook.as_deref() else {
        return Ok(objects);
    };
    let pending: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o["apiVersion"].as_str() != Some(api_version) && !is_empty(o))
        .map(|(i, _)| i)
        .collect();
    let Some(first) = pending.first() else {
        return Ok(objects);
    };
    // kube-apiserver names the converted object's (or list's) group, version and kind in its errors.
    let gvk = format!(
        "{}, Kind={}",
        objects[*first]["apiVersion"].as_str().unwrap_or(""),
        rt.kind
    );
    // kube-apiserver answers a failed conversion with a bare 500 (no reason, the error as the message).
    let fail = |why: String| ApiError::new(500, "", format!("conversion webhook for {gvk} {why}"));
    let sent: Vec<Value> = pending.iter().map(|i| objects[*i].clone()).collect();
    let converted = exchange(hook, &sent, api_version).map_err(fail)?;
    if converted.len() != sent.len() {
        return Err(fail(format!(
            "returned {} objects, expected {}",
            converted.len(),
            sent.len()
        )));
    }
    let one = objects.len() == 1;
    let mut out = objects;
    for (n, (i, mut object)) in pending.into_iter().zip(converted).enumerate() {
        let at = if one {
            String::new()
        } else {
            format!(" at index {n}")
        };
        let got = object["apiVersion"].as_str().unwrap_or("").to_string();
        if got != api_version {
            let which = if one {
                "invalid object at index 0"
            } else {
                "invalid converted object"
            };
            let at = if one { String::new() } else { at.clone() };
            return Err(fail(format!(
                "returned {which}{at}: invalid groupVersion (expected {api_version}, received {got})"
            )));
        }
        let original = &out[i];
        let which = if one {
            "invalid object"
        } else {
            "invalid converted object"
        };
        same_identity(original, &object).map_err(|e| fail(format!("returned {which}{at}: {e}")))?;
        let which = if one {
            "invalid metadata"
        } else {
            "invalid metadata in object"
        };
        restore_metadata(original, &mut object)
            .map_err(|e| fail(format!("returned {which}{at}: {e}")))?;
        out[i] = object;
    }
    Ok(out)
}

/// An object with nothing but `apiVersion` and `kind`, which kube-apiserver converts without the webhook.
fn is_empty(object: &Value) -> bool {
    object
        .as_object()
        .is_some_and(|m| m.len() == 2 && m.contains_key("apiVersion") && m.contains_key("kind"))
}

/// Sends the review and returns its `convertedObjects`, or the error after `failed: `.
fn exchange(
    hook: &ConversionWebhook,
    objects: &[Value],
    api_version: &str,
) -> Result<Vec<Value>, String> {
    let review_version = hook
        .review_versions
        .iter()
        .find(|v| *v == "v1" || *v == "v1beta1")
        .ok_or_else(|| "failed: no supported conversion review versions".to_string())?;
    let review_api = format!("apiextensions.k8s.io/{review_version}");
    let uid = uuid::Uuid::new_v4().to_string();
    let request = json!({
        "kind": "ConversionReview",
        "apiVersion": review_api,
        "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
        "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
    });
    let body = serde_json::to_vec(&request).map_err(|e| format!("failed: {e}"))?;
    let answer = post(hook, body).map_err(|e| format!("failed: {e}"))?;
    let review: Value = serde_json::from_slice(&answer).map_err(|e| format!("failed: {e}"))?;
    let failed = |why: String| format!("failed: {why}");
    if review_version == "v1" {
        let got = format!(
            "{}, Kind={}",
            review["apiVersion"].as_str().unwrap_or(""),
            review["kind"].as_str().unwrap_or("")
        );
        if got != "apiextensions.k8s.io/v1, Kind=ConversionReview" {
            return Err(failed(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}"
            )));
        }
    }
    let response = &review["response"];
    if !response.is_object() {
        return Err(failed("no response provided".into()));
    }
    let got_uid = response["uid"].as_str().unwrap_or("");
    if review_version == "v1" && got_uid != uid {
        return Err(failed(format!(
            "expected response.uid=\"{uid}\", got \"{got_uid}\""
        )));
    }
    let result = &response["result"];
    let status = result["status"].as_str().unwrap_or("");
    if status != "Success" {
        let message = result["message"].as_str().unwrap_or("");
        return Err(failed(if message.is_empty() {
            format!("response.result.status was '{status}', not 'Success'")
        } else {
            message.to_string()
        }));
    }
    Ok(response["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// Posts the review through the admission webhooks' transport, from a thread of its own.
fn post(hook: &ConversionWebhook, body: Vec<u8>) -> Result<Vec<u8>, String> {
    let handlers = hook.handlers.lock().map_err(|e| e.to_string())?.clone();
    let target = Hook {
        id: String::new(),
        name: String::new(),
        client: hook.client_config.clone(),
        fail_open: false,
        timeout_seconds: TIMEOUT_SECONDS,
        match_conditions: Value::Null,
        reinvoke: false,
        invocation: None,
    };
    let request = Call {
        hook: &target,
        body,
        handlers: &handlers,
    };
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                runtime.block_on(call(request))
            })
            .join()
            .unwrap_or_else(|_| Err("the conversion webhook's call panicked".into()))
    })
}

/// `validateConvertedObject`: the webhook keeps the kind, name, namespace and uid.
fn same_identity(original: &Value, converted: &Value) -> Result<(), String> {
    let checks = [
        ("kind", &original["kind"], &converted["kind"]),
        (
            "name",
            &original["metadata"]["name"],
            &converted["metadata"]["name"],
        ),
        (
            "namespace",
            &original["metadata"]["namespace"],
            &converted["metadata"]["namespace"],
        ),
        (
            "UID",
            &original["metadata"]["uid"],
            &converted["metadata"]["uid"],
        ),
    ];
    for (what, a, b) in checks {
        let (a, b) = (a.as_str().unwrap_or(""), b.as_str().unwrap_or(""));
        if a != b {
            return Err(format!("must have the same {what}: {a} != {b}"));
        }
    }
    Ok(())
}

/// `restoreObjectMeta`: the original metadata, with the webhook's labels and annotations.
fn restore_metadata(original: &Value, converted: &mut Value) -> Result<(), String> {
    let Some(answered) = converted.get("metadata").cloned() else {
        return Err("missing metadata in converted object".into());
    };
    let Value::Object(answered) = answered else {
        return Err(format!(
            "invalid metadata of type {} in converted object",
            go_type(&answered)
        ));
    };
    let mut metadata = original
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    for field in ["labels", "annotations"] {
        match answered.get(field) {
            None | Some(Value::Null) => {
                if let Some(m) = metadata.as_object_mut() {
                    m.remove(field);
                }
            }
            Some(Value::Object(map)) => {
                if let Some((k, v)) = map.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(
                        "metadata.{field}[{k}] must be a string, but is {} in converted object",
                        go_type(v)
                    ));
                }
                metadata[field] = Value::Object(map.clone());
            }
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ));
            }
        }
    }
    converted["metadata"] = metadata;
    Ok(())
}

/// The Go type `encoding/json` decodes a value into, as kube-apiserver's messages print it.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::registry::InProcessHandlers;

    fn widget_type(answer: fn(&Value) -> Value) -> ResourceType {
        let handlers: InProcessHandlers = Default::default();
        handlers.lock().expect("lock").insert(
            ("ns".into(), "conv".into()),
            Arc::new(move |_path: &str, body: &[u8]| {
                let review: Value = serde_json::from_slice(body).expect("a review");
                let mut response = answer(&review["request"]);
                response["uid"] = review["request"]["uid"].clone();
                serde_json::to_vec(&json!({"apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "ConversionReview", "response": response}))
                .expect("JSON")
            }),
        );
        let mut t = ResourceType::new("example.dev", "v2", "Widget", "widgets", true);
        t.conversion_webhook = Some(Arc::new(ConversionWebhook {
            client_config: json!({"service": {"namespace": "ns", "name": "conv", "path": "/convert"}}),
            review_versions: vec!["v1".into()],
            handlers,
        }));
        t
    }

    fn widget() -> Value {
        json!({"apiVersion": "example.dev/v1", "kind": "Widget",
               "metadata": {"name": "w", "namespace": "ns", "uid": "u", "labels": {"a": "b"}},
               "spec": {"replicas": 2}})
    }

    #[test]
    fn converts_through_the_webhook_keeping_metadata() {
        let t = widget_type(|request| {
            let mut o = request["objects"][0].clone();
            o["apiVersion"] = request["desiredAPIVersion"].clone();
            o["spec"] = json!({"scale": {"replicas": o["spec"]["replicas"]}});
            o["metadata"]["generation"] = json!(7);
            o["metadata"]["labels"] = json!({"c": "d"});
            json!({"result": {"status": "Success"}, "convertedObjects": [o]})
        });
        let out = to_version(&t, vec![widget()], "example.dev/v2").expect("converted");
        assert_eq!(out[0]["spec"]["scale"]["replicas"], 2);
        assert_eq!(out[0]["metadata"]["labels"], json!({"c": "d"}));
        assert!(out[0]["metadata"].get("generation").is_none());
    }

    #[test]
    fn a_failure_names_the_kind_and_the_reason() {
        let t = widget_type(|_| json!({"result": {"status": "Failure", "message": "no way"}}));
        let e = to_version(&t, vec![widget()], "example.dev/v2").expect_err("refused");
        assert_eq!((e.code, e.reason.as_str()), (500, ""));
        assert_eq!(
            e.message,
            "conversion webhook for example.dev/v1, Kind=Widget failed: no way"
        );
    }

    #[test]
    fn objects_at_the_version_are_not_sent() {
        let t = widget_type(|_| panic!("not called"));
        let mut w = widget();
        w["apiVersion"] = json!("example.dev/v2");
        assert_eq!(
            to_version(&t, vec![w.clone()], "example.dev/v2").expect("as is"),
            [w]
        );
    }
}
