//! The `tenants` example on a whole cluster (kube-controller-manager's namespace controller and garbage
//! collector, kube-scheduler, kwok's nodes), run under its own service account with the RBAC its manifests
//! derive (`--authorization-mode=RBAC`): the scenario of `tests::tenants_scenario` with no forbidden request. A
//! Namespace the operator deletes goes away, and deleting the Tenant takes its Namespaces with it (garbage
//! collection), as on the embedded cluster.

use examples::tenants::{OPERATOR_NAME, OPERATOR_NAMESPACE, installation};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, PostParams};
use kube::config::AuthInfo;
use kubewright::testing::envtest::{ControlPlane, assets_or_skip};
use tests::tenants_scenario::run;

use crate::support::recording_client_for;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_keeps_tenants_under_its_own_service_account_with_no_forbidden_request() {
    let name = "tenants-own-account";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder()
        .name(name)
        .cluster()
        .start()
        .await
        .unwrap();
    let admin = cp.client().unwrap();

    // The installation as `manifests` prints it, but the Deployment: the operator runs in the test.
    let manifests = installation();
    let pp = PostParams::default();
    let mut ns = Namespace::default();
    ns.metadata.name = Some(OPERATOR_NAMESPACE.into());
    Api::<Namespace>::all(admin.clone())
        .create(&pp, &ns)
        .await
        .unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), OPERATOR_NAMESPACE);
    accounts
        .create(&pp, &manifests.service_account())
        .await
        .unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&pp, &manifests.cluster_role())
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&pp, &manifests.cluster_role_binding())
        .await
        .unwrap();

    // A token of the operator's account (TokenRequest), and a client that is that account and nothing else.
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(3600),
            ..Default::default()
        },
        ..Default::default()
    };
    let token = accounts
        .create_token_request(OPERATOR_NAME, &pp, &request)
        .await
        .unwrap()
        .status
        .expect("a token")
        .token;
    let mut config = cp.config().clone();
    config.auth_info = AuthInfo {
        token: Some(token.into()),
        ..Default::default()
    };
    let (operator_client, log) = recording_client_for(config);
    let writes = {
        let log = log.clone();
        move || {
            log.lock()
                .unwrap()
                .iter()
                .filter(|e| e.method != "GET")
                .map(|e| {
                    let path = e.path.split('?').next().unwrap_or_default();
                    format!("{} {path}", e.method)
                })
                .collect::<Vec<String>>()
        }
    };

    run(admin, operator_client, &writes).await;

    let exchanges = log.lock().unwrap().clone();
    assert!(
        exchanges
            .iter()
            .any(|e| e.method == "POST" && e.path.contains("/rolebindings") && e.status == 201),
        "the operator never created a RoleBinding itself: {exchanges:#?}"
    );
    let forbidden: Vec<_> = exchanges.iter().filter(|e| e.status == 403).collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
}
