//! Access and admission: RBAC bindings, PodDisruptionBudgets, webhook configurations and admission policies.

use serde_json::{Value, json};

use super::cells::{int, len, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// RoleBinding and ClusterRoleBinding: the role as `Kind/name`, and the subjects by kind.
pub(super) fn binding(obj: &Value, now: Now) -> Row {
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for s in obj["subjects"].as_array().into_iter().flatten() {
        match s["kind"].as_str() {
            Some("User") => users.push(text(&s["name"])),
            Some("Group") => groups.push(text(&s["name"])),
            Some("ServiceAccount") => {
                accounts.push(format!("{}/{}", text(&s["namespace"]), text(&s["name"])))
            }
            _ => {}
        }
    }
    let role = &obj["roleRef"];
    vec![
        obj["metadata"]["name"].clone(),
        json!(format!("{}/{}", text(&role["kind"]), text(&role["name"]))),
        time::age(obj, now),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(accounts.join(", ")),
    ]
    .into()
}

/// An int-or-string as Go's `IntOrString.String()` writes it, `N/A` when absent.
fn int_or_string(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "N/A".into(),
    }
}

/// A PodDisruptionBudget's row.
pub(super) fn pod_disruption_budget(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(int_or_string(&obj["spec"]["minAvailable"])),
        json!(int_or_string(&obj["spec"]["maxUnavailable"])),
        json!(int(&obj["status"]["disruptionsAllowed"])),
        time::age(obj, now),
    ]
    .into()
}

/// Mutating and validating webhook configurations: how many webhooks.
pub(super) fn webhook_configuration(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(len(&obj["webhooks"])),
        time::age(obj, now),
    ]
    .into()
}

/// A ValidatingAdmissionPolicy's row.
pub(super) fn validating_admission_policy(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let param_kind = match spec["paramKind"].as_object() {
        Some(p) => format!(
            "{}/{}",
            p.get("apiVersion").map(text).unwrap_or_default(),
            p.get("kind").map(text).unwrap_or_default()
        ),
        None => "<unset>".into(),
    };
    vec![
        obj["metadata"]["name"].clone(),
        json!(len(&spec["validations"])),
        json!(param_kind),
        time::age(obj, now),
    ]
    .into()
}

/// A ValidatingAdmissionPolicyBinding's row.
pub(super) fn validating_admission_policy_binding(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let param = match spec["paramRef"].as_object() {
        None => "<unset>".to_string(),
        Some(r) => {
            let name = r.get("name").map(text).unwrap_or_default();
            let namespace = r.get("namespace").map(text).unwrap_or_default();
            if !name.is_empty() && !namespace.is_empty() {
                format!("{namespace}/{name}")
            } else if !name.is_empty() {
                format!("*/{name}")
            } else if let Some(selector) = r.get("selector") {
                super::cells::selector(selector)
            } else {
                "<unset>".to_string()
            }
        }
    };
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&spec["policyName"])),
        json!(param),
        time::age(obj, now),
    ]
    .into()
}

/// A CertificateSigningRequest's condition: Denied, else Approved, else Pending; then `,Failed` and `,Issued`.
fn csr_condition(obj: &Value) -> String {
    let conditions: Vec<&str> = obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["type"].as_str())
        .collect();
    let mut state = if conditions.contains(&"Denied") {
        "Denied".to_string()
    } else if conditions.contains(&"Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if conditions.contains(&"Failed") {
        state.push_str(",Failed");
    }
    if obj["status"]["certificate"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        state.push_str(",Issued");
    }
    state
}

/// A CertificateSigningRequest's row.
pub(super) fn certificate_signing_request(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let signer = spec["signerName"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let duration = spec["expirationSeconds"]
        .as_i64()
        .map_or_else(|| "<none>".to_string(), time::human_duration);
    vec![
        obj["metadata"]["name"].clone(),
        time::age(obj, now),
        json!(signer),
        json!(text(&spec["username"])),
        json!(duration),
        json!(csr_condition(obj)),
    ]
    .into()
}
