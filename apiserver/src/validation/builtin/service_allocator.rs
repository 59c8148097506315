//! The checks kube-apiserver's Service storage makes before validating a Service (its allocator's
//! `initIPFamilyFields`, which runs `ValidateServiceClusterIPsRelatedFields`, and `initNodePorts`), whose
//! errors alone refuse a write; and what it keeps of the allocated fields on update.

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json, index};
use super::ip;
use super::service_spec::{headless, is_external_name, strings};

/// The node port range of kube-apiserver's default `--service-node-port-range`.
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

/// The cluster IP allocator's check before it allocates (`ValidateServiceClusterIPsRelatedFields`, run by
/// kube-apiserver's Service storage before the strategy validates): its errors alone refuse the write.
pub(super) fn check(spec: &Value, old: Option<&Value>) -> Errors {
    if is_external_name(spec) {
        return Errors::new();
    }
    let errs = cluster_ips(spec, old);
    if !errs.is_empty() {
        return errs;
    }
    let errs = ip_family_fields(spec, old);
    if !errs.is_empty() {
        return errs;
    }
    node_port_range(spec, old)
}

/// The policy `initIPFamilyFields` gives a Service: its own, the old one's, `RequireDualStack` for a
/// headless Service without a selector, else `SingleStack`.
fn ip_family_policy(spec: &Value, old: Option<&Value>) -> String {
    if let Some(p) = spec["ipFamilyPolicy"].as_str() {
        return p.to_string();
    }
    if let Some(p) = old.and_then(|o| o["ipFamilyPolicy"].as_str()) {
        return p.to_string();
    }
    let no_selector = spec["selector"].as_object().is_none_or(|m| m.is_empty());
    if spec["clusterIP"] == "None" && no_selector {
        "RequireDualStack".into()
    } else {
        "SingleStack".into()
    }
}

/// `initIPFamilyFields` on a single-stack IPv4 cluster (as the envtest control plane is): a single-stack
/// policy with two IPs or families, IPv6 addresses and families, and a dual-stack policy are refused.
fn ip_family_fields(spec: &Value, old: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    let policy = ip_family_policy(spec, old);
    let ips = strings(&spec["clusterIPs"]);
    let families = strings(&spec["ipFamilies"]);
    let quoted = formats_quote(&policy);
    if policy == "SingleStack" {
        if ips.len() == 2 {
            errs.push(FieldError::invalid_printed(
                "spec.ipFamilyPolicy",
                quoted.clone(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if families.len() == 2 {
            errs.push(FieldError::invalid_printed(
                "spec.ipFamilyPolicy",
                quoted.clone(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    for (i, address) in ips.iter().enumerate() {
        if *address == "None" {
            break;
        }
        if i >= families.len() && ip::is_ipv6(address) {
            errs.push(FieldError::invalid_printed(
                index("spec.clusterIPs", i),
                go_json(&spec["clusterIPs"]),
                "IPv6 is not configured on this cluster",
            ));
        }
    }
    if !errs.is_empty() {
        return errs;
    }
    let no_selector = spec["selector"].as_object().is_none_or(|m| m.is_empty());
    if spec["clusterIP"] == "None" && no_selector {
        return errs;
    }
    if policy == "RequireDualStack" {
        errs.push(FieldError::invalid_printed(
            "spec.ipFamilyPolicy",
            quoted,
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, family) in families.iter().enumerate() {
        if *family != "IPv4" {
            errs.push(FieldError::invalid(
                index("spec.ipFamilies", i),
                family,
                "not configured on this cluster",
            ));
        }
    }
    errs
}

fn formats_quote(s: &str) -> String {
    super::field::go_quote(s)
}

/// `initNodePorts`: a node port asked for by a `NodePort` or `LoadBalancer` Service is in the node port
/// range and not asked for twice (ports of the same number share theirs); on update only the node ports
/// the old Service did not hold are allocated.
fn node_port_range(spec: &Value, old: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    if !matches!(spec["type"].as_str(), Some("NodePort" | "LoadBalancer")) {
        return errs;
    }
    let held: Vec<i64> = old
        .and_then(|o| o["ports"].as_array())
        .map(|ps| ps.iter().filter_map(|p| p["nodePort"].as_i64()).collect())
        .unwrap_or_default();
    let ports = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
    let mut allocated: Vec<i64> = Vec::new();
    let mut by_port: Vec<(i64, i64)> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let number = p["port"].as_i64().unwrap_or(0);
        let node_port = p["nodePort"].as_i64().unwrap_or(0);
        let wanted = match by_port.iter().find(|(n, _)| *n == number) {
            Some((_, np)) if node_port == 0 || node_port == *np => continue,
            Some(_) => node_port,
            None => {
                // `findRequestedNodePort`: the first node port asked for by a port of this number.
                let np = ports
                    .iter()
                    .filter(|q| q["port"].as_i64().unwrap_or(0) == number)
                    .find_map(|q| q["nodePort"].as_i64().filter(|n| *n != 0))
                    .unwrap_or(0);
                by_port.push((number, np));
                np
            }
        };
        if wanted == 0 || held.contains(&wanted) {
            continue;
        }
        let problem = if !NODE_PORTS.contains(&wanted) {
            "provided port is not in the valid range. The range of valid ports is 30000-32767"
        } else if allocated.contains(&wanted) {
            "provided port is already allocated"
        } else {
            allocated.push(wanted);
            continue;
        };
        errs.push(FieldError::invalid_printed(
            child(&index("spec.ports", i), "nodePort"),
            wanted.to_string(),
            problem,
        ));
        return errs;
    }
    errs
}

/// `ValidateServiceClusterIPsRelatedFields`: `clusterIP` is the first of `clusterIPs`, the IP families and
/// policy are supported values, the cluster IPs are addresses (or were: `old` is the stored spec), at most
/// one of each family, each of the family at its index.
fn cluster_ips(spec: &Value, old: Option<&Value>) -> Errors {
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
    let families = strings(&spec["ipFamilies"]);
    let mut seen: Vec<&str> = Vec::new();
    for (i, family) in families.iter().enumerate() {
        if !matches!(*family, "IPv4" | "IPv6") {
            errs.push(FieldError::not_supported(
                index("spec.ipFamilies", i),
                family,
                &["IPv4", "IPv6"],
            ));
        }
        if seen.contains(family) {
            errs.push(FieldError::duplicate(index("spec.ipFamilies", i), family));
        }
        seen.push(family);
    }
    if let Some(policy) = spec["ipFamilyPolicy"].as_str()
        && !matches!(
            policy,
            "PreferDualStack" | "RequireDualStack" | "SingleStack"
        )
    {
        errs.push(FieldError::not_supported(
            "spec.ipFamilyPolicy",
            policy,
            &["PreferDualStack", "RequireDualStack", "SingleStack"],
        ));
    }
    let existing: Vec<&str> = old.map(|o| strings(&o["clusterIPs"])).unwrap_or_default();
    let mut invalid_ips = false;
    for (i, address) in ips.iter().enumerate() {
        if i == 0 && *address == "None" {
            if ips.len() > 1 {
                invalid_ips = true;
                errs.push(FieldError::invalid_printed(
                    "spec.clusterIPs",
                    go_json(&spec["clusterIPs"]),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let bad = ip::legacy_ip(&index("spec.clusterIPs", i), address, &existing);
        invalid_ips |= !bad.is_empty();
        errs.extend(bad);
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid_printed(
            "spec.clusterIPs",
            go_json(&spec["clusterIPs"]),
            "may only hold up to 2 values",
        ));
    }
    if invalid_ips {
        return errs;
    }
    // `IsDualStackIPStrings`: exactly one address of each family.
    if ips.len() > 1 {
        let v6 = ips.iter().filter(|a| ip::is_ipv6(a)).count();
        if ips.len() != 2 || v6 != 1 {
            errs.push(FieldError::invalid_printed(
                "spec.clusterIPs",
                go_json(&spec["clusterIPs"]),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    // Each cluster IP is of the family at its index.
    if !headless(spec) {
        for (i, (ip, family)) in ips.iter().zip(&families).enumerate() {
            let v6 = ip::is_ipv6(ip);
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
        // The allocator's `initIPFamilyFields` sets the policy left out again, and infers the families from
        // the cluster IPs (the old ones while the IPs stay).
        if new["spec"]["ipFamilyPolicy"].is_null() && !old["spec"]["ipFamilyPolicy"].is_null() {
            new["spec"]["ipFamilyPolicy"] = old["spec"]["ipFamilyPolicy"].clone();
        }
        if new["spec"]["ipFamilies"].is_null()
            && !old["spec"]["ipFamilies"].is_null()
            && strings(&new["spec"]["clusterIPs"]) == strings(&old["spec"]["clusterIPs"])
        {
            new["spec"]["ipFamilies"] = old["spec"]["ipFamilies"].clone();
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
