//! Reading a WebApp scenario's snapshot: `{"webapp": …, "deployment": …, "service": …}` as JSON.

use serde_json::Value;

/// The WebApp's `Ready` condition as (status, reason).
pub fn ready(objects: &Value) -> Option<(&str, &str)> {
    let conditions = objects.pointer("/webapp/status/conditions")?.as_array()?;
    let ready = conditions.iter().find(|c| c["type"] == "Ready")?;
    Some((ready["status"].as_str()?, ready["reason"].as_str()?))
}

/// The WebApp's `status.observedGeneration`.
pub fn observed(objects: &Value) -> Option<i64> {
    objects
        .pointer("/webapp/status/observedGeneration")?
        .as_i64()
}

/// The ConfigMap hash annotation on the Deployment's pod template.
pub fn config_hash(objects: &Value) -> Option<Value> {
    objects
        .pointer("/deployment/spec/template/metadata/annotations/example.dev~1config-hash")
        .cloned()
}
