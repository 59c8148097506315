//! Readiness that means ready: a child step's condition, and so the parent's `Ready`, is `True` only once the
//! child is ready (built in for the workload kinds, or the step's own `ready` function).

use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kubewright::readiness::Readiness;
use kubewright::testing::table::{Category, TestEnv};
use kubewright::{ChildReconciler, Context, Reconciler};
use serde_json::json;

use super::*;

fn desired_deployment(note: &Note, _: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(
        serde_json::from_value(json!({
            "metadata": {"name": note.name_any()},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "note"}},
                "template": {
                    "metadata": {"labels": {"app": "note"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
                },
            },
        }))
        .expect("a Deployment"),
    ))
}

fn ready_of(note: &Note) -> Option<(String, String, String)> {
    note.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

#[tokio::test]
async fn a_deployment_without_available_replicas_is_not_ready_and_then_is() {
    // The first pass creates the Deployment: the answer has no status yet, so it is not ready.
    let mut env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    env.insert(&note("hi")).unwrap();
    let reconciler = Reconciler::new("notes")
        .step(ChildReconciler::new("deployment", desired_deployment))
        .clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();

    let first = env.pass(&reconciler, &parent_ref()).await.unwrap();
    assert!(
        first
            .writes()
            .iter()
            .any(|w| w.category == Category::Create),
        "{:#?}",
        first.writes()
    );
    env.wait_for::<Note>(Some(NS), NAME, |n| n.and_then(ready_of).is_some())
        .await
        .unwrap();
    let note_now = env
        .caches()
        .get::<Note>()
        .unwrap()
        .get(Some(NS), NAME)
        .unwrap();
    let (status, reason, message) = ready_of(&note_now).unwrap();
    assert_eq!((status.as_str(), reason.as_str()), ("False", "NotObserved"));
    assert!(
        message.starts_with("Deployment default/hello: "),
        "{message}"
    );

    // The (played) Deployment controller reports the rollout; the next pass finds the child ready.
    env.wait_for::<Deployment>(Some(NS), NAME, |d| {
        d.and_then(|d| d.status.as_ref())
            .is_some_and(|s| s.available_replicas == Some(2))
    })
    .await
    .unwrap();
    env.pass(&reconciler, &parent_ref()).await.unwrap();
    env.wait_for::<Note>(Some(NS), NAME, |n| {
        n.and_then(ready_of).is_some_and(|(s, _, _)| s == "True")
    })
    .await
    .expect("Ready once the Deployment is available");
}

#[tokio::test]
async fn a_ready_function_decides_for_its_step() {
    let reconciler =
        Reconciler::new("notes").step(ChildReconciler::new("configmap", desired_cm).ready(
            |cm: &k8s_openapi::api::core::v1::ConfigMap| {
                if cm.data.as_ref().is_some_and(|d| d.contains_key("ack")) {
                    Readiness::Ready
                } else {
                    Readiness::not_ready("NotAcknowledged", "nobody acknowledged the note")
                }
            },
        ));
    let message = "ConfigMap default/hello: nobody acknowledged the note";
    case("not acknowledged")
        .given(note("hi"))
        .given(child(NAME, "hi"))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("ConfigMapReady", "False", "NotAcknowledged", message),
                condition("Ready", "False", "NotAcknowledged", message),
            ],
        }))
        .run(reconciler)
        .await
        .unwrap();
}
