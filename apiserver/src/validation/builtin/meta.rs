//! The metadata rules every kind shares (apimachinery's `ValidateObjectMeta` and `ValidateObjectMetaUpdate`,
//! less what the write pipeline checks itself: names, owner references, finalizers): label keys and
//! values, annotation keys and their total size; and label selectors (`ValidateLabelSelector`).

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json};
use super::formats;

/// `TotalAnnotationSizeLimitB`: 256 kB of keys and values.
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

/// `ValidateLabels` on a map of labels at `path` (keys in order).
pub(super) fn labels(labels: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let Some(labels) = labels.as_object() else {
        return errs;
    };
    for (k, v) in labels {
        for msg in formats::label_key(k) {
            errs.push(FieldError::invalid(path, k, msg));
        }
        let v = v.as_str().unwrap_or("");
        for msg in formats::label_value(v) {
            errs.push(FieldError::invalid(path, v, msg));
        }
    }
    errs
}

/// `ValidateAnnotations` on a map of annotations at `path`.
pub(super) fn annotations(annotations: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let Some(annotations) = annotations.as_object() else {
        return errs;
    };
    let mut size = 0;
    for (k, v) in annotations {
        for msg in formats::label_key(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, k, msg));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > ANNOTATIONS_SIZE_LIMIT {
        errs.push(FieldError::too_long(path, ANNOTATIONS_SIZE_LIMIT));
    }
    errs
}

/// The labels and annotations of an object's (or a template's) `metadata` at `path`.
pub(super) fn labels_and_annotations(meta: &Value, path: &str) -> Errors {
    let mut errs = labels(&meta["labels"], &child(path, "labels"));
    errs.extend(annotations(
        &meta["annotations"],
        &child(path, "annotations"),
    ));
    errs
}

/// What `ValidateObjectMeta` adds for an object (the name is checked by the write pipeline).
pub(super) fn object(obj: &Value) -> Errors {
    labels_and_annotations(&obj["metadata"], "metadata")
}

/// What `ValidateObjectMetaUpdate` adds for an object (the immutable identity fields are kept by the write
/// pipeline, which copies them from the stored object).
pub(super) fn object_update(obj: &Value) -> Errors {
    labels_and_annotations(&obj["metadata"], "metadata")
}

const CONDITION_REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
const CONDITION_REASON_MSG: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

fn condition_reason_matches(reason: &str) -> bool {
    let b = reason.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphabetic()
                && (b.len() == 1 || l.is_ascii_alphanumeric() || *l == b'_')
                && b.iter().all(inner)
        }
        _ => false,
    }
}

/// `metav1validation.ValidateConditions` of a list of `metav1.Condition` at `path`: types unique and
/// qualified names, statuses `True`, `False` or `Unknown`, observed generations not negative, a transition
/// time, a reason in its format and sizes.
pub(super) fn conditions(conditions: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let mut seen = std::collections::HashSet::new();
    for (i, c) in conditions.as_array().into_iter().flatten().enumerate() {
        let at = format!("{path}[{i}]");
        let type_ = c["type"].as_str().unwrap_or("");
        if !seen.insert(type_) {
            errs.push(FieldError::duplicate(format!("{at}.type"), type_));
        }
        for msg in formats::qualified_name(type_) {
            errs.push(FieldError::invalid(format!("{at}.type"), type_, msg));
        }
        let status = c["status"].as_str().unwrap_or("");
        if !matches!(status, "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                format!("{at}.status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if let Some(g) = c["observedGeneration"].as_i64()
            && g < 0
        {
            errs.push(FieldError::invalid_value(
                format!("{at}.observedGeneration"),
                &serde_json::json!(g),
                "must be greater than or equal to zero",
            ));
        }
        if c["lastTransitionTime"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required(format!("{at}.lastTransitionTime"), ""));
        }
        let reason = c["reason"].as_str().unwrap_or("");
        if reason.is_empty() {
            errs.push(FieldError::required(format!("{at}.reason"), ""));
        } else {
            if !condition_reason_matches(reason) {
                errs.push(FieldError::invalid(
                    format!("{at}.reason"),
                    reason,
                    crate::selector::regex_error(
                        CONDITION_REASON_MSG,
                        CONDITION_REASON_FMT,
                        &[
                            "my_name",
                            "MY_NAME",
                            "MyName",
                            "ReasonA,ReasonB",
                            "ReasonA:ReasonB",
                        ],
                    ),
                ));
            }
            if reason.len() > 1024 {
                errs.push(FieldError::too_long(format!("{at}.reason"), 1024));
            }
        }
        if c["message"].as_str().map_or(0, str::len) > 32 * 1024 {
            errs.push(FieldError::too_long(format!("{at}.message"), 32 * 1024));
        }
    }
    errs
}

/// `ValidateLabelSelector` (strict: label values in expressions checked): the match labels, then each
/// expression's operator and values, key and values.
pub(super) fn label_selector(selector: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if selector.is_null() {
        return errs;
    }
    errs.extend(labels(
        &selector["matchLabels"],
        &child(path, "matchLabels"),
    ));
    let expressions = selector["matchExpressions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for (i, expr) in expressions.iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = expr["values"].as_array().map_or(&[][..], Vec::as_slice);
        let operator = expr["operator"].as_str().unwrap_or("");
        match operator {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                child(&at, "values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                errs.push(FieldError::forbidden(
                    child(&at, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(FieldError::invalid(
                child(&at, "operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = expr["key"].as_str().unwrap_or("");
        for msg in formats::qualified_name(key) {
            errs.push(FieldError::invalid(child(&at, "key"), key, msg));
        }
        for (j, v) in values.iter().enumerate() {
            let v = v.as_str().unwrap_or("");
            for msg in crate::selector::label_value_errors(v) {
                errs.push(FieldError::invalid(format!("{at}.values[{j}]"), v, msg));
            }
        }
    }
    errs
}

/// A `metav1.LabelSelector` as Go marshals it: `matchLabels`, then `matchExpressions` (each `key`,
/// `operator`, `values`), empty fields left out.
pub(super) fn selector_json(selector: &Value) -> String {
    if selector.is_null() {
        return "null".into();
    }
    let mut fields = Vec::new();
    if selector["matchLabels"]
        .as_object()
        .is_some_and(|m| !m.is_empty())
    {
        fields.push(format!(
            "\"matchLabels\":{}",
            go_json(&selector["matchLabels"])
        ));
    }
    if let Some(exprs) = selector["matchExpressions"]
        .as_array()
        .filter(|a| !a.is_empty())
    {
        let printed: Vec<String> = exprs
            .iter()
            .map(|e| {
                let mut f = vec![
                    format!("\"key\":{}", go_json(&e["key"])),
                    format!("\"operator\":{}", go_json(&e["operator"])),
                ];
                if e["values"].as_array().is_some_and(|a| !a.is_empty()) {
                    f.push(format!("\"values\":{}", go_json(&e["values"])));
                }
                format!("{{{}}}", f.join(","))
            })
            .collect();
        fields.push(format!("\"matchExpressions\":[{}]", printed.join(",")));
    }
    format!("{{{}}}", fields.join(","))
}
