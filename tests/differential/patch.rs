//! Merge, JSON and strategic merge patches on a Deployment's containers.

use kube::Client;
use serde_json::json;

use crate::deviations::{BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS};
use crate::support::{JSON_PATCH, MERGE, STRATEGIC, Transcript, deployment, deployments, run};

async fn patches(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let d = format!("{}/d", deployments(&ns));
    t.post("create", &deployments(&ns), &deployment("d")).await;
    t.patch(
        "strategic: add a container",
        &d,
        STRATEGIC,
        &json!({"spec": {"template": {"spec": {"containers": [
            {"name": "sidecar", "image": "busybox:1"}
        ]}}}}),
    )
    .await;
    t.patch(
        "strategic: merge a container's env by name",
        &d,
        STRATEGIC,
        &json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "env": [{"name": "B", "value": "2"}]}
        ]}}}}),
    )
    .await;
    t.patch(
        "strategic: delete a container",
        &d,
        STRATEGIC,
        &json!({"spec": {"template": {"spec": {"containers": [
            {"name": "sidecar", "$patch": "delete"}
        ]}}}}),
    )
    .await;
    t.patch(
        "json: add an env var",
        &d,
        JSON_PATCH,
        &json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "C", "value": "3"}}]),
    )
    .await;
    t.patch(
        "json: a failing test",
        &d,
        JSON_PATCH,
        &json!([{"op": "test", "path": "/spec/replicas", "value": 7}]),
    )
    .await;
    t.patch(
        "json: a missing path",
        &d,
        JSON_PATCH,
        &json!([{"op": "replace", "path": "/spec/nothing/here", "value": 1}]),
    )
    .await;
    t.patch(
        "merge: replace the containers",
        &d,
        MERGE,
        &json!({"spec": {"template": {"spec": {"containers": [
            {"name": "only", "image": "nginx:2"}
        ]}}}}),
    )
    .await;
    t.patch("merge: scale", &d, MERGE, &json!({"spec": {"replicas": 3}}))
        .await;
    t.patch("merge: not JSON", &d, MERGE, &json!("not an object"))
        .await;
    t.get("scale of a deployment", &format!("{d}/scale")).await;
    t.get("get", &d).await;
    t
}

#[tokio::test]
async fn patches_on_a_deployment() {
    run(
        "patches_on_a_deployment",
        &[BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS],
        patches,
    )
    .await;
}
