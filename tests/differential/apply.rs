//! Server-side apply: managedFields, conflicts between managers, force, no-op applies, the status
//! subresource, and a mix with updates.

use kube::Client;
use serde_json::{Value, json};

use crate::support::{APPLY, MERGE, Transcript, configmaps, run, widgets};

fn applied(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "diff.example.dev/v1",
        "kind": "Widget",
        "metadata": { "name": name, "labels": { "owner": "a" } },
        "spec": spec,
    })
}

async fn server_side_apply(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let w = format!("{}/w", widgets(&ns));
    let a = format!("{w}?fieldManager=a");
    t.patch(
        "apply creates",
        &a,
        APPLY,
        &applied("w", json!({"replicas": 1, "color": "red"})),
    )
    .await;
    t.patch(
        "the same apply again",
        &a,
        APPLY,
        &applied("w", json!({"replicas": 1, "color": "red"})),
    )
    .await;
    t.patch(
        "a conflicting apply",
        &format!("{w}?fieldManager=b"),
        APPLY,
        &applied("w", json!({"replicas": 2, "color": "blue"})),
    )
    .await;
    t.patch(
        "a forced apply",
        &format!("{w}?fieldManager=b&force=true"),
        APPLY,
        &json!({
            "apiVersion": "diff.example.dev/v1", "kind": "Widget",
            "metadata": { "name": "w" }, "spec": { "replicas": 2, "color": "red" }
        }),
    )
    .await;
    t.patch(
        "a shares color, drops replicas",
        &a,
        APPLY,
        &applied("w", json!({"color": "red"})),
    )
    .await;
    t.patch(
        "an update by another manager",
        &format!("{w}?fieldManager=editor"),
        MERGE,
        &json!({"spec": {"tags": ["x"]}}),
    )
    .await;
    t.patch(
        "apply to /status",
        &format!("{w}/status?fieldManager=s"),
        APPLY,
        &json!({
            "apiVersion": "diff.example.dev/v1", "kind": "Widget",
            "metadata": { "name": "w" }, "status": { "phase": "Ready" }
        }),
    )
    .await;
    t.patch(
        "apply without a field manager",
        &w,
        APPLY,
        &applied("w", json!({"color": "red"})),
    )
    .await;
    t.patch(
        "apply of another kind",
        &a,
        APPLY,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}}),
    )
    .await;
    t.patch(
        "apply of another kind in the same version",
        &a,
        APPLY,
        &json!({"apiVersion": "diff.example.dev/v1", "kind": "Gadget", "metadata": {"name": "w"}}),
    )
    .await;
    t.patch(
        "apply of another version",
        &a,
        APPLY,
        &json!({"apiVersion": "diff.example.dev/v2", "kind": "Widget", "metadata": {"name": "w"}}),
    )
    .await;
    t.patch(
        "apply without a kind",
        &a,
        APPLY,
        &json!({"apiVersion": "diff.example.dev/v1", "metadata": {"name": "w"}}),
    )
    .await;
    t.patch(
        "apply with a mismatched name",
        &a,
        APPLY,
        &applied("other", json!({"color": "red"})),
    )
    .await;
    t.get("get", &w).await;

    let cms = configmaps(&ns);
    let cm = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
    t.patch(
        "apply a config map",
        &format!("{cms}/c?fieldManager=a"),
        APPLY,
        &cm(json!({"x": "1", "y": "2"})),
    )
    .await;
    t.put(
        "an update takes a key",
        &format!("{cms}/c?fieldManager=editor"),
        &cm(json!({"x": "changed", "y": "2"})),
    )
    .await;
    t.patch(
        "the applier conflicts with the update",
        &format!("{cms}/c?fieldManager=a"),
        APPLY,
        &cm(json!({"x": "1", "y": "2"})),
    )
    .await;
    t.patch(
        "the applier drops a key it shares",
        &format!("{cms}/c?fieldManager=a"),
        APPLY,
        &cm(json!({"x": "changed"})),
    )
    .await;
    t.get("get the config map", &format!("{cms}/c")).await;
    // An apply cannot be made to only create: a uid in the applied object is a precondition that no
    // object satisfies when there is none (409), and an immutable field when there is another (422).
    let nobody = "00000000-0000-0000-0000-000000000000";
    let mut with_uid = cm(json!({"x": "1"}));
    with_uid["metadata"]["uid"] = json!(nobody);
    with_uid["metadata"]["name"] = json!("u");
    t.patch(
        "an apply naming a uid, of no object",
        &format!("{cms}/u?fieldManager=a"),
        APPLY,
        &with_uid,
    )
    .await;
    with_uid["metadata"]["name"] = json!("c");
    t.patch(
        "an apply naming another object's uid",
        &format!("{cms}/c?fieldManager=a"),
        APPLY,
        &with_uid,
    )
    .await;
    t
}

#[tokio::test]
async fn server_side_apply_tracks_managers() {
    run("server_side_apply_tracks_managers", &[], server_side_apply).await;
}
