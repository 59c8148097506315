//! The `batch` group's rules (`pkg/apis/batch/validation`): a Job's template and its restart policy
//! (`OnFailure` or `Never`), and what never changes once the Job exists: its selector, its template (but
//! for the scheduling directives of a Job suspended before it started), completion mode, pod failure
//! policy, backoff limit per index, `managedBy` and success policy.

use serde_json::Value;

use super::core::{pod_template, strip_nulls};
use super::field::{Errors, FieldError, go_json};
use super::meta;
use crate::selector::LabelSelector;

const IMMUTABLE: &str = "field is immutable";

/// `ValidateJob`.
pub(super) fn job(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(job_spec(&obj["spec"], "spec"));
    errs
}

/// `ValidateJobUpdate`.
pub(super) fn job_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    let (spec, old_spec) = (&obj["spec"], &old["spec"]);
    errs.extend(job_spec(spec, "spec"));
    let immutable = |field: &str| {
        let (new, before) = (
            strip_nulls(spec[field].clone()),
            strip_nulls(old_spec[field].clone()),
        );
        (new != before).then(|| {
            FieldError::invalid_printed(format!("spec.{field}"), go_json(&spec[field]), IMMUTABLE)
        })
    };
    if spec["completionMode"] != "Indexed" {
        errs.extend(immutable("completions"));
    }
    errs.extend(immutable("selector"));
    let mut old_template = old_spec["template"].clone();
    let suspended = old_spec["suspend"].as_bool() == Some(true);
    let started = old["status"]["startTime"].is_string();
    if suspended && !started {
        // The scheduling directives of a Job suspended before it started may change.
        let template = &spec["template"];
        old_template["metadata"]["labels"] = template["metadata"]["labels"].clone();
        old_template["metadata"]["annotations"] = template["metadata"]["annotations"].clone();
        for field in ["nodeSelector", "tolerations", "schedulingGates"] {
            old_template["spec"][field] = template["spec"][field].clone();
        }
        let node_affinity = template["spec"]["affinity"]["nodeAffinity"].clone();
        if old_template["spec"]["affinity"].is_object() || !node_affinity.is_null() {
            old_template["spec"]["affinity"]["nodeAffinity"] = node_affinity;
        }
    }
    let without_empty = |v: Value| drop_empty_objects(strip_nulls(v));
    if without_empty(spec["template"].clone()) != without_empty(old_template) {
        errs.push(FieldError::invalid_printed(
            "spec.template",
            go_json(&spec["template"]),
            IMMUTABLE,
        ));
    }
    for field in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        errs.extend(immutable(field));
    }
    errs
}

/// Drops members that are empty objects (`affinity: {}` left after clearing its node affinity).
fn drop_empty_objects(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, drop_empty_objects(v)))
                .filter(|(_, v)| !v.as_object().is_some_and(|o| o.is_empty()))
                .collect(),
        ),
        other => other,
    }
}

/// `ValidateJobSpec`: the template (with the Job's restart policies), then the selector where one is set (this
/// server generates none; see the crate docs) and whether it matches the template's labels.
fn job_spec(spec: &Value, path: &str) -> Errors {
    let mut errs = job_template_spec(spec, path);
    let selector = &spec["selector"];
    if selector.is_object()
        && LabelSelector::from_label_selector(selector)
            .is_ok_and(|s| !s.matches(spec["template"]["metadata"]["labels"].as_object()))
    {
        errs.push(FieldError::invalid_printed(
            format!("{path}.template.metadata.labels"),
            go_json(&spec["template"]["metadata"]["labels"]),
            "`selector` does not match template `labels`",
        ));
    }
    errs
}

/// `validateJobSpec`: the pod template and the restart policy a Job allows.
fn job_template_spec(spec: &Value, path: &str) -> Errors {
    let template_path = format!("{path}.template");
    let mut errs = pod_template(&spec["template"], &template_path);
    let policy_path = format!("{template_path}.spec.restartPolicy");
    match spec["template"]["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or("")
    {
        "Always" | "" => errs.push(FieldError::required(
            policy_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            policy_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
    errs
}

/// `ValidateCronJobCreate`'s job template: its pod template and restart policy.
pub(super) fn cron_job(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(job_template_spec(
        &obj["spec"]["jobTemplate"]["spec"],
        "spec.jobTemplate.spec",
    ));
    // The Jobs' names get an 11-character suffix and must stay DNS-1035 labels.
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    if name.len() > 52 {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// `ValidateCronJobUpdate`'s job template.
pub(super) fn cron_job_update(obj: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    errs.extend(job_template_spec(
        &obj["spec"]["jobTemplate"]["spec"],
        "spec.jobTemplate.spec",
    ));
    errs
}
