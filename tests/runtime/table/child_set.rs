//! A child set: children matched by id, created, updated and deleted.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kubewright::testing::table::EventExpectation;
use kubewright::{ChildSetReconciler, Context, Reconciler};
use serde_json::{Value, json};

use super::*;

fn desired_items(note: &Note, _cx: &mut Context) -> kubewright::Result<Vec<ConfigMap>> {
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
        .expect_create(json!({
            "metadata": {"name": "hello-c", "labels": {"item": "c"}, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_delete::<ConfigMap>(Some(NS), "hello-z")
        .expect_event(EventExpectation::normal("Updated").note("ConfigMap default/hello-b"))
        .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello-c"))
        .expect_event(EventExpectation::normal("Deleted").note("ConfigMap default/hello-z"))
        // `hello-c` is not in the cache, and not being cached is not being absent (the cache may not have the
        // event of someone else's object of that name yet): it is created with a POST, which creates only, so
        // nothing is read first.
        .expect_no_reads()
        .run(reconciler)
        .await
        .unwrap();
}

/// A set over items `a` and `b`, whose status says both are in place.
fn converged_set() -> Value {
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
    parent["spec"]["items"] = json!(["a", "b"]);
    parent
}

fn set_reconciler() -> Reconciler<Note> {
    Reconciler::new("notes").step(ChildSetReconciler::new("items", desired_items, item_of))
}

/// A child whose id label was edited by hand.
fn relabelled(id: &str, label: &str) -> Value {
    let mut c = item(id, "hi");
    c["metadata"]["labels"] = json!({ "item": label });
    c
}

fn terminating(mut child: Value) -> Value {
    child["metadata"]["deletionTimestamp"] = json!(T0);
    child["metadata"]["finalizers"] = json!(["example.dev/hold"]);
    child
}

#[tokio::test]
async fn a_child_whose_id_label_was_edited_is_put_back_not_deleted() {
    // The live child `hello-a` now claims the id `zzz`: it is still the desired child `a` by its name.
    case("edited id")
        .given(converged_set())
        .given(relabelled("a", "zzz"))
        .given(item("b", "hi"))
        .expect_apply(json!({
            "metadata": {"name": "hello-a", "labels": {"item": "a"}, "ownerReferences": [owner()]},
        }))
        .expect_event(EventExpectation::normal("Updated").note("ConfigMap default/hello-a"))
        .run(set_reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_child_whose_id_label_names_another_desired_child_is_not_deleted() {
    // `hello-a` claims the id `b`, which `hello-b` rightly has: neither is extra.
    case("edited id naming a sibling")
        .given(converged_set())
        .given(relabelled("a", "b"))
        .given(item("b", "hi"))
        .expect_apply(json!({
            "metadata": {"name": "hello-a", "labels": {"item": "a"}},
        }))
        .expect_event(EventExpectation::normal("Updated").note("ConfigMap default/hello-a"))
        .run(set_reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_extra_whose_id_label_names_a_desired_child_is_deleted_and_the_desired_one_kept() {
    // `hello-z` is not desired; its label says `a`. It goes, `hello-a` stays, and the outcome for `a` is
    // the desired child's, not the extra's deletion.
    let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = reports.clone();
    let reconciler = Reconciler::new("notes").step(
        ChildSetReconciler::new("items", desired_items, item_of).reflect(
            move |_: &mut Note, outcomes: &std::collections::BTreeMap<String, _>| {
                let summary: Vec<(String, bool)> = outcomes
                    .iter()
                    .map(|(id, o): (&String, &kubewright::ChildOutcome<ConfigMap>)| {
                        (id.clone(), o.child().is_some())
                    })
                    .collect();
                seen.lock().unwrap().push(summary);
            },
        ),
    );
    case("extra claiming a desired id")
        .given(converged_set())
        .given(item("a", "hi"))
        .given(item("b", "hi"))
        .given(relabelled("z", "a"))
        .expect_delete::<ConfigMap>(Some(NS), "hello-z")
        .expect_event(
            EventExpectation::normal("Deleted")
                .note("Deleted ConfigMap default/hello-z: no desired ConfigMap has this name"),
        )
        .run(reconciler)
        .await
        .unwrap();
    assert_eq!(
        reports.lock().unwrap().as_slice(),
        [vec![("a".to_string(), true), ("b".to_string(), true)]]
    );
}

#[tokio::test]
async fn a_terminating_desired_child_is_not_written_and_the_set_is_not_ready() {
    let message = "ConfigMap default/hello-b is being deleted; created again once gone";
    case("terminating desired child")
        .given(converged_set())
        .given(item("a", "hi"))
        .given(terminating(item("b", "old")))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapsReady", "False", "Terminating", message),
                condition("Ready", "False", "Terminating", message),
            ],
        }))
        .run(set_reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_terminating_extra_is_not_deleted_again() {
    case("terminating extra")
        .given(converged_set())
        .given(item("a", "hi"))
        .given(item("b", "hi"))
        .given(terminating(item("z", "hi")))
        .expect_no_reads()
        .run(set_reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_later_step_reads_what_the_set_decided_in_this_pass() {
    use k8s_openapi::api::core::v1::ServiceAccount;
    // The account lists the items whose ConfigMap is in place, read from the set's outcomes, not from status.
    let summary = |note: &Note, cx: &mut Context| -> kubewright::Result<Option<ServiceAccount>> {
        let items: Vec<String> = cx
            .child_outcomes::<ConfigMap>()
            .into_iter()
            .flatten()
            .filter(|(_, o)| o.child().is_some() && !o.is_terminating())
            .map(|(id, _)| id.clone())
            .collect();
        let mut sa = ServiceAccount::default();
        sa.metadata.name = Some(note.name_any());
        sa.metadata.annotations = Some([("items".to_string(), items.join(","))].into());
        Ok(Some(sa))
    };
    let reconciler = Reconciler::new("notes")
        .step(ChildSetReconciler::new("items", desired_items, item_of))
        .step(kubewright::ChildReconciler::new("summary", summary));
    case("outcomes in the context")
        .given(converged_set())
        .given(item("a", "hi"))
        .given(terminating(item("b", "hi")))
        .expect_create(json!({
            "kind": "ServiceAccount",
            "metadata": {"name": "hello", "annotations": {"items": "a"}},
        }))
        .expect_event(EventExpectation::normal("Created").note("ServiceAccount default/hello"))
        .ignore(kubewright::testing::table::Category::Status)
        .run(reconciler)
        .await
        .unwrap();
}
