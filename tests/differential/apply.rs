//! Server-side apply: managedFields, conflicts between managers, force, no-op applies, the status
//! subresource, and a mix with updates.

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::{BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS};
use crate::support::{APPLY, MERGE, Transcript, configmaps, deployments, run, widgets};

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

/// `managedFields` with manager `m`'s `Update` entry merged into its `Apply` entry, as the runtime moves the
/// fields of a child it created with a `POST` (`operator/src/reconcilers/created.rs`).
fn moved_into_apply(object: &Value) -> Value {
    fn union(set: &mut Value, other: &Value) {
        if let (Value::Object(set), Value::Object(other)) = (set, other) {
            for (k, v) in other {
                match set.get_mut(k) {
                    Some(existing) => union(existing, v),
                    None => {
                        set.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    let entries = object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let is = |e: &Value, op: &str| {
        e["manager"] == "m" && e["operation"] == op && e.get("subresource").is_none()
    };
    let created = entries
        .iter()
        .find(|e| is(e, "Update"))
        .map(|e| e["fieldsV1"].clone());
    let mut out: Vec<Value> = entries
        .iter()
        .filter(|e| !is(e, "Update"))
        .cloned()
        .collect();
    if let (Some(created), Some(apply)) = (created, out.iter_mut().find(|e| is(e, "Apply"))) {
        union(&mut apply["fieldsV1"], &created);
    }
    json!(out)
}

/// Creates `object` with a `POST` by manager `m`, applies `changed` (which drops fields), moves the `POST`'s
/// fields into the apply's entry (once with a stale `resourceVersion`, which is refused), and applies again.
async fn created_then_applied(
    t: &mut Transcript,
    what: &str,
    collection: &str,
    object: &Value,
    changed: &Value,
) -> Value {
    let name = object["metadata"]["name"]
        .as_str()
        .expect("a name")
        .to_owned();
    let one = format!("{collection}/{name}");
    let created = t
        .post(
            &format!("{what}: POST by m"),
            &format!("{collection}?fieldManager=m"),
            object,
        )
        .await;
    let applied = t
        .patch(
            &format!("{what}: a forced apply by m that drops fields keeps them"),
            &format!("{one}?fieldManager=m&force=true"),
            APPLY,
            changed,
        )
        .await;
    // Once with the version the POST answered (stale since the apply: a 409), then with the apply's.
    for (step, version) in [
        ("moving the fields with a stale resourceVersion", &created),
        ("the POST's fields moved into the Apply entry", &applied),
    ] {
        let patch = json!({"metadata": {
            "resourceVersion": version["metadata"]["resourceVersion"],
            "managedFields": moved_into_apply(&applied),
        }});
        t.patch(
            &format!("{what}: {step}"),
            &format!("{one}?fieldManager=m"),
            MERGE,
            &patch,
        )
        .await;
    }
    let pruned = t
        .patch(
            &format!("{what}: the same apply again prunes what it dropped"),
            &format!("{one}?fieldManager=m&force=true"),
            APPLY,
            changed,
        )
        .await;
    let managers: Vec<_> = pruned["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| (e["manager"].clone(), e["operation"].clone()))
        .collect();
    assert_eq!(managers, [(json!("m"), json!("Apply"))], "{what}: {pruned}");
    pruned
}

async fn created_fields_move_into_the_apply_entry(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "created", "labels": {"app": "web", "drop": "me"}},
        "data": {"a": "1", "b": "2"},
    });
    let cm_changed = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "created", "labels": {"app": "web"}},
        "data": {"a": "3"},
    });
    let pruned =
        created_then_applied(&mut t, "configmap", &configmaps(&ns), &cm, &cm_changed).await;
    assert_eq!(pruned["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(pruned["data"], json!({"a": "3"}));
    let deployment = |image: &str, annotations: Value| {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "created", "annotations": annotations},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": 80}]}]},
                },
            },
        })
    };
    let pruned = created_then_applied(
        &mut t,
        "deployment",
        &deployments(&ns),
        &deployment("nginx:1.27", json!({"a": "1", "b": "2"})),
        &deployment("nginx:1.28", json!({"a": "1"})),
    )
    .await;
    assert_eq!(pruned["metadata"]["annotations"], json!({"a": "1"}));
    // What the server defaulted at the creation is defaulted again.
    assert_eq!(pruned["spec"]["progressDeadlineSeconds"], json!(600));
    t
}

#[tokio::test]
async fn created_fields_move_into_the_apply_entry_and_the_next_apply_prunes() {
    // The Deployment's field sets differ in shape only (deviations.rs); what is owned, pruned and kept matches.
    run(
        "created_fields_move_into_the_apply_entry_and_the_next_apply_prunes",
        &[BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS],
        created_fields_move_into_the_apply_entry,
    )
    .await;
}
