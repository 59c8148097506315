//! What kube-apiserver's Pod strategy sets on a new Pod (`podStrategy.PrepareForCreate`): a status of its
//! own, `phase: Pending` and the QoS class (`qos.GetPodQOS`: a class sent in the request's status is kept,
//! else it is computed from the containers' or the pod's resources), and a `PodScheduled=False` condition
//! (reason `SchedulingGated`) for a Pod with scheduling gates.

use std::cmp::Ordering;

use serde_json::{Value, json};

use crate::quantity::compare;
use crate::registry::ResourceType;

/// Whether `rt` is the core Pod kind.
pub(super) fn is_pod(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.kind == "Pod"
}

/// The QoS class the request's status names, if any (read before the status is dropped).
pub(super) fn requested_qos(obj: &Value) -> Option<String> {
    obj["status"]["qosClass"]
        .as_str()
        .filter(|q| !q.is_empty())
        .map(str::to_string)
}

/// Sets the new Pod's status.
pub(super) fn prepare(obj: &mut Value, requested_qos: Option<String>, now: &str) {
    let qos = requested_qos.unwrap_or_else(|| qos_class(&obj["spec"]).to_string());
    let mut status = json!({"phase": "Pending", "qosClass": qos});
    if obj["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|g| !g.is_empty())
    {
        status["conditions"] = json!([{
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": null,
            "lastTransitionTime": now,
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }]);
    }
    obj["status"] = status;
}

/// A quantity above zero (`Quantity.Cmp(0) == 1`).
fn positive(q: &Value) -> bool {
    q.as_str()
        .and_then(|q| compare(q, "0"))
        .is_some_and(|o| o == Ordering::Greater)
}

const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `ComputePodQOS`: `BestEffort` with no CPU or memory requested or limited above zero; `Guaranteed` when
/// every container (init containers too) limits both and requests what it limits (requests default to
/// limits, and are at most the limits, so the sums match only when each container's do), or, with
/// pod-level resources, when the pod limits both and requests what it limits; else `Burstable`.
fn qos_class(spec: &Value) -> &'static str {
    let resources = &spec["resources"];
    // Pod-level resources, when the spec has them at all, decide alone (`PodLevelResources`, on in 1.35).
    let pod_level = resources.is_object();
    let groups: Vec<&Value> = if pod_level {
        vec![resources]
    } else {
        ["containers", "initContainers"]
            .iter()
            .flat_map(|list| spec[*list].as_array().into_iter().flatten())
            .map(|c| &c["resources"])
            .collect()
    };
    let mut any = false;
    let mut guaranteed = true;
    for r in &groups {
        let (requests, limits) = (&r["requests"], &r["limits"]);
        for name in QOS_RESOURCES {
            let (request, limit) = (&requests[name], &limits[name]);
            any |= positive(request) || positive(limit);
            // A request left out is the limit (`SetDefaults_Pod`).
            let request = if request.is_null() { limit } else { request };
            let equal = match (request.as_str(), limit.as_str()) {
                (Some(req), Some(lim)) => compare(req, lim) == Some(Ordering::Equal),
                _ => false,
            };
            if !positive(limit) || !equal {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(resources: &[Value]) -> Value {
        let containers: Vec<Value> = resources
            .iter()
            .map(|r| json!({"name": "c", "resources": r}))
            .collect();
        json!({ "containers": containers })
    }

    #[test]
    fn qos_classes_as_kube_computes_them() {
        assert_eq!(qos_class(&pod(&[json!({})])), "BestEffort");
        assert_eq!(
            qos_class(&pod(&[json!({"requests": {"storage": "1Gi"}})])),
            "BestEffort"
        );
        let full = json!({"limits": {"cpu": "1", "memory": "1Gi"}});
        assert_eq!(qos_class(&pod(std::slice::from_ref(&full))), "Guaranteed");
        assert_eq!(
            qos_class(&pod(&[json!({"limits": {"cpu": "1000m", "memory": "1Gi"},
                "requests": {"cpu": "1", "memory": "1024Mi"}})])),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(&[full.clone(), json!({"limits": {"cpu": "1"}})])),
            "Burstable"
        );
        assert_eq!(
            qos_class(&pod(&[
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})
            ])),
            "Burstable"
        );
        assert_eq!(
            qos_class(&json!({"containers": [{"name": "c"}],
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})),
            "Guaranteed"
        );
    }

    #[test]
    fn a_gated_pod_is_not_scheduled() {
        let mut obj = json!({"spec": {"containers": [{"name": "c"}], "schedulingGates": [{"name": "g"}]},
            "status": {"phase": "Running"}});
        prepare(&mut obj, Some("Burstable".into()), "2026-01-01T00:00:00Z");
        assert_eq!(obj["status"]["phase"], "Pending");
        assert_eq!(obj["status"]["qosClass"], "Burstable");
        assert_eq!(obj["status"]["conditions"][0]["reason"], "SchedulingGated");
    }
}
