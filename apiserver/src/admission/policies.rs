//! `ValidatingAdmissionPolicy` and its bindings (admissionregistration.k8s.io/v1), enforced as
//! kube-apiserver's `ValidatingAdmissionPolicy` admission plugin does (Kubernetes 1.35), after the mutating
//! webhooks and the object's own validation, before the validating webhooks.
//!
//! A policy applies to a request its `matchConstraints` meet (`resourceRules` with `resourceNames`, not
//! `excludeResourceRules`, `namespaceSelector`, `objectSelector`, `matchPolicy`, as webhooks' rules and
//! selectors match), through each binding naming it whose `matchResources` (when set) meet the request too.
//! Each binding's params (`paramKind` with the binding's `paramRef`: by name or by selector, in the
//! binding's namespace or the request's, `parameterNotFoundAction`) are evaluated one by one: the
//! policy's `matchConditions`, then its `variables` (in order, each seeing the ones before), then its
//! `validations`, over `object`, `oldObject`, `request`, `params`, `namespaceObject`, `authorizer` and
//! `variables`. A validation that is not true fails with its `messageExpression`'s value, else its
//! `message`, else `failed expression: EXPR`, and its `reason` (default `Invalid`). The binding's
//! `validationActions` decide what a failure does: `Deny` refuses the request (the first denial is the
//! answer: `ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MESSAGE`, 422 for `Invalid`,
//! 403 for `Forbidden`, …), `Warn` adds a warning, `Audit` is ignored (this server keeps no audit log).
//! Errors (an expression that fails, params not found under `Deny`, a misconfigured `paramRef`) deny under
//! `failurePolicy: Fail` and are ignored under `Ignore`. `auditAnnotations` are not evaluated.
//!
//! Not done here: the runtime cost budget; `status.typeChecking`; policies are not compiled when written
//! (an expression that does not compile fails when it is evaluated); a variable that fails to evaluate is
//! left out of `variables` (an expression reading it fails with `no such key`, where cel-go names the
//! variable).

use std::collections::HashMap;

use kube_cel::KubeCelExt;
use kube_cel::cel::{Context, Value as Cel};
use serde_json::{Value, json};

use super::conditions::{aggregate, evaluate, request_value};
use super::equivalent::Equivalent;
use super::equivalents::versioned;
use super::review::{Review, hook, request};
use crate::cel::values::{json as cel_json, map};
use crate::error::{ApiError, Target};
use crate::selector::LabelSelector;

/// `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The objects of one `paramKind` the server holds, as served in its `apiVersion`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParamObjects {
    /// Whether the kind is served at all.
    pub known: bool,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
    pub objects: Vec<Value>,
}

/// What the policies need besides the request: the policies and bindings stored, the request's namespace
/// (for `namespaceObject`), and the objects of every `paramKind`, by `(apiVersion, kind)`.
pub(crate) struct Policies<'a> {
    pub policies: &'a [Value],
    pub bindings: &'a [Value],
    pub namespace_object: Option<&'a Value>,
    pub params: &'a HashMap<(String, String), ParamObjects>,
}

/// What the policies decided: the warnings of `Warn` actions, and the refusal, if any.
#[derive(Debug, Default)]
pub(crate) struct Enforced {
    pub warnings: Vec<String>,
    pub refusal: Option<ApiError>,
}

/// One failed validation (or error) that a binding's actions act on.
struct Failure {
    message: String,
    reason: String,
}

/// Enforces `p`'s policies on the request `r` (its `object` the validated object).
pub(crate) fn enforce(p: &Policies<'_>, r: &Review<'_>) -> Enforced {
    let mut out = Enforced::default();
    let mut denied: Vec<(String, String, Failure)> = Vec::new();
    let mut policies: Vec<&Value> = p.policies.iter().collect();
    policies.sort_by_key(|v| {
        v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    });
    let mut bindings: Vec<&Value> = p.bindings.iter().collect();
    bindings.sort_by_key(|v| {
        v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    });
    for policy in policies {
        let name = policy["metadata"]["name"].as_str().unwrap_or_default();
        let spec = &policy["spec"];
        let Some(invocation) = resources_match(&spec["matchConstraints"], r, false) else {
            continue;
        };
        let fail_open = spec["failurePolicy"].as_str() == Some("Ignore");
        let object = versioned(r, invocation.as_ref(), r.object);
        let old = versioned(r, invocation.as_ref(), r.old_object);
        let seen = Review {
            object: object.as_ref(),
            old_object: old.as_ref(),
            invocation: invocation.as_ref(),
            ..r.clone()
        };
        let admission_request = request(&seen, "")["request"].clone();
        for binding in bindings
            .iter()
            .filter(|b| b["spec"]["policyName"].as_str() == Some(name))
        {
            let binding_name = binding["metadata"]["name"].as_str().unwrap_or_default();
            if binding["spec"]["matchResources"].is_object()
                && resources_match(&binding["spec"]["matchResources"], r, true).is_none()
            {
                continue;
            }
            let failures = match params(spec, &binding["spec"], r, p.params) {
                Err(e) => {
                    if fail_open {
                        Vec::new()
                    } else {
                        vec![Failure {
                            message: format!("failed to configure binding: {e}"),
                            reason: String::new(),
                        }]
                    }
                }
                Ok(list) => list
                    .iter()
                    .flat_map(|param| {
                        validate(
                            spec,
                            &seen,
                            &admission_request,
                            param.as_ref(),
                            p.namespace_object,
                            fail_open,
                        )
                    })
                    .collect(),
            };
            for failure in failures {
                let actions: Vec<&str> = binding["spec"]["validationActions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                if actions.contains(&"Warn") {
                    out.warnings.push(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{name}' with binding '{binding_name}': {}",
                        failure.message
                    ));
                }
                if actions.contains(&"Deny") {
                    denied.push((name.to_string(), binding_name.to_string(), failure));
                }
            }
        }
    }
    if let Some((policy, binding, failure)) = denied.into_iter().next() {
        out.refusal = Some(refusal(r, &policy, &binding, &failure));
    }
    out
}

/// kube-apiserver's refusal: `admission.NewForbidden` with the decision's reason and its code.
fn refusal(r: &Review<'_>, policy: &str, binding: &str, failure: &Failure) -> ApiError {
    let message = format!(
        "ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {}",
        failure.message
    );
    let name = match (r.name, r.object) {
        ("", Some(o)) => o["metadata"]["generateName"]
            .as_str()
            .filter(|g| !g.is_empty())
            .unwrap_or("Unknown"),
        ("", None) => "Unknown",
        (n, _) => n,
    };
    let target = Target {
        group: r.group,
        resource: r.resource,
    };
    let mut error = ApiError::forbidden(target, name, &message);
    let reason = if failure.reason.is_empty() {
        "Invalid"
    } else {
        failure.reason.as_str()
    };
    error.code = match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    error.reason = reason.to_string();
    let mut details = error.details.take().unwrap_or_else(|| json!({}));
    details["causes"] = json!([{"message": message}]);
    error.details = Some(details);
    error
}

/// Whether `resources` (a policy's `matchConstraints` or a binding's `matchResources`) meet `r`: `None`
/// when not, else the equivalent resource matched (`Some(None)` for the requested one). A binding's
/// resources without `resourceRules` constrain only by their selectors.
fn resources_match(resources: &Value, r: &Review<'_>, binding: bool) -> Option<Option<Equivalent>> {
    let named = |rules: &Value| -> Value {
        Value::Array(
            rules
                .as_array()
                .into_iter()
                .flatten()
                .filter(|rule| {
                    rule["resourceNames"]
                        .as_array()
                        .filter(|n| !n.is_empty())
                        .is_none_or(|n| n.iter().any(|n| n.as_str() == Some(r.name)))
                })
                .cloned()
                .collect(),
        )
    };
    let exclude = named(&resources["excludeResourceRules"]);
    if exclude.as_array().is_some_and(|e| !e.is_empty()) {
        let excluded = json!({"rules": exclude, "matchPolicy": "Exact"});
        if hook(String::new(), &excluded, r).is_some() {
            return None;
        }
    }
    let rules = match resources["resourceRules"].as_array() {
        Some(rules) if !rules.is_empty() => named(&resources["resourceRules"]),
        _ if binding => json!([{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"],
                                "resources": ["*", "*/*"], "scope": "*"}]),
        _ => return None,
    };
    let w = json!({
        "rules": rules,
        "namespaceSelector": resources["namespaceSelector"],
        "objectSelector": resources["objectSelector"],
        "matchPolicy": resources["matchPolicy"],
    });
    hook(String::new(), &w, r).map(|h| h.invocation)
}

/// `CollectParams`: the params a binding evaluates its policy with (`None`: no params).
fn params(
    policy: &Value,
    binding: &Value,
    r: &Review<'_>,
    all: &HashMap<(String, String), ParamObjects>,
) -> Result<Vec<Option<Value>>, String> {
    let kind = &policy["paramKind"];
    let reference = &binding["paramRef"];
    if !kind.is_object() || !reference.is_object() {
        return Ok(vec![None]);
    }
    let key = (
        kind["apiVersion"].as_str().unwrap_or_default().to_string(),
        kind["kind"].as_str().unwrap_or_default().to_string(),
    );
    let source = all.get(&key).filter(|s| s.known).ok_or_else(|| {
        format!(
            "paramKind kind `{}, Kind={}` not known",
            key.0.replace('/', ", Version="),
            key.1
        )
    })?;
    let text = |k: &str| reference[k].as_str().unwrap_or_default();
    let namespace = if source.namespaced {
        if !text("namespace").is_empty() {
            Some(text("namespace"))
        } else if !r.namespace.is_empty() {
            Some(r.namespace)
        } else {
            return Err(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                    .into(),
            );
        }
    } else {
        None
    };
    let in_scope = source
        .objects
        .iter()
        .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns)));
    let found: Vec<Option<Value>> = if !text("namespace").is_empty() && !source.namespaced {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
        );
    } else if !text("name").is_empty() {
        if !reference["selector"].is_null() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        in_scope
            .filter(|o| o["metadata"]["name"].as_str() == Some(text("name")))
            .map(|o| Some(o.clone()))
            .collect()
    } else if reference["selector"].is_object() {
        let selector = LabelSelector::from_label_selector(&reference["selector"])
            .map_err(|e| e.to_string())?;
        in_scope
            .filter(|o| selector.matches(o["metadata"]["labels"].as_object()))
            .map(|o| Some(o.clone()))
            .collect()
    } else {
        return Err("one of name or selector must be provided".into());
    };
    if found.is_empty() && reference["parameterNotFoundAction"].as_str() == Some("Deny") {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found)
}

/// The namespace as `namespaceObject` shows it: its spec, status and metadata but for `managedFields`,
/// `ownerReferences` and `selfLink`, without `apiVersion` and `kind`.
fn namespace_value(namespace: Option<&Value>) -> Cel {
    let Some(ns) = namespace else {
        return Cel::Null;
    };
    let mut ns = ns.clone();
    if let Some(m) = ns.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    if let Some(m) = ns["metadata"].as_object_mut() {
        for k in ["managedFields", "ownerReferences", "selfLink"] {
            m.remove(k);
        }
    }
    cel_json(&ns)
}

/// One evaluation of `policy` with one param: the failures its validations (or errors) give.
fn validate(
    policy: &Value,
    r: &Review<'_>,
    admission_request: &Value,
    param: Option<&Value>,
    namespace: Option<&Value>,
    fail_open: bool,
) -> Vec<Failure> {
    let error = |message: String| {
        if fail_open {
            Vec::new()
        } else {
            vec![Failure {
                message,
                reason: String::new(),
            }]
        }
    };
    let mut context = Context::default().with_all();
    crate::cel::comprehensions::register(&mut context);
    super::authorizer::register(&mut context);
    context.add_variable_from_value("authorizer", super::authorizer::value());
    context.add_variable_from_value("object", r.object.map_or(Cel::Null, cel_json));
    context.add_variable_from_value("oldObject", r.old_object.map_or(Cel::Null, cel_json));
    context.add_variable_from_value("request", request_value(admission_request));
    context.add_variable_from_value("params", param.map_or(Cel::Null, cel_json));
    context.add_variable_from_value("namespaceObject", namespace_value(namespace));
    let nulls: Vec<&str> = [
        ("object", r.object.is_none()),
        ("oldObject", r.old_object.is_none()),
        ("params", param.is_none()),
        ("namespaceObject", namespace.is_none()),
    ]
    .into_iter()
    .filter_map(|(name, null)| null.then_some(name))
    .collect();
    // Match conditions: a false one skips the policy; errors (none false) fail it.
    let mut errors = Vec::new();
    for condition in policy["matchConditions"].as_array().into_iter().flatten() {
        let expression = condition["expression"].as_str().unwrap_or_default();
        match evaluate(expression, &context, &nulls) {
            Ok(Cel::Bool(false)) => return Vec::new(),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return error(aggregate(&errors));
    }
    let mut variables: Vec<(String, Cel)> = Vec::new();
    for variable in policy["variables"].as_array().into_iter().flatten() {
        let mut scope = context.new_inner_scope();
        scope.add_variable_from_value("variables", map(variables.clone()));
        let expression = variable["expression"].as_str().unwrap_or_default();
        if let Ok(v) = evaluate(expression, &scope, &nulls) {
            variables.push((variable["name"].as_str().unwrap_or_default().to_string(), v));
        }
    }
    context.add_variable_from_value("variables", map(variables));
    let mut out = Vec::new();
    for validation in policy["validations"].as_array().into_iter().flatten() {
        let expression = validation["expression"].as_str().unwrap_or_default();
        match evaluate(expression, &context, &nulls) {
            Err(e) => out.extend(error(e)),
            Ok(Cel::Bool(true)) => {}
            Ok(_) => {
                let from_expression = validation["messageExpression"]
                    .as_str()
                    .filter(|m| !m.is_empty())
                    .and_then(|m| match evaluate(m, &context, &nulls) {
                        Ok(Cel::String(s)) => Some(s.trim().to_string()),
                        _ => None,
                    })
                    .filter(|m| m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n'))
                    .filter(|m| !m.is_empty());
                let message = from_expression
                    .or_else(|| {
                        validation["message"]
                            .as_str()
                            .map(|m| m.trim().to_string())
                            .filter(|m| !m.is_empty())
                    })
                    .unwrap_or_else(|| format!("failed expression: {}", expression.trim()));
                out.push(Failure {
                    message,
                    reason: validation["reason"]
                        .as_str()
                        .unwrap_or("Invalid")
                        .to_string(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review<'a>(object: &'a Value, labels: &'a serde_json::Map<String, Value>) -> Review<'a> {
        Review {
            group: "",
            version: "v1",
            kind: "ConfigMap",
            resource: "configmaps",
            subresource: None,
            namespaced: true,
            namespace: "ns",
            name: "a",
            operation: "CREATE",
            object: Some(object),
            old_object: None,
            dry_run: false,
            namespace_labels: Some(labels),
            equivalents: &[],
            invocation: None,
        }
    }

    fn enforce_on(object: &Value, actions: &[&str]) -> Enforced {
        let policy = json!({"metadata": {"name": "p"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"], "operations": ["CREATE"]}]},
            "variables": [{"name": "n", "expression": "object.metadata.name"}],
            "validations": [{"expression": "!has(object.data.bad)",
                             "messageExpression": "'bad in ' + variables.n", "reason": "Forbidden"}]}});
        let binding = json!({"metadata": {"name": "b"},
            "spec": {"policyName": "p", "validationActions": actions}});
        let labels = serde_json::Map::new();
        enforce(
            &Policies {
                policies: &[policy],
                bindings: &[binding],
                namespace_object: None,
                params: &HashMap::new(),
            },
            &review(object, &labels),
        )
    }

    #[test]
    fn a_failed_validation_denies_or_warns_as_bound() {
        let bad = json!({"metadata": {"name": "a"}, "data": {"bad": "1"}});
        let denied = enforce_on(&bad, &["Deny"]).refusal.expect("a refusal");
        assert_eq!(denied.code, 403);
        assert_eq!(
            denied.message,
            "configmaps \"a\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: bad in a"
        );
        let warned = enforce_on(&bad, &["Warn", "Audit"]);
        assert!(warned.refusal.is_none());
        assert_eq!(
            warned.warnings,
            ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': bad in a"]
        );
        let fine = json!({"metadata": {"name": "a"}, "data": {}});
        let allowed = enforce_on(&fine, &["Deny"]);
        assert!(allowed.refusal.is_none() && allowed.warnings.is_empty());
    }
}
