//! The answers to the review kinds' creates, as kube-apiserver's REST storages answer them
//! (`pkg/registry/authentication`, `pkg/registry/authorization`): the object sent back with its `status`.
//!
//! - `SelfSubjectReview`: the requester ([`super::user::requester`]).
//! - `TokenReview`: `spec.token` required; the in-memory server knows no token (it issues none and has no
//!   service-account signing key), so none is authenticated: the status has an empty `user` and the error
//!   `invalid bearer token`, as kube-apiserver answers a token none of its authenticators recognises (a
//!   token shaped as a JWT gets the service-account authenticator's error there instead).
//! - `SubjectAccessReview`, `LocalSubjectAccessReview` (in its namespace) and `SelfSubjectAccessReview` (for the
//!   requester): validated as kube-apiserver validates them (`pkg/apis/authorization/validation`, less the
//!   field and label selector requirements and the `metadata must be empty` rule), then decided by
//!   [`super::rbac::authorize`]: `allowed`, `denied` and `reason`; no `evaluationError` (RBAC reports its
//!   errors in the reason).
//! - `SelfSubjectRulesReview`: `spec.namespace` required; the requester's RBAC rules in it, with the errors
//!   met in `evaluationError` (the privileged group adds no rules, as on kube-apiserver).

use serde_json::{Value, json};

use super::rbac::{self, Attributes};
use super::user::{UserInfo, requester};
use crate::error::{ApiError, ApiResult, Cause};
use crate::store::State;

/// The answer to the create of review kind `kind` (`obj` decoded and type-checked, `namespace` from the
/// path).
pub(crate) fn answer(
    state: &State,
    kind: &str,
    obj: Value,
    namespace: &str,
    now: &str,
) -> ApiResult<Value> {
    match kind {
        "SelfSubjectReview" => Ok(self_subject_review(obj, now)),
        "TokenReview" => token_review(obj, namespace),
        "SubjectAccessReview" => access_review(state, obj, None, None),
        "LocalSubjectAccessReview" => access_review(state, obj, Some(namespace), None),
        "SelfSubjectAccessReview" => access_review(state, obj, None, Some(requester())),
        "SelfSubjectRulesReview" => rules_review(state, obj),
        other => Err(ApiError::internal(format!("{other} is not a review kind"))),
    }
}

/// kube-apiserver answers a new object, stamped with the time, without the request's managedFields.
fn self_subject_review(mut obj: Value, now: &str) -> Value {
    obj["metadata"] = json!({ "creationTimestamp": now });
    obj["status"] = json!({ "userInfo": requester().to_json() });
    obj
}

fn token_review(mut obj: Value, namespace: &str) -> ApiResult<Value> {
    if !namespace.is_empty() {
        return Err(ApiError::bad_request(format!(
            "namespace is not allowed on this type: {namespace}"
        )));
    }
    if obj["spec"]["token"].as_str().unwrap_or("").is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    // The bearer-token authenticator's error when no token authenticator knows the token.
    obj["status"] = json!({ "user": {}, "error": "invalid bearer token" });
    Ok(obj)
}

/// Go's `field.Invalid` cause with a string value.
fn invalid(field: &str, value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value:?}: {detail}"),
        field: field.into(),
    }
}

/// `nonResourceAttributes` as `field.Invalid` prints the internal Go struct: JSON with its Go field names.
fn printed(non_resource: &Value) -> String {
    let text = |key: &str| Value::String(str_of(non_resource, key).to_string());
    format!(r#"{{"Path":{},"Verb":{}}}"#, text("path"), text("verb"))
}

/// `ValidateSubjectAccessReviewSpec` and its kin (`user` checked unless `self_review`).
fn validate(obj: &Value, self_review: bool, namespace: Option<&str>) -> Vec<Cause> {
    let spec = &obj["spec"];
    let (resource, non_resource) = (&spec["resourceAttributes"], &spec["nonResourceAttributes"]);
    let mut causes = Vec::new();
    if resource.is_object() && non_resource.is_object() {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: cannot be specified in combination with resourceAttributes",
                printed(non_resource)
            ),
            field: "spec.nonResourceAttributes".into(),
        });
    }
    if !resource.is_object() && !non_resource.is_object() {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified".into(),
            field: "spec.resourceAttributes".into(),
        });
    }
    let groups_empty = spec["groups"].as_array().is_none_or(|g| g.is_empty());
    let user = spec["user"].as_str().unwrap_or("");
    if !self_review && user.is_empty() && groups_empty {
        causes.push(invalid(
            "spec.user",
            user,
            "at least one of user or group must be specified",
        ));
    }
    if let Some(namespace) = namespace {
        if resource.is_object() && resource["namespace"].as_str().unwrap_or("") != namespace {
            causes.push(invalid(
                "spec.resourceAttributes.namespace",
                resource["namespace"].as_str().unwrap_or(""),
                "must match metadata.namespace",
            ));
        }
        if non_resource.is_object() {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: disallowed on this kind of request",
                    printed(non_resource)
                ),
                field: "spec.nonResourceAttributes".into(),
            });
        }
    }
    causes
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The attributes of an access review's spec (`AuthorizationAttributesFrom`).
fn attributes(spec: &Value, user: UserInfo) -> Attributes {
    let resource = &spec["resourceAttributes"];
    if resource.is_object() {
        Attributes {
            user,
            verb: str_of(resource, "verb").into(),
            resource_request: true,
            namespace: str_of(resource, "namespace").into(),
            group: str_of(resource, "group").into(),
            resource: str_of(resource, "resource").into(),
            subresource: str_of(resource, "subresource").into(),
            name: str_of(resource, "name").into(),
            path: String::new(),
        }
    } else {
        let non_resource = &spec["nonResourceAttributes"];
        Attributes {
            user,
            verb: str_of(non_resource, "verb").into(),
            path: str_of(non_resource, "path").into(),
            ..Attributes::default()
        }
    }
}

fn spec_user(spec: &Value) -> UserInfo {
    UserInfo {
        name: str_of(spec, "user").into(),
        uid: str_of(spec, "uid").into(),
        groups: strings(&spec["groups"]),
        extra: spec["extra"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
            .unwrap_or_default(),
    }
}

fn access_review(
    state: &State,
    mut obj: Value,
    namespace: Option<&str>,
    self_user: Option<UserInfo>,
) -> ApiResult<Value> {
    let causes = validate(&obj, self_user.is_some(), namespace);
    if !causes.is_empty() {
        // kube-apiserver names the kind of the internal object, which has none.
        return Err(ApiError::invalid("", "authorization.k8s.io", "", causes));
    }
    if let Some(namespace) = namespace
        && namespace.is_empty()
    {
        return Err(ApiError::bad_request(
            "namespace is required on this type: ",
        ));
    }
    let user = self_user.unwrap_or_else(|| spec_user(&obj["spec"]));
    let decision = rbac::authorize(state, &attributes(&obj["spec"], user));
    let mut status = json!({ "allowed": decision.allowed });
    if decision.denied {
        status["denied"] = json!(true);
    }
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    obj["status"] = status;
    Ok(obj)
}

fn rules_review(state: &State, mut obj: Value) -> ApiResult<Value> {
    let namespace = obj["spec"]["namespace"].as_str().unwrap_or("").to_string();
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let found = rbac::rules_for(state, &requester(), &namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &found.rules {
        if rule["resources"].as_array().is_some_and(|r| !r.is_empty()) {
            let mut r = json!({ "verbs": rule["verbs"] });
            for key in ["apiGroups", "resources", "resourceNames"] {
                if rule[key].as_array().is_some_and(|a| !a.is_empty()) {
                    r[key] = rule[key].clone();
                }
            }
            resource_rules.push(r);
        }
        if rule["nonResourceURLs"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            non_resource_rules.push(json!({
                "verbs": rule["verbs"], "nonResourceURLs": rule["nonResourceURLs"],
            }));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !found.errors.is_empty() {
        status["evaluationError"] = json!(rbac::aggregate(&found.errors));
    }
    obj["status"] = status;
    Ok(obj)
}
