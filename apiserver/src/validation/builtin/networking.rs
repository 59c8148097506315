//! The `networking.k8s.io` group's rules (`pkg/apis/networking/validation`), the part this server has: a
//! NetworkPolicy's pod selector, ports (protocol, port number or name, end port), peers (one of a pod
//! selector and a namespace selector, or an IP block whose exceptions are strict subsets of its CIDR) and
//! policy types.

use std::net::IpAddr;

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json, index};
use super::{formats, ip, meta};

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[][..], Vec::as_slice)
}

/// `ValidateNetworkPolicy`; on update (`old`: the stored object) followed by `ValidateNetworkPolicyUpdate`,
/// which keeps the stored CIDRs even if now invalid (so a broken rule is reported twice, as kube-apiserver's
/// strategy does).
pub(super) fn network_policy(obj: &Value, old: Option<&Value>) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(spec(&obj["spec"], &[]));
    let Some(old) = old else {
        return errs;
    };
    errs.extend(meta::object_update(obj));
    let mut existing: Vec<&str> = Vec::new();
    {
        for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
            for rule in list(&old["spec"][rules]) {
                for peer in list(&rule[peers]) {
                    let block = &peer["ipBlock"];
                    existing.extend(block["cidr"].as_str());
                    existing.extend(list(&block["except"]).iter().filter_map(Value::as_str));
                }
            }
        }
    }
    errs.extend(spec(&obj["spec"], &existing));
    errs
}

/// `ValidateNetworkPolicySpec`.
fn spec(spec: &Value, existing: &[&str]) -> Errors {
    let mut errs = meta::label_selector(&spec["podSelector"], "spec.podSelector");
    for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list(&spec[rules]).iter().enumerate() {
            let at = index(&child("spec", rules), i);
            for (j, p) in list(&rule["ports"]).iter().enumerate() {
                errs.extend(port(p, &index(&child(&at, "ports"), j)));
            }
            for (j, p) in list(&rule[peers]).iter().enumerate() {
                errs.extend(peer(p, &index(&child(&at, peers), j), existing));
            }
        }
    }
    let types = list(&spec["policyTypes"]);
    if types.len() > 2 {
        errs.push(FieldError::invalid_printed(
            "spec.policyTypes",
            go_json(&spec["policyTypes"]),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if !matches!(t, "Ingress" | "Egress") {
            errs.push(FieldError::not_supported(
                index("spec.policyTypes", i),
                t,
                &["Ingress", "Egress"],
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPort`.
fn port(p: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if let Some(protocol) = p["protocol"].as_str()
        && !matches!(protocol, "TCP" | "UDP" | "SCTP")
    {
        errs.push(FieldError::not_supported(
            child(path, "protocol"),
            protocol,
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end = p["endPort"].as_i64();
    let range = "must be between 1 and 65535, inclusive";
    match &p["port"] {
        Value::Number(n) => {
            let n = n.as_i64().unwrap_or(0);
            if !(1..=65535).contains(&n) {
                errs.push(FieldError::invalid_printed(
                    child(path, "port"),
                    n.to_string(),
                    range,
                ));
            }
            if let Some(end) = end {
                if end < n {
                    errs.push(FieldError::invalid_printed(
                        child(path, "endPort"),
                        n.to_string(),
                        "must be greater than or equal to `port`",
                    ));
                }
                if !(1..=65535).contains(&end) {
                    errs.push(FieldError::invalid_printed(
                        child(path, "endPort"),
                        end.to_string(),
                        range,
                    ));
                }
            }
        }
        Value::String(name) => {
            if let Some(end) = end {
                errs.push(FieldError::invalid_printed(
                    child(path, "endPort"),
                    end.to_string(),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in formats::port_name(name) {
                errs.push(FieldError::invalid(child(path, "port"), name, msg));
            }
        }
        _ => {
            if let Some(end) = end {
                errs.push(FieldError::invalid_printed(
                    child(path, "endPort"),
                    end.to_string(),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`.
fn peer(p: &Value, path: &str, existing: &[&str]) -> Errors {
    let mut errs = Errors::new();
    let mut peers = 0;
    for selector in ["podSelector", "namespaceSelector"] {
        if !p[selector].is_null() {
            peers += 1;
            errs.extend(meta::label_selector(&p[selector], &child(path, selector)));
        }
    }
    let block = &p["ipBlock"];
    if !block.is_null() {
        peers += 1;
        errs.extend(ip_block(block, &child(path, "ipBlock"), existing));
    }
    if peers == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if peers > 1 && !block.is_null() {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// The network of a CIDR as bits: its address masked, its prefix length, and the family's width.
fn network(cidr: &str) -> Option<(u128, u8, u8)> {
    let (addr, bits) = ip::parse_cidr_sloppy(cidr)?;
    let (value, width) = match addr {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    };
    let mask = if bits == 0 {
        0
    } else {
        (u128::MAX >> (128 - u32::from(width))) & !((1u128 << (width - bits)) - 1)
    };
    Some((value & mask, bits, width))
}

/// `ValidateIPBlock`: a CIDR, and exceptions that are strict subsets of it.
fn ip_block(block: &Value, path: &str, existing: &[&str]) -> Errors {
    let mut errs = Errors::new();
    let cidr = block["cidr"].as_str().unwrap_or("");
    if cidr.is_empty() {
        errs.push(FieldError::required(child(path, "cidr"), ""));
        return errs;
    }
    errs.extend(ip::legacy_cidr(&child(path, "cidr"), cidr, existing));
    let Some((net, bits, width)) = network(cidr) else {
        return errs;
    };
    for (i, except) in list(&block["except"]).iter().enumerate() {
        let except = except.as_str().unwrap_or("");
        let at = index(&child(path, "except"), i);
        errs.extend(ip::legacy_cidr(&at, except, existing));
        let Some((e_net, e_bits, e_width)) = network(except) else {
            continue;
        };
        // `IPNet.Contains` of the exception's network address (an IPv4 one in an IPv6 network is not).
        let shift = u32::from(width - bits);
        let contains = e_width == width && (shift >= 128 || (e_net >> shift) == (net >> shift));
        if !contains || bits >= e_bits {
            errs.push(FieldError::invalid(
                &at,
                except,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_subsets() {
        let block = serde_json::json!({"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16", "11.0.0.0/16", "10.0.0.0/8"]});
        let errs = ip_block(&block, "b", &[]);
        assert_eq!(errs.len(), 2);
        assert_eq!(
            network("10.1.2.3/16"),
            Some((u128::from(0x0a01_0000u32), 16, 32))
        );
    }
}
