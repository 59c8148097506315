//! The status rules of the core kinds (`ValidateServiceStatusUpdate`, `ValidateNamespaceStatusUpdate`,
//! `ValidatePersistentVolumeClaimStatusUpdate`, `ValidatePodStatusUpdate` of `pkg/apis/core/validation`) and
//! the load balancer status that Services and Ingresses share, run on writes to their `status` in place of
//! the spec rules.
//!
//! Not here (the crate docs list them): a Pod's container state transitions, its container statuses' users
//! and resources, its resource claim statuses and its specific annotations.

use serde_json::{Value, json};

use super::field::{Errors, FieldError, go_json, go_quote, key};
use super::formats;
use super::ip::{is_ipv6, legacy_ip, parse_sloppy};

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn text<'a>(v: &'a Value, name: &str) -> &'a str {
    v[name].as_str().unwrap_or("")
}

/// The IPs of `old`'s list entries (`ip` of each), which a write may keep even when invalid.
fn old_ips<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    items(list)
        .iter()
        .filter_map(|e| e[key].as_str())
        .filter(|ip| !ip.is_empty())
        .collect()
}

/// `ValidateLoadBalancerStatus` (`service_type` the Service's `spec.type`) or, with `None`,
/// `ValidateIngressLoadBalancerStatus`.
pub(super) fn load_balancer(
    status: &Value,
    old_status: &Value,
    path: &str,
    service_type: Option<&str>,
) -> Errors {
    let mut errs = Errors::new();
    let ingress_path = format!("{path}.ingress");
    let ingress = items(&status["ingress"]);
    if let Some(t) = service_type
        && t != "LoadBalancer"
        && !ingress.is_empty()
    {
        errs.push(FieldError::forbidden(
            ingress_path,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errs;
    }
    let existing = old_ips(&old_status["ingress"], "ip");
    for (i, entry) in ingress.iter().enumerate() {
        let at = format!("{ingress_path}[{i}]");
        let ip = text(entry, "ip");
        if !ip.is_empty() {
            errs.extend(legacy_ip(&format!("{at}.ip"), ip, &existing));
        }
        if service_type.is_some() {
            match entry["ipMode"].as_str() {
                None if !ip.is_empty() => errs.push(FieldError::required(
                    format!("{at}.ipMode"),
                    "must be specified when `ip` is set",
                )),
                None => {}
                Some(_) if ip.is_empty() => errs.push(FieldError::forbidden(
                    format!("{at}.ipMode"),
                    "may not be specified when `ip` is not set",
                )),
                Some(mode) if !["Proxy", "VIP"].contains(&mode) => errs.push(
                    FieldError::not_supported(format!("{at}.ipMode"), mode, &["Proxy", "VIP"]),
                ),
                Some(_) => {}
            }
        }
        let hostname = text(entry, "hostname");
        if !hostname.is_empty() {
            for msg in formats::dns1123_subdomain(hostname) {
                errs.push(FieldError::invalid(format!("{at}.hostname"), hostname, msg));
            }
            if parse_sloppy(hostname).is_some() {
                errs.push(FieldError::invalid(
                    format!("{at}.hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// A Service's status: its load balancer.
pub(super) fn service_status(obj: &Value, old: &Value) -> Errors {
    let service_type = obj["spec"]["type"].as_str().unwrap_or("ClusterIP");
    load_balancer(
        &obj["status"]["loadBalancer"],
        &old["status"]["loadBalancer"],
        "status.loadBalancer",
        Some(service_type),
    )
}

/// A Namespace's status: `Active` unless it is being deleted, then `Terminating` (the path is Go's
/// `status.Phase`, capitalised).
pub(super) fn namespace_status(obj: &Value) -> Errors {
    let phase = text(&obj["status"], "phase");
    let deleting = obj["metadata"]["deletionTimestamp"]
        .as_str()
        .is_some_and(|t| !t.is_empty());
    let (want, detail) = if deleting {
        (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if phase == want {
        return Errors::new();
    }
    vec![FieldError::invalid("status.Phase", phase, detail)]
}

/// The states of `status.allocatedResourceStatuses`, sorted as Go lists them.
const RESIZE_STATUSES: [&str; 5] = [
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];

/// A PersistentVolumeClaim's status: its spec must have access modes (Go's path `Spec.accessModes`), its
/// capacity and allocated resources must not be negative, and the allocated ones (with their resize states)
/// name storage or an extended resource.
pub(super) fn persistent_volume_claim_status(obj: &Value) -> Errors {
    let mut errs = Errors::new();
    if items(&obj["spec"]["accessModes"]).is_empty() {
        errs.push(FieldError::required("Spec.accessModes", ""));
    }
    let status = &obj["status"];
    for (name, qty) in status["capacity"].as_object().into_iter().flatten() {
        errs.extend(basic_resource(qty, &key("status.capacity", name)));
    }
    let path = "status.allocatedResourceStatuses";
    for (name, state) in status["allocatedResourceStatuses"]
        .as_object()
        .into_iter()
        .flatten()
    {
        errs.extend(claim_resource_key(name, path));
        if !state.as_str().is_some_and(|s| RESIZE_STATUSES.contains(&s)) {
            // Go reports the key, not the state.
            errs.push(FieldError::not_supported(path, name, &RESIZE_STATUSES));
        }
    }
    let path = "status.allocatedResources";
    for (name, qty) in status["allocatedResources"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let key_errs = claim_resource_key(name, path);
        if key_errs.is_empty() {
            // `ValidateResourceQuantityValue` of storage finds nothing `validateBasicResource` did not.
            errs.extend(basic_resource(qty, &key(path, name)));
        } else {
            errs.extend(key_errs);
        }
    }
    errs
}

/// `validateBasicResource`: a quantity whose whole value (rounded away from zero) is negative.
fn basic_resource(qty: &Value, path: &str) -> Errors {
    match qty.as_str().and_then(crate::quantity::value) {
        Some(v) if v < 0 => vec![FieldError::invalid_printed(
            path,
            v.to_string(),
            "must be a valid resource quantity",
        )],
        _ => Errors::new(),
    }
}

/// `validatePersistentVolumeClaimResourceKey`: a qualified name, and `storage` among the native resources
/// (those without a `/`, or in `kubernetes.io/`).
fn claim_resource_key(name: &str, path: &str) -> Errors {
    let errs: Errors = formats::qualified_name(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, name, msg))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if native && name != "storage" {
        return vec![FieldError::not_supported(path, name, &["storage"])];
    }
    Errors::new()
}

/// The internal `[]PodIP`/`[]HostIP` as Go's `json.Marshal` prints them (no JSON tags: `IP`).
fn ips_printed(list: &[Value]) -> String {
    let printed: Vec<Value> = list.iter().map(|e| json!({"IP": text(e, "ip")})).collect();
    go_json(&Value::Array(printed))
}

/// `validatePodIPs` and `validateHostIPs`: each new address valid, at most one of each family.
fn pod_ips(status: &Value, old_status: &Value, list: &str, single: &str) -> Errors {
    let mut errs = Errors::new();
    let ips = items(&status[list]);
    if ips.is_empty() {
        return errs;
    }
    let path = format!("status.{list}");
    if list == "hostIPs" && text(status, single) != text(&ips[0], "ip") {
        errs.push(FieldError::invalid(
            format!("{path}[0].ip"),
            text(&ips[0], "ip"),
            "must be equal to `hostIP`",
        ));
    }
    let existing: Vec<&str> = items(&old_status[list])
        .iter()
        .map(|e| text(e, "ip"))
        .collect();
    for (i, entry) in ips.iter().enumerate() {
        errs.extend(legacy_ip(
            &format!("{path}[{i}]"),
            text(entry, "ip"),
            &existing,
        ));
    }
    if ips.len() > 1 {
        let v6 = ips.iter().filter(|e| is_ipv6(text(e, "ip"))).count();
        let dual =
            v6 > 0 && v6 < ips.len() && ips.iter().all(|e| parse_sloppy(text(e, "ip")).is_some());
        if !dual || ips.len() > 2 {
            errs.push(FieldError::invalid_printed(
                path,
                ips_printed(ips),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    errs
}

/// A Pod's status: conditions, the node it is bound to (not changed here), the nominated node, the
/// observed generation, the QoS class (immutable once set) and its IPs.
pub(super) fn pod_status(obj: &Value, old: &Value) -> Errors {
    let (status, old_status) = (&obj["status"], &old["status"]);
    let mut errs = Errors::new();
    for (i, condition) in items(&status["conditions"]).iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        if let Some(g) = condition["observedGeneration"].as_i64()
            && g < 0
        {
            errs.push(FieldError::invalid_value(
                format!("{at}.observedGeneration"),
                &json!(g),
                "must be a non-negative integer",
            ));
        }
        let type_ = text(condition, "type");
        if ["PodScheduled", "Ready", "Initialized"].contains(&type_) {
            continue;
        }
        for msg in formats::qualified_name(type_) {
            errs.push(FieldError::invalid(format!("{at}.Type"), type_, msg));
        }
    }
    if text(&obj["spec"], "nodeName") != text(&old["spec"], "nodeName") {
        errs.push(FieldError::forbidden(
            "status.nodeName",
            "may not be changed directly",
        ));
    }
    let nominated = text(status, "nominatedNodeName");
    if nominated != text(old_status, "nominatedNodeName") && !nominated.is_empty() {
        // `ValidateNodeName`: a DNS subdomain.
        for msg in formats::dns1123_subdomain(nominated) {
            errs.push(FieldError::invalid(
                "status.nominatedNodeName",
                nominated,
                msg,
            ));
        }
        if !text(&old["spec"], "nodeName").is_empty() {
            errs.push(FieldError::forbidden(
                "status.nominatedNodeName",
                "may not be set on pods that are already bound to a node",
            ));
        }
    }
    if let Some(g) = status["observedGeneration"].as_i64()
        && g < 0
    {
        errs.push(FieldError::invalid_value(
            "status.observedGeneration",
            &json!(g),
            "must be a non-negative integer",
        ));
    }
    // kube-apiserver sets the class when it creates a Pod; one stored without (given to a test as it was)
    // may be given one.
    let (qos, old_qos) = (text(status, "qosClass"), text(old_status, "qosClass"));
    if !old_qos.is_empty() && qos != old_qos {
        errs.push(FieldError::invalid_printed(
            "status.qosClass",
            go_quote(qos),
            "field is immutable",
        ));
    }
    errs.extend(pod_ips(status, old_status, "podIPs", "podIP"));
    errs.extend(pod_ips(status, old_status, "hostIPs", "hostIP"));
    errs
}

#[cfg(test)]
mod tests {
    use super::super::field::messages;
    use super::*;

    #[test]
    fn a_load_balancer_status_on_a_cluster_ip_service_is_forbidden() {
        let svc = json!({"spec": {"type": "ClusterIP"},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        assert_eq!(
            messages(&service_status(&svc, &json!({}))),
            [
                "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
            ]
        );
        let lb = json!({"spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3"}, {"hostname": "1.2.3.4", "ipMode": "VIP"}]}}});
        assert_eq!(
            messages(&service_status(&lb, &json!({}))),
            [
                "status.loadBalancer.ingress[0].ip: Invalid value: \"1.2.3\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "status.loadBalancer.ingress[0].ipMode: Required value: must be specified when `ip` is set",
                "status.loadBalancer.ingress[1].ipMode: Forbidden: may not be specified when `ip` is not set",
                "status.loadBalancer.ingress[1].hostname: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address",
            ]
        );
    }

    #[test]
    fn a_namespace_phase_follows_its_deletion() {
        assert!(namespace_status(&json!({"status": {"phase": "Active"}})).is_empty());
        assert_eq!(
            messages(&namespace_status(
                &json!({"status": {"phase": "Terminating"}})
            )),
            [
                "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
            ]
        );
    }

    #[test]
    fn a_claim_status_has_no_negative_quantities_and_names_storage() {
        let ok = json!({"spec": {"accessModes": ["ReadWriteOnce"]}, "status": {"capacity": {"storage": "1Gi"},
            "allocatedResources": {"storage": "1Gi", "example.com/iops": "3"},
            "allocatedResourceStatuses": {"storage": "NodeResizePending"}}});
        assert!(persistent_volume_claim_status(&ok).is_empty());
        let bad = json!({"spec": {}, "status": {"capacity": {"storage": "-1Ki"},
            "allocatedResources": {"cpu": "1", "storage": "-500m"},
            "allocatedResourceStatuses": {"storage": "Resizing"}}});
        assert_eq!(
            messages(&persistent_volume_claim_status(&bad)),
            [
                "Spec.accessModes: Required value",
                "status.capacity[storage]: Invalid value: -1024: must be a valid resource quantity",
                "status.allocatedResourceStatuses: Unsupported value: \"storage\": supported values: \"ControllerResizeInProgress\", \"ControllerResizeInfeasible\", \"NodeResizeInProgress\", \"NodeResizeInfeasible\", \"NodeResizePending\"",
                "status.allocatedResources: Unsupported value: \"cpu\": supported values: \"storage\"",
                "status.allocatedResources[storage]: Invalid value: -1: must be a valid resource quantity",
            ]
        );
    }

    #[test]
    fn a_pod_status_keeps_its_node_and_qos_class() {
        let old = json!({"spec": {"nodeName": "n1"}, "status": {"qosClass": "BestEffort"}});
        let new = json!({"spec": {"nodeName": "n1"}, "status": {"qosClass": "Burstable",
            "podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "hostIP": "1.1.1.1", "hostIPs": [{"ip": "1.1.1.2"}],
            "conditions": [{"type": "Ready"}, {"type": "bad type"}]}});
        assert_eq!(
            messages(&pod_status(&new, &old)),
            [
                "status.conditions[1].Type: Invalid value: \"bad type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "status.qosClass: Invalid value: \"Burstable\": field is immutable",
                "status.podIPs: Invalid value: [{\"IP\":\"10.0.0.1\"},{\"IP\":\"10.0.0.2\"}]: may specify no more than one IP for each IP family",
                "status.hostIPs[0].ip: Invalid value: \"1.1.1.2\": must be equal to `hostIP`",
            ]
        );
    }
}
