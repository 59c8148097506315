//! No drift from the server's canonical forms: a child whose desired quantities the real kube-apiserver stores
//! in another form (`1024Mi` as `1Gi`, `0.5` as `500m`) is written once, then left alone.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use kubewright::testing::envtest::{ControlPlane, assets_or_skip};
use kubewright::{ChildReconciler, Context, Operator, Reconciler};
use serde_json::json;

use crate::runtime::{Memo, MemoSpec};
use crate::support::{eventually, recording_client};

/// A memo whose child Deployment asks for `1024Mi` of memory and `0.5` CPU.
fn desired(cm: &Memo, _: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(
        serde_json::from_value(json!({
            "metadata": {"name": cm.name_any()},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "q"}},
                "template": {
                    "metadata": {"labels": {"app": "q"}},
                    "spec": {"containers": [{
                        "name": "app",
                        "image": "nginx:1.27",
                        "resources": {"limits": {"memory": "1024Mi", "cpu": "0.5"}},
                    }]},
                },
            },
        }))
        .expect("a Deployment"),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quantities_in_canonical_form_cause_no_reapply() {
    let name = "quantities";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let ns = cp.namespace().await.unwrap();
    let admin = cp.client().unwrap();
    let (client, log) = recording_client(&cp);
    cp.install_crds([Memo::crd()]).await.unwrap();
    let reconciler = Reconciler::<Memo>::new("quantities").step(
        ChildReconciler::new("deployment", desired)
            .ready(|_| kubewright::readiness::Readiness::Ready),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(Operator::new(client).controller(reconciler).run_until(
        async move {
            let _ = stopped.await;
        },
    ));
    let parent = Memo::new("q", MemoSpec { text: "q".into() });
    Api::<Memo>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &parent)
        .await
        .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(admin, &ns);
    let stored = eventually("the Deployment", async || {
        deployments.get_opt("q").await.unwrap()
    })
    .await;
    // The server keeps the canonical forms, not the ones the operator sent.
    let limits = stored.spec.unwrap().template.spec.unwrap().containers[0]
        .resources
        .clone()
        .unwrap()
        .limits
        .unwrap();
    assert_eq!(limits["memory"].0, "1Gi");
    assert_eq!(limits["cpu"].0, "500m");

    // The creation (a POST) and any apply (a PATCH).
    let writes = || {
        log.lock()
            .unwrap()
            .iter()
            .filter(|e| {
                (e.method == "PATCH" || e.method == "POST") && e.path.contains("/deployments")
            })
            .count()
    };
    // Further passes (the Deployment's own watch event, and a resync of the parent) write nothing.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let settled = writes();
    Api::<Memo>::namespaced(cp.client().unwrap(), &ns)
        .patch(
            "q",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"nudge": "1"}}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(settled, 1, "one write creates the Deployment");
    assert_eq!(writes(), settled, "no re-apply for canonical quantities");

    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
