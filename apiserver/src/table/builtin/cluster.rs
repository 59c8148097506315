//! Cluster-wide kinds: Nodes, ResourceQuotas, PriorityClasses, RuntimeClasses and the `resource.k8s.io`
//! classes and templates.

use serde_json::{Value, json};

use super::cells::text;
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// The roles of a node: `node-role.kubernetes.io/<role>` labels and the `kubernetes.io/role` label's value.
fn roles(labels: &Value) -> String {
    let mut roles: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                (!role.is_empty()).then(|| role.to_string())
            } else if k == "kubernetes.io/role" {
                v.as_str().filter(|r| !r.is_empty()).map(str::to_string)
            } else {
                None
            }
        })
        .collect();
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

/// A Node's row.
pub(super) fn node(obj: &Value, now: Now) -> Row {
    let status = &obj["status"];
    let mut state: Vec<String> = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|c| c["type"] == "Ready")
        .map(|c| {
            if c["status"] == "True" {
                "Ready".to_string()
            } else {
                "NotReady".to_string()
            }
        })
        .into_iter()
        .collect();
    if state.is_empty() {
        state.push("Unknown".into());
    }
    if obj["spec"]["unschedulable"] == true {
        state.push("SchedulingDisabled".into());
    }
    let address = |type_: &str| {
        status["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == type_)
            .map_or_else(|| "<none>".to_string(), |a| text(&a["address"]))
    };
    let info = &status["nodeInfo"];
    let known = |key: &str| match info[key].as_str() {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "<unknown>".to_string(),
    };
    vec![
        obj["metadata"]["name"].clone(),
        json!(state.join(",")),
        json!(roles(&obj["metadata"]["labels"])),
        time::age(obj, now),
        json!(text(&info["kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(known("osImage")),
        json!(known("kernelVersion")),
        json!(known("containerRuntimeVersion")),
    ]
    .into()
}

/// `resource: used/hard` of each resource the quota controller has written into `status.hard` (none until it
/// runs), sorted by name; `limits.*` in the Limit cell, the others in Request.
pub(super) fn resource_quota(obj: &Value, now: Now) -> Row {
    let hard = obj["status"]["hard"].as_object();
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for (resource, quantity) in hard.into_iter().flatten() {
        let used = obj["status"]["used"][resource].as_str().unwrap_or("0");
        let entry = format!("{resource}: {used}/{}", text(quantity));
        if resource.split('.').next() == Some("limits") && resource.contains('.') {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    vec![
        obj["metadata"]["name"].clone(),
        json!(requests.join(", ")),
        json!(limits.join(", ")),
        time::age(obj, now),
    ]
    .into()
}

/// A PriorityClass's row.
pub(super) fn priority_class(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(obj["value"].as_i64().unwrap_or(0)),
        json!(obj["globalDefault"].as_bool().unwrap_or(false)),
        time::age(obj, now),
        json!(
            obj["preemptionPolicy"]
                .as_str()
                .unwrap_or("PreemptLowerPriority")
        ),
    ]
    .into()
}

/// A RuntimeClass's row.
pub(super) fn runtime_class(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&obj["handler"])),
        time::age(obj, now),
    ]
    .into()
}

/// Name and Age only (DeviceClass, ResourceClaimTemplate).
pub(super) fn name_and_age(obj: &Value, now: Now) -> Row {
    vec![obj["metadata"]["name"].clone(), time::age(obj, now)].into()
}

/// A ResourceClaim's row.
pub(super) fn resource_claim(obj: &Value, now: Now) -> Row {
    let deleted = !obj["metadata"]["deletionTimestamp"].is_null();
    let status = &obj["status"];
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if status["allocation"].is_null() {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if status["reservedFor"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            states.push("reserved");
        } else if deleted {
            states.push("deallocating");
        }
    }
    vec![
        obj["metadata"]["name"].clone(),
        json!(states.join(",")),
        time::age(obj, now),
    ]
    .into()
}

/// A ResourceSlice's row.
pub(super) fn resource_slice(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&spec["nodeName"])),
        json!(text(&spec["driver"])),
        json!(text(&spec["pool"]["name"])),
        time::age(obj, now),
    ]
    .into()
}
