//! Pausing a WebApp on the real kube-apiserver (`kubewright::pause`): the operator's own requests, counted by a
//! recording client, show that a spec change made while `example.dev/paused` is `"true"` brings no write to
//! the WebApp or its children (only the one status write that marks it paused), and that removing the
//! annotation reconciles the change.

use std::time::Duration;

use examples::webapp::{WebApp, reconciler, sample};
use k8s_openapi::api::apps::v1::Deployment;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubewright::Operator;
use kubewright::testing::envtest::ControlPlane;
use serde_json::json;

use crate::support::{eventually, recording_client};

#[tokio::test]
async fn a_paused_webapp_gets_no_write_from_the_operator_on_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("pausing a WebApp on kube-apiserver").await else {
        return;
    };
    cp.install_crds([WebApp::crd()]).await.unwrap();
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    let (operator_client, log) = recording_client(&cp);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::for_namespaces(operator_client, [ns.clone()])
            .controller(reconciler())
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    let apps: Api<WebApp> = Api::namespaced(client.clone(), &ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let mut app = sample("web", None);
    app.metadata.namespace = Some(ns.clone());
    apps.create(&PostParams::default(), &app).await.unwrap();
    eventually("the first pass", async || {
        let a = apps.get("web").await.ok()?;
        (a.status?.observed_generation == Some(1)).then_some(())
    })
    .await;

    let annotate = |value: serde_json::Value| json!({"metadata": {"annotations": {"example.dev/paused": value}}});
    apps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(annotate(json!("true"))),
    )
    .await
    .unwrap();
    eventually("the Paused condition", async || {
        let a = apps.get("web").await.ok()?;
        a.status?
            .conditions
            .iter()
            .any(|c| c.type_ == "Paused" && c.status == "True")
            .then_some(())
    })
    .await;
    let writes = || -> Vec<String> {
        log.lock()
            .unwrap()
            .iter()
            .filter(|e| e.method != "GET" && !e.path.contains("/events"))
            .map(|e| format!("{} {}", e.method, e.path))
            .collect()
    };
    // The Paused condition can be read back before the recording client logs the answer to the write that
    // set it: wait until the log settles, so that write counts as before the spec change.
    let mut before = writes();
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = writes();
        if now == before {
            break;
        }
        before = now;
    }
    apps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"scale": {"replicas": 5}}})),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        writes(),
        before,
        "the operator wrote while the WebApp was paused"
    );
    assert_eq!(
        deployments.get("web").await.unwrap().spec.unwrap().replicas,
        Some(2)
    );

    apps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(annotate(serde_json::Value::Null)),
    )
    .await
    .unwrap();
    eventually("the change reconciled after the pause", async || {
        let d = deployments.get("web").await.ok()?;
        let a = apps.get("web").await.ok()?;
        let status = a.status?;
        (d.spec?.replicas == Some(5)
            && status.observed_generation == Some(2)
            && !status.conditions.iter().any(|c| c.type_ == "Paused"))
        .then_some(())
    })
    .await;
    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
