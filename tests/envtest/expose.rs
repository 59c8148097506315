//! The `expose` example (a built-in kind, the Service, as the parent) on a real kube-apiserver, under its own
//! service account with the RBAC its manifests derive (`--authorization-mode=RBAC`), which cannot write
//! Service status: the scenario of `tests::expose_scenario`, with no forbidden request and no write to any
//! Service.

use kubewright::testing::envtest::{ControlPlane, assets_or_skip};

use crate::support::{may, own_account, recording_client_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_exposes_services_under_rbac_that_cannot_write_their_status() {
    let name = "expose-own-account";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let admin = cp.client().unwrap();
    let manifests = examples::expose::app().installation();
    let config = own_account(&cp, &admin, &manifests).await;
    let account = manifests.service_account();
    let user = format!(
        "system:serviceaccount:{}:{}",
        account.metadata.namespace.as_deref().unwrap(),
        account.metadata.name.as_deref().unwrap()
    );
    // What the derived RBAC allows, as kube-apiserver's authorizer answers.
    assert!(may(&admin, &user, "watch", "services", "", "default").await);
    assert!(!may(&admin, &user, "patch", "services", "", "default").await);
    assert!(!may(&admin, &user, "patch", "services", "status", "default").await);
    assert!(!may(&admin, &user, "update", "services", "status", "default").await);

    let (operator, log) = recording_client_for(config);
    tests::expose_scenario::run(admin, operator, "default").await;

    let exchanges = log.lock().unwrap().clone();
    let forbidden: Vec<_> = exchanges.iter().filter(|e| e.status == 403).collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
    let to_services: Vec<_> = exchanges
        .iter()
        .filter(|e| e.method != "GET" && e.path.contains("/services"))
        .collect();
    assert!(
        to_services.is_empty(),
        "writes to Services: {to_services:#?}"
    );
    assert!(
        exchanges
            .iter()
            .any(|e| e.method == "DELETE" && e.path.contains("/ingresses/web")),
        "the operator never deleted the Ingress itself: {exchanges:#?}"
    );
}
