//! The `tenants` example's operator: its wiring and RBAC, and the whole operator on the embedded cluster
//! (`tests::tenants_scenario`).

use examples::tenants::{installation, reconciler};
use k8s_openapi::api::rbac::v1::PolicyRule;
use kubewright::reconcilers::Role;
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::Verb;
use tests::tenants_scenario::run;

#[test]
fn namespaces_quotas_and_bindings_are_owned() {
    let wiring = reconciler().wiring();
    let roles: Vec<(String, Role)> = wiring
        .kinds()
        .iter()
        .map(|k| (k.kind.clone(), k.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("Namespace".to_string(), Role::Owned),
            ("ResourceQuota".to_string(), Role::Owned),
            ("RoleBinding".to_string(), Role::Owned),
        ]
    );
}

#[test]
fn the_cluster_role_binds_admin_only() {
    let rules = installation().rules();
    let binds: Vec<&PolicyRule> = rules
        .iter()
        .filter(|r| r.verbs.iter().any(|v| v == "bind" || v == "escalate"))
        .collect();
    assert_eq!(binds.len(), 1, "{rules:#?}");
    assert_eq!(binds[0].verbs, ["bind"]);
    assert_eq!(
        binds[0].resources.as_deref(),
        Some(&["clusterroles".to_string()][..])
    );
    assert_eq!(
        binds[0].resource_names.as_deref(),
        Some(&["admin".to_string()][..])
    );
    let yaml = examples::tenants::installation().to_yaml().unwrap();
    for kind in [
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
    ] {
        assert!(
            yaml.contains(&format!("kind: {kind}\n")),
            "{kind} missing:\n{yaml}"
        );
    }
    assert!(yaml.contains("scope: Cluster"), "{yaml}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_keeps_tenants_on_the_embedded_cluster() {
    let server = ApiServer::builder().request_log(true).build();
    let writes = {
        let server = server.clone();
        move || {
            server
                .requests()
                .into_iter()
                .filter(|r| {
                    !matches!(
                        r.verb,
                        None | Some(Verb::Get) | Some(Verb::List) | Some(Verb::Watch)
                    )
                })
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<String>>()
        }
    };
    run(server.client(), server.client(), &writes).await;
}
