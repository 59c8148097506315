//! The core group's Service rules (`validateService`, `ValidateServiceUpdate`), the part this server has: the
//! ports (required, names, numbers, protocols, target ports, duplicates; no node port on a `ClusterIP`
//! Service), the type and session affinity, `clusterIP` agreeing with `clusterIPs`, and on update the
//! cluster IPs and IP families that may not change once set.

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json, index};
use super::{formats, meta};

// The IP addresses themselves are not checked (`IsValidIPForLegacyField`).

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `isHeadlessService`: the only cluster IP is `None`.
fn headless(spec: &Value) -> bool {
    strings(&spec["clusterIPs"]) == ["None"]
}

fn is_external_name(spec: &Value) -> bool {
    spec["type"] == "ExternalName"
}

/// The cluster IP allocator's check before it allocates (`ValidateServiceClusterIPsRelatedFields`, run by
/// kube-apiserver's Service storage before the strategy validates): its errors alone refuse the write.
fn allocator(spec: &Value) -> Errors {
    if is_external_name(spec) {
        Errors::new()
    } else {
        cluster_ips(spec)
    }
}

/// `ValidateService`, after the allocator's check.
pub(super) fn create(obj: &Value) -> Errors {
    let pre = allocator(&obj["spec"]);
    if !pre.is_empty() {
        return pre;
    }
    let mut errs = meta::object(obj);
    errs.extend(service(&obj["spec"]));
    errs
}

/// `ValidateServiceUpdate` after the allocator's check: the metadata's update rules, the cluster IPs and IP
/// families, then the Service.
pub(super) fn update(obj: &Value, old: &Value) -> Errors {
    let pre = allocator(&obj["spec"]);
    if !pre.is_empty() {
        return pre;
    }
    let mut errs = meta::object_update(obj);
    let (spec, old_spec) = (&obj["spec"], &old["spec"]);
    if !is_external_name(spec) && !is_external_name(old_spec) {
        errs.extend(cluster_ips_update(spec, old_spec));
        errs.extend(ip_families_update(spec, old_spec));
    }
    errs.extend(meta::object(obj));
    errs.extend(service(spec));
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

/// `validateService`, less the load balancer, external IP and traffic policy rules.
fn service(spec: &Value) -> Errors {
    let mut errs = Errors::new();
    let ports = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
    let external = is_external_name(spec);
    if ports.is_empty() && !headless(spec) && !external {
        errs.push(FieldError::required("spec.ports", ""));
    }
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
    match spec["sessionAffinity"].as_str().unwrap_or("") {
        "" => errs.push(FieldError::required("spec.sessionAffinity", "")),
        "ClientIP" | "None" => {}
        other => errs.push(FieldError::not_supported(
            "spec.sessionAffinity",
            other,
            &["ClientIP", "None"],
        )),
    }
    // (`ValidateServiceClusterIPsRelatedFields` again: the allocator's check passed.)
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
    errs
}

/// `ValidateServiceClusterIPsRelatedFields`: `clusterIP` is the first of `clusterIPs`.
fn cluster_ips(spec: &Value) -> Errors {
    let mut errs = Errors::new();
    let ip = spec["clusterIP"].as_str().unwrap_or("");
    let ips = strings(&spec["clusterIPs"]);
    if !ip.is_empty() {
        if ips.is_empty() {
            errs.push(FieldError::required("spec.clusterIPs", ""));
        } else if ips[0] != ip {
            errs.push(FieldError::invalid_printed(
                "spec.clusterIPs",
                go_json(&spec["clusterIPs"]),
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid_printed(
            "spec.clusterIPs",
            go_json(&spec["clusterIPs"]),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    // Each cluster IP is of the family at its index.
    let families = strings(&spec["ipFamilies"]);
    if !headless(spec) {
        for (i, (ip, family)) in ips.iter().zip(&families).enumerate() {
            let v6 = ip.contains(':');
            let expected = match *family {
                "IPv4" if v6 => "IPv4",
                "IPv6" if !v6 => "IPv6",
                _ => continue,
            };
            errs.push(FieldError::invalid(
                index("spec.clusterIPs", i),
                ip,
                format!("expected an {expected} value as indicated by `ipFamilies[{i}]`"),
            ));
        }
    }
    errs
}

/// What kube-apiserver's Service storage does before validating an update: a Service that keeps needing a
/// cluster IP keeps the one it was given when the update leaves it out (`patchAllocatedValues`), and
/// `clusterIPs` follows a changed `clusterIP` when the update left it as it was (`normalizeClusterIPs`).
pub(crate) fn keep_allocated(new: &mut Value, old: &Value) {
    if !new["spec"].is_object() {
        return;
    }
    let ip = |v: &Value| v["spec"]["clusterIP"].as_str().unwrap_or("").to_string();
    if !is_external_name(&new["spec"]) && !is_external_name(&old["spec"]) {
        if ip(new).is_empty() && !ip(old).is_empty() {
            new["spec"]["clusterIP"] = old["spec"]["clusterIP"].clone();
        }
        if strings(&new["spec"]["clusterIPs"]).is_empty()
            && !strings(&old["spec"]["clusterIPs"]).is_empty()
        {
            new["spec"]["clusterIPs"] = old["spec"]["clusterIPs"].clone();
        }
        // The allocator's `initIPFamilyFields` sets the families and policy left out again.
        for field in ["ipFamilies", "ipFamilyPolicy"] {
            if new["spec"][field].is_null() && !old["spec"][field].is_null() {
                new["spec"][field] = old["spec"][field].clone();
            }
        }
    }
    let same_ips = strings(&new["spec"]["clusterIPs"]) == strings(&old["spec"]["clusterIPs"]);
    if !strings(&old["spec"]["clusterIPs"]).is_empty()
        && strings(&new["spec"]["clusterIPs"]).is_empty()
        && ip(old) == ip(new)
    {
        new["spec"]["clusterIPs"] = old["spec"]["clusterIPs"].clone();
    }
    if ip(old) != ip(new) && same_ips {
        if ip(new).is_empty() {
            if let Some(spec) = new["spec"].as_object_mut() {
                spec.remove("clusterIPs");
            }
        } else {
            new["spec"]["clusterIPs"] = serde_json::json!([ip(new)]);
        }
    }
}
