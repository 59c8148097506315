//! A built-in kind as the parent (`kubewright::Foreign`): the Expose example gives every annotated Service an
//! Ingress on the in-memory cluster, writes nothing to the Service's status, tells a bad annotation as a
//! Warning event, and its manifests grant no access to `services/status`.

use std::collections::BTreeMap;
use std::time::Duration;

use examples::expose::{EXPOSE, HOST};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use kubewright::Operator;
use kubewright::testing::ApiServer;
use serde_json::json;

fn service(name: &str, annotations: &[(&str, &str)]) -> Service {
    let mut svc = Service::default();
    svc.metadata.name = Some(name.into());
    svc.metadata.annotations = Some(
        annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    );
    svc.spec = Some(ServiceSpec {
        ports: Some(vec![ServicePort {
            port: 8080,
            ..Default::default()
        }]),
        ..Default::default()
    });
    svc
}

async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(t) = f().await {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn ingress(client: &Client, name: &str) -> Option<Ingress> {
    Api::<Ingress>::namespaced(client.clone(), "default")
        .get_opt(name)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_annotated_service_gets_an_ingress_and_its_status_is_left_alone() {
    let server = ApiServer::new();
    let client = server.client();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(examples::expose::reconciler())
            .run_until(async move {
                let _ = stop_rx.await;
            }),
    );
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    services
        .create(&pp, &service("web", &[(EXPOSE, "true")]))
        .await
        .unwrap();
    services.create(&pp, &service("quiet", &[])).await.unwrap();

    let made = eventually("the Ingress of web", async || ingress(&client, "web").await).await;
    let rule = &made.spec.as_ref().unwrap().rules.as_ref().unwrap()[0];
    assert_eq!(rule.host.as_deref(), Some("web.default.example.dev"));
    let backend = rule.http.as_ref().unwrap().paths[0]
        .backend
        .service
        .as_ref()
        .unwrap();
    assert_eq!(backend.name, "web");
    assert_eq!(backend.port.as_ref().unwrap().number, Some(8080));
    let owner = &made.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Service", "web")
    );
    assert_eq!(owner.controller, Some(true));

    // The runtime wrote nothing to the Services: no status, no conditions (the in-memory cluster gives a
    // Service of type ClusterIP an empty load balancer status, which stays as it was).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let web = services.get("web").await.unwrap();
    let managers: Vec<String> = web
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        !managers.iter().any(|m| m.contains("expose")),
        "{managers:?}"
    );
    assert!(ingress(&client, "quiet").await.is_none());

    // A host that is no DNS name: a Warning event on the Service, and the Ingress as it was.
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {HOST: "Not A Host"}}})),
        )
        .await
        .unwrap();
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let warning = eventually("a Warning event", async || {
        events
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("InvalidHost"))
    })
    .await;
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(
        warning.regarding.as_ref().unwrap().kind.as_deref(),
        Some("Service")
    );
    assert!(
        warning
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("\"Not A Host\" is not a DNS name"),
        "{warning:?}"
    );
    assert!(ingress(&client, "web").await.is_some());

    // The annotation goes: so does the Ingress.
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {EXPOSE: null, HOST: null}}})),
        )
        .await
        .unwrap();
    eventually("the Ingress of web gone", async || {
        ingress(&client, "web").await.is_none().then_some(())
    })
    .await;
    let _ = stop_tx.send(());
    running.await.unwrap().unwrap();
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
