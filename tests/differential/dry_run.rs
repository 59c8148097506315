//! Server-side dry run (`dryRun=All`) on every write verb: the answer is what the write would have returned,
//! and nothing is stored and no watch event is sent.
//!
//! The scenarios on namespaced objects end with a watch from the resourceVersion of the last real write before
//! the dry runs, read up to the `DELETED` event of a real delete made after them: a dry run that stored anything
//! shows up there as an extra event. (That no resourceVersion is taken and no dependent collected, which this
//! comparison cannot see, is checked on the in-memory server alone in `tests/apiserver/gc.rs`.)

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::{BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS};
use crate::support::{
    APPLY, JSON_PATCH, MERGE, STRATEGIC, Transcript, configmap, configmaps, deployment,
    deployments, run, widget, widgets,
};

const DRY: &str = "dryRun=All";

/// The resourceVersion of an answer.
fn rv(v: &Value) -> String {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn writes(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let a = format!("{cms}/a");
    t.post("create sentinel", &cms, &configmap("sentinel", json!({})))
        .await;
    let created = t
        .post("create", &cms, &configmap("a", json!({"k": "v"})))
        .await;
    let since = rv(&created);

    t.post(
        "dry-run create",
        &format!("{cms}?{DRY}"),
        &configmap("b", json!({"k": "v"})),
    )
    .await;
    t.post(
        "dry-run create of an existing name",
        &format!("{cms}?{DRY}"),
        &configmap("a", json!({})),
    )
    .await;
    let mut changed = created.clone();
    changed["data"]["k"] = json!("put");
    t.put("dry-run update", &format!("{a}?{DRY}"), &changed)
        .await;
    let mut stale = changed.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    t.put(
        "dry-run update with a stale resourceVersion",
        &format!("{a}?{DRY}"),
        &stale,
    )
    .await;
    t.put("dry-run no-op update", &format!("{a}?{DRY}"), &created)
        .await;
    t.patch(
        "dry-run merge patch",
        &format!("{a}?{DRY}"),
        MERGE,
        &json!({"data": {"k": "merge"}, "metadata": {"labels": {"l": "1"}}}),
    )
    .await;
    t.patch(
        "dry-run JSON patch",
        &format!("{a}?{DRY}"),
        JSON_PATCH,
        &json!([{"op": "replace", "path": "/data/k", "value": "json"}]),
    )
    .await;
    t.patch(
        "dry-run strategic merge patch",
        &format!("{a}?{DRY}"),
        STRATEGIC,
        &json!({"data": {"k2": "strategic"}}),
    )
    .await;
    let mut applied = configmap("a", json!({"k": "applied"}));
    applied["metadata"]["annotations"] = json!({"note": "x"});
    t.patch(
        "dry-run apply to an existing object",
        &format!("{a}?{DRY}&fieldManager=applier"),
        APPLY,
        &applied,
    )
    .await;
    t.patch(
        "dry-run apply creating an object",
        &format!("{cms}/c?{DRY}&fieldManager=applier"),
        APPLY,
        &configmap("c", json!({"k": "v"})),
    )
    .await;
    t.patch(
        "dry-run apply conflicting with another manager",
        &format!("{a}?{DRY}&fieldManager=other"),
        APPLY,
        &configmap("a", json!({"k": "other"})),
    )
    .await;
    t.delete("dry-run delete", &format!("{a}?{DRY}")).await;
    t.delete(
        "dry-run delete of a missing object",
        &format!("{cms}/missing?{DRY}"),
    )
    .await;

    t.get("unchanged", &a).await;
    t.get("not created by a dry-run create", &format!("{cms}/b"))
        .await;
    t.get("not created by a dry-run apply", &format!("{cms}/c"))
        .await;
    t.delete("delete sentinel", &format!("{cms}/sentinel"))
        .await;
    t.watch(
        "no events from the dry runs",
        &format!("{cms}?watch=true&resourceVersion={since}"),
    )
    .await;
    t
}

#[tokio::test]
async fn dry_run_create_update_patch_apply_and_delete() {
    run("dry_run_create_update_patch_apply_and_delete", &[], writes).await;
}

async fn subresources(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let ws = widgets(&ns);
    let w = format!("{ws}/w");
    let ds = deployments(&ns);
    let d = format!("{ds}/d");
    t.post("create deployment", &ds, &deployment("d")).await;
    t.post("create sentinel", &ws, &widget("sentinel", 1, "red"))
        .await;
    let created = t.post("create widget", &ws, &widget("w", 1, "red")).await;
    let since = rv(&created);

    t.patch(
        "dry-run status merge patch",
        &format!("{w}/status?{DRY}"),
        MERGE,
        &json!({"status": {"phase": "Ready", "replicas": 1}}),
    )
    .await;
    let mut with_status = created.clone();
    with_status["status"] = json!({"phase": "Put"});
    t.put(
        "dry-run status update",
        &format!("{w}/status?{DRY}"),
        &with_status,
    )
    .await;
    t.patch(
        "dry-run status apply",
        &format!("{w}/status?{DRY}&fieldManager=status-applier"),
        APPLY,
        &json!({
            "apiVersion": "diff.example.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
            "status": {"phase": "Applied"}
        }),
    )
    .await;
    t.get("widget scale", &format!("{w}/scale")).await;
    t.patch(
        "dry-run scale patch of a widget",
        &format!("{w}/scale?{DRY}"),
        MERGE,
        &json!({"spec": {"replicas": 4}}),
    )
    .await;
    let mut scale = t.get("deployment scale", &format!("{d}/scale")).await;
    scale["spec"]["replicas"] = json!(3);
    t.put(
        "dry-run scale update of a deployment",
        &format!("{d}/scale?{DRY}"),
        &scale,
    )
    .await;
    t.patch(
        "dry-run scale patch of a deployment",
        &format!("{d}/scale?{DRY}"),
        STRATEGIC,
        &json!({"spec": {"replicas": 5}}),
    )
    .await;
    t.patch(
        "dry-run spec patch of a deployment",
        &format!("{d}?{DRY}"),
        STRATEGIC,
        &json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}),
    )
    .await;

    t.get("widget unchanged", &w).await;
    t.get("deployment unchanged", &d).await;
    t.delete("delete sentinel", &format!("{ws}/sentinel")).await;
    t.watch(
        "no events from the dry runs",
        &format!("{ws}?watch=true&resourceVersion={since}"),
    )
    .await;
    t
}

#[tokio::test]
async fn dry_run_status_and_scale_subresources() {
    run(
        "dry_run_status_and_scale_subresources",
        &[BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS],
        subresources,
    )
    .await;
}

async fn deletes(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let ws = widgets(&ns);
    let held = format!("{ws}/held");
    let mut holding = widget("held", 1, "red");
    holding["metadata"]["finalizers"] = json!(["diff.example.dev/hold"]);
    holding["metadata"]["labels"] = json!({"set": "x"});
    t.post("create held", &ws, &holding).await;
    let mut plain = widget("plain", 1, "red");
    plain["metadata"]["labels"] = json!({"set": "x"});
    t.post("create plain", &ws, &plain).await;
    let sentinel = t
        .post("create sentinel", &ws, &widget("sentinel", 1, "red"))
        .await;
    let since = rv(&sentinel);

    t.delete("dry-run delete with a finalizer", &format!("{held}?{DRY}"))
        .await;
    for policy in ["Foreground", "Orphan", "Background"] {
        t.send(
            &format!("dry-run delete with a finalizer, {policy}"),
            "DELETE",
            &held,
            "application/json",
            Some(&json!({"dryRun": ["All"], "propagationPolicy": policy})),
        )
        .await;
        t.send(
            &format!("dry-run delete without finalizers, {policy}"),
            "DELETE",
            &format!("{ws}/plain"),
            "application/json",
            Some(&json!({"dryRun": ["All"], "propagationPolicy": policy})),
        )
        .await;
    }
    t.send(
        "dry-run delete with a uid precondition of another object",
        "DELETE",
        &format!("{held}?{DRY}"),
        "application/json",
        Some(&json!({"preconditions": {"uid": sentinel["metadata"]["uid"]}})),
    )
    .await;
    t.delete(
        "dry-run deletecollection",
        &format!("{ws}?{DRY}&labelSelector=set%3Dx"),
    )
    .await;
    t.send(
        "dry-run deletecollection, Foreground",
        "DELETE",
        &format!("{ws}?labelSelector=set%3Dx"),
        "application/json",
        Some(&json!({"dryRun": ["All"], "propagationPolicy": "Foreground"})),
    )
    .await;
    t.get("all still there", &ws).await;

    // A real delete of the held widget, then dry runs on an object being deleted.
    t.delete("delete held", &held).await;
    t.delete("dry-run delete while deleting", &format!("{held}?{DRY}"))
        .await;
    let mut current = t.get("get held", &held).await;
    current["metadata"]["finalizers"] = json!([]);
    t.put(
        "dry-run update removing the last finalizer",
        &format!("{held}?{DRY}"),
        &current,
    )
    .await;
    t.get("held is still there", &held).await;
    t.delete("delete sentinel", &format!("{ws}/sentinel")).await;
    t.watch(
        "only the real writes",
        &format!("{ws}?watch=true&resourceVersion={since}"),
    )
    .await;
    t.patch(
        "release held",
        &held,
        MERGE,
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    t
}

async fn namespaces(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let created = t
        .post(
            "create a namespace",
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "dry-"}}),
        )
        .await;
    let ns = format!(
        "/api/v1/namespaces/{}",
        created["metadata"]["name"].as_str().unwrap_or_default()
    );
    t.delete("dry-run delete of a namespace", &format!("{ns}?{DRY}"))
        .await;
    t.get("the namespace is not terminating", &ns).await;
    t.delete("delete the namespace", &ns).await;
    t
}

#[tokio::test]
async fn dry_run_namespace_deletion() {
    run("dry_run_namespace_deletion", &[], namespaces).await;
}

#[tokio::test]
async fn dry_run_deletes() {
    run("dry_run_deletes", &[], deletes).await;
}
