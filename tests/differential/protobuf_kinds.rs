//! Every built-in kind the in-memory server serves, created from a protobuf body (its minimal object encoded
//! with the server crate's own encoder, `encode_protobuf`) and from JSON, side by side: on both servers the
//! two creates answer alike and store the same object (name, uid, times and managers aside), and
//! kube-apiserver answers as the in-memory server does. A check without a control plane keeps the list of
//! minimal objects complete: every kind the in-memory server's discovery lists with `create` has one.

use kube::discovery::Discovery;
use kubewright::testing::apiserver::{ApiServer, encode_protobuf};
use serde_json::{Value, json};
use tests::builtin_objects::{Minimal, all, first_kinds};

use crate::protobuf::{PB, comparable, drop_zeros, exchange, json_body};
use crate::support::{Transcript, run};

/// The tokens that tell the protobuf twin from the JSON one (valid in names, CRD groups and IPv6 addresses).
const TWINS: [&str; 2] = ["cafe", "beef"];

/// The kinds served but not created here: an APIService registers an API group on the control plane, which
/// every other scenario's discovery would see.
const NOT_CREATED: [(&str, &str); 7] = [
    ("apiregistration.k8s.io/v1", "APIService"),
    // The review kinds are answered, never stored: `auth_reviews` compares them.
    ("authentication.k8s.io/v1", "SelfSubjectReview"),
    ("authentication.k8s.io/v1", "TokenReview"),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"),
    ("authorization.k8s.io/v1", "SubjectAccessReview"),
];

fn minimal_objects() -> Vec<Minimal> {
    let mut out = all();
    out.extend(first_kinds());
    out
}

/// The object of `minimal` for namespace `ns` and twin `twin`: `{ns}` and `{twin}` filled in, and a name
/// without the twin's token given one (and the namespace's too, for a cluster-scoped kind).
fn instantiate(minimal: &Minimal, ns: &str, twin: &str) -> Value {
    let text = serde_json::to_string(&minimal.object).expect("JSON");
    let marked = text.contains("{twin}");
    let text = text.replace("{ns}", ns).replace("{twin}", twin);
    let mut object: Value = serde_json::from_str(&text).expect("JSON");
    if !marked {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        object["metadata"]["name"] = if minimal.collection.contains("{ns}") {
            json!(format!("{name}-{twin}"))
        } else {
            json!(format!("{name}-{ns}-{twin}"))
        };
    }
    object
}

/// A created object as comparable between the twins: [`comparable`], the twin's token and uid made the same, a
/// Service's allocated cluster IPs left out, and zero values too (`drop_zeros`: the protobuf twin carries the
/// zero-valued structs Go writes, such as `metadata: {}` of a pod template, which the in-memory server keeps
/// as sent, while a JSON create has what the client sent).
fn twin_free(object: &Value, twin: &str) -> Value {
    // A Job's generated selector and labels name its uid.
    let uid = object["metadata"]["uid"]
        .as_str()
        .unwrap_or("no uid")
        .to_string();
    let text = serde_json::to_string(&comparable(object)).expect("JSON");
    let text = text.replace(twin, "TWIN").replace(&uid, "UID");
    let mut object: Value = serde_json::from_str(&text).expect("JSON");
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
        && object_kind_is_service(spec)
    {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
    drop_zeros(&mut object);
    object
}

fn object_kind_is_service(spec: &serde_json::Map<String, Value>) -> bool {
    spec.contains_key("clusterIP") && spec.contains_key("ports")
}

#[tokio::test]
async fn every_built_in_kind_is_created_from_protobuf() {
    run("protobuf_creates", &[], |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        for minimal in minimal_objects() {
            let collection = minimal.collection_in(&ns);
            let [pb_twin, json_twin] = TWINS;
            let from_pb = instantiate(&minimal, &ns, pb_twin);
            let from_json = instantiate(&minimal, &ns, json_twin);
            let kind = format!(
                "{} {}",
                from_pb["apiVersion"].as_str().unwrap_or_default(),
                from_pb["kind"].as_str().unwrap_or_default()
            );
            let body = Some((PB, encode_protobuf(&from_pb).expect("a built-in kind encodes")));
            let pb = exchange(&c, "POST", &collection, "application/json", body).await;
            let js = exchange(&c, "POST", &collection, "application/json", json_body(&from_json)).await;
            let (a, b) = (twin_free(&pb["body"], pb_twin), twin_free(&js["body"], json_twin));
            t.note(
                &kind,
                json!({
                    "status": pb["status"],
                    "as from JSON": if a == b { json!(true) } else { json!({ "protobuf": a, "json": b }) },
                }),
            );
            for created in [&from_pb, &from_json] {
                let name = created["metadata"]["name"].as_str().unwrap_or_default();
                let item = format!("{collection}/{name}?propagationPolicy=Background");
                exchange(&c, "DELETE", &item, "application/json", None).await;
            }
        }
        t
    })
    .await;
}

#[tokio::test]
async fn every_kind_served_has_a_minimal_object() {
    let server = ApiServer::builder().controllers(false).build();
    let discovery = Discovery::new(server.client())
        .run()
        .await
        .expect("discovery");
    let known: Vec<(String, String)> = minimal_objects()
        .iter()
        .map(|m| {
            let text = |k: &str| m.object[k].as_str().unwrap_or_default().to_string();
            (text("apiVersion"), text("kind"))
        })
        .collect();
    let mut missing = Vec::new();
    for group in discovery.groups() {
        for version in group.versions() {
            for (resource, capabilities) in group.versioned_resources(version) {
                let creatable = capabilities.operations.iter().any(|v| v == "create");
                let kind = (resource.api_version.clone(), resource.kind.clone());
                let skipped = NOT_CREATED
                    .iter()
                    .any(|(v, k)| kind.0 == *v && kind.1 == *k);
                if creatable && !skipped && !known.contains(&kind) {
                    missing.push(kind);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "served kinds without a minimal object: {missing:?}"
    );
}
