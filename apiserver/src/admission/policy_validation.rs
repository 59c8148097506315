//! The checks kube-apiserver makes of a `ValidatingAdmissionPolicy` when it is written that need CEL: its
//! `matchConditions`, `variables`, and `validations` (`expression`, `messageExpression`) compiled and
//! type-checked in the policy's environment (`expression.rs`'s `check_policy`), in that order.
//!
//! Not done here: the policy's other checks (required fields, rules, the `reason` values, messages with
//! line breaks) and its `status.typeChecking` against the matched kinds' schemas.

use serde_json::Value;

use super::expression::{Wanted, check_policy};
use crate::error::Cause;
use crate::schema::CelType as Type;

/// The causes kube-apiserver refuses the policy `obj` with for expressions that do not compile.
pub(crate) fn validate_policy(obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    let params = spec["paramKind"].is_object();
    let mut causes = Vec::new();
    // The type of what was checked (`dyn` when it did not compile, or was empty).
    let mut check =
        |path: String, expression: &Value, declared: &[(String, Type)], wanted: Wanted| -> Type {
            let Some(text) = expression.as_str() else {
                return Type::Dyn;
            };
            if text.trim().is_empty() {
                return Type::Dyn;
            }
            match check_policy(text, params, declared, wanted) {
                Ok(t) => t,
                Err(detail) => {
                    causes.push(Cause {
                        reason: "FieldValueInvalid".into(),
                        message: format!(
                            "Invalid value: {}: {detail}",
                            serde_json::to_string(text).unwrap_or_default()
                        ),
                        field: path,
                    });
                    Type::Dyn
                }
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
    // Each variable is declared, for those after it and the validations, with its expression's type.
    let mut variables: Vec<(String, Type)> = Vec::new();
    for (i, v) in spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let t = check(
            format!("spec.variables[{i}].expression"),
            &v["expression"],
            &variables,
            Wanted::Any,
        );
        if let Some(name) = v["name"].as_str() {
            variables.push((name.to_string(), t));
        }
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
            &variables,
            Wanted::Bool,
        );
        check(
            format!("spec.validations[{i}].messageExpression"),
            &v["messageExpression"],
            &variables,
            Wanted::String,
        );
    }
    causes
}
