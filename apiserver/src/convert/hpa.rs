//! `autoscaling/v1` HorizontalPodAutoscalers to and from the stored `autoscaling/v2` form: the CPU
//! utilization target and its current value become (and come from) a `Resource` metric named `cpu`.
//!
//! kube-apiserver also keeps the `v2` fields `v1` cannot express (other metrics, behavior, conditions) in
//! `autoscaling.alpha.kubernetes.io/*` annotations of the `v1` form; this conversion drops them, so an update
//! through `v1` loses them.

use serde_json::{Map, Value, json};

/// The stored (`v2`) form of a `v1` object.
pub(super) fn v1_to_v2(mut obj: Value) -> Value {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
        && let Some(target) = spec.remove("targetCPUUtilizationPercentage")
    {
        spec.insert(
            "metrics".into(),
            json!([{ "type": "Resource", "resource": { "name": "cpu",
                "target": { "type": "Utilization", "averageUtilization": target } } }]),
        );
    }
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut)
        && let Some(current) = status.remove("currentCPUUtilizationPercentage")
    {
        status.insert(
            "currentMetrics".into(),
            json!([{ "type": "Resource", "resource": { "name": "cpu",
                "current": { "averageUtilization": current } } }]),
        );
    }
    obj
}

/// The `v1` form of a stored (`v2`) object.
pub(super) fn v2_to_v1(mut obj: Value) -> Value {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        let target = cpu(spec.remove("metrics"), "target")
            .filter(|t| t["type"] == "Utilization")
            .and_then(|t| t.get("averageUtilization").cloned());
        spec.remove("behavior");
        if let Some(target) = target {
            spec.insert("targetCPUUtilizationPercentage".into(), target);
        }
    }
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        let current = cpu(status.remove("currentMetrics"), "current")
            .and_then(|c| c.get("averageUtilization").cloned());
        status.remove("conditions");
        if let Some(current) = current {
            status.insert("currentCPUUtilizationPercentage".into(), current);
        }
    }
    obj
}

/// The `target` or `current` of the `Resource` metric named `cpu`, if any.
fn cpu(metrics: Option<Value>, field: &str) -> Option<Map<String, Value>> {
    let Some(Value::Array(metrics)) = metrics else {
        return None;
    };
    metrics
        .into_iter()
        .find(|m| m["type"] == "Resource" && m["resource"]["name"] == "cpu")
        .and_then(|mut m| m["resource"][field].as_object_mut().map(std::mem::take))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_target_round_trips() {
        let v1 = json!({
            "spec": { "maxReplicas": 3, "targetCPUUtilizationPercentage": 70,
                      "scaleTargetRef": { "kind": "Deployment", "name": "d" } },
            "status": { "currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 20 },
        });
        let v2 = v1_to_v2(v1.clone());
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"],
            json!({ "type": "Utilization", "averageUtilization": 70 })
        );
        assert_eq!(
            v2["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"],
            20
        );
        assert_eq!(v2_to_v1(v2), v1);
    }

    #[test]
    fn what_v1_cannot_express_is_dropped() {
        let v2 = json!({ "spec": { "maxReplicas": 3, "behavior": {}, "metrics": [
            { "type": "Resource", "resource": { "name": "memory",
              "target": { "type": "Utilization", "averageUtilization": 50 } } }] } });
        assert_eq!(v2_to_v1(v2), json!({ "spec": { "maxReplicas": 3 } }));
    }
}
