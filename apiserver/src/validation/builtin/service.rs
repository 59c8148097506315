//! The core group's Service rules (`validateService`, `ValidateServiceUpdate`) and the checks kube-apiserver's
//! Service storage makes before them (`ValidateServiceClusterIPsRelatedFields`, the IP families a
//! single-stack IPv4 cluster serves, a requested node port's range): the ports, type, session affinity,
//! cluster IPs and IP families, external IPs, an `ExternalName` Service's name, the load balancer fields,
//! the traffic policies and distribution, and on update the cluster IPs, IP families, load balancer class
//! and health check node port that may not change once set.
//!
//! Not here: the cluster IP range and node ports already allocated to other Services (this server allocates
//! no node ports).

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json, go_value, index, key};
use super::service_spec::{headless, is_external_name, strings};
use super::{formats, ip, meta, service_allocator};

pub(crate) use service_allocator::keep_allocated;

/// `core.MaxClientIPServiceAffinitySeconds`.
const MAX_AFFINITY_SECONDS: i64 = 86400;
const TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";
const TOPOLOGY_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
const SOURCE_RANGES: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/// `ValidateService`, after the allocator's check.
pub(super) fn create(obj: &Value) -> Errors {
    let pre = service_allocator::check(&obj["spec"], None);
    if !pre.is_empty() {
        return pre;
    }
    let mut errs = meta::object(obj);
    errs.extend(service(obj, None));
    errs
}

/// `ValidateServiceUpdate` after the allocator's check: the metadata's update rules, the cluster IPs and IP
/// families, then the Service.
pub(super) fn update(obj: &Value, old: &Value) -> Errors {
    let pre = service_allocator::check(&obj["spec"], Some(&old["spec"]));
    if !pre.is_empty() {
        return pre;
    }
    let mut errs = meta::object_update(obj);
    let (spec, old_spec) = (&obj["spec"], &old["spec"]);
    if !is_external_name(spec) && !is_external_name(old_spec) {
        errs.extend(cluster_ips_update(spec, old_spec));
        errs.extend(ip_families_update(spec, old_spec));
    }
    errs.extend(load_balancer_class(spec, Some(old_spec)));
    if needs_health_check(spec)
        && needs_health_check(old_spec)
        && spec["healthCheckNodePort"] != old_spec["healthCheckNodePort"]
    {
        errs.push(FieldError::forbidden(
            "spec.healthCheckNodePort",
            "field is immutable",
        ));
    }
    errs.extend(meta::object(obj));
    errs.extend(service(obj, Some(old_spec)));
    errs
}

/// `validateUpgradeDowngradeClusterIPs`.
fn cluster_ips_update(spec: &Value, old_spec: &Value) -> Errors {
    let mut errs = Errors::new();
    if headless(spec) && headless(old_spec) {
        return errs;
    }
    let (new, old) = (
        strings(&spec["clusterIPs"]),
        strings(&old_spec["clusterIPs"]),
    );
    let shown = || go_json(&spec["clusterIPs"]);
    let at0 = "spec.clusterIPs[0]";
    if new.len() == old.len() {
        for (i, ip) in old.iter().enumerate() {
            if *ip != new[i] {
                errs.push(FieldError::invalid_printed(
                    index("spec.clusterIPs", i),
                    shown(),
                    "may not change once set",
                ));
            }
        }
    } else if old.len() > new.len() {
        if new.is_empty() {
            errs.push(FieldError::invalid_printed(
                at0,
                shown(),
                "primary clusterIP can not be unset",
            ));
        }
        if !old.is_empty() && !new.is_empty() && new[0] != old[0] {
            errs.push(FieldError::invalid_printed(
                at0,
                shown(),
                "may not change once set",
            ));
        }
        if new.len() == 1 && spec["ipFamilyPolicy"] != "SingleStack" {
            errs.push(FieldError::invalid_printed(
                "spec.ipFamilyPolicy",
                go_json(&spec["ipFamilyPolicy"]),
                "must be set to 'SingleStack' when releasing the secondary clusterIP",
            ));
        }
    } else if !old.is_empty() && new[0] != old[0] {
        errs.push(FieldError::invalid_printed(
            at0,
            shown(),
            "may not change once set",
        ));
    }
    errs
}

/// `validateUpgradeDowngradeIPFamilies`.
fn ip_families_update(spec: &Value, old_spec: &Value) -> Errors {
    let mut errs = Errors::new();
    if headless(spec) || headless(old_spec) {
        return errs;
    }
    let (new, old) = (
        strings(&spec["ipFamilies"]),
        strings(&old_spec["ipFamilies"]),
    );
    let at0 = "spec.ipFamilies[0]";
    if new.len() == old.len() {
        for (i, family) in old.iter().enumerate() {
            if *family != new[i] {
                errs.push(FieldError::invalid_printed(
                    at0,
                    go_json(&spec["ipFamilies"]),
                    "may not change once set",
                ));
            }
        }
    } else if old.len() > new.len() {
        if strings(&spec["clusterIPs"]).is_empty() {
            errs.push(FieldError::invalid_printed(
                at0,
                go_json(&spec["ipFamilies"]),
                "primary ipFamily can not be unset",
            ));
        }
        if !new.is_empty() && new[0] != old[0] {
            errs.push(FieldError::invalid_printed(
                at0,
                go_json(&spec["clusterIPs"]),
                "may not change once set",
            ));
        }
        if new.len() == 1 && spec["ipFamilyPolicy"] != "SingleStack" {
            errs.push(FieldError::invalid_printed(
                "spec.ipFamilyPolicy",
                go_json(&spec["ipFamilyPolicy"]),
                "must be set to 'SingleStack' when releasing the secondary ipFamily",
            ));
        }
    } else if !old.is_empty() && new[0] != old[0] {
        errs.push(FieldError::invalid_printed(
            at0,
            go_json(&spec["clusterIPs"]),
            "may not change once set",
        ));
    }
    errs
}

/// `validateService` (`old` being the stored spec on update).
fn service(obj: &Value, old: Option<&Value>) -> Errors {
    let spec = &obj["spec"];
    let mut errs = Errors::new();
    let annotations = &obj["metadata"]["annotations"];
    if let (Some(mode), Some(hints)) = (
        annotations[TOPOLOGY_MODE].as_str(),
        annotations[TOPOLOGY_HINTS].as_str(),
    ) && mode != hints
    {
        errs.push(FieldError::invalid(
            key("metadata.annotations", TOPOLOGY_MODE),
            mode,
            format!("must match annotations[{TOPOLOGY_HINTS}] when both are specified"),
        ));
    }
    let ports = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
    let external = is_external_name(spec);
    if ports.is_empty() && !headless(spec) && !external {
        errs.push(FieldError::required("spec.ports", ""));
    }
    errs.extend(type_fields(spec));
    let mut names: Vec<&str> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        errs.extend(port(
            p,
            ports.len() > 1,
            &mut names,
            &index("spec.ports", i),
        ));
    }
    if !spec["selector"].is_null() {
        errs.extend(meta::labels(&spec["selector"], "spec.selector"));
    }
    let affinity = spec["sessionAffinity"].as_str().unwrap_or("");
    match affinity {
        "" => errs.push(FieldError::required("spec.sessionAffinity", "")),
        "ClientIP" | "None" => {}
        other => errs.push(FieldError::not_supported(
            "spec.sessionAffinity",
            other,
            &["ClientIP", "None"],
        )),
    }
    errs.extend(affinity_config(spec, affinity));
    // (`ValidateServiceClusterIPsRelatedFields` again: the allocator's check passed.)
    let old_external: Vec<&str> = old.map(|o| strings(&o["externalIPs"])).unwrap_or_default();
    for (i, address) in strings(&spec["externalIPs"]).into_iter().enumerate() {
        let path = index("spec.externalIPs", i);
        let bad = ip::legacy_ip(&path, address, &old_external);
        if bad.is_empty() {
            errs.extend(ip::endpoint_ip(&path, address));
        } else {
            errs.extend(bad);
        }
    }
    let kind = spec["type"].as_str().unwrap_or("");
    if kind.is_empty() {
        errs.push(FieldError::required("spec.type", ""));
    } else if !TYPES.contains(&kind) {
        errs.push(FieldError::not_supported("spec.type", kind, &TYPES));
    }
    if kind == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if p["nodePort"].as_i64().unwrap_or(0) != 0 {
                errs.push(FieldError::forbidden(
                    child(&index("spec.ports", i), "nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports: Vec<(&str, i64)> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let node_port = p["nodePort"].as_i64().unwrap_or(0);
        if node_port == 0 {
            continue;
        }
        let key = (p["protocol"].as_str().unwrap_or(""), node_port);
        if node_ports.contains(&key) {
            errs.push(FieldError::duplicate_printed(
                child(&index("spec.ports", i), "nodePort"),
                node_port.to_string(),
            ));
        }
        node_ports.push(key);
    }
    let mut seen: Vec<(&str, i64)> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let protocol = p["protocol"].as_str().unwrap_or("");
        let number = p["port"].as_i64().unwrap_or(0);
        if seen.contains(&(protocol, number)) {
            // The key is the internal `core.ServicePort` with only the protocol and port set, which Go marshals
            // with its field names.
            errs.push(FieldError::duplicate_printed(
                index("spec.ports", i),
                format!(
                    "{{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{number},\"TargetPort\":0,\"NodePort\":0}}",
                    super::field::go_quote(protocol)
                ),
            ));
        }
        seen.push((protocol, number));
    }
    errs.extend(source_ranges(obj, old));
    let load_balancer = kind == "LoadBalancer";
    if !spec["allocateLoadBalancerNodePorts"].is_null() && !load_balancer {
        errs.push(FieldError::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if load_balancer && spec["allocateLoadBalancerNodePorts"].is_null() {
        errs.push(FieldError::required("allocateLoadBalancerNodePorts", ""));
    }
    errs.extend(load_balancer_class(spec, None));
    errs.extend(traffic_policies(spec));
    errs
}

/// The rules of `validateService`'s switch on the type: no headless `LoadBalancer` or `NodePort` Service, no
/// cluster IPs or IP families on an `ExternalName` one, whose `externalName` is a DNS subdomain.
fn type_fields(spec: &Value) -> Errors {
    let mut errs = Errors::new();
    match spec["type"].as_str().unwrap_or("") {
        kind @ ("LoadBalancer" | "NodePort") if headless(spec) => {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                "None",
                format!("may not be set to 'None' for {kind} services"),
            ));
        }
        "ExternalName" => {
            // kube-apiserver's strategy copies a `clusterIP` into the empty `clusterIPs` first.
            if !strings(&spec["clusterIPs"]).is_empty()
                || spec["clusterIP"].as_str().is_some_and(|ip| !ip.is_empty())
            {
                errs.push(FieldError::forbidden(
                    "spec.clusterIPs",
                    "may not be set for ExternalName services",
                ));
            }
            if !strings(&spec["ipFamilies"]).is_empty() {
                errs.push(FieldError::forbidden(
                    "spec.ipFamilies",
                    "may not be set for ExternalName services",
                ));
            }
            if !spec["ipFamilyPolicy"].is_null() {
                errs.push(FieldError::forbidden(
                    "spec.ipFamilyPolicy",
                    "may not be set for ExternalName services",
                ));
            }
            let name = spec["externalName"].as_str().unwrap_or("");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(FieldError::required("spec.externalName", ""));
            } else {
                for msg in formats::dns1123_subdomain(cname) {
                    errs.push(FieldError::invalid("spec.externalName", cname, msg));
                }
            }
        }
        _ => {}
    }
    errs
}

/// `validateClientIPAffinityConfig` for `ClientIP` (the defaults fill the config in), none for `None`.
fn affinity_config(spec: &Value, affinity: &str) -> Errors {
    let mut errs = Errors::new();
    let config = &spec["sessionAffinityConfig"];
    let path = "spec.sessionAffinityConfig";
    if affinity == "ClientIP" {
        let required = "when session affinity type is ClientIP";
        if config.is_null() {
            errs.push(FieldError::required(path, required));
        } else if config["clientIP"].is_null() {
            errs.push(FieldError::required(child(path, "clientIP"), required));
        } else if config["clientIP"]["timeoutSeconds"].is_null() {
            errs.push(FieldError::required(
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                required,
            ));
        } else {
            let timeout = config["clientIP"]["timeoutSeconds"].as_i64().unwrap_or(0);
            if timeout <= 0 || timeout > MAX_AFFINITY_SECONDS {
                errs.push(FieldError::invalid_printed(
                    "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                    timeout.to_string(),
                    format!("must be greater than 0 and less than {MAX_AFFINITY_SECONDS}"),
                ));
            }
        }
    } else if affinity == "None" && !config.is_null() {
        errs.push(FieldError::forbidden(
            path,
            "must not be set when session affinity is None",
        ));
    }
    errs
}

/// The load balancer's source ranges, from the field (at Go's path `spec.LoadBalancerSourceRanges`) or
/// else the annotation: only on a `LoadBalancer` Service, each a CIDR (surrounding spaces allowed).
fn source_ranges(obj: &Value, old: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    let spec = &obj["spec"];
    let load_balancer = spec["type"] == "LoadBalancer";
    let ranges = strings(&spec["loadBalancerSourceRanges"]);
    let only_lb = "may only be used when `type` is 'LoadBalancer'";
    if !ranges.is_empty() {
        let path = "spec.LoadBalancerSourceRanges";
        if !load_balancer {
            errs.push(FieldError::forbidden(path, only_lb));
        }
        let existing: Vec<&str> = old
            .map(|o| strings(&o["loadBalancerSourceRanges"]))
            .unwrap_or_default()
            .into_iter()
            .map(str::trim)
            .collect();
        for (i, value) in ranges.iter().enumerate() {
            errs.extend(ip::legacy_cidr(&index(path, i), value.trim(), &existing));
        }
    } else if let Some(value) = obj["metadata"]["annotations"][SOURCE_RANGES].as_str() {
        let path = key("metadata.annotations", SOURCE_RANGES);
        if !load_balancer {
            errs.push(FieldError::forbidden(&path, only_lb));
        }
        let _ = old; // The stored object's annotation is not at hand here: every value is checked.
        let value = value.trim();
        if !value.is_empty() {
            for cidr in value.split(',') {
                errs.extend(ip::legacy_cidr(&path, cidr.trim(), &[]));
            }
        }
    }
    errs
}

/// `validateLoadBalancerClassField`: a qualified name, only on a `LoadBalancer` Service, and (on update, both
/// being load balancers) unchanged.
fn load_balancer_class(spec: &Value, old: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    let class = &spec["loadBalancerClass"];
    let load_balancer = spec["type"] == "LoadBalancer";
    if let Some(old) = old
        && old["type"] == "LoadBalancer"
        && load_balancer
        && old["loadBalancerClass"] != *class
    {
        errs.push(FieldError::invalid_printed(
            "spec.loadBalancerClass",
            printed_pointer(class),
            "may not change once set",
        ));
    }
    if load_balancer {
        if let Some(c) = class.as_str() {
            for msg in formats::qualified_name(c) {
                errs.push(FieldError::invalid("spec.loadBalancerClass", c, msg));
            }
        }
    } else if !class.is_null() {
        errs.push(FieldError::forbidden(
            "spec.loadBalancerClass",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    errs
}

/// A pointer field's value as `field.Error` prints it: dereferenced, or `null` when nil.
fn printed_pointer(v: &Value) -> String {
    if v.is_null() {
        "null".into()
    } else {
        go_value(v)
    }
}

/// `apiservice.ExternallyAccessible`.
fn externally_accessible(spec: &Value) -> bool {
    match spec["type"].as_str() {
        Some("LoadBalancer" | "NodePort") => true,
        Some("ClusterIP") => !strings(&spec["externalIPs"]).is_empty(),
        _ => false,
    }
}

/// `apiservice.NeedsHealthCheck`: a `LoadBalancer` Service with a `Local` external traffic policy.
fn needs_health_check(spec: &Value) -> bool {
    spec["type"] == "LoadBalancer" && spec["externalTrafficPolicy"] == "Local"
}

/// `validateServiceExternalTrafficPolicy`, `validateServiceInternalTrafficFieldsValue` and
/// `validateServiceTrafficDistribution`. A health check node port is allocated by kube-apiserver when left
/// out; this server allocates none, and so does not require it.
fn traffic_policies(spec: &Value) -> Errors {
    let mut errs = Errors::new();
    let external = spec["externalTrafficPolicy"].as_str().unwrap_or("");
    if !externally_accessible(spec) {
        if !external.is_empty() {
            errs.push(FieldError::invalid(
                "spec.externalTrafficPolicy",
                external,
                "may only be set for externally-accessible services",
            ));
        }
    } else if external.is_empty() {
        errs.push(FieldError::required("spec.externalTrafficPolicy", ""));
    } else if !matches!(external, "Cluster" | "Local") {
        errs.push(FieldError::not_supported(
            "spec.externalTrafficPolicy",
            external,
            &["Cluster", "Local"],
        ));
    }
    let health = spec["healthCheckNodePort"].as_i64().unwrap_or(0);
    if !needs_health_check(spec) {
        if health != 0 {
            errs.push(FieldError::invalid_printed(
                "spec.healthCheckNodePort",
                health.to_string(),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if health != 0 && !(1..=65535).contains(&health) {
        errs.push(FieldError::invalid_printed(
            "spec.healthCheckNodePort",
            health.to_string(),
            "must be between 1 and 65535, inclusive",
        ));
    }
    match spec["internalTrafficPolicy"].as_str() {
        None if matches!(
            spec["type"].as_str(),
            Some("NodePort" | "LoadBalancer" | "ClusterIP")
        ) =>
        {
            errs.push(FieldError::required("spec.internalTrafficPolicy", ""));
        }
        Some(p) if !matches!(p, "Cluster" | "Local") => {
            errs.push(FieldError::not_supported(
                "spec.internalTrafficPolicy",
                p,
                &["Cluster", "Local"],
            ));
        }
        _ => {}
    }
    if let Some(d) = spec["trafficDistribution"].as_str()
        && !matches!(d, "PreferClose" | "PreferSameZone" | "PreferSameNode")
    {
        errs.push(FieldError::not_supported(
            "spec.trafficDistribution",
            d,
            &["PreferClose", "PreferSameZone", "PreferSameNode"],
        ));
    }
    errs
}

/// `validateServicePort`.
fn port<'a>(p: &'a Value, require_name: bool, names: &mut Vec<&'a str>, path: &str) -> Errors {
    let mut errs = Errors::new();
    let name = p["name"].as_str().unwrap_or("");
    let name_path = child(path, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&name_path, ""));
    } else if !name.is_empty() {
        for msg in formats::dns1123_label(name) {
            errs.push(FieldError::invalid(&name_path, name, msg));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(&name_path, name));
        } else {
            names.push(name);
        }
    }
    let number = p["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&number) {
        errs.push(FieldError::invalid_value(
            child(path, "port"),
            &p["port"],
            "must be between 1 and 65535, inclusive",
        ));
    }
    match p["protocol"].as_str().unwrap_or("") {
        "" => errs.push(FieldError::required(child(path, "protocol"), "")),
        "TCP" | "UDP" | "SCTP" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "protocol"),
            other,
            &["SCTP", "TCP", "UDP"],
        )),
    }
    let target_path = child(path, "targetPort");

    match &p["targetPort"] {
        Value::Number(n) if !(1..=65535).contains(&n.as_i64().unwrap_or(0)) => {
            errs.push(FieldError::invalid_value(
                target_path,
                &p["targetPort"],
                "must be between 1 and 65535, inclusive",
            ));
        }
        Value::String(s) => {
            for msg in formats::port_name(s) {
                errs.push(FieldError::invalid(&target_path, s, msg));
            }
        }
        _ => {}
    }
    if let Some(a) = p["appProtocol"].as_str() {
        for msg in formats::qualified_name(a) {
            errs.push(FieldError::invalid(child(path, "appProtocol"), a, msg));
        }
    }
    errs
}
