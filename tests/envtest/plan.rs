//! `plan` on the real kube-apiserver (`kubewright::plan`): the WebApp upgrade scenario (`tests::plan_scenario`),
//! every request of the plans a dry run as a recording client sees them; and a plan under a ServiceAccount that
//! may read the operator's kinds but not write them: the forbidden request is named and the exit code is 1.

use examples::webapp::{WebApp, sample};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::CustomResourceExt;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::config::AuthInfo;
use kubewright::plan::EXIT_FAILED;
use kubewright::testing::envtest::ControlPlane;
use tests::plan_scenario::{app, flags, release_one, upgrade};

use crate::support::{recording_client, recording_client_for};

#[tokio::test]
async fn an_upgrade_plans_exactly_the_changed_field_on_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("an upgrade's plan on kube-apiserver").await else {
        return;
    };
    cp.install_crds([WebApp::crd()]).await.unwrap();
    let ns = cp.namespace().await.unwrap();
    let (client, log) = recording_client(&cp);
    let real_writes = move || {
        log.lock()
            .unwrap()
            .iter()
            .filter(|e| e.method != "GET" && !e.path.contains("dryRun"))
            .count()
    };
    upgrade(client, &ns, &real_writes).await;
}

#[tokio::test]
async fn a_plan_without_rbac_for_the_writes_names_the_forbidden_request() {
    let Some(cp) = ControlPlane::shared_or_skip("a forbidden plan on kube-apiserver").await else {
        return;
    };
    cp.install_crds([WebApp::crd()]).await.unwrap();
    let ns = cp.namespace().await.unwrap();
    let admin = cp.client().unwrap();
    let mut web = sample("web", None);
    web.metadata.namespace = Some(ns.clone());
    Api::<WebApp>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &web)
        .await
        .unwrap();

    // A ServiceAccount that may read every kind the operator caches, and write nothing.
    let read = |group: &str, resources: &[&str]| PolicyRule {
        api_groups: Some(vec![group.into()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: vec!["get".into(), "list".into(), "watch".into()],
        ..Default::default()
    };
    let meta = |name: &str| ObjectMeta {
        name: Some(name.into()),
        namespace: Some(ns.clone()),
        ..Default::default()
    };
    Api::<Role>::namespaced(admin.clone(), &ns)
        .create(
            &PostParams::default(),
            &Role {
                metadata: meta("reader"),
                rules: Some(vec![
                    read("example.dev", &["webapps"]),
                    read("apps", &["deployments"]),
                    read("", &["services", "configmaps"]),
                ]),
            },
        )
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), &ns)
        .create(
            &PostParams::default(),
            &RoleBinding {
                metadata: meta("reader"),
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "Role".into(),
                    name: "reader".into(),
                },
                subjects: Some(vec![Subject {
                    kind: "ServiceAccount".into(),
                    name: "planner".into(),
                    namespace: Some(ns.clone()),
                    ..Default::default()
                }]),
            },
        )
        .await
        .unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), &ns);
    accounts
        .create(
            &PostParams::default(),
            &ServiceAccount {
                metadata: meta("planner"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(3600),
            ..Default::default()
        },
        ..Default::default()
    };
    let token = accounts
        .create_token_request("planner", &PostParams::default(), &request)
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
    let (planner, log) = recording_client_for(config);

    let plan = app(release_one())
        .plan(planner.clone(), &flags(&ns), None)
        .await
        .unwrap();
    assert_eq!(plan.exit_code(), EXIT_FAILED, "{plan}");
    let failures = plan.failures();
    let first = failures.first().expect("a failure");
    assert!(
        first.contains(&format!("create Deployment {ns}/web")) && first.contains("forbidden"),
        "the forbidden request is named: {first}\n{plan}"
    );
    // As the subcommand reports it.
    let err = app(release_one())
        .run_plan(planner, &flags(&ns), None)
        .await
        .unwrap_err();
    assert_eq!(err.exit_code(), EXIT_FAILED);
    assert!(
        err.to_string()
            .contains(&format!("create Deployment {ns}/web")),
        "{err}"
    );
    // Refused, and every write a dry run: nothing was attempted for real.
    let log = log.lock().unwrap();
    let writes: Vec<_> = log.iter().filter(|e| e.method != "GET").collect();
    assert!(!writes.is_empty());
    assert!(
        writes
            .iter()
            .all(|e| e.path.contains("dryRun=All") && e.status == 403),
        "{writes:?}"
    );
}
