//! The cells the printers share: fields read with Go's zero values, and selectors, labels, access modes and
//! load balancer points written as kube-apiserver's printers write them.

use serde_json::Value;

/// A string field, empty when absent.
pub(super) fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// An integer field, 0 when absent.
pub(super) fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The length of an array or object field, 0 when absent.
pub(super) fn len(v: &Value) -> i64 {
    match v {
        Value::Array(a) => a.len() as i64,
        Value::Object(m) => m.len() as i64,
        _ => 0,
    }
}

/// The names and the images of a pod template's containers, each comma-joined (`layoutContainerCells`).
pub(super) fn containers(pod_spec: &Value) -> (String, String) {
    let containers = pod_spec["containers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let names: Vec<String> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<String> = containers.iter().map(|c| text(&c["image"])).collect();
    (names.join(","), images.join(","))
}

/// A `LabelSelector` as `labels.Selector.String()` writes it: requirements sorted by key, comma-joined;
/// empty for no selector or an empty one.
pub(super) fn selector(sel: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = sel["matchLabels"].as_object() {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", text(v))));
        }
    }
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = text(&e["key"]);
        let mut values: Vec<String> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect();
        values.sort();
        values.dedup();
        let written = match e["operator"].as_str().unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<error>".into(),
        };
        requirements.push((key, written));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.FormatLabelSelector`: [`selector`], `<none>` when empty.
pub(super) fn format_selector(sel: &Value) -> String {
    none_if_empty(selector(sel))
}

/// `labels.FormatLabels` of a map of strings: `k=v` sorted by key, comma-joined, `<none>` when empty.
pub(super) fn format_labels(map: &Value) -> String {
    let pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", text(v)))
        .collect();
    none_if_empty(pairs.join(","))
}

pub(super) fn none_if_empty(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// Access modes as `RWO,ROX,RWX,RWOP`, in that order whatever the order given.
pub(super) fn access_modes(modes: &Value) -> String {
    let modes: Vec<&str> = modes
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| short)
    .collect::<Vec<_>>()
    .join(",")
}

/// A load balancer's ingress points (IPs, else hostnames), sorted, deduplicated and comma-joined.
pub(super) fn load_balancer(status: &Value) -> String {
    let mut points: Vec<String> = status["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            [&i["ip"], &i["hostname"]]
                .into_iter()
                .filter_map(Value::as_str)
                .find(|s| !s.is_empty())
                .map(str::to_string)
        })
        .collect();
    points.sort();
    points.dedup();
    points.join(",")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn selectors_read_like_label_selector_strings() {
        let sel = json!({
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "api"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "x", "operator": "Exists"},
                {"key": "gone", "operator": "DoesNotExist"},
            ],
        });
        assert_eq!(
            selector(&sel),
            "a=1,b=2,env notin (dev),!gone,tier in (api,web),x"
        );
        assert_eq!(format_selector(&json!({})), "<none>");
        assert_eq!(format_labels(&json!({"z": "1", "a": "2"})), "a=2,z=1");
        assert_eq!(format_labels(&Value::Null), "<none>");
    }
}
