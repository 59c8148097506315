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
            go_json(&obj["spec"]["selector"]),
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

/// The spec's rules: the selector and the template, with what each kind checks before them.
fn spec(kind: Kind, spec: &Value, create: bool) -> Errors {
    let mut errs = Errors::new();
    if kind == Kind::StatefulSet && create {
        let service = spec["serviceName"].as_str().unwrap_or("");
        if !service.is_empty() {
            for msg in formats::dns1123_label(service) {
                errs.push(FieldError::invalid("spec.serviceName", service, msg));
            }
        }
    }
    let selector = &spec["selector"];
    let template = &spec["template"];
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
    if kind == Kind::DaemonSet {
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
        } else if empty {
            errs.push(empty_selector(kind, selector));
        }
        // A missing selector selects nothing (so never matches); an empty one everything.
        let mismatched = selector.is_null()
            || LabelSelector::from_label_selector(selector)
                .is_ok_and(|s| !s.is_empty() && !s.matches(template_labels));
        if mismatched {
            errs.push(mismatch());
        }
        errs.extend(pod_template(template, "spec.template"));
    }
    let policy = template["spec"]["restartPolicy"].as_str().unwrap_or("");
    if policy != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    errs
}

fn empty_selector(kind: Kind, selector: &Value) -> FieldError {
    FieldError::invalid_printed(
        "spec.selector",
        go_json(selector),
        format!("empty selector is invalid for {}", kind.lower()),
    )
}
