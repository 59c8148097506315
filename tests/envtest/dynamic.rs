//! Kinds chosen at run time on a real kube-apiserver: the parent, a child set, a referenced kind and a kind
//! watched with a mapper all bound to `ApiResource`s when the test runs, their CRDs installed by the test (the
//! scenario of `tests::dynamic_sets_scenario`), under the operator's own service account with the RBAC its
//! manifests derive, with no forbidden request.

use kubewright::testing::envtest::{ControlPlane, assets_or_skip};
use tests::dynamic_sets_scenario::{NAME, bind, reconciler, run};

use crate::support::{own_account, recording_client_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_time_kinds_in_sets_references_and_mapped_watches_on_kube_apiserver() {
    let name = "run-time-kinds";
    if assets_or_skip(name).is_none() {
        return;
    }
    bind();
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let admin = cp.client().unwrap();
    let manifests = kubewright::manifests::Manifests::new(NAME).reconciler(&reconciler());
    let config = own_account(&cp, &admin, &manifests).await;
    let (operator, log) = recording_client_for(config);
    run(admin, operator, "default").await;
    let exchanges = log.lock().unwrap().clone();
    let forbidden: Vec<_> = exchanges.iter().filter(|e| e.status == 403).collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
    for watched in [
        "/apis/example.dev/v1/sites",
        "/apis/cert-manager.io/v1/certificates",
        "/apis/cert-manager.io/v1/issuers",
        "/apis/cert-manager.io/v1/clusterissuers",
    ] {
        assert!(
            exchanges
                .iter()
                .any(|e| e.method == "GET" && e.path.starts_with(watched)),
            "the operator never listed {watched}: {exchanges:#?}"
        );
    }
}
