//! A Namespace's own rule (`kubewright_apiserver`'s `validation/builtin/core.rs`): each of `spec.finalizers`
//! a qualified name, fully qualified unless standard. A valid control and an invalid create on both servers,
//! compared by code, reason, message and causes.

use kube::Client;
use serde_json::json;

use crate::builtin_validation::summarize;
use crate::support::{Transcript, run};

async fn rules(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let namespaces = "/api/v1/namespaces";
    let valid = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-finalizers-ok"},
        "spec": {"finalizers": ["kubernetes", "example.com/cleanup"]}});
    t.post("valid", namespaces, &valid).await;
    summarize(&mut t);
    let invalid = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-finalizers-bad"},
        "spec": {"finalizers": ["custom", "a/b/c", "example.com/-x"]}});
    t.post("invalid create", namespaces, &invalid).await;
    summarize(&mut t);
    // Cluster-scoped objects outlive the scenario's namespace on the shared control plane.
    t.delete(
        "delete the valid namespace",
        &format!("{namespaces}/ns-finalizers-ok"),
    )
    .await;
    summarize(&mut t);
    t
}

#[tokio::test]
async fn namespace_finalizers_refuse_alike() {
    run("namespace_finalizers_refuse_alike", &[], rules).await;
}
