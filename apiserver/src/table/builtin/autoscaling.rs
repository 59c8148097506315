//! HorizontalPodAutoscalers, from `autoscaling/v2` objects or `autoscaling/v1` ones (a CPU target only).

use serde_json::{Value, json};

use super::cells::{int, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// A quantity as written, `<unknown>` when absent.
fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "<unknown>".into(),
    }
}

/// A percentage, `<unknown>` when absent.
fn percent(v: &Value) -> Option<String> {
    v.as_i64().map(|p| format!("{p}%"))
}

/// `current/target` of one metric, by its type (`formatHPAMetrics`).
fn metric(spec: &Value, status: &Value) -> String {
    let unknown = || "<unknown>".to_string();
    match spec["type"].as_str().unwrap_or("") {
        type_ @ ("External" | "Object") => {
            let key = if type_ == "External" {
                "external"
            } else {
                "object"
            };
            let (target, current) = (&spec[key]["target"], &status[key]["current"]);
            if target["averageValue"].is_null() {
                let now = if status[key].is_object() {
                    quantity(&current["value"])
                } else {
                    unknown()
                };
                format!("{now}/{}", quantity(&target["value"]))
            } else {
                let now = if current["averageValue"].is_null() {
                    unknown()
                } else {
                    quantity(&current["averageValue"])
                };
                format!("{now}/{} (avg)", quantity(&target["averageValue"]))
            }
        }
        "Pods" => {
            let now = if status["pods"].is_object() {
                quantity(&status["pods"]["current"]["averageValue"])
            } else {
                unknown()
            };
            format!(
                "{now}/{}",
                quantity(&spec["pods"]["target"]["averageValue"])
            )
        }
        type_ @ ("Resource" | "ContainerResource") => {
            let key = if type_ == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let (target, current) = (&spec[key]["target"], &status[key]["current"]);
            let name = text(&spec[key]["name"]);
            if target["averageValue"].is_null() {
                let now = percent(&current["averageUtilization"]).unwrap_or_else(unknown);
                let goal =
                    percent(&target["averageUtilization"]).unwrap_or_else(|| "<auto>".into());
                format!("{name}: {now}/{goal}")
            } else {
                let now = if status[key].is_object() {
                    quantity(&current["averageValue"])
                } else {
                    unknown()
                };
                format!("{name}: {now}/{}", quantity(&target["averageValue"]))
            }
        }
        _ => "<unknown type>".into(),
    }
}

/// The metrics of a v2 object; a v1 object's CPU target read as the v2 metric it converts to. Without any,
/// kube-apiserver defaults to 80% CPU utilization.
fn metrics(obj: &Value) -> (Vec<Value>, Vec<Value>) {
    let (spec, status) = (&obj["spec"], &obj["status"]);
    if let Some(specs) = spec["metrics"].as_array().filter(|m| !m.is_empty()) {
        let statuses = status["currentMetrics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        return (specs.clone(), statuses);
    }
    let target = spec["targetCPUUtilizationPercentage"]
        .as_i64()
        .unwrap_or(80);
    let cpu = json!({ "type": "Resource", "resource": { "name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": target,
    } } });
    let current = match status["currentCPUUtilizationPercentage"].as_i64() {
        Some(now) => vec![
            json!({ "type": "Resource", "resource": { "name": "cpu", "current": {
            "averageUtilization": now,
        } } }),
        ],
        None => Vec::new(),
    };
    (vec![cpu], current)
}

/// Up to two metrics, then `+ N more...`.
fn targets(obj: &Value) -> String {
    const MAX: usize = 2;
    let (specs, statuses) = metrics(obj);
    let all: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| metric(spec, statuses.get(i).unwrap_or(&Value::Null)))
        .collect();
    let shown = all.iter().take(MAX).cloned().collect::<Vec<_>>().join(", ");
    if all.len() > MAX {
        format!("{shown} + {} more...", all.len() - MAX)
    } else {
        shown
    }
}

/// A HorizontalPodAutoscaler's row.
pub(super) fn horizontal_pod_autoscaler(obj: &Value, now: Now) -> Row {
    let (spec, target) = (&obj["spec"], &obj["spec"]["scaleTargetRef"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(format!(
            "{}/{}",
            text(&target["kind"]),
            text(&target["name"])
        )),
        json!(targets(obj)),
        // Defaulted to 1.
        json!(spec["minReplicas"].as_i64().unwrap_or(1).to_string()),
        json!(int(&spec["maxReplicas"])),
        json!(int(&obj["status"]["currentReplicas"])),
        time::age(obj, now),
    ]
    .into()
}
