//! The `apps` group's rules (`pkg/apis/apps/validation`): a selector that is set, not empty, matches the
//! template's labels and never changes; the template's pod spec with restart policy `Always`; a
//! StatefulSet's spec immutable but for replicas, template, update strategy, ordinals, revision history
//! limit, PVC retention policy and min ready seconds.

use serde_json::Value;

use super::core::{pod_template, strip_nulls};
use super::field::{Errors, FieldError, go_json};
use super::formats;
use super::meta;
use crate::selector::LabelSelector;

const IMMUTABLE: &str = "field is immutable";
const NEGATIVE: &str = "must be greater than or equal to 0";

/// The kinds of this group whose rules this server has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Deployment,
    ReplicaSet,
    DaemonSet,
    StatefulSet,
}

impl Kind {
    fn lower(self) -> &'static str {
        match self {
            Kind::Deployment | Kind::ReplicaSet => "deployment",
            Kind::DaemonSet => "daemonset",
            Kind::StatefulSet => "statefulset",
        }
    }
}

/// The errors of a new object of `kind`.
pub(super) fn create(kind: Kind, obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(spec(kind, &obj["spec"], true));
    errs
}

/// The errors of an update of an object of `kind` from `old`.
pub(super) fn update(kind: Kind, obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    let selector_changed = obj["spec"]["selector"] != old["spec"]["selector"];
    let immutable_selector = || {
        FieldError::invalid_printed(
            "spec.selector",
            meta::selector_json(&obj["spec"]["selector"]),
            IMMUTABLE,
        )
    };
    match kind {
        Kind::Deployment | Kind::ReplicaSet => {
            errs.extend(spec(kind, &obj["spec"], false));
            if selector_changed {
                errs.push(immutable_selector());
            }
        }
        Kind::DaemonSet => {
            if selector_changed {
                errs.push(immutable_selector());
            }
            errs.extend(spec(kind, &obj["spec"], false));
        }
        Kind::StatefulSet => {
            errs.extend(spec(kind, &obj["spec"], false));
            let mutable = [
                "replicas",
                "template",
                "updateStrategy",
                "minReadySeconds",
                "ordinals",
                "revisionHistoryLimit",
                "persistentVolumeClaimRetentionPolicy",
            ];
            let rest = |v: &Value| {
                let mut v = strip_nulls(v.clone());
                if let Some(m) = v.as_object_mut() {
                    for f in mutable {
                        m.remove(f);
                    }
                }
                v
            };
            if rest(&obj["spec"]) != rest(&old["spec"]) {
                errs.push(FieldError::forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
                ));
            }
        }
    }
    errs
}

/// The template a StatefulSet's is validated as (kube-apiserver's `ValidateStatefulSetSpec`): without
/// `subdomain` and `hostname` (the controller sets them), and with a volume per claim template (a
/// `persistentVolumeClaim` of its name) in place of any volume of that name, so that mounts can name them.
fn template_for_stateful_set(spec: &Value) -> Value {
    let mut template = spec["template"].clone();
    let claims: Vec<&str> = spec["volumeClaimTemplates"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    if let Some(pod) = template.get_mut("spec").and_then(Value::as_object_mut) {
        pod.remove("subdomain");
        pod.remove("hostname");
        if !claims.is_empty() {
            let mut volumes: Vec<Value> = claims
                .iter()
                .map(|name| {
                    serde_json::json!({"name": name, "persistentVolumeClaim": {"claimName": name}})
                })
                .collect();
            let others = pod
                .get("volumes")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter(|v| !v["name"].as_str().is_some_and(|n| claims.contains(&n)))
                .cloned();
            volumes.extend(others);
            pod.insert("volumes".into(), Value::Array(volumes));
        }
    }
    template
}

/// The spec's rules: the selector and the template, with what each kind checks before them.
fn spec(kind: Kind, spec: &Value, create: bool) -> Errors {
    let mut errs = Errors::new();
    match kind {
        Kind::Deployment => errs.extend(non_negative(&spec["replicas"], "spec.replicas")),
        Kind::ReplicaSet => {
            errs.extend(non_negative(&spec["replicas"], "spec.replicas"));
            errs.extend(non_negative(
                &spec["minReadySeconds"],
                "spec.minReadySeconds",
            ));
        }
        Kind::StatefulSet => {
            errs.extend(non_negative(&spec["replicas"], "spec.replicas"));
            errs.extend(non_negative(
                &spec["minReadySeconds"],
                "spec.minReadySeconds",
            ));
        }
        Kind::DaemonSet => {}
    }
    if kind == Kind::StatefulSet && create {
        let service = spec["serviceName"].as_str().unwrap_or("");
        if !service.is_empty() {
            for msg in formats::dns1123_label(service) {
                errs.push(FieldError::invalid("spec.serviceName", service, msg));
            }
        }
    }
    let selector = &spec["selector"];
    let stateful_template;
    let template = if kind == Kind::StatefulSet {
        stateful_template = template_for_stateful_set(spec);
        &stateful_template
    } else {
        &spec["template"]
    };
    let template_labels = template["metadata"]["labels"].as_object();
    let empty = selector.is_object()
        && selector["matchLabels"]
            .as_object()
            .is_none_or(|m| m.is_empty())
        && selector["matchExpressions"]
            .as_array()
            .is_none_or(|a| a.is_empty());
    let mismatch = || {
        let labels = template["metadata"]["labels"].clone();
        FieldError::invalid_printed(
            "spec.template.metadata.labels",
            go_json(&labels),
            "`selector` does not match template `labels`",
        )
    };
    let parse_error = !selector.is_null() && LabelSelector::from_label_selector(selector).is_err();
    if kind == Kind::DaemonSet {
        errs.extend(meta::label_selector(selector, "spec.selector"));
        // A missing selector selects nothing, so it never matches.
        let matches = selector.is_object()
            && LabelSelector::from_label_selector(selector)
                .is_ok_and(|s| s.matches(template_labels));
        if !matches && (selector.is_null() || LabelSelector::from_label_selector(selector).is_ok())
        {
            errs.push(mismatch());
        }
        if empty {
            errs.push(empty_selector(kind, selector));
        }
        errs.extend(pod_template(template, "spec.template"));
    } else {
        if selector.is_null() {
            errs.push(FieldError::required("spec.selector", ""));
        } else {
            errs.extend(meta::label_selector(selector, "spec.selector"));
            if empty {
                errs.push(empty_selector(kind, selector));
            }
        }
        if parse_error {
            // `LabelSelectorAsSelector` failed: the template is not checked (a StatefulSet's restart policy is).
            let detail = if kind == Kind::StatefulSet {
                ""
            } else {
                "invalid label selector"
            };
            errs.push(FieldError::invalid_printed(
                "spec.selector",
                meta::selector_json(selector),
                detail,
            ));
        } else {
            // A missing selector selects nothing (so never matches); an empty one everything.
            let mismatched = selector.is_null()
                || LabelSelector::from_label_selector(selector)
                    .is_ok_and(|s| !s.is_empty() && !s.matches(template_labels));
            if mismatched {
                errs.push(mismatch());
            }
            errs.extend(pod_template(template, "spec.template"));
        }
    }
    let policy = template["spec"]["restartPolicy"].as_str().unwrap_or("");
    if policy != "Always" && !(parse_error && kind != Kind::StatefulSet) {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    match kind {
        Kind::Deployment => {
            errs.extend(deployment_strategy(&spec["strategy"]));
            errs.extend(non_negative(
                &spec["minReadySeconds"],
                "spec.minReadySeconds",
            ));
            errs.extend(non_negative(
                &spec["revisionHistoryLimit"],
                "spec.revisionHistoryLimit",
            ));
            if let Some(deadline) = spec["progressDeadlineSeconds"].as_i64() {
                errs.extend(non_negative(
                    &spec["progressDeadlineSeconds"],
                    "spec.progressDeadlineSeconds",
                ));
                if deadline <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
                    errs.push(FieldError::invalid_value(
                        "spec.progressDeadlineSeconds",
                        &spec["progressDeadlineSeconds"],
                        "must be greater than minReadySeconds",
                    ));
                }
            }
        }
        Kind::DaemonSet => {
            errs.extend(non_negative(
                &spec["minReadySeconds"],
                "spec.minReadySeconds",
            ));
            errs.extend(non_negative(
                &spec["revisionHistoryLimit"],
                "spec.revisionHistoryLimit",
            ));
        }
        Kind::ReplicaSet | Kind::StatefulSet => {}
    }
    errs
}

fn empty_selector(kind: Kind, selector: &Value) -> FieldError {
    FieldError::invalid_printed(
        "spec.selector",
        meta::selector_json(selector),
        format!("empty selector is invalid for {}", kind.lower()),
    )
}

/// `ValidatePositiveIntOrPercent`: a non-negative number, or a percentage.
pub(super) fn int_or_percent(v: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    match v {
        Value::String(s) => match percent(s) {
            Some(_) => {}
            None => errs.push(FieldError::invalid_value(
                path,
                v,
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )),
        },
        Value::Number(n) if n.as_i64().unwrap_or(0) < 0 => {
            errs.push(FieldError::invalid_value(path, v, NEGATIVE));
        }
        _ => {}
    }
    errs
}

/// `IsNotMoreThan100Percent`: a percentage of at most 100%.
pub(super) fn not_more_than_100_percent(v: &Value, path: &str) -> Option<FieldError> {
    v.as_str()
        .and_then(percent)
        .filter(|n| *n > 100)
        .map(|_| FieldError::invalid_value(path, v, "must not be greater than 100%"))
}

/// The number of a percentage (`[0-9]+%`).
fn percent(s: &str) -> Option<u64> {
    let digits = s.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(u64::MAX))
}

/// A number or a percentage's number (`getIntOrPercentValue`).
fn int_or_percent_value(v: &Value) -> i64 {
    match v {
        Value::String(s) => percent(s).map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX)),
        other => other.as_i64().unwrap_or(0),
    }
}

/// `ValidateNonnegativeField` of an optional number at `path`.
fn non_negative(v: &Value, path: &str) -> Option<FieldError> {
    v.as_i64()
        .filter(|n| *n < 0)
        .map(|_| FieldError::invalid_value(path, v, NEGATIVE))
}

/// `ValidateDeploymentStrategy`.
fn deployment_strategy(strategy: &Value) -> Errors {
    let mut errs = Errors::new();
    match strategy["type"].as_str().unwrap_or("") {
        "Recreate" if !strategy["rollingUpdate"].is_null() => errs.push(FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )),
        "Recreate" => {}
        "RollingUpdate" => {
            let rolling = &strategy["rollingUpdate"];
            let path = "spec.strategy.rollingUpdate";
            errs.extend(int_or_percent(
                &rolling["maxUnavailable"],
                &format!("{path}.maxUnavailable"),
            ));
            errs.extend(int_or_percent(
                &rolling["maxSurge"],
                &format!("{path}.maxSurge"),
            ));
            if int_or_percent_value(&rolling["maxUnavailable"]) == 0
                && int_or_percent_value(&rolling["maxSurge"]) == 0
            {
                errs.push(FieldError::invalid_value(
                    format!("{path}.maxUnavailable"),
                    &rolling["maxUnavailable"],
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            errs.extend(not_more_than_100_percent(
                &rolling["maxUnavailable"],
                &format!("{path}.maxUnavailable"),
            ));
        }
        other => {
            // The value is the internal `DeploymentStrategy`, which Go marshals with its field names.
            let rolling = &strategy["rollingUpdate"];
            let rolling = if rolling.is_null() {
                "null".to_string()
            } else {
                format!(
                    "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                    go_json(&rolling["maxUnavailable"]),
                    go_json(&rolling["maxSurge"])
                )
            };
            errs.push(FieldError::not_supported_printed(
                "spec.strategy",
                format!(
                    "{{\"Type\":{},\"RollingUpdate\":{rolling}}}",
                    super::field::go_quote(other)
                ),
                &["Recreate", "RollingUpdate"],
            ));
        }
    }
    errs
}
