//! One AdmissionReview in, one out: decoding the request into the kind, running the defaulters (answering
//! with a JSON patch) or the validators, and the kind-erased view the server routes to.

use kube::Resource;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{FailurePolicy, Request, Webhooks};
use crate::cache::is_namespaced;

/// Which of a kind's two webhooks a review is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// The validating webhook (`/validate/...`).
    Validate,
    /// The mutating (defaulting) webhook (`/mutate/...`).
    Mutate,
}

/// The webhooks of one kind without the kind's type: what the server and the configurations need.
pub trait ErasedWebhooks: Send + Sync {
    /// The kind's API group (empty for the core group).
    fn group(&self) -> String;
    /// The kind's version.
    fn version(&self) -> String;
    /// The kind's plural resource name.
    fn plural(&self) -> String;
    /// Whether the kind lives in namespaces.
    fn namespaced(&self) -> bool;
    /// Whether there is a validating webhook, and whether it also sees deletes.
    fn validating(&self) -> Option<bool>;
    /// Whether there is a mutating webhook.
    fn mutating(&self) -> bool;
    /// The failure policy and timeout of both.
    fn policy(&self) -> (FailurePolicy, i32);
    /// Answers the AdmissionReview `body` (JSON) for `hook` with an AdmissionReview (JSON).
    fn review(&self, hook: Hook, body: &[u8]) -> Vec<u8>;
}

impl<K> ErasedWebhooks for Webhooks<K>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    fn group(&self) -> String {
        K::group(&()).into_owned()
    }

    fn version(&self) -> String {
        K::version(&()).into_owned()
    }

    fn plural(&self) -> String {
        K::plural(&()).into_owned()
    }

    fn namespaced(&self) -> bool {
        is_namespaced::<K>()
    }

    fn validating(&self) -> Option<bool> {
        self.validates().then_some(self.validate_deletes)
    }

    fn mutating(&self) -> bool {
        self.defaults()
    }

    fn policy(&self) -> (FailurePolicy, i32) {
        (self.failure_policy, self.timeout_seconds)
    }

    fn review(&self, hook: Hook, body: &[u8]) -> Vec<u8> {
        let response = match serde_json::from_slice::<AdmissionReview<DynamicObject>>(body)
            .map_err(|e| e.to_string())
            .and_then(|r| {
                let request: Result<AdmissionRequest<DynamicObject>, _> = r.try_into();
                request.map_err(|e| e.to_string())
            }) {
            Ok(request) => answer(self, hook, &request),
            Err(e) => AdmissionResponse::invalid(format!("not an AdmissionReview: {e}")),
        };
        serde_json::to_vec(&response.into_review()).unwrap_or_default()
    }
}

fn answer<K>(
    hooks: &Webhooks<K>,
    hook: Hook,
    request: &AdmissionRequest<DynamicObject>,
) -> AdmissionResponse
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned,
{
    let response = AdmissionResponse::from(request);
    let object = match typed::<K>(request.object.as_ref()) {
        Ok(o) => o,
        Err(e) => return response.deny(format!("the object is not a {}: {e}", K::kind(&()))),
    };
    let old_object = match typed::<K>(request.old_object.as_ref()) {
        Ok(o) => o,
        Err(e) => return response.deny(format!("the old object is not a {}: {e}", K::kind(&()))),
    };
    match hook {
        Hook::Mutate => {
            let (Some(before), Some(raw)) = (object, request.object.as_ref()) else {
                return response;
            };
            let mut after = before.clone();
            hooks.fill(&mut after);
            let (Ok(raw), Ok(before), Ok(after)) = (
                serde_json::to_value(raw),
                crate::json::convert(&before),
                crate::json::convert(&after),
            ) else {
                return response.deny("the defaulted object could not be serialized");
            };
            let mut defaulted = raw.clone();
            overlay(&mut defaulted, &before, &after);
            let patch = json_patch::diff(&raw, &defaulted);
            if patch.0.is_empty() {
                return response;
            }
            match response.clone().with_patch(patch) {
                Ok(patched) => patched,
                Err(e) => response.deny(e.to_string()),
            }
        }
        Hook::Validate => {
            let verdict = hooks.check(&Request {
                operation: request.operation.clone(),
                object: object.as_ref(),
                old_object: old_object.as_ref(),
                dry_run: request.dry_run,
            });
            let mut response = if verdict.allowed {
                response
            } else {
                response.deny(verdict.message.unwrap_or_default())
            };
            if !verdict.warnings.is_empty() {
                response.warnings = Some(verdict.warnings);
            }
            response
        }
    }
}

/// Brings into `raw` (the object as sent) what defaulting gave: fields the typed object has and `raw` lacks
/// (serde defaults and the defaulters' additions), and fields the defaulters changed or removed. Fields the
/// type does not know, and values it would only spell differently, are left as sent.
fn overlay(raw: &mut serde_json::Value, before: &serde_json::Value, after: &serde_json::Value) {
    use serde_json::Value;
    let (Value::Object(raw), Value::Object(after_map)) = (raw, after) else {
        return;
    };
    let empty = serde_json::Map::new();
    let before_map = before.as_object().unwrap_or(&empty);
    for (k, a) in after_map {
        let b = before_map.get(k);
        match raw.get_mut(k) {
            None => {
                raw.insert(k.clone(), a.clone());
            }
            Some(r) if b != Some(a) => match (r.is_object() && a.is_object(), b) {
                (true, Some(b)) => overlay(r, b, a),
                _ => *r = a.clone(),
            },
            Some(r) if r.is_object() => overlay(r, b.unwrap_or(&Value::Null), a),
            Some(_) => {}
        }
    }
    for k in before_map.keys() {
        if !after_map.contains_key(k) {
            raw.remove(k);
        }
    }
}

fn typed<K: DeserializeOwned>(o: Option<&DynamicObject>) -> Result<Option<K>, serde_json::Error> {
    o.map(crate::json::convert::<K>).transpose()
}

/// The operations a webhook of `hook` registers for.
pub(super) fn operations(hook: Hook, deletes: bool) -> Vec<String> {
    let mut ops = vec![Operation::Create, Operation::Update];
    if hook == Hook::Validate && deletes {
        ops.push(Operation::Delete);
    }
    ops.into_iter()
        .map(|o| match o {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        })
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::{Value, json};

    use super::*;
    use crate::admission::Verdict;

    fn hooks() -> Webhooks<ConfigMap> {
        Webhooks::<ConfigMap>::new()
            .validate(|r| match r.object {
                Some(cm) if cm.data.as_ref().is_some_and(|d| d.contains_key("bad")) => {
                    Verdict::deny("no bad keys").warn("first warning")
                }
                Some(_) => Verdict::allow().warn("looked at it"),
                None => Verdict::deny("deletes are refused"),
            })
            .default(|cm| {
                cm.data
                    .get_or_insert_with(Default::default)
                    .insert("filled".into(), "yes".into());
            })
    }

    fn review(operation: &str, object: Value, old: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "c", "namespace": "n", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object, "oldObject": old, "dryRun": false
            }
        }))
        .unwrap()
    }

    fn cm(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": data})
    }

    fn response(hook: Hook, body: &[u8]) -> Value {
        let out: Value = serde_json::from_slice(&hooks().review(hook, body)).unwrap();
        out["response"].clone()
    }

    #[test]
    fn a_denial_carries_the_message_and_the_warnings() {
        let r = response(
            Hook::Validate,
            &review("CREATE", cm(json!({"bad": "1"})), Value::Null),
        );
        assert_eq!(r["uid"], "u-1");
        assert_eq!(r["allowed"], false);
        assert_eq!(r["status"]["message"], "no bad keys");
        assert_eq!(r["warnings"], json!(["first warning"]));
        let r = response(
            Hook::Validate,
            &review("UPDATE", cm(json!({"a": "1"})), cm(json!({}))),
        );
        assert_eq!(r["allowed"], true);
        assert_eq!(r["warnings"], json!(["looked at it"]));
    }

    #[test]
    fn deletes_see_the_old_object_only() {
        let r = response(
            Hook::Validate,
            &review("DELETE", Value::Null, cm(json!({}))),
        );
        assert_eq!(r["status"]["message"], "deletes are refused");
    }

    #[test]
    fn defaulting_answers_with_a_patch_of_the_changes_only() {
        let r = response(
            Hook::Mutate,
            &review("CREATE", cm(json!({"a": "1"})), Value::Null),
        );
        assert_eq!(r["allowed"], true);
        assert_eq!(r["patchType"], "JSONPatch");
        // kube's AdmissionResponse sends the patch's bytes as a JSON array, which Go decodes as []byte.
        let bytes: Vec<u8> = serde_json::from_value(r["patch"].clone()).unwrap();
        let patch: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/data/filled", "value": "yes"}])
        );
        // Nothing to fill: no patch.
        let r = response(
            Hook::Mutate,
            &review("CREATE", cm(json!({"filled": "yes"})), Value::Null),
        );
        assert!(r.get("patch").is_none(), "{r}");
    }

    #[test]
    fn garbage_is_refused_without_a_panic() {
        let r = response(Hook::Validate, b"{not json");
        assert_eq!(r["allowed"], false);
    }
}
