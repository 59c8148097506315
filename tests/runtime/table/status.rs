//! Status, conditions and events: invalid specs, status conflicts, one action per pass, transition times,
//! and which passes record events.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::jiff::SignedDuration;
use kube::api::{Api, Patch, PatchParams};
use kube::{CustomResourceExt, ResourceExt};
use kubewright::testing::apiserver::{Fault, Verb};
use kubewright::testing::table::{Category, EventExpectation, PassReport, TestEnv};
use kubewright::{ChildReconciler, Command, Context, Error, Reconciler};
use serde_json::json;

use super::*;

const INVALID: &str = "text must not be \"invalid\"";

#[tokio::test]
async fn an_invalid_spec_sets_ready_false_records_one_warning_and_leaves_children_alone() {
    case("invalid spec")
        .given(note_with("invalid", converged()))
        .given(child(NAME, "hi"))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapReady", "True", "Reconciled", ""),
                {"type": "Ready", "status": "False", "reason": "InvalidText", "message": INVALID},
            ],
            "configMap": NAME,
        }))
        .expect_event(EventExpectation::warning("InvalidText").note(INVALID))
        .expect_err(
            "an invalid spec",
            |e| matches!(e, Error::InvalidSpec { reason, .. } if reason == "InvalidText"),
        )
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_invalid_spec_already_reported_is_not_reported_again() {
    let mut status = converged();
    status["conditions"][1] = condition("Ready", "False", "InvalidText", INVALID);
    case("invalid spec, reported")
        .given(note_with("invalid", status))
        .given(child(NAME, "hi"))
        .expect_err("an invalid spec", |e| {
            matches!(e, Error::InvalidSpec { .. })
        })
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_status_write_conflict_requeues_instead_of_failing() {
    let report = case("status conflict")
        .given(note("hi"))
        .given(child(NAME, "hi"))
        .inject(
            Fault::on(Verb::Patch)
                .subresource("status")
                .fail(409, "Conflict"),
        )
        .expect_err("a conflict", |e| e.is_conflict())
        .run(reconciler())
        .await
        .unwrap();
    // The write was attempted once and nothing reported a failure afterwards.
    let attempts: Vec<_> = report
        .requests
        .iter()
        .filter(|r| r.subresource.as_deref() == Some("status"))
        .collect();
    assert_eq!(attempts.len(), 1, "{attempts:#?}");
    assert_eq!(attempts[0].code, 409);
}

fn desired_sa(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ServiceAccount>> {
    let mut sa = ServiceAccount::default();
    sa.metadata.name = Some(note.name_any());
    Ok(Some(sa))
}

#[tokio::test]
async fn one_action_mode_makes_one_mutation_then_yields() {
    let reconciler = Reconciler::new("notes")
        .one_action_per_pass(true)
        .step(ChildReconciler::new("configmap", desired_cm))
        .step(ChildReconciler::new("serviceaccount", desired_sa));
    let report = case("one action")
        .given(note("hi"))
        .expect_apply(json!({"kind": "ConfigMap", "metadata": {"name": NAME}}))
        .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
        .expect_err("Yield", |e| matches!(e, Error::Yield))
        .run(reconciler)
        .await
        .unwrap();
    let mutating: Vec<&Command> = report
        .commands()
        .iter()
        .filter(|c| c.is_mutating())
        .collect();
    assert_eq!(mutating.len(), 1, "{mutating:#?}");
}

fn ready_of(report: &PassReport<Note>) -> Vec<serde_json::Value> {
    report
        .writes()
        .iter()
        .filter(|w| w.category == Category::Status)
        .map(|w| {
            w.body["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready").cloned())
                .unwrap_or_default()
        })
        .collect()
}

async fn set_text(env: &TestEnv, text: &str, generation: i64) {
    let notes: Api<Note> = Api::namespaced(env.client(), NS);
    notes
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"text": text}})),
        )
        .await
        .unwrap();
    env.wait_for::<Note>(Some(NS), NAME, |n| {
        n.is_some_and(|n| n.metadata.generation == Some(generation))
    })
    .await
    .unwrap();
}

async fn status_settled(env: &TestEnv, generation: i64) {
    env.wait_for::<Note>(Some(NS), NAME, |n| {
        n.and_then(|n| n.status.as_ref()?.observed_generation) == Some(generation)
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn last_transition_time_moves_only_when_the_condition_status_changes() {
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    env.insert(&note("hi")).unwrap();
    let reconciler = reconciler().clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();

    let first = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let ready = ready_of(&first);
    assert_eq!(ready.len(), 1);
    assert_eq!(
        (&ready[0]["status"], &ready[0]["lastTransitionTime"]),
        (&json!("True"), &json!(T0))
    );
    status_settled(&env, 1).await;

    // An hour later the spec changes; Ready stays True, so its transition time stays.
    env.clock().advance(SignedDuration::from_hours(1));
    set_text(&env, "bye", 2).await;
    let second = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let ready = ready_of(&second);
    assert_eq!(ready.len(), 1, "{:#?}", second.writes());
    assert_eq!(ready[0]["lastTransitionTime"], json!(T0));
    assert_eq!(ready[0]["observedGeneration"], json!(2));
    status_settled(&env, 2).await;

    // Another hour later Ready turns False: now the time moves.
    env.clock().advance(SignedDuration::from_hours(1));
    set_text(&env, "invalid", 3).await;
    let third = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let ready = ready_of(&third);
    assert_eq!(ready.len(), 1, "{:#?}", third.writes());
    assert_eq!(ready[0]["status"], json!("False"));
    assert_eq!(
        ready[0]["lastTransitionTime"],
        json!("2025-01-01T02:00:00Z")
    );
    env.shutdown().await;
}

fn events(report: &PassReport<Note>) -> Vec<(String, String)> {
    report
        .writes()
        .iter()
        .filter(|w| w.category == Category::Event)
        .map(|w| {
            (
                w.body["type"].as_str().unwrap_or_default().to_string(),
                w.body["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn events_record_creates_updates_and_deletes_and_nothing_on_a_no_op_pass() {
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    env.insert(&note("hi")).unwrap();
    let reconciler = reconciler().clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();
    let normal = |reason: &str| ("Normal".to_string(), reason.to_string());

    let created = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert_eq!(events(&created), vec![normal("Created")]);
    status_settled(&env, 1).await;
    env.wait_for::<ConfigMap>(Some(NS), NAME, |c| c.is_some())
        .await
        .unwrap();

    let idle = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(idle.writes().is_empty(), "{:#?}", idle.writes());

    set_text(&env, "bye", 2).await;
    let updated = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert_eq!(events(&updated), vec![normal("Updated")]);
    status_settled(&env, 2).await;
    env.wait_for::<ConfigMap>(Some(NS), NAME, |c| {
        c.and_then(|c| c.data.as_ref()?.get("text").cloned()) == Some("bye".into())
    })
    .await
    .unwrap();

    let idle = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(idle.writes().is_empty(), "{:#?}", idle.writes());

    set_text(&env, "", 3).await;
    let deleted = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert_eq!(events(&deleted), vec![normal("Deleted")]);
    env.shutdown().await;
}

#[tokio::test]
async fn a_parent_that_is_gone_ends_the_pass_quietly() {
    case("no parent")
        .parent_absent()
        .given(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME, "namespace": NS}}))
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_status_field_set_to_none_is_removed_and_the_next_pass_writes_nothing() {
    use kubewright::{Outcome, SyncReconciler};
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    let mut status = converged();
    status["summary"] = json!("stale");
    let mut stored = note_with("hi", status);
    stored["status"]["configMap"] = json!(null);
    env.insert(&stored).unwrap();
    // A step that clears the optional field (serialized with `skip_serializing_if = "Option::is_none"`).
    let reconciler = Reconciler::new("notes").step(SyncReconciler::new(
        "clear",
        |note: &mut Note, _: &mut Context| {
            note.status.get_or_insert_with(Default::default).summary = None;
            Ok(Outcome::Continue)
        },
    ));
    let reconciler = reconciler.clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();

    let first = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let writes = first.writes();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0].category, Category::Status);
    env.wait_for::<Note>(Some(NS), NAME, |n| {
        n.and_then(|n| n.status.as_ref())
            .is_some_and(|s| s.summary.is_none())
    })
    .await
    .expect("the stored status loses the field");
    // Read untyped: the typed status would hide a stored field behind `skip_serializing_if`.
    let raw = Api::<kube::api::DynamicObject>::namespaced_with(
        env.client(),
        NS,
        &kube::api::ApiResource::erase::<Note>(&()),
    )
    .get(NAME)
    .await
    .unwrap();
    assert!(
        raw.data["status"].get("summary").is_none(),
        "{:#}",
        raw.data
    );

    let second = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(second.writes().is_empty(), "{:#?}", second.writes());
}

/// A started environment with a Note and its child in place, the reconciler wired, and the Note as the cache
/// holds it before any pass wrote its status.
async fn started_with_a_stale_note() -> (TestEnv, Reconciler<Note>, std::sync::Arc<Note>) {
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    env.insert(&note("hi")).unwrap();
    env.insert(&child(NAME, "hi")).unwrap();
    let reconciler = reconciler().clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();
    let stale = cached_note(&env);
    (env, reconciler, stale)
}

fn cached_note(env: &TestEnv) -> std::sync::Arc<Note> {
    env.caches()
        .get::<Note>()
        .unwrap()
        .get(Some(NS), NAME)
        .unwrap()
}

/// A pass on the stale Note, by `reconciler`, writes nothing.
async fn a_pass_on_writes_nothing(env: &TestEnv, reconciler: &Reconciler<Note>, stale: &Note) {
    let second = reconciler
        .run_pass(stale, env.caches(), env.dispatcher("notes"))
        .await;
    assert!(second.result.is_ok(), "{:?}", second.result);
    assert!(
        second.context.commands().is_empty(),
        "{:#?}",
        second.context.commands()
    );
}

/// The same, when the parent's event has arrived between the pass being queued and the pass (so the memory of
/// the write is gone, as the controller clears it on that event; a reconciler with no memory stands for it): the
/// pass runs on the newest cached copy of the parent, not on the one it was queued with.
#[tokio::test]
async fn a_pass_queued_with_a_parent_the_cache_has_moved_past_runs_on_the_newest_copy() {
    let (env, remembering, stale) = started_with_a_stale_note().await;
    let first = env.pass(&remembering, &parent_ref()).await.unwrap();
    assert_eq!(first.writes().len(), 1, "{:#?}", first.writes());
    for _ in 0..200 {
        if cached_note(&env).resource_version() != stale.resource_version() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_ne!(
        cached_note(&env).resource_version(),
        stale.resource_version()
    );

    let forgetful = reconciler().clock(env.clock_fn());
    a_pass_on_writes_nothing(&env, &forgetful, &stale).await;
}

#[tokio::test]
async fn a_pass_on_a_parent_the_cache_has_not_caught_up_with_does_not_write_the_status_again() {
    // The parent as the cache holds it before the first pass writes its status.
    let (env, reconciler, stale) = started_with_a_stale_note().await;

    let first = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let writes = first.writes();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0].category, Category::Status);

    // A pass triggered before the parent's watch delivers that write (as a child's event can): it starts from
    // the status the first pass wrote, so it has nothing to write (and no stale resourceVersion to conflict on).
    a_pass_on_writes_nothing(&env, &reconciler, &stale).await;
}
