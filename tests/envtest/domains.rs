//! The `domains` example (an untyped child: cert-manager's Certificate by group, version and kind only) on a
//! real kube-apiserver, under its own service account with the RBAC its manifests derive: the Certificate CRD
//! installed from a minimal schema, the test playing cert-manager by writing the Certificate's status, the
//! Domain `Ready` following it (the scenario of `tests::domains_scenario`), with no forbidden request.

use kubewright::testing::envtest::{ControlPlane, assets_or_skip};

use crate::support::{own_account, recording_client_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_domain_is_ready_when_its_untyped_certificate_is_on_kube_apiserver() {
    let name = "domains-own-account";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let admin = cp.client().unwrap();
    let config = own_account(&cp, &admin, &examples::domains::app().installation()).await;
    let (operator, log) = recording_client_for(config);
    tests::domains_scenario::run(admin, operator, "default").await;
    let exchanges = log.lock().unwrap().clone();
    let forbidden: Vec<_> = exchanges.iter().filter(|e| e.status == 403).collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
    assert!(
        exchanges.iter().any(|e| e.method == "PATCH"
            && e.path
                .contains("/apis/cert-manager.io/v1/namespaces/default/certificates/shop")),
        "the operator never applied the Certificate: {exchanges:#?}"
    );
}
