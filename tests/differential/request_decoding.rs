//! Request bodies kube-apiserver's decoders refuse: a JSON `DeleteOptions` whose fields have the wrong type
//! (Go's `cannot unmarshal` texts), and a body of another kind than the resource addressed (a kind of the same
//! version, its list, a kind of no version).

use kube::Client;
use serde_json::json;

use crate::support::{Transcript, run};

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let configmaps = format!("/api/v1/namespaces/{ns}/configmaps");
    t.post(
        "create",
        &configmaps,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    )
    .await;
    for (label, body) in [
        (
            "a grace period as a string",
            json!({"gracePeriodSeconds": "x"}),
        ),
        (
            "a grace period as a fraction",
            json!({"gracePeriodSeconds": 1.5}),
        ),
        (
            "a uid precondition as a number",
            json!({"preconditions": {"uid": 5}}),
        ),
        ("preconditions as a list", json!({"preconditions": []})),
        (
            "orphanDependents as a string",
            json!({"orphanDependents": "yes"}),
        ),
        (
            "a propagation policy as a bool",
            json!({"propagationPolicy": true}),
        ),
        ("dryRun as a string", json!({"dryRun": "All"})),
        ("a dryRun item as a number", json!({"dryRun": [1]})),
    ] {
        t.send(
            label,
            "DELETE",
            &format!("{configmaps}/c"),
            "application/json",
            Some(&body),
        )
        .await;
    }
    t.get("still there", &format!("{configmaps}/c")).await;
    for (label, path, body) in [
        (
            "a Secret posted to configmaps",
            configmaps.clone(),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
        ),
        (
            "a kind of no version",
            configmaps.clone(),
            json!({"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "f"}}),
        ),
        (
            "a StatefulSet posted to deployments",
            format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"}}),
        ),
        (
            "a list posted to deployments",
            format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            json!({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {"name": "l"}}),
        ),
    ] {
        t.post(label, &path, &body).await;
    }
    t
}

#[tokio::test]
async fn malformed_delete_options_and_wrong_kinds_are_refused_alike() {
    run(
        "malformed_delete_options_and_wrong_kinds_are_refused_alike",
        &[],
        scenario,
    )
    .await;
}
