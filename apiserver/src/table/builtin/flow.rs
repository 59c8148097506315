//! The API server's own configuration objects: FlowSchemas, PriorityLevelConfigurations and APIServices.

use serde_json::{Value, json};

use super::cells::text;
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// A FlowSchema's row.
pub(super) fn flow_schema(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let distinguisher = spec["distinguisherMethod"]["type"]
        .as_str()
        .unwrap_or("<none>");
    // The Dangling condition's status, `?` before kube-apiserver's flow control has looked at it.
    let missing = obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Dangling")
        .map_or_else(|| "?".to_string(), |c| text(&c["status"]));
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&spec["priorityLevelConfiguration"]["name"])),
        json!(spec["matchingPrecedence"].as_i64().unwrap_or(1000)),
        json!(distinguisher),
        time::age(obj, now),
        json!(missing),
    ]
    .into()
}

/// A PriorityLevelConfiguration's row.
pub(super) fn priority_level_configuration(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let none = || json!("<none>");
    let (mut shares, mut queues, mut hand, mut length) = (none(), none(), none(), none());
    if let Some(limited) = spec["limited"].as_object() {
        // Defaulted: 30 shares; a queuing response of 64 queues, hands of 8 and 50 requests a queue.
        shares = json!(
            limited
                .get("nominalConcurrencyShares")
                .and_then(Value::as_i64)
                .unwrap_or(30)
        );
        let response = limited.get("limitResponse").unwrap_or(&Value::Null);
        if response["type"] == "Queue" {
            let queuing = &response["queuing"];
            queues = json!(queuing["queues"].as_i64().unwrap_or(64));
            hand = json!(queuing["handSize"].as_i64().unwrap_or(8));
            length = json!(queuing["queueLengthLimit"].as_i64().unwrap_or(50));
        }
    }
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&spec["type"])),
        shares,
        queues,
        hand,
        length,
        time::age(obj, now),
    ]
    .into()
}

/// An APIService's row.
pub(super) fn api_service(obj: &Value, now: Now) -> Row {
    let service = match obj["spec"]["service"].as_object() {
        Some(s) => format!(
            "{}/{}",
            s.get("namespace").map(text).unwrap_or_default(),
            s.get("name").map(text).unwrap_or_default()
        ),
        None => "Local".into(),
    };
    let available = obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Available")
        .map_or_else(
            || "Unknown".to_string(),
            |c| {
                let status = text(&c["status"]);
                match c["reason"].as_str() {
                    Some(reason) if status != "True" && !reason.is_empty() => {
                        format!("{status} ({reason})")
                    }
                    _ => status,
                }
            },
        );
    vec![
        obj["metadata"]["name"].clone(),
        json!(service),
        json!(available),
        time::age(obj, now),
    ]
    .into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The cells kube-apiserver 1.35 printed for its own `v1.apps` (Local, Available) and what its printer
    /// does with a service and a failing condition.
    #[test]
    fn api_services() {
        let local = json!({"metadata": {"name": "v1.apps"}, "spec": {},
                           "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]}});
        let cells = api_service(&local, chrono::Utc::now()).cells;
        assert_eq!(cells[1..3], [json!("Local"), json!("True")]);
        let remote = json!({"metadata": {"name": "v1.metrics.k8s.io"},
                            "spec": {"service": {"namespace": "kube-system", "name": "metrics"}},
                            "status": {"conditions": [{"type": "Available", "status": "False",
                                                       "reason": "ServiceNotFound"}]}});
        let cells = api_service(&remote, chrono::Utc::now()).cells;
        assert_eq!(
            cells[1..3],
            [
                json!("kube-system/metrics"),
                json!("False (ServiceNotFound)")
            ]
        );
        let unknown = json!({"metadata": {"name": "v1.x"}, "spec": {}});
        assert_eq!(
            api_service(&unknown, chrono::Utc::now()).cells[2],
            json!("Unknown")
        );
    }
}
