//! Owner references Kubernetes would not honour are refused before anything is written.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::ResourceExt;
use kubewright::testing::table::EventExpectation;
use kubewright::{ChildReconciler, Context, Error, Reconciler};
use serde_json::json;

use super::*;

fn refused(message: &str) -> serde_json::Value {
    json!({
        // A failed pass does not claim to have processed the generation.
        "observedGeneration": null,
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "ReconcileError", "message": message},
        ],
    })
}

#[tokio::test]
async fn a_child_in_another_namespace_is_refused() {
    let reconciler = Reconciler::new("notes").step(ChildReconciler::new(
        "configmap",
        |note: &Note, _: &mut Context| {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(note.name_any());
            cm.metadata.namespace = Some("elsewhere".into());
            Ok(Some(cm))
        },
    ));
    let message = "cannot own ConfigMap hello: owner references cannot cross namespaces (default to elsewhere)";
    case("cross namespace")
        .given(note("hi"))
        .expect_status_update(refused(message))
        .expect_event(EventExpectation::warning("ReconcileError").note(message))
        .expect_err("Error::Ownership", |e| matches!(e, Error::Ownership { .. }))
        .run(reconciler)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_cluster_scoped_child_of_a_namespaced_parent_is_refused() {
    let reconciler = Reconciler::new("notes").step(ChildReconciler::new(
        "clusterrole",
        |note: &Note, _: &mut Context| {
            let mut role = ClusterRole::default();
            role.metadata.name = Some(note.name_any());
            Ok(Some(role))
        },
    ));
    let message =
        "cannot own ClusterRole hello: a namespaced Note cannot own a cluster-scoped object";
    case("cluster-scoped child")
        .given(note("hi"))
        .expect_status_update(refused(message))
        .expect_event(EventExpectation::warning("ReconcileError").note(message))
        .expect_err("Error::Ownership", |e| matches!(e, Error::Ownership { .. }))
        .run(reconciler)
        .await
        .unwrap();
}
