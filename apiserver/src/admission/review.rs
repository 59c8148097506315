//! Which stored webhooks a write meets, the AdmissionReview sent to each, and what its answer means.

use serde_json::{Value, json};

use super::equivalent::Equivalent;
use crate::selector::LabelSelector;

/// A mutating or validating webhook from a stored configuration.
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    /// Which webhook it is: its configuration's name and its index there (names may repeat across
    /// configurations).
    pub id: String,
    /// `webhooks[].name`.
    pub name: String,
    /// `clientConfig`.
    pub client: Value,
    /// `failurePolicy: Ignore`.
    pub fail_open: bool,
    /// `timeoutSeconds`, clamped to 1..=30.
    pub timeout_seconds: u64,
    /// `matchConditions`, evaluated once the rules and selectors matched.
    pub match_conditions: Value,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke: bool,
    /// The equivalent resource its rules name, when only that one matched (`matchPolicy: Equivalent`):
    /// the webhook sees the object in that version.
    pub invocation: Option<Equivalent>,
}

/// What is being admitted.
#[derive(Debug, Clone)]
pub(crate) struct Review<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    pub namespaced: bool,
    pub namespace: &'a str,
    pub name: &'a str,
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    pub dry_run: bool,
    /// The labels of the request's namespace (for `namespaceSelector`).
    pub namespace_labels: Option<&'a serde_json::Map<String, Value>>,
    /// The resources equivalent to the requested one, the requested one included, in kube-apiserver's
    /// order.
    pub equivalents: &'a [Equivalent],
    /// The equivalent resource the webhook is called for (its version of the object is `object`); `None`
    /// for the requested one.
    pub invocation: Option<&'a Equivalent>,
}

/// A webhook's answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Verdict {
    pub allowed: bool,
    /// `status` of the response (message, reason, code).
    pub status: Value,
    /// The JSON patch, decoded.
    pub patch: Option<Value>,
    pub warnings: Vec<String>,
}

/// The webhooks of `configurations` (a list of stored configurations, mutating or not) that `r` meets, in
/// the order of the configurations' names and then their webhooks.
pub(crate) fn matching(configurations: &[Value], r: &Review<'_>) -> Vec<Hook> {
    ordered(configurations)
        .into_iter()
        .filter_map(|(id, w)| hook(id, w, r))
        .collect()
}

/// Every webhook of `configurations`, in the order kube-apiserver calls them (by configuration name, then
/// as listed), each with its id.
pub(crate) fn ordered(configurations: &[Value]) -> Vec<(String, &Value)> {
    let mut sorted: Vec<&Value> = configurations.iter().collect();
    sorted.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    sorted
        .into_iter()
        .flat_map(|c| {
            let name = c["metadata"]["name"].as_str().unwrap_or_default();
            c["webhooks"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(move |(i, w)| (format!("{name}/{i}"), w))
        })
        .collect()
}

/// The webhook `w` (with `id`) when `r` meets its rules and selectors.
pub(crate) fn hook(id: String, w: &Value, r: &Review<'_>) -> Option<Hook> {
    if !selectors_match(w, r) {
        return None;
    }
    let invocation = if rules_match(&w["rules"], r) {
        None
    } else if w["matchPolicy"].as_str() != Some("Exact") {
        Some(equivalent_match(&w["rules"], r)?)
    } else {
        return None;
    };
    Some(Hook {
        id,
        name: w["name"].as_str().unwrap_or_default().to_string(),
        client: w["clientConfig"].clone(),
        fail_open: w["failurePolicy"].as_str() == Some("Ignore"),
        timeout_seconds: w["timeoutSeconds"].as_u64().unwrap_or(10).clamp(1, 30),
        match_conditions: w["matchConditions"].clone(),
        reinvoke: w["reinvocationPolicy"].as_str() == Some("IfNeeded"),
        invocation,
    })
}

/// The first resource equivalent to `r`'s that a rule names (earlier rules first), as kube-apiserver
/// looks for one when no rule names `r`'s resource itself.
fn equivalent_match(rules: &Value, r: &Review<'_>) -> Option<Equivalent> {
    rules.as_array().into_iter().flatten().find_map(|rule| {
        r.equivalents
            .iter()
            .filter(|e| {
                (
                    e.rt.group.as_str(),
                    e.rt.version.as_str(),
                    e.rt.plural.as_str(),
                ) != (r.group, r.version, r.resource)
            })
            .find(|e| {
                let other = Review {
                    group: &e.rt.group,
                    version: &e.rt.version,
                    resource: &e.rt.plural,
                    ..r.clone()
                };
                rule_matches(rule, &other)
            })
            .cloned()
    })
}

fn listed(list: &Value, want: &str) -> bool {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|v| v == "*" || v == want)
}

fn rules_match(rules: &Value, r: &Review<'_>) -> bool {
    rules
        .as_array()
        .into_iter()
        .flatten()
        .any(|rule| rule_matches(rule, r))
}

fn rule_matches(rule: &Value, r: &Review<'_>) -> bool {
    let resource = match r.subresource {
        Some(sub) => format!("{}/{sub}", r.resource),
        None => r.resource.to_string(),
    };
    let resources = rule["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let resource_ok = resources.clone().any(|p| {
        p == "*/*"
            || p == resource
            || (r.subresource.is_none() && p == "*")
            || p.strip_suffix("/*")
                .is_some_and(|base| base == r.resource && r.subresource.is_some())
            || p.strip_prefix("*/")
                .is_some_and(|sub| Some(sub) == r.subresource)
    });
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Namespaced" => r.namespaced,
        "Cluster" => !r.namespaced,
        _ => true,
    };
    listed(&rule["apiGroups"], r.group)
        && listed(&rule["apiVersions"], r.version)
        && listed(&rule["operations"], r.operation)
        && resource_ok
        && scope_ok
}

fn selector_matches(selector: &Value, labels: Option<&serde_json::Map<String, Value>>) -> bool {
    if selector.is_null() || selector.as_object().is_some_and(|m| m.is_empty()) {
        return true;
    }
    LabelSelector::from_label_selector(selector).is_ok_and(|s| s.matches(labels))
}

fn selectors_match(w: &Value, r: &Review<'_>) -> bool {
    let object = r.object.or(r.old_object);
    let object_labels = object.and_then(|o| o["metadata"]["labels"].as_object());
    // The namespace selector applies to namespaced objects (and to namespaces themselves).
    let namespace_ok = if r.namespaced {
        selector_matches(&w["namespaceSelector"], r.namespace_labels)
    } else if r.group.is_empty() && r.resource == "namespaces" {
        selector_matches(&w["namespaceSelector"], object_labels)
    } else {
        true
    };
    namespace_ok && selector_matches(&w["objectSelector"], object_labels)
}

/// The AdmissionReview v1 request for `r`, with `uid`.
pub(crate) fn request(r: &Review<'_>, uid: &str) -> Value {
    let (group, version, kind, resource) = match r.invocation {
        Some(e) => (
            e.rt.group.as_str(),
            e.rt.version.as_str(),
            e.rt.kind.as_str(),
            e.rt.plural.as_str(),
        ),
        None => (r.group, r.version, r.kind, r.resource),
    };
    let mut request = json!({
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "requestResource": {"group": r.group, "version": r.version, "resource": r.resource},
        "name": r.name,
        "operation": r.operation,
        "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
        "object": r.object.cloned().unwrap_or(Value::Null),
        "oldObject": r.old_object.cloned().unwrap_or(Value::Null),
        "dryRun": r.dry_run,
        "options": match r.operation {
            "CREATE" => json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}),
            "UPDATE" => json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}),
            _ => json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}),
        },
    });
    if r.namespaced {
        request["namespace"] = json!(r.namespace);
    }
    if let Some(sub) = r.subresource {
        request["subResource"] = json!(sub);
        request["requestSubResource"] = json!(sub);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// Reads a webhook's AdmissionReview answer; `Err` with why it cannot be used.
pub(crate) fn verdict(body: &[u8], uid: &str) -> Result<Verdict, String> {
    let review: Value =
        serde_json::from_slice(body).map_err(|e| format!("failed to decode the response: {e}"))?;
    let response = &review["response"];
    if !response.is_object() {
        return Err("the response has no 'response' field".into());
    }
    if response["uid"].as_str() != Some(uid) {
        return Err(format!(
            "expected response.uid=\"{uid}\", got \"{}\"",
            response["uid"].as_str().unwrap_or_default()
        ));
    }
    let patch = match &response["patch"] {
        Value::Null => None,
        // Go's []byte: base64 in a string, or (as kube-rs writes it) an array of bytes.
        Value::String(s) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| format!("the patch is not base64: {e}"))?;
            Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("the patch is not JSON: {e}"))?,
            )
        }
        Value::Array(a) => {
            let bytes: Vec<u8> = a
                .iter()
                .filter_map(Value::as_u64)
                .map(|b| b as u8)
                .collect();
            Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("the patch is not JSON: {e}"))?,
            )
        }
        _ => return Err("the patch is not bytes".into()),
    };
    Ok(Verdict {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        status: response["status"].clone(),
        patch,
        warnings: response["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    })
}
