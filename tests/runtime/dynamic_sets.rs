//! Kinds chosen at run time in a child set, as a referenced kind and as a kind watched with a mapper (the
//! scenario of `tests::dynamic_sets_scenario`, on the embedded cluster), and the RBAC the manifests derive for
//! them.

use kubewright::testing::ApiServer;
use tests::dynamic_sets_scenario::{NAME, bind, reconciler, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_time_kinds_as_a_child_set_a_referenced_and_a_mapped_watched_kind() {
    bind();
    let server = ApiServer::new();
    let client = server.client();
    run(client.clone(), client, "default").await;
}

#[test]
fn the_manifests_grant_the_run_time_kinds_of_sets_references_and_watches() {
    bind();
    let manifests = kubewright::manifests::Manifests::new(NAME).reconciler(&reconciler());
    let role = manifests.cluster_role();
    let verbs = |group: &str, resource: &str| -> Vec<String> {
        let mut verbs: Vec<String> = role
            .rules
            .iter()
            .flatten()
            .filter(|r| {
                r.api_groups.iter().flatten().any(|g| g == group)
                    && r.resources.iter().flatten().any(|x| x == resource)
            })
            .flat_map(|r| r.verbs.clone())
            .collect();
        verbs.sort();
        verbs
    };
    let yaml = manifests.to_yaml().unwrap();
    let read = ["get", "list", "watch"];
    assert_eq!(verbs("example.dev", "sites"), read, "{yaml}");
    assert!(verbs("example.dev", "sites/status").is_empty(), "{yaml}");
    assert_eq!(verbs("cert-manager.io", "issuers"), read, "{yaml}");
    assert_eq!(verbs("cert-manager.io", "clusterissuers"), read, "{yaml}");
    let certificates = verbs("cert-manager.io", "certificates");
    for verb in ["create", "delete", "get", "list", "patch", "watch"] {
        assert!(certificates.iter().any(|v| v == verb), "{verb}: {yaml}");
    }
}
