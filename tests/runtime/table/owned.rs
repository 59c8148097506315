//! Children written from a `#[sync]` step (`Context::create_owned`, `apply_owned`, `delete_owned`): the
//! owner reference, owner label, events and memory of writes a child step gives its children.

use futures::FutureExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kubewright::testing::table::{Category, EventExpectation};
use kubewright::{ChildOutcome, Context, Outcome, Reconciler, SyncReconciler, TrackKey};
use serde_json::json;

use super::*;

/// The summary ConfigMap a sync step writes: named `<note>-summary`, holding the note's text.
fn summary(note: &Note) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("{}-summary", note.name_any()));
    cm.data = Some([("text".to_string(), note.spec.text.clone())].into());
    cm
}

async fn create(note: &mut Note, cx: &mut Context) -> kubewright::Result<Outcome> {
    let outcome = cx.create_owned(summary(note)).await?;
    note.status.get_or_insert_with(Default::default).summary = Some(
        match outcome {
            ChildOutcome::Created(_) => "created",
            ChildOutcome::Unchanged(_) => "unchanged",
            ChildOutcome::Conflict { .. } => "conflict",
            _ => "other",
        }
        .into(),
    );
    Ok(Outcome::Continue)
}

async fn apply(note: &mut Note, cx: &mut Context) -> kubewright::Result<Outcome> {
    cx.apply_owned(summary(note)).await?;
    Ok(Outcome::Continue)
}

async fn delete(note: &mut Note, cx: &mut Context) -> kubewright::Result<Outcome> {
    let name = format!("{}-summary", note.name_any());
    if let Some(cm) = cx.get::<ConfigMap>(Some(NS), &name)? {
        cx.delete_owned(cm.as_ref()).await?;
    }
    Ok(Outcome::Continue)
}

fn with(
    step: for<'a> fn(
        &'a mut Note,
        &'a mut Context,
    ) -> futures::future::BoxFuture<'a, kubewright::Result<Outcome>>,
) -> Reconciler<Note> {
    Reconciler::new("notes")
        .owns::<ConfigMap>()
        .step(SyncReconciler::new_async("summary", step))
}

/// The summary as the runtime wrote it: owned, labelled, with the desired-state hash when applied.
fn summary_child(text: &str, applied: bool) -> serde_json::Value {
    let mut c = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "hello-summary",
            "namespace": NS,
            "labels": {kubewright::OWNER_LABEL: UID},
            "ownerReferences": [owner()],
        },
        "data": {"text": text},
    });
    if applied {
        c = stamped(c);
    }
    c
}

#[tokio::test]
async fn a_sync_step_creates_an_owned_child_with_owner_label_and_event() {
    case("create_owned")
        .given(note("hi"))
        .expect_create(json!({
            "kind": "ConfigMap",
            "metadata": {
                "name": "hello-summary",
                "namespace": NS,
                "labels": {kubewright::OWNER_LABEL: UID},
                "ownerReferences": [owner()],
            },
            "data": {"text": "hi"},
        }))
        .expect_event(
            EventExpectation::normal("Created").note("Created ConfigMap default/hello-summary"),
        )
        .expect_status_update(json!({"summary": "created"}))
        .expect_no_reads()
        .run(with(|n, cx| create(n, cx).boxed()))
        .await
        .unwrap();
}

#[tokio::test]
async fn create_owned_leaves_a_cached_child_as_it_is() {
    case("create_owned on a cached child")
        .given(note("changed"))
        .given(summary_child("hi", false))
        .expect_status_update(json!({"summary": "unchanged"}))
        .run(with(|n, cx| create(n, cx).boxed()))
        .await
        .unwrap();
}

#[tokio::test]
async fn create_owned_never_takes_someone_elses_object() {
    let mut theirs = summary_child("theirs", false);
    theirs["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("ownerReferences");
    case("create_owned on someone else's object")
        .given(note("hi"))
        .given(theirs)
        .expect_status_update(json!({"summary": "conflict"}))
        // Tracked, so the parent comes back when the object goes.
        .expect_track(TrackKey::name::<ConfigMap>(Some(NS), "hello-summary"))
        .run(with(|n, cx| create(n, cx).boxed()))
        .await
        .unwrap();
}

#[tokio::test]
async fn apply_owned_applies_a_drifted_child_and_leaves_a_matching_one() {
    case("apply_owned, drifted")
        .given(note("new"))
        .given(summary_child("old", true))
        .expect_apply(json!({
            "metadata": {"name": "hello-summary", "labels": {kubewright::OWNER_LABEL: UID}, "ownerReferences": [owner()]},
            "data": {"text": "new"},
        }))
        .expect_event(EventExpectation::normal("Updated").note("Updated ConfigMap default/hello-summary"))
        .ignore(Category::Status)
        .run(with(|n, cx| apply(n, cx).boxed()))
        .await
        .unwrap();
    case("apply_owned, in place")
        .given(note("same"))
        .given(summary_child("same", true))
        .ignore(Category::Status)
        .run(with(|n, cx| apply(n, cx).boxed()))
        .await
        .unwrap();
}

#[tokio::test]
async fn delete_owned_deletes_the_child_with_an_event() {
    case("delete_owned")
        .given(note("hi"))
        .given(summary_child("hi", false))
        .expect_delete::<ConfigMap>(Some(NS), "hello-summary")
        .expect_track(TrackKey::name::<ConfigMap>(Some(NS), "hello-summary"))
        .expect_event(
            EventExpectation::normal("Deleted").note("Deleted ConfigMap default/hello-summary"),
        )
        .ignore(Category::Status)
        .run(with(|n, cx| delete(n, cx).boxed()))
        .await
        .unwrap();
}
