//! What both the Service validation and the allocator's checks before it read of a Service's spec.

use serde_json::Value;

/// The strings of a JSON array (none for anything else).
pub(super) fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `isHeadlessService`: the only cluster IP is `None`.
pub(super) fn headless(spec: &Value) -> bool {
    strings(&spec["clusterIPs"]) == ["None"]
}

/// A Service of type `ExternalName`.
pub(super) fn is_external_name(spec: &Value) -> bool {
    spec["type"] == "ExternalName"
}
