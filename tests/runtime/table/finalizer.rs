//! Finalizers: added before the steps run; on deletion the cleanup runs once, then the finalizer goes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kube::api::{Api, Patch, PatchParams};
use kube::{CustomResourceExt, ResourceExt};
use kubewright::testing::table::{Category, TestEnv};
use kubewright::{Context, Outcome, Reconciler, SyncReconciler, WithFinalizer};
use serde_json::json;

use super::*;

const FINALIZER: &str = "example.dev/cleanup";

fn guarded(cleanups: Arc<AtomicUsize>) -> Reconciler<Note> {
    Reconciler::new("notes").step(WithFinalizer::new(
        FINALIZER,
        SyncReconciler::new("work", |_: &mut Note, _: &mut Context| {
            Ok(Outcome::Continue)
        })
        .finalize(move |_: &mut Note, _: &mut Context| {
            cleanups.fetch_add(1, Ordering::SeqCst);
            Ok(Outcome::Continue)
        }),
    ))
}

#[tokio::test]
async fn the_finalizer_is_added_before_the_steps_run() {
    let cleanups = Arc::new(AtomicUsize::new(0));
    case("adds the finalizer")
        .given(note("hi"))
        .expect_patch(json!({"metadata": {"finalizers": [FINALIZER]}}))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [condition("Ready", "True", "Ready", "")],
        }))
        .run(guarded(cleanups.clone()))
        .await
        .unwrap();
    assert_eq!(cleanups.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn on_deletion_cleanup_runs_once_then_the_finalizer_is_removed() {
    const OTHER: &str = "example.dev/someone-else";
    let cleanups = Arc::new(AtomicUsize::new(0));
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    let mut deleting = note("hi");
    deleting["metadata"]["finalizers"] = json!([FINALIZER, OTHER]);
    deleting["metadata"]["deletionTimestamp"] = json!(T0);
    env.insert(&deleting).unwrap();
    let reconciler = guarded(cleanups.clone()).clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();

    let first = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    let writes = first.writes();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0].category, Category::Patch);
    assert_eq!(writes[0].body["metadata"]["finalizers"], json!([OTHER]));
    assert!(matches!(
        first.pass.as_ref().unwrap().result,
        Ok(Outcome::Halt)
    ));

    // Another finalizer keeps the note around, still being deleted: our cleanup does not run again.
    env.wait_for::<Note>(Some(NS), NAME, |n| {
        n.is_some_and(|n| n.finalizers() == [OTHER.to_string()])
    })
    .await
    .unwrap();
    let second = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(second.pass.is_some());
    assert!(second.writes().is_empty(), "{:#?}", second.writes());
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);

    // When the last finalizer goes, so does the note; nothing runs for it any more.
    let notes: Api<Note> = Api::namespaced(env.client(), NS);
    notes
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    env.wait_for::<Note>(Some(NS), NAME, |n| n.is_none())
        .await
        .unwrap();
    let third = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(third.pass.is_none());
    assert!(third.writes().is_empty());
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    env.shutdown().await;
}
