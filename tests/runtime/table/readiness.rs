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

/// A custom kind whose controller reports readiness as a `Ready` condition (a cert-manager `Certificate`'s
/// shape): the CRD has a status subresource.
#[derive(
    kube::CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[kube(
    group = "certs.example.io",
    version = "v1",
    kind = "Certificate",
    namespaced,
    status = "CertificateStatus"
)]
pub struct CertificateSpec {
    pub dns_name: String,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CertificateStatus {
    #[serde(default)]
    pub conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
}

/// A custom kind with no status at all.
#[derive(
    kube::CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[kube(
    group = "certs.example.io",
    version = "v1",
    kind = "Banner",
    namespaced
)]
pub struct BannerSpec {
    pub text: String,
}

fn desired_certificate(note: &Note, _: &mut Context) -> kubewright::Result<Option<Certificate>> {
    Ok(Some(Certificate::new(
        &note.name_any(),
        CertificateSpec {
            dns_name: format!("{}.example.dev", note.name_any()),
        },
    )))
}

fn desired_banner(note: &Note, _: &mut Context) -> kubewright::Result<Option<Banner>> {
    Ok(Some(Banner::new(
        &note.name_any(),
        BannerSpec {
            text: note.spec.text.clone(),
        },
    )))
}

async fn env_with(
    crds: &[k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition],
) -> TestEnv {
    let env = TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    for crd in crds {
        env.install_crd(crd).await.unwrap();
    }
    env.insert(&note("hi")).unwrap();
    env
}

async fn ready_now(env: &TestEnv) -> (String, String, String) {
    let note = env
        .caches()
        .get::<Note>()
        .unwrap()
        .get(Some(NS), NAME)
        .unwrap();
    ready_of(&note).expect("a Ready condition")
}

#[tokio::test]
async fn a_custom_child_is_ready_by_its_ready_condition_for_its_generation() {
    use kube::CustomResourceExt;
    let mut env = env_with(&[Certificate::crd()]).await;
    let reconciler = Reconciler::new("notes")
        .step(ChildReconciler::new("certificate", desired_certificate))
        .clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();

    // Created: its controller has not reported a status yet.
    env.pass(&reconciler, &parent_ref()).await.unwrap();
    env.wait_for::<Note>(Some(NS), NAME, |n| n.and_then(ready_of).is_some())
        .await
        .unwrap();
    let (status, reason, message) = ready_now(&env).await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "AwaitingStatus")
    );
    assert_eq!(
        message,
        "Certificate default/hello: its controller has not reported a status yet"
    );

    // Its controller reports Ready=False, then Ready=True for an older generation, then for this one.
    let certs: kube::Api<Certificate> = kube::Api::namespaced(env.client(), NS);
    let steps = [
        (
            json!({"type": "Ready", "status": "False", "reason": "Issuing", "message": "waiting for the CA", "lastTransitionTime": T0}),
            ("False", "Issuing"),
        ),
        (
            json!({"type": "Ready", "status": "True", "reason": "Issued", "message": "", "observedGeneration": 0, "lastTransitionTime": T0}),
            ("False", "NotObserved"),
        ),
        (
            json!({"type": "Ready", "status": "True", "reason": "Issued", "message": "", "observedGeneration": 1, "lastTransitionTime": T0}),
            ("True", "Ready"),
        ),
    ];
    for (condition, (want_status, want_reason)) in steps {
        let patch = json!({"status": {"conditions": [condition]}});
        certs
            .patch_status(
                NAME,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
            .unwrap();
        let want = (
            condition["reason"].as_str().map(str::to_string),
            condition["observedGeneration"].as_i64(),
        );
        env.wait_for::<Certificate>(Some(NS), NAME, |c| {
            c.and_then(|c| c.status.as_ref())
                .and_then(|s| s.conditions.first())
                .is_some_and(|c| (Some(c.reason.clone()), c.observed_generation) == want)
        })
        .await
        .unwrap();
        env.pass(&reconciler, &parent_ref()).await.unwrap();
        env.wait_for::<Note>(Some(NS), NAME, |n| {
            n.and_then(ready_of).is_some_and(|(s, r, _)| {
                s == want_status && (want_reason == "Ready" || r == want_reason)
            })
        })
        .await
        .unwrap_or_else(|e| panic!("Ready {want_status} ({want_reason}): {e}"));
    }
}

#[tokio::test]
async fn a_custom_child_whose_kind_has_no_status_is_ready_once_written() {
    use kube::CustomResourceExt;
    let mut env = env_with(&[Banner::crd()]).await;
    let reconciler = Reconciler::new("notes")
        .step(ChildReconciler::new("banner", desired_banner))
        .clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Note>();
    env.start().await.unwrap();
    env.pass(&reconciler, &parent_ref()).await.unwrap();
    env.wait_for::<Note>(Some(NS), NAME, |n| n.and_then(ready_of).is_some())
        .await
        .unwrap();
    let (status, _, message) = ready_now(&env).await;
    assert_eq!(status, "True", "{message}");
}
