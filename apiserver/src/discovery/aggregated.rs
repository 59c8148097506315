//! Aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`): every group, version and
//! resource of `/api` or `/apis` in one document, served when the `Accept` header asks for it (as client-go's
//! discovery client does first).

use serde_json::{Value, json};

use super::{CUSTOM_VERBS, VERBS, groups_map};
use crate::registry::{Registry, ResourceType};

/// The media type of an aggregated discovery document, as kube-apiserver names it in `Content-Type`.
pub const CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether `accept` asks for the aggregated document before any plain JSON: kube-apiserver serves the first
/// media range of the header it can produce.
pub fn wanted(accept: &str) -> bool {
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let base = parts.next().unwrap_or("");
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let aggregated = param("g") == Some("apidiscovery.k8s.io")
            && param("v") == Some("v2")
            && param("as") == Some("APIGroupDiscoveryList");
        match base {
            "application/json" if aggregated => return true,
            "application/json" | "*/*" | "application/*" if param("as").is_none() => return false,
            _ => {}
        }
    }
    false
}

/// The aggregated document of the core group (`/api`, when `legacy`) or of every other group (`/apis`), in
/// the order `/apis` lists groups and with each group's preferred version first.
pub fn document(reg: &Registry, legacy: bool) -> Value {
    let items: Vec<Value> = if legacy {
        vec![json!({
            "metadata": {},
            "versions": [version(reg, "", "v1")],
        })]
    } else {
        groups_map(reg)
            .iter()
            .map(|(name, (versions, _))| {
                json!({
                    "metadata": { "name": name },
                    "versions": versions.iter().map(|v| version(reg, name, v)).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

fn version(reg: &Registry, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = reg
        .all()
        .filter(|t| t.group == group && t.version == version)
        .map(|t| resource(t))
        .collect();
    json!({ "version": version, "resources": resources, "freshness": "Current" })
}

/// One resource: built-in kinds name their response kind without group and version, custom resources with
/// them (as apiextensions-apiserver's discovery controller does).
fn resource(t: &ResourceType) -> Value {
    let kind = |kind: &str| {
        if t.custom {
            json!({ "group": t.group, "version": t.version, "kind": kind })
        } else {
            json!({ "group": "", "version": "", "kind": kind })
        }
    };
    let verbs: Vec<&str> = if t.review {
        vec!["create"]
    } else if t.custom {
        CUSTOM_VERBS.to_vec()
    } else {
        VERBS
            .iter()
            .copied()
            .filter(|v| t.delete_collection || *v != "deletecollection")
            .collect()
    };
    let mut out = json!({
        "resource": t.plural,
        "responseKind": kind(&t.kind),
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.singular,
        "verbs": verbs,
    });
    if !t.short_names.is_empty() {
        out["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        out["categories"] = json!(t.categories);
    }
    let scale = json!({
        "subresource": "scale",
        "responseKind": { "group": "autoscaling", "version": "v1", "kind": "Scale" },
        "verbs": ["get", "patch", "update"],
    });
    let status = json!({
        "subresource": "status", "responseKind": kind(&t.kind), "verbs": ["get", "patch", "update"],
    });
    let mut subresources = Vec::new();
    if t.custom {
        // apiextensions-apiserver lists status before scale.
        if t.status_subresource {
            subresources.push(status);
        }
        if t.scale.is_some() {
            subresources.push(scale);
        }
    } else {
        if t.is_namespace() {
            subresources.push(json!({
                "subresource": "finalize", "responseKind": kind(&t.kind), "verbs": ["update"],
            }));
        }
        if t.scale.is_some() {
            subresources.push(scale);
        }
        if t.status_subresource {
            subresources.push(status);
        }
    }
    if !subresources.is_empty() {
        out["subresources"] = json!(subresources);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregated_document_is_wanted_only_before_plain_json() {
        assert!(wanted(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(wanted(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        ));
        assert!(!wanted("application/json"));
        assert!(!wanted(
            "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        ));
        assert!(!wanted(""));
    }
}
