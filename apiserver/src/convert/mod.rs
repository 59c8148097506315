//! Conversion between a served version and the stored form.

use serde_json::{Map, Value};

use super::error::ApiResult;
use super::registry::{Conversion, ResourceType};

mod custom;
mod hpa;

pub use custom::to_version;

/// [`from_storage`] after the CRD's conversion webhook, if it has one, converted the object to `rt`'s version.
pub fn try_from_storage(rt: &ResourceType, obj: &Value) -> ApiResult<Value> {
    let mut converted = to_version(rt, vec![obj.clone()], &rt.api_version())?;
    Ok(from_storage(rt, &converted.pop().unwrap_or_default()))
}

/// [`to_storage`] after the CRD's conversion webhook, if it has one, converted the object to the storage
/// version.
pub fn try_to_storage(rt: &ResourceType, obj: Value) -> ApiResult<Value> {
    let mut converted = to_version(rt, vec![obj], &storage_api_version(rt))?;
    Ok(to_storage(rt, converted.pop().unwrap_or_default()))
}

/// Stored objects at `rt`'s version, through the CRD's conversion webhook if it has one (one review for all).
pub fn served(rt: &ResourceType, stored: &[&Value]) -> ApiResult<Vec<Value>> {
    to_version(
        rt,
        stored.iter().map(|o| (*o).clone()).collect(),
        &rt.api_version(),
    )
}

/// The stored form of an object received for `rt`'s version.
pub fn to_storage(rt: &ResourceType, mut obj: Value) -> Value {
    match rt.conversion {
        Conversion::None => {}
        Conversion::EventsV1 => obj = events_v1_to_core(obj),
        Conversion::HorizontalPodAutoscalerV1 => obj = hpa::v1_to_v2(obj),
    }
    set_type(&mut obj, &storage_api_version(rt), &rt.kind);
    obj
}

/// `rt`'s form of a stored object; a custom resource pruned and defaulted by its CRD's current schema.
pub fn from_storage(rt: &ResourceType, obj: &Value) -> Value {
    let mut obj = match rt.conversion {
        Conversion::None => obj.clone(),
        Conversion::EventsV1 => core_to_events_v1(obj.clone()),
        Conversion::HorizontalPodAutoscalerV1 => hpa::v2_to_v1(obj.clone()),
    };
    set_type(&mut obj, &rt.api_version(), &rt.kind);
    if rt.custom
        && let Some(schema) = &rt.schema
    {
        // kube-apiserver decodes a stored custom resource with the CRD's schema of the day: fields it no
        // longer declares are pruned and defaults added since the write are applied, on every read.
        schema.prune(&mut obj);
        schema.apply_defaults(&mut obj);
    }
    obj
}

fn storage_api_version(rt: &ResourceType) -> String {
    super::registry::api_version(&rt.storage.0, &rt.storage_version)
}

fn set_type(obj: &mut Value, api_version: &str, kind: &str) {
    if let Some(map) = obj.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version.to_string()));
        map.insert("kind".into(), Value::String(kind.to_string()));
    }
}

const RENAMES: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn rename(obj: Value, forward: bool) -> Value {
    let Value::Object(map) = obj else { return obj };
    let mut out = Map::new();
    for (k, v) in map {
        let renamed = RENAMES
            .iter()
            .find(|(a, b)| if forward { a == &k } else { b == &k })
            .map(|(a, b)| if forward { b } else { a })
            .map(|s| s.to_string())
            .unwrap_or(k);
        out.insert(renamed, v);
    }
    Value::Object(out)
}

fn events_v1_to_core(obj: Value) -> Value {
    rename(obj, true)
}

fn core_to_events_v1(obj: Value) -> Value {
    rename(obj, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_round_trip() {
        let reg = super::super::registry::Registry::with_builtins();
        let v1 = reg.get("events.k8s.io", "v1", "events").unwrap();
        let stored = to_storage(
            &v1,
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
                   "regarding": {"name": "x"}, "note": "hello", "reportingController": "c"}),
        );
        assert_eq!(stored["apiVersion"], "v1");
        assert_eq!(stored["involvedObject"]["name"], "x");
        assert_eq!(stored["message"], "hello");
        assert_eq!(stored["reportingComponent"], "c");
        let back = from_storage(&v1, &stored);
        assert_eq!(back["apiVersion"], "events.k8s.io/v1");
        assert_eq!(back["note"], "hello");
        assert_eq!(back["regarding"]["name"], "x");
    }
}
