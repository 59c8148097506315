//! The rows of kube-apiserver's printers for built-in kinds (`pkg/printers/internalversion`), a file per few
//! API groups; the column definitions they fill are in `columns.json`.
//!
//! kube-apiserver prints from its internal types after defaulting, so a field left out reads as its default
//! here too (a Deployment's `replicas` as 1, a Secret's `type` as `Opaque`).

mod access;
mod autoscaling;
mod cluster;
mod core;
mod events;
mod flow;
mod network;
mod pod;
mod storage;
mod workloads;

use serde_json::Value;

use super::Row;
use super::time::Now;

/// Prints one object of a kind into its row.
pub(super) type PrintRow = fn(&Value, Now) -> Row;

/// The printer of a built-in kind (by the group it is stored in), if kube-apiserver has one that is written
/// here.
pub(super) fn printer(group: &str, kind: &str) -> Option<PrintRow> {
    let print: PrintRow = match (group, kind) {
        ("apps", "Deployment") => workloads::deployment,
        ("apps", "ReplicaSet") => workloads::replica_set,
        ("apps", "StatefulSet") => workloads::stateful_set,
        ("apps", "DaemonSet") => workloads::daemon_set,
        ("batch", "Job") => workloads::job,
        ("batch", "CronJob") => workloads::cron_job,
        ("", "Pod") => pod::pod,
        ("", "ConfigMap") => core::config_map,
        ("", "Secret") => core::secret,
        ("", "Namespace") => core::namespace,
        ("", "ServiceAccount") => core::service_account,
        ("", "PersistentVolumeClaim") => core::persistent_volume_claim,
        ("", "Event") => events::core_event,
        ("", "Service") => network::service,
        ("", "Endpoints") => network::endpoints,
        ("networking.k8s.io", "Ingress") => network::ingress,
        ("coordination.k8s.io", "Lease") => core::lease,
        ("", "ReplicationController") => workloads::replication_controller,
        ("", "PodTemplate") => workloads::pod_template,
        ("apps", "ControllerRevision") => workloads::controller_revision,
        ("networking.k8s.io", "IngressClass") => network::ingress_class,
        ("networking.k8s.io", "IPAddress") => network::ip_address,
        ("networking.k8s.io", "ServiceCIDR") => network::service_cidr,
        ("networking.k8s.io", "NetworkPolicy") => network::network_policy,
        ("discovery.k8s.io", "EndpointSlice") => network::endpoint_slice,
        ("", "PersistentVolume") => storage::persistent_volume,
        ("storage.k8s.io", "StorageClass") => storage::storage_class,
        ("storage.k8s.io", "CSIDriver") => storage::csi_driver,
        ("storage.k8s.io", "CSINode") => storage::csi_node,
        ("storage.k8s.io", "VolumeAttachment") => storage::volume_attachment,
        ("storage.k8s.io", "VolumeAttributesClass") => storage::volume_attributes_class,
        ("", "Node") => cluster::node,
        ("", "ResourceQuota") => cluster::resource_quota,
        ("scheduling.k8s.io", "PriorityClass") => cluster::priority_class,
        ("node.k8s.io", "RuntimeClass") => cluster::runtime_class,
        ("resource.k8s.io", "DeviceClass" | "ResourceClaimTemplate") => cluster::name_and_age,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => access::binding,
        ("policy", "PodDisruptionBudget") => access::pod_disruption_budget,
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => access::webhook_configuration,
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaling::horizontal_pod_autoscaler,
        ("certificates.k8s.io", "CertificateSigningRequest") => access::certificate_signing_request,
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => flow::flow_schema,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            flow::priority_level_configuration
        }
        ("apiregistration.k8s.io", "APIService") => flow::api_service,
        ("resource.k8s.io", "ResourceClaim") => cluster::resource_claim,
        ("resource.k8s.io", "ResourceSlice") => cluster::resource_slice,
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            access::validating_admission_policy
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            access::validating_admission_policy_binding
        }
        _ => return None,
    };
    Some(print)
}

/// A string field, empty when absent.
fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// An integer field, 0 when absent.
fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The length of an array or object field, 0 when absent.
fn len(v: &Value) -> i64 {
    match v {
        Value::Array(a) => a.len() as i64,
        Value::Object(m) => m.len() as i64,
        _ => 0,
    }
}

/// The names and the images of a pod template's containers, each comma-joined (`layoutContainerCells`).
fn containers(pod_spec: &Value) -> (String, String) {
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
fn selector(sel: &Value) -> String {
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
fn format_selector(sel: &Value) -> String {
    none_if_empty(selector(sel))
}

/// `labels.FormatLabels` of a map of strings: `k=v` sorted by key, comma-joined, `<none>` when empty.
fn format_labels(map: &Value) -> String {
    let pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", text(v)))
        .collect();
    none_if_empty(pairs.join(","))
}

fn none_if_empty(s: String) -> String {
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
fn load_balancer(status: &Value) -> String {
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
