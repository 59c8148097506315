//! The `policy` group's rules (`pkg/apis/policy/validation`): a PodDisruptionBudget's `minAvailable` and
//! `maxUnavailable` (not both, each a non-negative number or a percentage of at most 100%) and its unhealthy
//! pod eviction policy.

use serde_json::Value;

use super::apps::{int_or_percent, not_more_than_100_percent};
use super::field::{Errors, FieldError, go_json};
use super::meta;

/// `ValidatePodDisruptionBudget`, which checks no metadata: kube-apiserver checks it after, only when the
/// spec is valid (on create), or before (on update, with the common metadata checks).
pub(super) fn pod_disruption_budget(obj: &Value, update: bool) -> Errors {
    let spec = &obj["spec"];
    let mut errs = Errors::new();
    if !spec["minAvailable"].is_null() && !spec["maxUnavailable"].is_null() {
        // The value is the internal `PodDisruptionBudgetSpec`, which Go marshals with its field names.
        let field = |k: &str| go_json(&spec[k]);
        errs.push(FieldError::invalid_printed(
            "spec",
            format!(
                "{{\"MinAvailable\":{},\"Selector\":{},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
                field("minAvailable"),
                meta::selector_json(&spec["selector"]),
                field("maxUnavailable"),
                field("unhealthyPodEvictionPolicy")
            ),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for field in ["minAvailable", "maxUnavailable"] {
        if !spec[field].is_null() {
            let path = format!("spec.{field}");
            errs.extend(int_or_percent(&spec[field], &path));
            errs.extend(not_more_than_100_percent(&spec[field], &path));
        }
    }
    errs.extend(meta::label_selector(&spec["selector"], "spec.selector"));
    if let Some(policy) = spec["unhealthyPodEvictionPolicy"].as_str()
        && !matches!(policy, "AlwaysAllow" | "IfHealthyBudget")
    {
        errs.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            policy,
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
    if !update && errs.is_empty() {
        return meta::object(obj);
    }
    errs
}

/// `ValidatePodDisruptionBudgetStatusUpdate` (`policy/v1`): the conditions, then the counts not negative.
pub(super) fn pod_disruption_budget_status(obj: &Value) -> Errors {
    let status = &obj["status"];
    let mut errs = meta::conditions(&status["conditions"], "status.conditions");
    for name in [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ] {
        let n = status[name].as_i64().unwrap_or(0);
        if n < 0 {
            errs.push(FieldError::invalid_value(
                format!("status.{name}"),
                &serde_json::json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}
