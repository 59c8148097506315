//! CRD schema defaults applied to objects read from storage, as the conformance spec "custom resource
//! defaulting for requests and from storage works" checks them: an object stored before a default was
//! added to the CRD gets it in a get, a list and a streamed list (watch), an object stored with a default
//! keeps it when the default is removed, and a field the schema no longer declares is pruned on read.

use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use crate::support::{JSON_PATCH, Transcript, run};

const NAME: &str = "defaultfixtures.crddefaults.example.dev";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const OBJECTS: &str = "/apis/crddefaults.example.dev/v1/defaultfixtures";

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "crddefaults.example.dev",
            "names": {"kind": "DefaultFixture", "plural": "defaultfixtures", "singular": "defaultfixture"},
            "scope": "Cluster",
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                              "a": {"type": "string"},
                              "b": {"type": "string"},
                              "c": {"type": "string"},
                              "spec": {"type": "object", "properties": {
                                  "n": {"type": "integer"}
                              }}
                          }}}}]
        }
    })
}

fn object(name: &str) -> Value {
    json!({"apiVersion": "crddefaults.example.dev/v1", "kind": "DefaultFixture",
           "metadata": {"name": name}, "c": "kept until the schema drops it", "spec": {}})
}

/// Reads `path` (unrecorded) until `ready` holds of the answer, bounded: the real server serves a changed
/// CRD once its handler is rebuilt.
async fn until(client: &Client, path: &str, ready: impl Fn(&Value) -> bool) {
    let mut t = Transcript::new(client.clone());
    for _ in 0..200 {
        if ready(&t.get("poll", path).await) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} never became ready");
}

/// Drops what differs between the two servers' own writes: managedFields.
fn trim(t: &mut Transcript) {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("managedFields");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    if let Some(body) = t.last_answer_mut() {
        strip(body);
    }
}

async fn scenario(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let crd_path = format!("{CRDS}/{NAME}");
    t.post("create the CRD", CRDS, &crd()).await;
    *t.last_answer_mut().expect("an answer") = json!("created");
    until(&client, OBJECTS, |v| v["kind"] == "DefaultFixtureList").await;

    t.post("create without defaults", OBJECTS, &object("first"))
        .await;
    trim(&mut t);

    t.patch(
        "default a, spec.n and spec.m; drop c",
        &crd_path,
        JSON_PATCH,
        &json!([
            {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/a/default", "value": "A"},
            {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/n/default", "value": 7},
            {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/m",
             "value": {"type": "object", "default": {}, "properties": {"x": {"type": "string", "default": "X"}}}},
            {"op": "remove", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/c"}
        ]),
    )
    .await;
    *t.last_answer_mut().expect("an answer") = json!("patched");
    let first = format!("{OBJECTS}/first");
    until(&client, &first, |v| v["a"] == "A").await;

    t.get("get the object stored before", &first).await;
    trim(&mut t);
    t.get("list", OBJECTS).await;
    trim(&mut t);
    t.streamed_list(
        "streamed list",
        &format!("{OBJECTS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"),
    )
    .await;
    trim(&mut t);

    t.post("create with defaults", OBJECTS, &object("second"))
        .await;
    trim(&mut t);

    t.patch(
        "drop the default of a, default b",
        &crd_path,
        JSON_PATCH,
        &json!([
            {"op": "remove", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/a/default"},
            {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/b/default", "value": "B"}
        ]),
    )
    .await;
    *t.last_answer_mut().expect("an answer") = json!("patched");
    let second = format!("{OBJECTS}/second");
    until(&client, &second, |v| v["b"] == "B").await;
    t.get("get the object stored with a", &second).await;
    trim(&mut t);
    t.get("get the object stored without a", &first).await;
    trim(&mut t);

    t.delete("delete the CRD", &crd_path).await;
    *t.last_answer_mut().expect("an answer") = json!("deleted");
    t
}

#[tokio::test]
async fn crd_defaults_from_storage() {
    run("crd_defaults_from_storage", &[], scenario).await;
}
