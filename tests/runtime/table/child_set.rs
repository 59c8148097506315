//! A child set: children matched by id, created, updated and deleted.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use operator::testing::table::EventExpectation;
use operator::{ChildSetReconciler, Context, Reconciler};
use serde_json::{Value, json};

use super::*;

fn desired_items(note: &Note, _cx: &mut Context) -> operator::Result<Vec<ConfigMap>> {
    Ok(note
        .spec
        .items
        .iter()
        .map(|item| {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(format!("{}-{item}", note.name_any()));
            cm.metadata.labels = Some([("item".to_string(), item.clone())].into());
            cm.data = Some([("text".to_string(), note.spec.text.clone())].into());
            cm
        })
        .collect())
}

fn item_of(cm: &ConfigMap) -> String {
    cm.labels().get("item").cloned().unwrap_or_default()
}

fn item(id: &str, text: &str) -> Value {
    let mut c = child(&format!("hello-{id}"), text);
    c["metadata"]["labels"] = json!({"item": id});
    stamped(c)
}

#[tokio::test]
async fn children_are_created_updated_and_deleted_by_id() {
    let mut parent = note_with(
        "hi",
        json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapsReady", "True", "Reconciled", ""),
                condition("Ready", "True", "Ready", ""),
            ],
        }),
    );
    parent["spec"]["items"] = json!(["a", "b", "c"]);
    let reconciler =
        Reconciler::new("notes").step(ChildSetReconciler::new("items", desired_items, item_of));
    case("child set")
        .given(parent)
        .given(item("a", "hi"))
        .given(item("b", "old"))
        .given(item("z", "hi"))
        .expect_apply(json!({
            "metadata": {"name": "hello-b", "labels": {"item": "b"}, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_apply(json!({
            "metadata": {"name": "hello-c", "labels": {"item": "c"}, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_delete::<ConfigMap>(Some(NS), "hello-z")
        .expect_event(EventExpectation::normal("Updated").note("ConfigMap hello-b"))
        .expect_event(EventExpectation::normal("Created").note("ConfigMap hello-c"))
        .expect_event(EventExpectation::normal("Deleted").note("ConfigMap hello-z"))
        .expect_no_reads()
        .run(reconciler)
        .await
        .unwrap();
}
