//! CEL validation rules (`x-kubernetes-validations`): compiled with the schema, evaluated after it.
//!
//! Rules are parsed when the CRD's schema is compiled ([`parse_rules`]): a rule that does not parse, a
//! `messageExpression` that does not parse, or a `reason` the server does not know makes the CRD invalid.
//! [`validate`](eval::validate) then evaluates every rule of every node on an object the schema accepted,
//! the way apiextensions-apiserver's CEL validator does (Kubernetes 1.35): `self` is the node's value,
//! `oldSelf` the correlated old value on update (transition rules run only where there is one), failures
//! of unchanged values are ratcheted into warnings, and the 422 texts are the server's.
//!
//! When the CRD is written, rules are also checked as kube-apiserver checks them, and every failure is
//! reported after the schema's own errors, in the server's order ([`budget_errors`]):
//!
//! - **Type check** ([`check`]): cel-go's checker over the schema's declarations ([`decls`]) and the
//!   overloads of CEL's standard functions, the strings (v2), lists (v3) and sets extensions, optional
//!   types and Kubernetes' libraries (lists, regex, urls, ip, cidr, quantity, format, semver, authorizer)
//!   ([`functions`]), then kube-apiserver's AST validators ([`validators`]: literal arguments of
//!   `duration`, `timestamp` and `matches`, homogeneous list and map literals), with cel-go's error texts
//!   and positions ([`positions`]); a rule must be a `bool`, a `messageExpression` a `string`
//!   ([`compilation`]).
//! - **Cost** ([`cost`], [`library_cost`], [`budget`]): cel-go's static estimate with the extensions' and
//!   Kubernetes' call estimates and the sizes from `maxLength`, `maxItems` and `maxProperties` (else from
//!   the largest request, 3 MiB); each rule's cost times its cardinality must stay within
//!   `StaticEstimatedCostLimit`, each messageExpression's within it too, and all together within
//!   `StaticEstimatedCRDCostLimit`, refused with the server's messages and fields.
//! - `optionalOldSelf` on a rule that does not read `oldSelf`, and rules on a node without a type.
//!
//! Not checked, or not as kube-apiserver does:
//!
//! - The optional syntax (`self.?x`, `[?i]`, `[?e]`, `{?k: v}`) is parsed with the `cel` crate's parser
//!   option for it (`cel/program.rs`); `self.?x` is evaluated as `self[?'x']`, which the crate's
//!   evaluator gets right where its own `.?` fails on a missing key. The two-variable macros (`all`,
//!   `exists`, `existsOne`, `transformList`, `transformMap`, `transformMapEntry`), which its parser leaves
//!   as calls, are expanded here as cel-go expands them for the check and the cost ([`expand`]), and
//!   evaluated by functions of `cel/comprehensions.rs`; rules using the other macros it does not expand
//!   (`optMap`, `optFlatMap`, `sortBy`) are evaluated there too but accepted without a type check or cost
//!   (0). (`cel.bind` is not in kube-apiserver's environment: it
//!   is refused as an undeclared reference, here too.)
//! - The strings extension's check of literal format strings against literal arguments
//!   (`'%d'.format(['a'])`) is not done.
//! - Schema object types are named `selfType.<path>` in messages; kube-apiserver names them
//!   `selfType<nanoseconds>.<path>`, which differs from one write to the next.
//! - Errors at sibling properties are listed in property-name order; kube-apiserver's order follows Go's
//!   map iteration, which varies, and so does its order of equally expensive rules in the total's causes.
//! - On update, kube-apiserver waives the per-rule limit for a version whose schema is unchanged (a CRD
//!   stored before the limit existed); the in-memory server checks it again, which only matters for
//!   schemas it could not have accepted in the first place.
//!
//! Rules under `allOf`, `anyOf`, `oneOf` and `not` refuse the CRD (`must be empty to be structural`).
//!
//! Expressions run on the `cel` crate with Kubernetes' library functions from `kube-cel` (quantities,
//! lists, sets, regex, urls, ip and cidr, format, semver).

mod budget;
mod check;
mod compilation;
mod cost;
mod decls;
mod eval;
mod expand;
mod functions;
mod library_cost;
mod positions;
pub(super) mod rule;
mod runtime_cost;
#[cfg(test)]
mod tests;
mod types;
mod validators;
mod values;

use std::sync::Arc;

use crate::cel::program::Program;
use serde_json::{Map, Value};

use super::errors::SchemaError;
use super::go_format::{go_json, go_quote};
use super::node::Node;

pub(super) use budget::budget_errors;
pub(crate) use check::check_declared;
pub(super) use eval::{blocking_error, has_rules, is_blocking, validate};
use rule::{Reason, Rule, RuleErrors};
pub(crate) use types::Decl;
pub(crate) use types::Type;

/// Parses and compiles the `x-kubernetes-validations` of the schema node `node` (parsed from `m`) at
/// `path`; `resource` for the root or an embedded resource.
pub(super) fn parse_rules(
    m: &Map<String, Value>,
    path: &str,
    node: &Node,
    resource: bool,
) -> Result<Vec<Rule>, SchemaError> {
    let key = "x-kubernetes-validations";
    let list = match m.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(invalid(
                &format!("{path}.{key}"),
                "must be a list of rules".into(),
            ));
        }
    };
    // Value validations (allOf, anyOf, oneOf, not) may not carry rules (structural schemas).
    let in_value_validation = path.split('.').any(|segment| {
        segment == "not"
            || ["allOf[", "anyOf[", "oneOf["]
                .iter()
                .any(|p| segment.starts_with(p))
    });
    if in_value_validation && !list.is_empty() {
        return Err(rule_error(
            &format!("{path}.{key}"),
            "FieldValueForbidden",
            "Forbidden: must be empty to be structural".into(),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, raw)| parse_rule(raw, &format!("{path}.{key}[{i}]"), node, resource))
        .collect()
}

fn parse_rule(raw: &Value, path: &str, node: &Node, resource: bool) -> Result<Rule, SchemaError> {
    let Value::Object(m) = raw else {
        return Err(invalid(path, "must be a rule object".into()));
    };
    let text = |k: &str| -> Result<Option<String>, SchemaError> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(&format!("{path}.{k}"), "must be a string".into())),
        }
    };
    let source = text("rule")?.unwrap_or_default();
    if source.trim().is_empty() {
        return Err(rule_error(
            &format!("{path}.rule"),
            "FieldValueRequired",
            "Required value: rule is not specified".into(),
        ));
    }
    let message = text("message")?;
    if let Some(msg) = &message {
        if msg.trim().is_empty() {
            return Err(rule_error(
                &format!("{path}.message"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: message must be non-empty if specified",
                    go_quote(msg)
                ),
            ));
        }
        if msg.contains('\n') {
            return Err(rule_error(
                &format!("{path}.message"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: message must not contain line breaks",
                    go_quote(msg)
                ),
            ));
        }
    }
    let reason = match text("reason")?.as_deref() {
        None => None,
        Some("FieldValueInvalid") => Some(Reason::Invalid),
        Some("FieldValueForbidden") => Some(Reason::Forbidden),
        Some("FieldValueRequired") => Some(Reason::Required),
        Some("FieldValueDuplicate") => Some(Reason::Duplicate),
        Some(other) => {
            return Err(rule_error(
                &format!("{path}.reason"),
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: {}: supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
                    go_quote(other)
                ),
            ));
        }
    };
    let optional_old_self = matches!(m.get("optionalOldSelf"), Some(Value::Bool(true)));
    let message_expression = text("messageExpression")?.filter(|e| !e.is_empty());
    let decl = decls::decl_of(node, resource, "selfType");
    let compiled = compilation::compile(
        &source,
        message_expression.as_deref(),
        decl.as_ref(),
        optional_old_self,
    );
    // A rule that does not parse keeps a placeholder program: the CRD is refused, it never runs.
    let program = match compiled.program {
        Some(p) => p,
        None => {
            Program::compile("true").map_err(|e| invalid(&format!("{path}.rule"), e.to_string()))?
        }
    };
    let invalid_value = |detail: String| format!("Invalid value: {}: {detail}", go_rule(m));
    let errors = RuleErrors {
        rule: compiled.rule_error.map(invalid_value),
        message_expression: compiled.message_error.map(invalid_value),
        optional_old_self: match m.get("optionalOldSelf") {
            Some(Value::Bool(b)) if !compiled.uses_old_self => Some(*b),
            _ => None,
        },
    };
    Ok(Rule {
        source,
        message,
        reason,
        field_path: text("fieldPath")?.filter(|p| !p.is_empty()),
        optional_old_self,
        transition: compiled.uses_old_self,
        program: Arc::new(program),
        message_program: compiled.message_program.map(Arc::new),
        message_expression,
        errors,
    })
}

/// The rule as the server prints its `ValidationRule` in errors: Go's field names and JSON.
fn go_rule(m: &Map<String, Value>) -> String {
    let string = |k: &str| {
        go_json(&Value::String(
            m.get(k).and_then(Value::as_str).unwrap_or("").into(),
        ))
    };
    let optional = |k: &str| match m.get(k) {
        Some(v @ (Value::String(_) | Value::Bool(_))) => go_json(v),
        _ => "null".into(),
    };
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        string("rule"),
        string("message"),
        string("messageExpression"),
        optional("reason"),
        string("fieldPath"),
        optional("optionalOldSelf"),
    )
}

fn rule_error(path: &str, reason: &'static str, message: String) -> SchemaError {
    SchemaError::Rule {
        path: path.to_string(),
        reason,
        message,
    }
}

fn invalid(path: &str, message: String) -> SchemaError {
    SchemaError::Invalid {
        path: path.to_string(),
        message,
    }
}
