//! A kind without a Rust type as a child (`kubewright::untyped`): the Domain example owns a cert-manager
//! `Certificate` named by group, version and kind only, and is Ready when the Certificate's own `Ready`
//! condition says so for its current generation.

use std::time::Duration;

use examples::domains::{Certificate, Domain, DomainSpec, certificate_crd};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResourceExt, ResourceExt};
use kubewright::Operator;
use kubewright::testing::ApiServer;
use kubewright::testing::explore::{Explore, Scenario};
use serde_json::json;

async fn install(client: &Client, crd: CustomResourceDefinition) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.name_any();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    await_condition(crds, &name, conditions::is_crd_established())
        .await
        .unwrap();
}

fn domain(name: &str, host: &str) -> Domain {
    let mut d = Domain::new(
        name,
        DomainSpec {
            host: host.into(),
            issuer: None,
        },
    );
    d.metadata.namespace = Some("default".into());
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_domain_owns_an_untyped_certificate_and_is_ready_when_it_is() {
    let server = ApiServer::new();
    let client = server.client();
    tests::domains_scenario::run(client.clone(), client, "default").await;
}

#[test]
fn the_manifests_grant_the_untyped_kind_by_its_group_and_resource() {
    let manifests = examples::domains::app().installation();
    let role = manifests.cluster_role();
    let granted = role.rules.iter().flatten().any(|r| {
        r.api_groups
            .iter()
            .flatten()
            .any(|g| g == "cert-manager.io")
            && r.resources.iter().flatten().any(|x| x == "certificates")
            && r.verbs.iter().any(|v| v == "create")
    });
    assert!(granted, "{}", manifests.to_yaml().unwrap());
    // Only the Domain's CRD is the operator's to install.
    assert_eq!(manifests.crds().len(), 1);
}

#[tokio::test]
async fn the_explorer_runs_the_domain_operator_with_its_untyped_child() {
    let scenario = Scenario::new()
        .apply(&domain("shop", "shop.example.dev"))
        .settle()
        .status::<Certificate>(
            Some("default"),
            "shop",
            json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}),
        )
        .settle()
        .apply(&domain("shop", "store.example.dev"));
    let explored = Explore::new(Domain::reconciler)
        .crd(Domain::crd())
        .crd(certificate_crd())
        .scenario(scenario)
        .budget(40)
        .run()
        .await
        .unwrap_or_else(|broken| panic!("{broken}"));
    assert!(
        explored
            .writes
            .iter()
            .any(|w| w.contains("Certificate default/shop")),
        "{explored:#}"
    );
}

#[tokio::test]
async fn an_operator_whose_child_kind_is_not_served_fails_at_start_naming_it() {
    let server = ApiServer::new();
    let client = server.client();
    install(&client, Domain::crd()).await;
    let run = Operator::new(client.clone())
        .controller(Domain::reconciler())
        .run_until(std::future::pending::<()>());
    let failed = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("an error at start")
        .unwrap_err();
    let text = failed.to_string();
    assert!(
        text.starts_with("Certificate (cert-manager.io/v1, resource certificates) is not served by the cluster: install its CustomResourceDefinition first"),
        "{text}"
    );
}

kubewright::kind! {
    /// ConfigMaps declared with the wrong scope.
    ClusterConfigMapKind = "v1", "ConfigMap", "configmaps", Cluster
}

#[tokio::test]
async fn an_untyped_kind_declared_with_the_wrong_scope_fails_at_start() {
    let server = ApiServer::new();
    let client = server.client();
    install(&client, Domain::crd()).await;
    install(&client, certificate_crd()).await;
    let reconciler =
        Domain::reconciler().tracks::<kubewright::untyped::Untyped<ClusterConfigMapKind>>();
    let failed = Operator::new(client.clone())
        .controller(reconciler)
        .run_until(std::future::pending::<()>())
        .await
        .unwrap_err();
    assert_eq!(
        failed.to_string(),
        "ConfigMap (v1) is declared cluster-scoped but the cluster serves it namespaced: declare it with the cluster's scope"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_domains_binary_runs_out_of_the_box_on_the_embedded_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let app = examples::domains::app();
    let cli = app
        .try_parse_from([
            "domain-operator",
            "--listen",
            "127.0.0.1:0",
            "--write-kubeconfig",
            kubeconfig.to_str().unwrap(),
        ])
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(app.run_with(cli, async move {
        let _ = stopped.await;
    }));
    let mut client = None;
    for _ in 0..400 {
        if std::fs::read_to_string(&kubeconfig).is_ok_and(|s| s.contains("current-context")) {
            client = Some(kubewright::cli::from_kubeconfig(&kubeconfig).await.unwrap());
            break;
        }
        assert!(
            !running.is_finished(),
            "the binary stopped: {:?}",
            running.await
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let client = client.expect("the kubeconfig written");
    // The sample Domain's Certificate, issued by the stand-in for cert-manager: the Domain is Ready.
    let domains: Api<Domain> = Api::namespaced(client.clone(), "default");
    let mut ready = None;
    for _ in 0..400 {
        ready = domains.get_opt("shop").await.unwrap().and_then(|d| {
            d.status?
                .conditions
                .into_iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| (c.status, c.reason))
        });
        if ready.as_ref().is_some_and(|(s, _)| s == "True") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(ready, Some(("True".into(), "Ready".into())));
    let certs: Api<Certificate> = Api::namespaced(client, "default");
    assert!(certs.get_opt("shop").await.unwrap().is_some());
    // Only the Domain's CRD is the installation's.
    assert_eq!(examples::domains::app().installation().crds().len(), 1);
    let _ = stop.send(());
    running.await.unwrap().unwrap();
}

kubewright::kind! {
    /// cert-manager's Certificate, declared a second time.
    CertificateAgain = "cert-manager.io/v1", "Certificate", "certificates", Namespaced
}

#[tokio::test]
async fn one_kind_declared_through_two_types_fails_at_start_naming_both() {
    let server = ApiServer::new();
    let client = server.client();
    install(&client, Domain::crd()).await;
    install(&client, certificate_crd()).await;
    let reconciler =
        Domain::reconciler().tracks::<kubewright::untyped::Untyped<CertificateAgain>>();
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        Operator::new(client.clone())
            .controller(reconciler)
            .run_until(std::future::pending::<()>()),
    )
    .await
    .expect("an error at start")
    .unwrap_err();
    let text = failed.to_string();
    assert!(
        text.starts_with("Certificate (cert-manager.io/v1) is declared twice in one reconciler, as `kubewright::untyped::Untyped<examples::domains::CertificateKind>` and as `kubewright::untyped::Untyped<runtime::untyped::CertificateAgain>`"),
        "{text}"
    );
    // Nothing was written: no Certificate, no watch started.
    let certs: Api<Certificate> = Api::namespaced(client, "default");
    assert!(
        certs
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

/// What the duplicate-kind error's text starts with for `CertificateAgain`.
const DECLARED_TWICE: &str = "Certificate (cert-manager.io/v1) is declared twice in one reconciler, as `kubewright::untyped::Untyped<examples::domains::CertificateKind>` and as `kubewright::untyped::Untyped<runtime::untyped::CertificateAgain>`";

#[tokio::test]
async fn a_table_test_refuses_one_kind_declared_through_two_types() {
    use kube::runtime::reflector::ObjectRef;
    use kubewright::testing::table::ReconcilerTestCase;
    let failed =
        ReconcilerTestCase::new("declared twice", ObjectRef::new("shop").within("default"))
            .crd(Domain::crd())
            .crd(certificate_crd())
            .given(domain("shop", "shop.example.dev"))
            .run(Domain::reconciler().tracks::<kubewright::untyped::Untyped<CertificateAgain>>())
            .await
            .unwrap_err();
    // The one problem is the setup's: no pass ran, so nothing was written.
    assert_eq!(failed.problems().len(), 1, "{failed}");
    assert!(
        failed.problems()[0].starts_with(&format!("setup: {DECLARED_TWICE}")),
        "{failed}"
    );
}

#[tokio::test]
async fn the_explorer_refuses_one_kind_declared_through_two_types() {
    use kubewright::testing::explore::ExploreError;
    use kubewright::testing::table::HarnessError;
    let failed = Explore::new(|| {
        Domain::reconciler().tracks::<kubewright::untyped::Untyped<CertificateAgain>>()
    })
    .crd(Domain::crd())
    .crd(certificate_crd())
    .scenario(
        Scenario::new()
            .apply(&domain("shop", "shop.example.dev"))
            .settle(),
    )
    .budget(5)
    .run()
    .await
    .unwrap_err();
    assert!(
        matches!(
            &failed,
            ExploreError::Harness(HarnessError::KindDeclaredTwice(_))
        ),
        "{failed:?}"
    );
    assert!(failed.to_string().starts_with(DECLARED_TWICE), "{failed}");
}
