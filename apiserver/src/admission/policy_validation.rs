//! The checks kube-apiserver makes of a `ValidatingAdmissionPolicy` when it is written that need CEL: its
//! `matchConditions`, `variables`, and `validations` (`expression`, `messageExpression`) compiled and
//! type-checked in the policy's environment (`expression.rs`'s `check_policy`), in that order.
//!
//! Not done here: the policy's other checks (required fields, rules, the `reason` values, messages with
//! line breaks) and its `status.typeChecking` against the matched kinds' schemas.

use serde_json::Value;

use super::expression::{Wanted, check_policy};
use crate::error::Cause;

/// The causes kube-apiserver refuses the policy `obj` with for expressions that do not compile.
pub(crate) fn validate_policy(obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    let params = spec["paramKind"].is_object();
    let names: Vec<String> = spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str().map(str::to_string))
        .collect();
    let mut causes = Vec::new();
    let mut check = |path: String, expression: &Value, declared: &[String], wanted: Wanted| {
        let Some(text) = expression.as_str() else {
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        if let Err(detail) = check_policy(text, params, declared, wanted) {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: {detail}",
                    serde_json::to_string(text).unwrap_or_default()
                ),
                field: path,
            });
        }
    };
    for (i, c) in spec["matchConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(
            format!("spec.matchConditions[{i}].expression"),
            &c["expression"],
            &[],
            Wanted::Bool,
        );
    }
    for (i, v) in spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(
            format!("spec.variables[{i}].expression"),
            &v["expression"],
            &names[..i.min(names.len())],
            Wanted::Any,
        );
    }
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(
            format!("spec.validations[{i}].expression"),
            &v["expression"],
            &names,
            Wanted::Bool,
        );
        check(
            format!("spec.validations[{i}].messageExpression"),
            &v["messageExpression"],
            &names,
            Wanted::String,
        );
    }
    causes
}
