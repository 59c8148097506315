//! Aggregated discovery (`apidiscovery.k8s.io/v2`), which client-go's discovery client asks for first: the
//! media type answered, and every group, version and resource of `/api` and `/apis` with its response kind,
//! scope, verbs, names and subresources, built-in and custom, compared between both servers.

use std::collections::{BTreeMap, BTreeSet};

use http_body_util::BodyExt;
use kube::Client;
use serde_json::{Value, json};

use crate::kinds::NOT_SERVED;
use crate::support::both;

/// The `Accept` header of client-go's discovery client.
const ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                      application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                      application/json";

/// The content type and body of `GET path`.
async fn get(client: &Client, path: &str) -> (String, Value) {
    let request = http::Request::builder()
        .uri(path)
        .header("accept", ACCEPT)
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let response = client.send(request).await.expect("an answer");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (
        content_type,
        serde_json::from_slice(&bytes).expect("a JSON body"),
    )
}

/// Both documents as a map: `path` → content type and kind; `path order` → the groups and their versions in
/// order; `group/version resource` → the resource's entry. Custom resources of the suite's own groups
/// (`*.example.dev`) other than the three CRDs every scenario installs are left out: other scenarios sharing
/// the control plane add and remove theirs.
async fn aggregated(client: Client) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let shared = ["widgets", "gadgets", "things"];
    for path in ["/api", "/apis"] {
        let (content_type, doc) = get(&client, path).await;
        out.insert(
            path.to_string(),
            json!({ "contentType": content_type, "kind": doc["kind"], "apiVersion": doc["apiVersion"], "metadata": doc["metadata"] }),
        );
        let mut order = Vec::new();
        for group in doc["items"].as_array().into_iter().flatten() {
            let name = group["metadata"]["name"].as_str().unwrap_or_default();
            let versions: Vec<Value> = group["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| json!([v["version"], v["freshness"]]))
                .collect();
            if !name.ends_with(".example.dev") {
                order.push(json!({ "metadata": group["metadata"], "versions": versions }));
            }
            for version in group["versions"].as_array().into_iter().flatten() {
                let v = version["version"].as_str().unwrap_or_default();
                let gv = if name.is_empty() {
                    v.to_string()
                } else {
                    format!("{name}/{v}")
                };
                for r in version["resources"].as_array().into_iter().flatten() {
                    let resource = r["resource"].as_str().unwrap_or_default();
                    if name.ends_with(".example.dev") && !shared.contains(&resource) {
                        continue;
                    }
                    out.insert(format!("{gv} {resource}"), r.clone());
                }
            }
        }
        out.insert(format!("{path} order"), Value::Array(order));
    }
    out
}

#[tokio::test]
async fn aggregated_discovery_matches_kube_apiserver() {
    let Some([(memory, _), (real, _)]) = both("aggregated_discovery_matches_kube_apiserver").await
    else {
        return;
    };
    let memory = aggregated(memory).await;
    let mut real = aggregated(real).await;
    // The groups and resources the in-memory server does not serve (pinned in `kinds.rs`).
    let served = |key: &str| !NOT_SERVED.contains(&key);
    real.retain(|key, _| served(key));
    for (key, entry) in real.iter_mut() {
        if let Some(Value::Array(subresources)) = entry.get_mut("subresources") {
            subresources.retain(|s| {
                served(&format!(
                    "{key}/{}",
                    s["subresource"].as_str().unwrap_or_default()
                ))
            });
        }
        if entry["subresources"] == json!([]) {
            entry.as_object_mut().map(|e| e.remove("subresources"));
        }
    }
    if let Some(Value::Array(order)) = real.get_mut("/apis order") {
        order.retain(|g| {
            let group = g["metadata"]["name"].as_str().unwrap_or_default();
            served(&format!("{group}/v1"))
        });
    }
    let keys = |m: &BTreeMap<String, Value>| m.keys().cloned().collect::<BTreeSet<_>>();
    assert_eq!(keys(&memory), keys(&real), "different resources");
    let differences: Vec<String> = memory
        .iter()
        .filter(|(key, m)| real[*key] != **m)
        .map(|(key, m)| format!("{key}\n  in-memory: {m}\n  real:      {}", real[key]))
        .collect();
    assert!(
        differences.is_empty(),
        "aggregated discovery differs:\n{}",
        differences.join("\n")
    );
    assert_eq!(
        memory["/apis"]["contentType"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
}
