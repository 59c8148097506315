//! The `autoscaling` group's rules (`pkg/apis/autoscaling/validation`): a HorizontalPodAutoscaler's replica
//! bounds, scale target reference, metrics (each source's required fields, one source per metric, targets'
//! types and values) and behavior (policies, stabilization windows, select policies, tolerances).
//!
//! kube-apiserver validates the internal (`v2`-shaped) object after its defaults; the rules here run on a
//! copy of the object with those defaults (a `v1` object's CPU target read as its `Resource` metric), so a
//! refusal names the fields kube-apiserver names, and nothing is added to the stored object.

use serde_json::{Value, json};

use super::field::{Errors, FieldError, child, go_value, index};
use super::{formats, meta};

const MAX_PERIOD_SECONDS: i64 = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

/// `ValidateHorizontalPodAutoscalerStatusUpdate`: the replica counts not negative.
pub(super) fn horizontal_pod_autoscaler_status(obj: &Value) -> Errors {
    ["currentReplicas", "desiredReplicas"]
        .iter()
        .filter_map(|name| {
            let n = obj["status"][*name].as_i64().unwrap_or(0);
            (n < 0).then(|| {
                FieldError::invalid_value(
                    format!("status.{name}"),
                    &json!(n),
                    "must be greater than or equal to 0",
                )
            })
        })
        .collect()
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[][..], Vec::as_slice)
}

/// `ValidateHorizontalPodAutoscaler`, or on update (`old`: the stored object)
/// `ValidateHorizontalPodAutoscalerUpdate`, with the strategy's options.
pub(super) fn horizontal_pod_autoscaler(obj: &Value, old: Option<&Value>) -> Errors {
    let new_spec = internal_spec(obj);
    let old_spec = old.map(internal_spec);
    let mut errs = Errors::new();
    if old.is_some() {
        errs.extend(meta::object_update(obj));
    }
    errs.extend(meta::object(obj));
    // `validationOptionsForHorizontalPodAutoscaler`.
    let min_lower_bound = match &old_spec {
        Some(o) if o["minReplicas"].as_i64() == Some(0) => 0,
        _ => 1,
    };
    let target = &new_spec["scaleTargetRef"];
    let (mut target_any_version, mut target_empty_group) = (false, false);
    match &old_spec {
        Some(o)
            if o["scaleTargetRef"]["apiVersion"] == target["apiVersion"]
                && o["scaleTargetRef"]["kind"] == target["kind"] =>
        {
            target_any_version = true;
        }
        _ if target["kind"] == "ReplicationController" => target_empty_group = true,
        _ => {}
    }
    let metrics_any_version = old_spec.as_ref().is_some_and(|o| {
        list(&o["metrics"]).iter().any(|m| {
            m["type"] == "Object"
                && !m["object"].is_null()
                && api_version_error(
                    m["object"]["describedObject"]["apiVersion"]
                        .as_str()
                        .unwrap_or(""),
                    true,
                )
                .is_some()
        })
    });
    errs.extend(spec(
        &new_spec,
        min_lower_bound,
        RefOptions {
            any_version: target_any_version,
            empty_group: target_empty_group,
        },
        RefOptions {
            any_version: metrics_any_version,
            empty_group: true,
        },
    ));
    errs
}

/// The spec as kube-apiserver validates it: a `v1` CPU target as a `Resource` metric, then `v2`'s defaults.
fn internal_spec(obj: &Value) -> Value {
    let mut spec = obj["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    if let Some(target) = spec
        .as_object_mut()
        .and_then(|s| s.remove("targetCPUUtilizationPercentage"))
    {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": target}}}]);
    }
    if spec["minReplicas"].is_null() {
        spec["minReplicas"] = json!(1);
    }
    if list(&spec["metrics"]).is_empty() {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    if spec["behavior"].is_object() {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (rules, defaults) in [("scaleUp", up), ("scaleDown", down)] {
            let mut merged = defaults;
            if let Some(given) = spec["behavior"][rules].as_object() {
                for (k, v) in given {
                    if !v.is_null() {
                        merged[k] = v.clone();
                    }
                }
            }
            spec["behavior"][rules] = merged;
        }
    }
    spec
}

/// `CrossVersionObjectReferenceValidationOptions`.
#[derive(Clone, Copy)]
struct RefOptions {
    any_version: bool,
    empty_group: bool,
}

/// `validateHorizontalPodAutoscalerSpec`.
fn spec(spec: &Value, min_lower_bound: i64, target: RefOptions, metrics: RefOptions) -> Errors {
    let mut errs = Errors::new();
    let min = spec["minReplicas"].as_i64();
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if let Some(min) = min
        && min < min_lower_bound
    {
        errs.push(FieldError::invalid_printed(
            "spec.minReplicas",
            min.to_string(),
            format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid_printed(
            "spec.maxReplicas",
            max.to_string(),
            "must be greater than 0",
        ));
    }
    if let Some(min) = min
        && max < min
    {
        errs.push(FieldError::invalid_printed(
            "spec.maxReplicas",
            max.to_string(),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errs.extend(reference(
        &spec["scaleTargetRef"],
        "spec.scaleTargetRef",
        target,
    ));
    let mut scales_to_zero = false;
    for (i, m) in list(&spec["metrics"]).iter().enumerate() {
        errs.extend(metric(m, &index("spec.metrics", i), metrics));
        scales_to_zero |= m["type"] == "Object" || m["type"] == "External";
    }
    if min == Some(0) && !scales_to_zero {
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    let behavior = &spec["behavior"];
    if behavior.is_object() {
        for rules in ["scaleUp", "scaleDown"] {
            errs.extend(scaling_rules(
                &behavior[rules],
                &child("spec.behavior", rules),
            ));
        }
    }
    errs
}

/// `ValidateAPIVersion`'s error, if any.
fn api_version_error(api_version: &str, empty_group: bool) -> Option<String> {
    if api_version.is_empty() || api_version == "/" {
        return (!empty_group).then(|| "apiVersion must specify API group".into());
    }
    match api_version.matches('/').count() {
        0 if !empty_group => Some("apiVersion must specify API group".into()),
        1 if !empty_group && api_version.starts_with('/') => {
            Some("apiVersion must specify API group".into())
        }
        0 | 1 => None,
        _ => Some(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// `ValidateCrossVersionObjectReference`.
fn reference(r: &Value, path: &str, opts: RefOptions) -> Errors {
    let mut errs = Errors::new();
    for field in ["kind", "name"] {
        let value = r[field].as_str().unwrap_or("");
        if value.is_empty() {
            errs.push(FieldError::required(child(path, field), ""));
        } else {
            for msg in formats::path_segment(value) {
                errs.push(FieldError::invalid(child(path, field), value, msg));
            }
        }
    }
    let api_version = r["apiVersion"].as_str().unwrap_or("");
    if !opts.any_version
        && let Some(msg) = api_version_error(api_version, opts.empty_group)
    {
        errs.push(FieldError::invalid(
            child(path, "apiVersion"),
            api_version,
            msg,
        ));
    }
    errs
}

/// `validateMetricSpec`.
fn metric(m: &Value, path: &str, opts: RefOptions) -> Errors {
    let mut errs = Errors::new();
    let types = [
        "ContainerResource",
        "External",
        "Object",
        "Pods",
        "Resource",
    ];
    let ty = m["type"].as_str().unwrap_or("");
    if ty.is_empty() {
        errs.push(FieldError::required(
            child(path, "type"),
            "must specify a metric source type",
        ));
    }
    if !types.contains(&ty) {
        errs.push(FieldError::not_supported(child(path, "type"), ty, &types));
    }
    let mut present: Vec<&str> = Vec::new();
    for source in [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ] {
        let src = &m[source];
        if src.is_null() {
            continue;
        }
        present.push(source);
        if present.len() > 1 {
            continue;
        }
        let at = child(path, source);
        errs.extend(match source {
            "object" => object_source(src, &at, opts),
            "external" => external_source(src, &at),
            "pods" => pods_source(src, &at),
            "resource" => resource_source(src, &at, false),
            _ => resource_source(src, &at, true),
        });
    }
    let expected = match ty {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errs.push(FieldError::not_supported(child(path, "type"), ty, &types));
            ""
        }
    };
    if !expected.is_empty() && m[expected].is_null() {
        errs.push(FieldError::required(
            child(path, expected),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        // Go ranges over a set here, in no fixed order: sorted, as the tests can only pin one source.
        let mut others: Vec<&str> = present.into_iter().filter(|s| *s != expected).collect();
        others.sort_unstable();
        for source in others {
            errs.push(FieldError::forbidden(
                child(path, source),
                "must populate the given metric source only",
            ));
        }
    }
    errs
}

fn object_source(src: &Value, path: &str, opts: RefOptions) -> Errors {
    let mut errs = reference(
        &src["describedObject"],
        &child(path, "describedObject"),
        opts,
    );
    errs.extend(metric_identifier(&src["metric"], &child(path, "metric")));
    let target = &src["target"];
    errs.extend(metric_target(target, &child(path, "target")));
    if target["value"].is_null() && target["averageValue"].is_null() {
        errs.push(FieldError::required(
            child(&child(path, "target"), "averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

fn external_source(src: &Value, path: &str) -> Errors {
    let mut errs = metric_identifier(&src["metric"], &child(path, "metric"));
    let target = &src["target"];
    let at = child(path, "target");
    errs.extend(metric_target(target, &at));
    match (target["value"].is_null(), target["averageValue"].is_null()) {
        (true, true) => errs.push(FieldError::required(
            child(&at, "averageValue"),
            "must set either a target value for metric or a per-pod target",
        )),
        (false, false) => errs.push(FieldError::forbidden(
            child(&at, "value"),
            "may not set both a target value for metric and a per-pod target",
        )),
        _ => {}
    }
    errs
}

fn pods_source(src: &Value, path: &str) -> Errors {
    let mut errs = metric_identifier(&src["metric"], &child(path, "metric"));
    let target = &src["target"];
    errs.extend(metric_target(target, &child(path, "target")));
    if target["averageValue"].is_null() {
        errs.push(FieldError::required(
            child(&child(path, "target"), "averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

/// `validateResourceSource`, or with `container` `validateContainerResourceSource` (the resource name's
/// own rules are not checked).
fn resource_source(src: &Value, path: &str, container: bool) -> Errors {
    let mut errs = Errors::new();
    if src["name"].as_str().unwrap_or("").is_empty() {
        errs.push(FieldError::required(
            child(path, "name"),
            "must specify a resource name",
        ));
    }
    if container {
        let c = src["container"].as_str().unwrap_or("");
        if c.is_empty() {
            errs.push(FieldError::required(
                child(path, "container"),
                "must specify a container",
            ));
        } else {
            for msg in formats::dns1123_label(c) {
                errs.push(FieldError::invalid(child(path, "container"), c, msg));
            }
        }
    }
    let target = &src["target"];
    let at = child(path, "target");
    errs.extend(metric_target(target, &at));
    match (
        target["averageUtilization"].is_null(),
        target["averageValue"].is_null(),
    ) {
        (true, true) => errs.push(FieldError::required(
            child(&at, "averageUtilization"),
            "must set either a target raw value or a target utilization",
        )),
        (false, false) => errs.push(FieldError::forbidden(
            child(&at, "averageValue"),
            "may not set both a target raw value and a target utilization",
        )),
        _ => {}
    }
    errs
}

/// Whether a quantity (canonical form) is above zero: no minus sign and a non-zero digit in its number.
fn positive(q: &str) -> bool {
    !q.starts_with('-')
        && q.chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '+')
            .any(|c| c.is_ascii_digit() && c != '0')
}

/// `validateMetricTarget`.
fn metric_target(t: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let ty = t["type"].as_str().unwrap_or("");
    if ty.is_empty() {
        errs.push(FieldError::required(
            child(path, "type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        errs.push(FieldError::invalid(
            child(path, "type"),
            ty,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for field in ["value", "averageValue"] {
        if let Some(q) = t[field].as_str()
            && !positive(q)
        {
            errs.push(FieldError::invalid(
                child(path, field),
                q,
                "must be positive",
            ));
        }
    }
    if let Some(u) = t["averageUtilization"].as_i64()
        && u < 1
    {
        errs.push(FieldError::invalid_printed(
            child(path, "averageUtilization"),
            u.to_string(),
            "must be greater than 0",
        ));
    }
    errs
}

/// `validateMetricIdentifier`.
fn metric_identifier(id: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let name = id["name"].as_str().unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(
            child(path, "name"),
            "must specify a metric name",
        ));
    } else {
        for msg in formats::path_segment(name) {
            errs.push(FieldError::invalid(child(path, "name"), name, msg));
        }
    }
    errs
}

/// `validateScalingRules` of the defaulted rules.
fn scaling_rules(rules: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if !rules.is_object() {
        return errs;
    }
    if let Some(w) = rules["stabilizationWindowSeconds"].as_i64() {
        let at = child(path, "stabilizationWindowSeconds");
        if w < 0 {
            errs.push(FieldError::invalid_printed(
                &at,
                w.to_string(),
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid_printed(
                &at,
                w.to_string(),
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(p) = rules["selectPolicy"].as_str()
        && !matches!(p, "Max" | "Min" | "Disabled")
    {
        errs.push(FieldError::not_supported_printed(
            child(path, "selectPolicy"),
            go_value(&rules["selectPolicy"]),
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies_path = child(path, "policies");
    let policies = list(&rules["policies"]);
    if policies.is_empty() {
        errs.push(FieldError::required(
            &policies_path,
            "must specify at least one Policy",
        ));
    }
    for (i, p) in policies.iter().enumerate() {
        let at = index(&policies_path, i);
        let ty = p["type"].as_str().unwrap_or("");
        if !matches!(ty, "Pods" | "Percent") {
            errs.push(FieldError::not_supported(
                child(&at, "type"),
                ty,
                &["Percent", "Pods"],
            ));
        }
        let value = p["value"].as_i64().unwrap_or(0);
        if value <= 0 {
            errs.push(FieldError::invalid_printed(
                child(&at, "value"),
                value.to_string(),
                "must be greater than zero",
            ));
        }
        let period = p["periodSeconds"].as_i64().unwrap_or(0);
        if period <= 0 {
            errs.push(FieldError::invalid_printed(
                child(&at, "periodSeconds"),
                period.to_string(),
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid_printed(
                child(&at, "periodSeconds"),
                period.to_string(),
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    if let Some(t) = rules["tolerance"].as_str()
        && t.starts_with('-')
        && positive(&t[1..])
    {
        errs.push(FieldError::invalid(
            child(path, "tolerance"),
            t,
            "must be greater than or equal to 0",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_signs_and_api_versions() {
        assert!(positive("100m") && positive("1") && positive("0.5"));
        assert!(!positive("0") && !positive("-1") && !positive("0m"));
        assert_eq!(
            api_version_error("v1", false).as_deref(),
            Some("apiVersion must specify API group")
        );
        assert_eq!(api_version_error("v1", true), None);
        assert_eq!(api_version_error("apps/v1", false), None);
        assert!(api_version_error("a/b/c", true).is_some());
    }
}
