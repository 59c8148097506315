//! One child: create, no-op, drift, delete, extras, foreign objects, the update strategy, generateName.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kubewright::testing::apiserver::{Fault, Verb};
use kubewright::testing::table::{Category, EventExpectation, TestEnv};
use kubewright::{ChildReconciler, Context, Outcome, Reconciler, TrackKey, WriteStrategy};
use serde_json::json;

use super::*;

#[tokio::test]
async fn a_missing_child_is_created_with_a_controller_owner_reference() {
    case("creates the child")
        .given(note("hi"))
        // Not in the cache: created with a POST, which creates only, so nothing is read first.
        .expect_no_reads()
        .expect_create(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": NS, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
        .expect_status_update(converged())
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_unchanged_child_on_a_converged_parent_makes_no_request_at_all() {
    let report = case("converged")
        .given(note_with("hi", converged()))
        .given(child(NAME, "hi"))
        .expect_no_reads()
        .run(reconciler())
        .await
        .unwrap();
    assert!(
        report.requests.iter().all(|r| r.verb == Some(Verb::Watch)),
        "{:#?}",
        report.requests
    );
    assert!(report.commands().is_empty(), "{:?}", report.commands());
}

#[tokio::test]
async fn a_drifted_child_is_applied_again() {
    case("drift")
        .given(note_with("hi", converged()))
        .given(child(NAME, "tampered"))
        .expect_apply(json!({
            "metadata": {"name": NAME, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_event(EventExpectation::normal("Updated").note("ConfigMap default/hello"))
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn no_desired_child_deletes_the_existing_one() {
    let mut status = converged();
    status["conditions"][0] = condition("ConfigMapReady", "True", "NotNeeded", "");
    status["configMap"] = json!(null);
    case("desired none")
        .given(note_with("", converged()))
        .given(child(NAME, "hi"))
        .expect_delete::<ConfigMap>(Some(NS), NAME)
        .expect_event(EventExpectation::normal("Deleted").note("ConfigMap default/hello"))
        .expect_status_update(status)
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn extra_controlled_children_are_deleted() {
    case("extras")
        .given(note_with("hi", converged()))
        .given(child(NAME, "hi"))
        .given(child("hello-old", "hi"))
        .expect_delete::<ConfigMap>(Some(NS), "hello-old")
        .expect_event(EventExpectation::normal("Deleted").note("ConfigMap default/hello-old"))
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_foreign_object_with_the_childs_name_is_left_alone_reported_and_tracked() {
    let message =
        "ConfigMap hello exists and is not controlled by Note hello (controlled by Other/them)";
    let mut foreign = child(NAME, "theirs");
    foreign["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("labels");
    foreign["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "example.dev/v1", "kind": "Other", "name": "them",
        "uid": "6d3c2a8e-5b1f-4c2e-9a47-0000000000ff", "controller": true,
    }]);
    // The foreign owner must exist, or the garbage collector removes its dependent.
    let other = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "them", "namespace": NS, "uid": "6d3c2a8e-5b1f-4c2e-9a47-0000000000ff"},
    });
    let report = case("foreign")
        .given(note("mine"))
        .given(other)
        .given(foreign)
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapReady", "False", "NotOwned", message),
                condition("Ready", "False", "NotOwned", message),
            ],
            "configMap": null,
        }))
        .expect_track(TrackKey::name::<ConfigMap>(Some(NS), NAME))
        .run(reconciler())
        .await
        .unwrap();
    assert!(
        report.writes.iter().all(|w| w.resource != "configmaps"),
        "{:#?}",
        report.writes
    );
}

#[tokio::test]
async fn the_update_strategy_merges_into_the_live_object_and_replaces_it() {
    let mut live = child(NAME, "old");
    live["metadata"]["labels"]["team"] = json!("red");
    case("merge and update")
        .given(note_with("hi", converged()))
        .given(live)
        .expect_update(json!({
            "metadata": {"name": NAME, "labels": {"team": "red"}, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_event(EventExpectation::normal("Updated").note("ConfigMap default/hello"))
        .run(reconciler_with(WriteStrategy::Update))
        .await
        .unwrap();
}

#[tokio::test]
async fn the_update_strategy_writes_nothing_when_the_merge_changes_nothing() {
    let mut live = child(NAME, "hi");
    live["metadata"]["labels"]["team"] = json!("red");
    case("semantically equal")
        .given(note_with("hi", converged()))
        .given(live)
        .expect_no_reads()
        .run(reconciler_with(WriteStrategy::Update))
        .await
        .unwrap();
}

#[tokio::test]
async fn already_exists_on_create_requeues_instead_of_failing() {
    let message = "ConfigMap hello already exists but is not in the cache yet; retrying";
    case("already exists")
        .given(note("hi"))
        .inject(
            Fault::on(Verb::Create)
                .resource("configmaps")
                .fail(409, "AlreadyExists"),
        )
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapReady", "Unknown", "AlreadyExists", message),
                condition("Ready", "Unknown", "AlreadyExists", message),
            ],
        }))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_millis(500)))
        .run(reconciler_with(WriteStrategy::Update))
        .await
        .unwrap();
}

fn generated(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.generate_name = Some(format!("{}-", note.name_any()));
    cm.data = Some([("text".to_string(), note.spec.text.clone())].into());
    Ok(Some(cm))
}

#[tokio::test]
async fn a_generate_name_child_is_created_once_then_adopted() {
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    env.insert(&note("hi")).unwrap();
    let reconciler = Reconciler::new("notes")
        .step(ChildReconciler::new("configmap", generated).reflect(reflect_cm))
        .clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();

    let first = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let writes = first.writes();
    let creates: Vec<_> = writes
        .iter()
        .filter(|w| w.category == Category::Create)
        .collect();
    assert_eq!(creates.len(), 1, "{writes:#?}");
    assert_eq!(creates[0].body["metadata"]["generateName"], "hello-");
    assert!(creates[0].body["metadata"].get("name").is_none());
    let name = first.requests[creates[0].position]
        .response
        .as_ref()
        .unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        name.starts_with("hello-") && name.len() == "hello-".len() + 5,
        "{name}"
    );
    assert_eq!(
        writes
            .iter()
            .filter(|w| w.category == Category::Status)
            .map(|w| w.body["configMap"].clone())
            .collect::<Vec<_>>(),
        vec![json!(name)]
    );

    // Once the caches have seen the child and the status, the next pass adopts the child: nothing to do.
    env.wait_for::<ConfigMap>(Some(NS), &name, |c| c.is_some())
        .await
        .unwrap();
    env.wait_for::<Note>(Some(NS), NAME, |n| {
        n.and_then(|n| n.status.as_ref()?.config_map.clone()) == Some(name.clone())
    })
    .await
    .unwrap();
    let second = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(second.writes().is_empty(), "{:#?}", second.writes());
    assert!(matches!(second.pass.unwrap().result, Ok(Outcome::Continue)));
    env.shutdown().await;
}

#[tokio::test]
async fn a_terminating_child_is_neither_written_nor_deleted_again_and_is_not_ready() {
    let message =
        "ConfigMap default/hello is being deleted; it will be created again once it is gone";
    let mut live = child(NAME, "old");
    live["metadata"]["deletionTimestamp"] = json!(T0);
    live["metadata"]["finalizers"] = json!(["example.dev/hold"]);
    let mut old = child("hello-old", "hi");
    old["metadata"]["deletionTimestamp"] = json!(T0);
    old["metadata"]["finalizers"] = json!(["example.dev/hold"]);
    let mut status = converged();
    status["conditions"] = json!([
        condition("ConfigMapReady", "False", "Terminating", message),
        condition("Ready", "False", "Terminating", message),
    ]);
    case("terminating child")
        .given(note_with("hi", converged()))
        .given(live)
        .given(old)
        .expect_status_update(status)
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_create_only_child_is_created_once_and_never_written_again() {
    case("create only: missing")
        .given(note("hi"))
        .expect_create(json!({
            "metadata": {"name": NAME, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
        .expect_status_update(converged())
        .run(reconciler_with(WriteStrategy::CreateOnly))
        .await
        .unwrap();
    // The live child differs from what the desired function returns now (a generated value, say): kept.
    let mut live = child(NAME, "generated once");
    live["metadata"]["annotations"] = json!(null);
    case("create only: exists")
        .given(note_with("hi", converged()))
        .given(live)
        .expect_no_reads()
        .run(reconciler_with(WriteStrategy::CreateOnly))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_create_only_child_the_cache_has_not_seen_is_not_overwritten() {
    // The previous pass created it; the cache does not show it yet: the POST answers 409 and nothing is written.
    let message = "ConfigMap hello already exists but is not in the cache yet; retrying";
    case("create only: cache lag")
        .given(note("hi"))
        .inject(
            Fault::on(Verb::Create)
                .resource("configmaps")
                .fail(409, "AlreadyExists"),
        )
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapReady", "Unknown", "AlreadyExists", message),
                condition("Ready", "Unknown", "AlreadyExists", message),
            ],
        }))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_millis(500)))
        .run(reconciler_with(WriteStrategy::CreateOnly))
        .await
        .unwrap();
}
