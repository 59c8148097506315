//! A built-in kind as the parent (`kubewright::Foreign`): the Expose example gives every annotated Service an
//! Ingress on the in-memory cluster, writes nothing to the Service, tells a bad annotation as a Warning event
//! (the scenario of `tests::expose_scenario`, also run on kube-apiserver), survives the explorer's
//! perturbations, and its manifests grant no access to `services/status`.

use examples::expose::{EXPOSE, HOST};
use k8s_openapi::api::core::v1::Service;
use kubewright::testing::ApiServer;
use kubewright::testing::explore::{Explore, Scenario};
use serde_json::json;
use tests::expose_scenario::service;

fn namespaced(mut svc: Service) -> Service {
    svc.metadata.namespace = Some("default".into());
    svc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_annotated_service_gets_an_ingress_and_its_status_is_left_alone() {
    let server = ApiServer::new();
    let client = server.client();
    tests::expose_scenario::run(client.clone(), client, "default").await;
}

#[tokio::test]
async fn the_explorer_runs_the_expose_operator_with_its_built_in_parent() {
    let scenario = Scenario::new()
        .apply(&namespaced(service("web", &[(EXPOSE, "true")])))
        .apply(&namespaced(service("quiet", &[])))
        .settle()
        .patch::<Service>(
            Some("default"),
            "web",
            json!({"metadata": {"annotations": {HOST: "shop.example.dev"}}}),
        )
        .settle()
        .patch::<Service>(
            Some("default"),
            "web",
            json!({"metadata": {"annotations": {EXPOSE: null}}}),
        );
    let explored = Explore::new(examples::expose::reconciler)
        .scenario(scenario)
        .run()
        .await
        .unwrap_or_else(|broken| panic!("{broken}"));
    println!("expose: {explored:#}");
    let writes = explored.writes.join("\n");
    assert!(writes.contains("Ingress default/web"), "{explored:#}");
    assert!(!writes.contains("Service default/"), "{explored:#}");
}

#[test]
fn the_manifests_read_services_write_ingresses_and_never_touch_service_status() {
    let manifests = examples::expose::app().installation();
    let yaml = manifests.to_yaml().unwrap();
    let role = manifests.cluster_role();
    let rules: Vec<&k8s_openapi::api::rbac::v1::PolicyRule> = role.rules.iter().flatten().collect();
    let verbs = |group: &str, resource: &str| -> Vec<String> {
        rules
            .iter()
            .filter(|r| {
                r.api_groups.iter().flatten().any(|g| g == group)
                    && r.resources.iter().flatten().any(|x| x == resource)
            })
            .flat_map(|r| r.verbs.clone())
            .collect()
    };
    assert_eq!(verbs("", "services"), ["get", "list", "watch"], "{yaml}");
    assert!(verbs("", "services/status").is_empty(), "{yaml}");
    assert!(
        verbs("networking.k8s.io", "ingresses").contains(&"create".to_string()),
        "{yaml}"
    );
    assert!(manifests.crds().is_empty());
}
