//! A CustomResourceDefinition's own `status` subresource on both servers, as the conformance spec
//! "getting/updating/patching custom resource definition status sub-resource works" uses it: read through
//! `/status`, a condition appended by an update of `/status`, the conditions replaced by a JSON patch of
//! `/status`; what was written stays (the servers' controllers only act on names not yet accepted), spec
//! and metadata sent to `/status` are ignored, and invalid accepted names are refused.

use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use crate::support::{JSON_PATCH, MERGE, Transcript, run};

const NAME: &str = "statusfixtures.crdstatus.example.dev";
const PATH: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "crdstatus.example.dev",
            "names": {"kind": "StatusFixture", "plural": "statusfixtures", "singular": "statusfixture",
                      "listKind": "StatusFixtureList"},
            "scope": "Cluster",
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object",
                              "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    })
}

/// The object without what the servers' own writers put there (managedFields, the times).
fn trimmed(mut crd: Value) -> Value {
    if let Some(m) = crd["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    crd
}

/// Waits (bounded) until the CRD is established, reading without recording.
async fn established(client: &Client) -> Value {
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
        client.clone(),
        &kube::discovery::ApiResource::erase::<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        >(&()),
    );
    for _ in 0..400 {
        if let Ok(o) = api.get(NAME).await {
            let v = serde_json::to_value(&o).expect("JSON");
            let conditions = v["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if conditions
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
            {
                return v;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{NAME} is not established");
}

async fn scenario(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let one = format!("{PATH}/{NAME}");
    let status = format!("{one}/status");
    let created = t.post("create", PATH, &crd()).await;
    if let Some(body) = t.last_answer_mut() {
        // The answer's status depends on how soon the real server's controllers ran.
        *body = json!({"created": created["metadata"]["name"]});
    }
    established(&client).await;

    let mut current = t.get("get status", &status).await;
    *t.last_answer_mut().expect("an answer") = trimmed(current.clone());
    current["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(json!({"message": "updated"}));
    current["spec"]["names"]["shortNames"] = json!(["ignored"]);
    current["metadata"]["labels"] = json!({"ignored": "yes"});
    let updated = t.put("update status", &status, &current).await;
    *t.last_answer_mut().expect("an answer") = trimmed(updated);

    let patched = t
        .patch(
            "json patch of status",
            &status,
            JSON_PATCH,
            &json!([{"op": "add", "path": "/status/conditions", "value": [{"message": "patched"}]}]),
        )
        .await;
    *t.last_answer_mut().expect("an answer") = trimmed(patched);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let read = t.get("read after the patch", &one).await;
    *t.last_answer_mut().expect("an answer") = trimmed(read);

    let merged = t
        .patch(
            "merge patch of status",
            &status,
            MERGE,
            &json!({"status": {"storedVersions": ["v1", "v0"], "conditions": [
                {"type": "Custom", "status": "True", "reason": "Mine", "message": "merged"}]}}),
        )
        .await;
    *t.last_answer_mut().expect("an answer") = trimmed(merged);

    t.patch(
        "invalid accepted names",
        &status,
        MERGE,
        &json!({"status": {"acceptedNames": {"plural": "Bad_Plural", "kind": "Same", "listKind": "Same",
                                             "shortNames": ["x y"]}}}),
    )
    .await;

    t.delete("delete", &one).await;
    *t.last_answer_mut().expect("an answer") = json!({"deleted": true});
    t
}

#[tokio::test]
async fn crd_status_subresource() {
    run("crd_status_subresource", &[], scenario).await;
}
