//! `#[reconciler(parent = K)]`: a built-in kind as the parent, declared on a marker struct; the generated
//! reconciler is the Expose example's, step for step, and runs on the in-memory cluster.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, PostParams};
use kubewright::{Foreign, Operator, Reconciler};

/// Gives every annotated Service an Ingress (the Expose example's step, declared).
#[derive(Reconciler)]
#[reconciler(parent = Service, name = "expose-controller")]
#[child(Ingress, desired = examples::expose::desired_ingress)]
pub struct Expose;

#[test]
fn the_declared_reconciler_is_the_one_written_by_hand() {
    let declared: Reconciler<Foreign<Service>> = Expose::reconciler();
    let by_hand = examples::expose::reconciler();
    assert_eq!(declared.name(), by_hand.name());
    assert_eq!(format!("{declared:?}"), format!("{by_hand:?}"));
    assert_eq!(
        format!("{:?}", declared.wiring()),
        format!("{:?}", by_hand.wiring())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_declared_reconciler_gives_an_annotated_service_its_ingress() {
    let server = kubewright::testing::ApiServer::new();
    let client = server.client();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(Expose::reconciler())
            .run_until(async move {
                let _ = stop_rx.await;
            }),
    );
    let mut svc = Service::default();
    svc.metadata.name = Some("api".into());
    svc.metadata.annotations =
        Some([(examples::expose::EXPOSE.to_string(), "true".to_string())].into());
    svc.spec = Some(ServiceSpec {
        ports: Some(vec![ServicePort {
            port: 443,
            ..Default::default()
        }]),
        ..Default::default()
    });
    Api::<Service>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &svc)
        .await
        .unwrap();
    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "default");
    let mut found = None;
    for _ in 0..400 {
        found = ingresses.get_opt("api").await.unwrap();
        if found.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let host = found.expect("an Ingress").spec.unwrap().rules.unwrap()[0]
        .host
        .clone();
    assert_eq!(host.as_deref(), Some("api.default.example.dev"));
    let _ = stop_tx.send(());
    running.await.unwrap().unwrap();
}

#[test]
fn app_operate_runs_the_marker_s_reconciler_with_no_crd() {
    let manifests = kubewright::cli::App::new("expose-operator")
        .operate::<Expose>()
        .installation();
    assert!(manifests.crds().is_empty());
    // The same RBAC as the by-hand example's `App::reconciler`: Services read, Ingresses written, no status.
    assert_eq!(
        manifests.cluster_role().rules,
        examples::expose::app().installation().cluster_role().rules
    );
    let yaml = manifests.to_yaml().unwrap();
    assert!(yaml.contains("ingresses"), "{yaml}");
    assert!(!yaml.contains("services/status"), "{yaml}");
}
