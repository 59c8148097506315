//! kube-apiserver's default API priority and fairness configuration: the mandatory FlowSchemas and
//! PriorityLevelConfigurations (`exempt`, `catch-all`) and the suggested ones (`probes`, `system-nodes`,
//! `global-default`, ...), as kube-apiserver v1.35.4 creates them at start (`bootstrap.json`: read back from
//! it, each with its `apf.kubernetes.io/autoupdate-spec: "true"` annotation), and the Dangling condition its
//! configuration controller writes in every FlowSchema's status.

use serde_json::{Value, json};

/// The field manager of the configuration kube-apiserver creates.
pub(crate) const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";

/// The field manager of the FlowSchema status kube-apiserver writes.
pub(crate) const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";

/// The default PriorityLevelConfigurations, then the default FlowSchemas in precedence order.
pub(crate) fn objects() -> Vec<Value> {
    match serde_json::from_str(include_str!("bootstrap.json")) {
        Ok(Value::Array(items)) => items,
        _ => {
            tracing::error!("the bundled API priority and fairness configuration does not parse");
            Vec::new()
        }
    }
}

/// The Dangling condition a FlowSchema's status should hold (type, status, reason, message), given
/// whether its priority level exists, as the configuration controller's `presyncFlowSchemaStatus` words it.
pub(crate) fn dangling(priority_level: &str, exists: bool) -> Value {
    let (status, reason, message) = if exists {
        (
            "False",
            "Found",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {priority_level:?} and it exists"
            ),
        )
    } else {
        (
            "True",
            "NotFound",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {priority_level:?} but there is no such object"
            ),
        )
    };
    json!({"type": "Dangling", "status": status, "reason": reason, "message": message})
}

/// Whether a stored condition says what `want` says (the transition time aside).
pub(crate) fn same_condition(have: &Value, want: &Value) -> bool {
    ["type", "status", "reason", "message"]
        .iter()
        .all(|k| have[*k] == want[*k])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mandatory_and_suggested_objects_are_bundled() {
        let names: Vec<(String, String)> = objects()
            .iter()
            .map(|o| {
                (
                    o["kind"].as_str().unwrap_or("").to_string(),
                    o["metadata"]["name"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        assert_eq!(names.len(), 19);
        for (kind, name) in [
            ("FlowSchema", "exempt"),
            ("FlowSchema", "catch-all"),
            ("FlowSchema", "global-default"),
            ("PriorityLevelConfiguration", "exempt"),
            ("PriorityLevelConfiguration", "catch-all"),
        ] {
            assert!(names.contains(&(kind.into(), name.into())), "{kind} {name}");
        }
        assert_eq!(
            dangling("x", false)["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"x\" but there is no such object"
        );
    }
}
