//! Discovery documents (`/version`, `/api`, `/apis`, resource lists); the OpenAPI documents are in
//! `openapi/`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::registry::{Registry, ResourceType};

pub mod aggregated;

/// The Kubernetes version the server reports.
pub const KUBERNETES_MINOR: &str = "35";

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": KUBERNETES_MINOR,
        "emulationMajor": "1",
        "emulationMinor": KUBERNETES_MINOR,
        "gitVersion": format!("v1.{KUBERNETES_MINOR}.0"),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.25.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`.
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443" }],
    })
}

/// The built-in groups in the order kube-apiserver lists them in `/apis` (by its group priorities); other
/// groups (custom resources) follow, by name.
const GROUP_ORDER: [&str; 20] = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

fn group_rank(name: &str) -> (usize, &str) {
    let rank = GROUP_ORDER
        .iter()
        .position(|g| *g == name)
        .unwrap_or(GROUP_ORDER.len());
    (rank, name)
}

/// Each group's versions (the preferred one first) and its preferred version, in
/// kube-apiserver's order of groups.
/// A group's served versions and its preferred version.
type GroupVersions = (Vec<String>, Option<String>);

fn groups_map(reg: &Registry) -> Vec<(String, GroupVersions)> {
    let mut groups: BTreeMap<String, GroupVersions> = BTreeMap::new();
    for t in reg.all().filter(|t| !t.group.is_empty()) {
        let entry = groups.entry(t.group.clone()).or_default();
        if !entry.0.contains(&t.version) {
            entry.0.push(t.version.clone());
        }
        if t.preferred {
            entry.1 = Some(t.version.clone());
        }
    }
    let mut groups: Vec<(String, GroupVersions)> = groups.into_iter().collect();
    for (group, (versions, preferred)) in &mut groups {
        versions.sort_by_key(|v| Some(v) != preferred.as_ref());
        if reg.all().any(|t| &t.group == group && t.custom) {
            // apiextensions-apiserver lists a CRD group's versions in kube-aware order.
            versions.sort_by_key(|v| crate::crd::versions::kube_aware_key(v));
        }
    }
    groups.sort_by(|(a, _), (b, _)| group_rank(a).cmp(&group_rank(b)));
    groups
}

fn group_doc(name: &str, versions: &[String], preferred: Option<&String>) -> Value {
    let gv = |v: &String| json!({ "groupVersion": format!("{name}/{v}"), "version": v });
    let preferred = preferred.or(versions.first());
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": preferred.map(gv).unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub fn groups(reg: &Registry) -> Value {
    let groups: Vec<Value> = groups_map(reg)
        .iter()
        .map(|(name, (versions, preferred))| group_doc(name, versions, preferred.as_ref()))
        .collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `/apis/{group}`, if served.
pub fn group(reg: &Registry, name: &str) -> Option<Value> {
    let map = groups_map(reg);
    let (_, (versions, preferred)) = map.iter().find(|(g, _)| g == name)?;
    let mut doc = group_doc(name, versions, preferred.as_ref());
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// The verbs of a stored kind in discovery (`deletecollection` left out where it is not served).
const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a custom resource, in the order kube-apiserver lists them.
const CUSTOM_VERBS: [&str; 8] = [
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

fn resource_entries(t: &ResourceType) -> Vec<Value> {
    let mut main = json!({
        "name": t.plural,
        "singularName": t.singular,
        "namespaced": t.namespaced,
        "kind": t.kind,
        "verbs": if t.review { vec!["create"] } else if t.custom { CUSTOM_VERBS.to_vec() } else {
            VERBS
                .iter()
                .copied()
                .filter(|v| t.delete_collection || *v != "deletecollection")
                .collect::<Vec<_>>()
        },
    });
    if !t.short_names.is_empty() {
        main["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        main["categories"] = json!(t.categories);
    }
    if !t.review {
        // Review kinds are not stored.
        main["storageVersionHash"] = json!(storage_version_hash(t));
    }
    let mut out = vec![main];
    if t.scale.is_some() {
        out.push(json!({
            "name": format!("{}/scale", t.plural), "singularName": "", "namespaced": t.namespaced,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"],
        }));
    }
    if t.is_namespace() {
        out.push(json!({
            "name": "namespaces/finalize", "singularName": "", "namespaced": false,
            "kind": t.kind, "verbs": ["update"],
        }));
    }
    if t.status_subresource {
        let status = json!({
            "name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced,
            "kind": t.kind, "verbs": ["get", "patch", "update"],
        });
        // apiextensions-apiserver lists a custom resource's status before its scale.
        let at = if t.custom { 1 } else { out.len() };
        out.insert(at, status);
    }
    out
}

/// `/api/v1` or `/apis/{group}/{version}`, if served.
pub fn resources(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    if !reg.has_group_version(group, version) {
        return None;
    }
    let resources: Vec<Value> = reg
        .all()
        .filter(|t| t.group == group && t.version == version)
        .flat_map(|t| resource_entries(t))
        .collect();
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": super::registry::api_version(group, version),
        "resources": resources,
    }))
}

/// The built-in resources kube-apiserver v1.35 stores in a version the in-memory server does not serve
/// (group, plural, storage version), which their hash names.
const STORED_IN_UNSERVED_VERSIONS: [(&str, &str, &str); 2] = [
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "v1beta1",
    ),
    ("storage.k8s.io", "volumeattributesclasses", "v1beta1"),
];

/// apiserver's `discovery.StorageVersionHash`: the first 8 bytes of the SHA-256 of `group/version/kind` of the
/// version objects are stored in, base64-encoded (so that clients notice when storage changes).
fn storage_version_hash(t: &ResourceType) -> String {
    use base64::Engine as _;
    let version = STORED_IN_UNSERVED_VERSIONS
        .iter()
        .find(|(group, plural, _)| t.storage.0 == *group && t.storage.1 == *plural && !t.custom)
        .map_or(t.storage_version.as_str(), |(_, _, version)| version);
    let gvk = format!("{}/{}/{}", t.storage.0, version, t.kind);
    let digest = ring::digest::digest(&ring::digest::SHA256, gvk.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hashes_are_kube_apiservers() {
        // As kube-apiserver v1.35 lists namespaces in `/api/v1`.
        let namespaces = ResourceType::new("", "v1", "Namespace", "namespaces", false);
        assert_eq!(storage_version_hash(&namespaces), "Q3oi5N2YM8M=");
    }
}
