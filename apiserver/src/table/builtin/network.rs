//! Services, Endpoints and Ingresses.

use serde_json::{Value, json};

use super::cells::{format_labels, int, load_balancer, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// A comma-joined list of strings, empty when absent.
fn joined(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

/// The External-IP cell of a Service.
fn external_ip(obj: &Value) -> String {
    let (spec, external) = (&obj["spec"], joined(&obj["spec"]["externalIPs"]));
    match spec["type"].as_str().unwrap_or("ClusterIP") {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".into(),
        "ClusterIP" | "NodePort" => external,
        "LoadBalancer" => {
            let points = load_balancer(&obj["status"]["loadBalancer"]);
            match (points.is_empty(), external.is_empty()) {
                (true, true) => "<pending>".into(),
                (false, true) => points,
                (true, false) => external,
                (false, false) => format!("{points},{external}"),
            }
        }
        "ExternalName" => text(&spec["externalName"]),
        _ => "<unknown>".into(),
    }
}

/// `port/protocol` or `port:nodePort/protocol`, comma-joined.
fn ports(spec: &Value) -> String {
    spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match int(&p["nodePort"]) {
                n if n > 0 => format!("{}:{n}/{protocol}", int(&p["port"])),
                _ => format!("{}/{protocol}", int(&p["port"])),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A Service's row.
pub(super) fn service(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    // kube-apiserver keeps `clusterIPs` in step with `clusterIP`; read the latter when the former is missing.
    let cluster_ip = [&spec["clusterIPs"][0], &spec["clusterIP"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|ip| !ip.is_empty())
        .unwrap_or("<none>");
    let ports = ports(spec);
    vec![
        obj["metadata"]["name"].clone(),
        json!(spec["type"].as_str().unwrap_or("ClusterIP")),
        json!(cluster_ip),
        json!(external_ip(obj)),
        json!(if ports.is_empty() {
            "<none>".into()
        } else {
            ports
        }),
        time::age(obj, now),
        json!(format_labels(&spec["selector"])),
    ]
    .into()
}

/// Up to three `ip:port` (or `ip` for subsets without ports), then `+ N more...`.
fn endpoint_list(obj: &Value) -> String {
    let subsets = obj["subsets"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if subsets.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0);
    for subset in subsets {
        let addresses = subset["addresses"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let ports = subset["ports"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let mut add = |entry: String, list: &mut Vec<String>| {
            if list.len() == MAX {
                more = true;
                false
            } else {
                list.push(entry);
                true
            }
        };
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if !add(text(&a["ip"]), &mut list) {
                    break;
                }
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for a in addresses {
                let ip = text(&a["ip"]);
                let host = if ip.contains(':') {
                    format!("[{ip}]")
                } else {
                    ip
                };
                if !add(format!("{host}:{}", int(&port["port"])), &mut list) {
                    break;
                }
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

/// An Endpoints's row.
pub(super) fn endpoints(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(endpoint_list(obj)),
        time::age(obj, now),
    ]
    .into()
}

/// Up to three rule hosts, then `+ N more...`; `*` when no rule names a host.
fn hosts(spec: &Value) -> String {
    const MAX: usize = 3;
    let rules = spec["rules"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut list = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        let host = text(&rule["host"]);
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len() - MAX)
    } else {
        joined
    }
}

/// An Ingress's row.
pub(super) fn ingress(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let tls = spec["tls"].as_array().is_some_and(|t| !t.is_empty());
    vec![
        obj["metadata"]["name"].clone(),
        json!(spec["ingressClassName"].as_str().unwrap_or("<none>")),
        json!(hosts(spec)),
        json!(load_balancer(&obj["status"]["loadBalancer"])),
        json!(if tls { "80, 443" } else { "80" }),
        time::age(obj, now),
    ]
    .into()
}

/// An IngressClass's row.
pub(super) fn ingress_class(obj: &Value, now: Now) -> Row {
    let parameters = match obj["spec"]["parameters"].as_object() {
        None => "<none>".to_string(),
        Some(p) => {
            let kind = p.get("kind").map(text).unwrap_or_default();
            let kind = match p.get("apiGroup").and_then(Value::as_str) {
                Some(group) => format!("{kind}.{group}"),
                None => kind,
            };
            format!("{kind}/{}", p.get("name").map(text).unwrap_or_default())
        }
    };
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&obj["spec"]["controller"])),
        json!(parameters),
        time::age(obj, now),
    ]
    .into()
}

/// An IPAddress's row.
pub(super) fn ip_address(obj: &Value, now: Now) -> Row {
    let parent = match obj["spec"]["parentRef"].as_object() {
        None => "<none>".to_string(),
        Some(r) => {
            let field = |k: &str| r.get(k).map(text).unwrap_or_default();
            let resource = match field("group").as_str() {
                "" => field("resource"),
                group => format!("{}.{group}", field("resource")),
            };
            let mut out = resource.to_lowercase();
            if !field("namespace").is_empty() {
                out = format!("{out}/{}", field("namespace"));
            }
            format!("{out}/{}", field("name"))
        }
    };
    vec![
        obj["metadata"]["name"].clone(),
        json!(parent),
        time::age(obj, now),
    ]
    .into()
}

/// A ServiceCIDR's row.
pub(super) fn service_cidr(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(joined(&obj["spec"]["cidrs"])),
        time::age(obj, now),
    ]
    .into()
}

/// A NetworkPolicy's row.
pub(super) fn network_policy(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(super::cells::format_selector(&obj["spec"]["podSelector"])),
        time::age(obj, now),
    ]
    .into()
}

/// Up to three entries, then `+ N more...`; `<unset>` when there are none.
fn list_with_more(all: Vec<String>) -> String {
    const MAX: usize = 3;
    let count = all.len();
    let shown = all.into_iter().take(MAX).collect::<Vec<_>>().join(",");
    if count > MAX {
        format!("{shown} + {} more...", count - MAX)
    } else if shown.is_empty() {
        "<unset>".into()
    } else {
        shown
    }
}

/// An EndpointSlice's row.
pub(super) fn endpoint_slice(obj: &Value, now: Now) -> Row {
    let ports = obj["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| match (p["port"].as_i64(), p["name"].as_str()) {
            (Some(port), _) => port.to_string(),
            (None, Some(name)) => name.to_string(),
            (None, None) => "*".to_string(),
        })
        .collect();
    let addresses = obj["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| e["addresses"].as_array().into_iter().flatten().map(text))
        .collect();
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&obj["addressType"])),
        json!(list_with_more(ports)),
        json!(list_with_more(addresses)),
        time::age(obj, now),
    ]
    .into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn endpoints_show_three_then_a_count() {
        let obj = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]},
            {"addresses": [{"ip": "fd00::1"}]},
        ]});
        assert_eq!(
            endpoint_list(&obj),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more..."
        );
        assert_eq!(endpoint_list(&json!({})), "<none>");
    }

    #[test]
    fn ingress_hosts() {
        let rules = |hosts: &[&str]| json!({"rules": hosts.iter().map(|h| json!({"host": h})).collect::<Vec<_>>()});
        assert_eq!(hosts(&rules(&[])), "*");
        assert_eq!(hosts(&rules(&["a", ""])), "a");
        assert_eq!(
            hosts(&rules(&["a", "b", "c", "d", "e"])),
            "a,b,c + 2 more..."
        );
    }
}
